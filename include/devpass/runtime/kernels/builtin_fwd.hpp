// devpass/runtime/kernels/builtin_fwd.hpp — the builtin kernels' registration declared, not
// defined: for the TUs of a program that register them while one TU of its own compiles them.
//
// Registering the builtin kernels compiles every one of them (matmul, attention, the MoE experts,
// ...) into the TU that calls register_builtin_kernels; a program that does so from several TUs
// compiles them several times. This header lets those TUs call it for the price of a
// declaration, as passes/propagate_device_fwd.hpp does for device propagation:
//
//   // in any number of TUs
//   #include <devpass/runtime/kernels/builtin_fwd.hpp>
//   devpass::runtime::register_builtin_kernels(registry);
//
//   // in exactly one TU
//   #include <devpass/runtime/kernels/builtin.hpp>
//   DEVPASS_INSTANTIATE_BUILTIN_KERNELS()
//
// Without that one TU the program does not link, never a silent difference. builtin.hpp includes
// this header, so the declaration and the definition are the same one.
#pragma once

#include "devpass/runtime/kernel.hpp"

namespace devpass::runtime::kernels {

// Adds every builtin kernel to `registry` (builtin.hpp lists them). A template over the registry
// only so that a program can compile it once: any type with kernel_registry's add(name, entry).
template <class Registry>
void register_builtin_kernels(Registry& registry);

}  // namespace devpass::runtime::kernels

namespace devpass::runtime {
using kernels::register_builtin_kernels;  // also reachable as runtime::register_builtin_kernels and by ADL
}  // namespace devpass::runtime

// Compiles register_builtin_kernels(kernel_registry&) in this TU (which must include builtin.hpp),
// for the TUs that call it through this header. At namespace scope, once per program.
#define DEVPASS_INSTANTIATE_BUILTIN_KERNELS() \
  template void devpass::runtime::kernels::register_builtin_kernels(::devpass::runtime::kernel_registry&);
