// tests/declared_instances.hpp — what src/instances/ compiles (device propagation for
// devpass::graph, the builtin kernels' registration), declared for a TU that also includes a
// header which brings in their definitions (the moe_decode example's pipeline), so that this TU
// calls them instead of compiling them again. Include it before that header.
#pragma once

#include "devpass/passes/propagate_device_fwd.hpp"
#include "devpass/runtime/kernels/builtin_fwd.hpp"

extern template devpass::propagate_stats devpass::propagate_device<devpass::graph>(devpass::graph&,
                                                                                   const devpass::propagate_options&);
extern template void devpass::runtime::kernels::register_builtin_kernels(devpass::runtime::kernel_registry&);
