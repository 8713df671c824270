// devpass/runtime/kernels/matmul.hpp — matrix product on float32.
//
// Convention: matmul (a: [m, k], b: [k, n]) -> [m, n], or batched
//             matmul (a: [B, m, k], b: [B, k, n]) -> [B, m, n]   (same B on both sides).
// Each output element sums its k products in portable::dot_lanes lanes (lane t adds products t,
// t + 8, ... in order; then lanes combine pairwise): the CUDA kernel's order, so both compute the
// same bits, and a one-row product still spreads over many GPU threads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "devpass/runtime/kernel.hpp"
#include "devpass/runtime/kernels/portable_math.hpp"
#include "devpass/runtime/kernels/signature.hpp"

namespace devpass::runtime::kernels {

// out[b] = a[b] x b[b] for b in [0, batch); row-major, out fully overwritten.
inline void matmul_f32(const float* a, const float* b, float* out, std::size_t batch, std::size_t m, std::size_t k,
                       std::size_t n) {
  // Each output sums its k products in portable::dot_lanes lanes, as the CUDA kernel does.
  std::vector<float> lanes(portable::dot_lanes * n);
  for (std::size_t s = 0; s < batch; ++s) {
    const float* as = a + s * m * k;
    const float* bs = b + s * k * n;
    float* os = out + s * m * n;
    for (std::size_t i = 0; i < m; ++i)
      portable::lane_order_dots(
          k, n, [&](std::size_t p) { return as[i * k + p]; }, [&](std::size_t p) { return bs + p * n; }, lanes.data(),
          os + i * n);
  }
}

struct matmul_dims {
  std::size_t batch, m, k, n;
};
// The dimensions of a matmul node's operands (precondition: matmul_fits).
[[nodiscard]] inline matmul_dims matmul_shape(const tensor_spec& a, const tensor_spec& b) noexcept {
  const bool batched = a.shape.size() == 3;
  const std::size_t o = batched ? 1 : 0;
  return {batched ? static_cast<std::size_t>(a.shape[0]) : 1, static_cast<std::size_t>(a.shape[o]),
          static_cast<std::size_t>(a.shape[o + 1]), static_cast<std::size_t>(b.shape[o + 1])};
}

[[nodiscard]] inline bool matmul_fits(const node& n, input_specs in) {
  if (!arity_is(n, in, 2, 1) || in[0] == nullptr || in[1] == nullptr) return false;
  const auto& a = in[0]->shape;
  const auto& b = in[1]->shape;
  if (in[0]->type != dtype::float32 || in[1]->type != dtype::float32 || a.size() != b.size()) return false;
  if (a.size() == 2) return a[1] == b[0] && is(&n.outputs[0], dtype::float32, {a[0], b[1]});
  if (a.size() == 3) return a[0] == b[0] && a[2] == b[1] && is(&n.outputs[0], dtype::float32, {a[0], a[1], b[2]});
  return false;
}

[[nodiscard]] inline kernel_entry matmul_kernel() {
  return {matmul_fits,
          [](const kernel_call& c) {
            const auto d = matmul_shape(*c.inputs[0].spec, *c.inputs[1].spec);
            matmul_f32(c.inputs[0].as<const float>(), c.inputs[1].as<const float>(), c.outputs[0].as<float>(), d.batch,
                       d.m, d.k, d.n);
          },
          {}};
}

}  // namespace devpass::runtime::kernels
