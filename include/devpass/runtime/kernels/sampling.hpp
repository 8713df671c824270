// devpass/runtime/kernels/sampling.hpp — greedy sampling.
//
// Convention: argmax (x: f32 [r, n]) -> i64 [r]; out[i] = the index of row i's largest value,
// the lowest such index on ties (NaN never wins), so the choice is deterministic.
#pragma once

#include <cstddef>
#include <cstdint>

#include "devpass/runtime/kernel.hpp"
#include "devpass/runtime/kernels/signature.hpp"

namespace devpass::runtime::kernels {

inline void argmax_f32(const float* x, std::int64_t* out, std::size_t rows, std::size_t n) noexcept {
  for (std::size_t r = 0; r < rows; ++r) {
    const float* row = x + r * n;
    std::size_t best = 0;
    for (std::size_t i = 1; i < n; ++i)
      if (row[i] > row[best] || (row[best] != row[best] && row[i] == row[i])) best = i;
    out[r] = static_cast<std::int64_t>(best);
  }
}

[[nodiscard]] inline bool argmax_fits(const node& n, input_specs in) {
  return arity_is(n, in, 1, 1) && has_rank(in[0], dtype::float32, 2) && in[0]->shape[1] > 0 &&
         is(&n.outputs[0], dtype::int64, {in[0]->shape[0]});
}

[[nodiscard]] inline kernel_entry argmax_kernel() {
  return {argmax_fits,
          [](const kernel_call& c) {
            const auto& s = *c.inputs[0].spec;
            argmax_f32(c.inputs[0].as<const float>(), c.outputs[0].as<std::int64_t>(),
                       static_cast<std::size_t>(s.shape[0]), static_cast<std::size_t>(s.shape[1]));
          },
          {}};
}

}  // namespace devpass::runtime::kernels
