// devpass/runtime/opaque_kernel.hpp — the kernel that runs when the registry has none that fits.
//
// Output k's bytes are a function of (kernel name, k, output k's dtype and shape, the bytes of
// every input in slot order) and of nothing else: not of pointers, devices or the node's id. So
// a graph and any placement of it (copies inserted, values moved between devices) compute the
// same bytes, and results compare exactly. Values follow deterministic.hpp's fill: finite
// floats in [-1, 1), small non-negative integers.
#pragma once

#include <cstddef>
#include <span>
#include <string_view>

#include "devpass/runtime/deterministic.hpp"
#include "devpass/runtime/kernel.hpp"

namespace devpass::runtime {

// Host memory only: `inputs` and `outputs` must point at host-readable bytes.
inline void run_opaque_kernel(std::string_view kernel, std::span<const tensor_view> inputs,
                              std::span<const tensor_view> outputs) {
  hasher inputs_hash{0x0BA9E};
  inputs_hash.add(kernel).add(inputs.size());
  for (const tensor_view& in : inputs)
    inputs_hash.add(*in.spec).add(std::span<const std::byte>(static_cast<const std::byte*>(in.data), in.bytes()));
  const std::uint64_t base = inputs_hash.value();
  for (std::size_t k = 0; k < outputs.size(); ++k)
    fill_from_key(outputs[k].data, *outputs[k].spec, hasher{base}.add(k).add(*outputs[k].spec).value());
}

// The same, as a kernel_entry body, so callers can register it under a name.
inline void opaque_kernel(const kernel_call& call) { run_opaque_kernel(call.op.kernel, call.inputs, call.outputs); }

}  // namespace devpass::runtime
