// The one TU of devpass's own programs (tests, devpass-run) that compiles the builtin kernels'
// registration. The others call it through runtime/kernels/builtin_fwd.hpp, so a program
// registers them without compiling every kernel again (docs/building.md, "Compile times").
#include "devpass/runtime/kernels/builtin.hpp"

DEVPASS_INSTANTIATE_BUILTIN_KERNELS()
