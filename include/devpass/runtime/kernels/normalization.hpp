// devpass/runtime/kernels/normalization.hpp — rms_norm and softmax over the last dimension.
//
// Conventions (float32):
//   rms_norm (x: [..., d], weight: [d]) -> [..., d]   attrs {"eps": e} (default 1e-5)
//            y = x / sqrt(mean(x^2) + eps) * weight, per row of d
//   softmax  (x: [..., n]) -> [..., n]                 exp(x - max) / sum, per row of n
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>

#include "devpass/runtime/kernel.hpp"
#include "devpass/runtime/kernels/attrs.hpp"
#include "devpass/runtime/kernels/portable_math.hpp"
#include "devpass/runtime/kernels/signature.hpp"

namespace devpass::runtime::kernels {

inline constexpr double default_rms_eps = 1e-5;

inline void rms_norm_f32(const float* x, const float* weight, float* out, std::size_t rows, std::size_t d,
                         float eps) noexcept {
  for (std::size_t r = 0; r < rows; ++r) {
    const float* xr = x + r * d;
    const float sum = portable::block_order_sum(d, [&](std::size_t i) { return xr[i] * xr[i]; });
    const float scale = 1.0f / std::sqrt(sum / static_cast<float>(d) + eps);
    for (std::size_t i = 0; i < d; ++i) out[r * d + i] = xr[i] * scale * weight[i];
  }
}

inline void softmax_f32(const float* x, float* out, std::size_t rows, std::size_t n) noexcept {
  for (std::size_t r = 0; r < rows; ++r) {
    const float* xr = x + r * n;
    float* o = out + r * n;
    const float m = *std::max_element(xr, xr + n);
    for (std::size_t i = 0; i < n; ++i) o[i] = portable::exp_f32(xr[i] - m);
    const float sum = portable::block_order_sum(n, [&](std::size_t i) { return o[i]; });
    for (std::size_t i = 0; i < n; ++i) o[i] /= sum;
  }
}

[[nodiscard]] inline bool rms_norm_fits(const node& n, input_specs in) {
  if (!arity_is(n, in, 2, 1) || in[0] == nullptr || in[0]->type != dtype::float32 || in[0]->shape.empty()) return false;
  const std::int64_t d = in[0]->shape.back();
  return d > 0 && is(in[1], dtype::float32, {d}) && is(&n.outputs[0], dtype::float32, in[0]->shape);
}
[[nodiscard]] inline bool softmax_fits(const node& n, input_specs in) {
  return arity_is(n, in, 1, 1) && in[0] != nullptr && in[0]->type == dtype::float32 && !in[0]->shape.empty() &&
         in[0]->shape.back() > 0 && is(&n.outputs[0], dtype::float32, in[0]->shape);
}

[[nodiscard]] inline kernel_entry rms_norm_kernel() {
  return {rms_norm_fits,
          [](const kernel_call& c) {
            const auto& s = *c.inputs[0].spec;
            const auto d = static_cast<std::size_t>(s.shape.back());
            rms_norm_f32(c.inputs[0].as<const float>(), c.inputs[1].as<const float>(), c.outputs[0].as<float>(),
                         s.element_count() / d, d, static_cast<float>(attr_float(c.op, "eps", default_rms_eps)));
          },
          {}};
}
[[nodiscard]] inline kernel_entry softmax_kernel() {
  return {softmax_fits,
          [](const kernel_call& c) {
            const auto& s = *c.inputs[0].spec;
            const auto n = static_cast<std::size_t>(s.shape.back());
            softmax_f32(c.inputs[0].as<const float>(), c.outputs[0].as<float>(), s.element_count() / n, n);
          },
          {}};
}

}  // namespace devpass::runtime::kernels
