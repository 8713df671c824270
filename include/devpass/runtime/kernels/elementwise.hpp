// devpass/runtime/kernels/elementwise.hpp — add, mul, silu, gelu on float32.
//
// Conventions (every tensor float32, no broadcasting):
//   add  (a: S, b: S) -> S        a + b
//   mul  (a: S, b: S) -> S        a * b
//   silu (x: S)       -> S        x * sigmoid(x)
//   gelu (x: S)       -> S        x * Phi(x) = 0.5 x (1 + erf(x / sqrt 2))   (the exact form)
#pragma once

#include <cmath>
#include <cstddef>

#include "devpass/runtime/kernel.hpp"
#include "devpass/runtime/kernels/portable_math.hpp"
#include "devpass/runtime/kernels/signature.hpp"

namespace devpass::runtime::kernels {

inline void add_f32(const float* a, const float* b, float* out, std::size_t n) noexcept {
  for (std::size_t i = 0; i < n; ++i) out[i] = a[i] + b[i];
}
inline void mul_f32(const float* a, const float* b, float* out, std::size_t n) noexcept {
  for (std::size_t i = 0; i < n; ++i) out[i] = a[i] * b[i];
}
// exp and erf from portable_math.hpp, so the CUDA kernels compute the same bits.
[[nodiscard]] inline float silu_f32(float x) noexcept { return portable::silu_f32(x); }
[[nodiscard]] inline float gelu_f32(float x) noexcept { return portable::gelu_f32(x); }
inline void silu_f32(const float* x, float* out, std::size_t n) noexcept {
  for (std::size_t i = 0; i < n; ++i) out[i] = silu_f32(x[i]);
}
inline void gelu_f32(const float* x, float* out, std::size_t n) noexcept {
  for (std::size_t i = 0; i < n; ++i) out[i] = gelu_f32(x[i]);
}

// Fits: two float32 inputs and one output, all of the same shape.
[[nodiscard]] inline bool binary_fits(const node& n, input_specs in) {
  return arity_is(n, in, 2, 1) && in[0] != nullptr && in[0]->type == dtype::float32 &&
         is(in[1], dtype::float32, in[0]->shape) && is(&n.outputs[0], dtype::float32, in[0]->shape);
}
// Fits: one float32 input and one output of the same shape.
[[nodiscard]] inline bool unary_fits(const node& n, input_specs in) {
  return arity_is(n, in, 1, 1) && in[0] != nullptr && in[0]->type == dtype::float32 &&
         is(&n.outputs[0], dtype::float32, in[0]->shape);
}

[[nodiscard]] inline kernel_entry add_kernel() {
  return {binary_fits,
          [](const kernel_call& c) {
            add_f32(c.inputs[0].as<const float>(), c.inputs[1].as<const float>(), c.outputs[0].as<float>(),
                    c.outputs[0].spec->element_count());
          },
          {}};
}
[[nodiscard]] inline kernel_entry mul_kernel() {
  return {binary_fits,
          [](const kernel_call& c) {
            mul_f32(c.inputs[0].as<const float>(), c.inputs[1].as<const float>(), c.outputs[0].as<float>(),
                    c.outputs[0].spec->element_count());
          },
          {}};
}
[[nodiscard]] inline kernel_entry silu_kernel() {
  return {unary_fits,
          [](const kernel_call& c) {
            silu_f32(c.inputs[0].as<const float>(), c.outputs[0].as<float>(), c.outputs[0].spec->element_count());
          },
          {}};
}
[[nodiscard]] inline kernel_entry gelu_kernel() {
  return {unary_fits,
          [](const kernel_call& c) {
            gelu_f32(c.inputs[0].as<const float>(), c.outputs[0].as<float>(), c.outputs[0].spec->element_count());
          },
          {}};
}

}  // namespace devpass::runtime::kernels
