// devpass/runtime/kernels/arange.hpp — the token positions of a step from its start position.
//
// Convention: arange (start: i64 [1]) -> i64 [t]; out[i] = start[0] + i.
// A decoder method takes one start position and derives every position on the device, so the
// position input has a single consumer (ExecuTorch's skip_h2d_for_method_inputs requires that).
#pragma once

#include <cstddef>
#include <cstdint>

#include "devpass/runtime/kernel.hpp"
#include "devpass/runtime/kernels/signature.hpp"

namespace devpass::runtime::kernels {

inline void arange_i64(const std::int64_t* start, std::int64_t* out, std::size_t n) noexcept {
  for (std::size_t i = 0; i < n; ++i) out[i] = start[0] + static_cast<std::int64_t>(i);
}

[[nodiscard]] inline bool arange_fits(const node& n, input_specs in) {
  return arity_is(n, in, 1, 1) && is(in[0], dtype::int64, {1}) && has_rank(&n.outputs[0], dtype::int64, 1);
}

[[nodiscard]] inline kernel_entry arange_kernel() {
  return {arange_fits,
          [](const kernel_call& c) {
            arange_i64(c.inputs[0].as<const std::int64_t>(), c.outputs[0].as<std::int64_t>(),
                       c.outputs[0].spec->element_count());
          },
          {}};
}

}  // namespace devpass::runtime::kernels
