// devpass/runtime/kernels/rotary.hpp — rotary position embedding (RoPE), rotate-half form.
//
// Convention: rotary (x: float32 [t, n], positions: int64 [t]) -> float32 [t, n]
//   attrs {"head_dim": h (default n), "theta": base (default 10000)}; n % h == 0, h even.
//   Each row holds n / h heads of h values. For head values x[0..h) and i < h/2, with
//   angle = positions[row] * theta^(-2i/h):
//     y[i]       = x[i] cos(angle) - x[i + h/2] sin(angle)
//     y[i + h/2] = x[i + h/2] cos(angle) + x[i] sin(angle)
//   Angles, sin and cos are computed in double by portable_math.hpp and rounded once, so the host
//   and CUDA kernels compute the same bits.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "devpass/runtime/kernel.hpp"
#include "devpass/runtime/kernels/attrs.hpp"
#include "devpass/runtime/kernels/portable_math.hpp"
#include "devpass/runtime/kernels/signature.hpp"

namespace devpass::runtime::kernels {

inline constexpr double default_rope_theta = 10000.0;

inline void rotary_f32(const float* x, const std::int64_t* positions, float* out, std::size_t rows, std::size_t n,
                       std::size_t head_dim, double theta) noexcept {
  const std::size_t half = head_dim / 2;
  const double log_theta = std::log(theta);
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t i = 0; i < half; ++i) {
      const portable::sin_cos sc = portable::sin_cos_f64(portable::rope_angle(positions[r], i, head_dim, log_theta));
      const auto c = static_cast<float>(sc.cos);
      const auto s = static_cast<float>(sc.sin);
      for (std::size_t h = 0; h < n; h += head_dim) {
        const float a = x[r * n + h + i];
        const float b = x[r * n + h + i + half];
        out[r * n + h + i] = a * c - b * s;
        out[r * n + h + i + half] = b * c + a * s;
      }
    }
  }
}

[[nodiscard]] inline bool rotary_fits(const node& n, input_specs in) {
  if (!arity_is(n, in, 2, 1) || !has_rank(in[0], dtype::float32, 2)) return false;
  const std::int64_t t = in[0]->shape[0], width = in[0]->shape[1];
  const std::int64_t h = attr_int(n, "head_dim", width);
  return h > 0 && h % 2 == 0 && width % h == 0 && is(in[1], dtype::int64, {t}) &&
         is(&n.outputs[0], dtype::float32, in[0]->shape);
}

[[nodiscard]] inline kernel_entry rotary_kernel() {
  return {rotary_fits,
          [](const kernel_call& c) {
            const auto& s = *c.inputs[0].spec;
            rotary_f32(c.inputs[0].as<const float>(), c.inputs[1].as<const std::int64_t>(), c.outputs[0].as<float>(),
                       static_cast<std::size_t>(s.shape[0]), static_cast<std::size_t>(s.shape[1]),
                       static_cast<std::size_t>(attr_int(c.op, "head_dim", s.shape[1])),
                       attr_float(c.op, "theta", default_rope_theta));
          },
          {}};
}

}  // namespace devpass::runtime::kernels
