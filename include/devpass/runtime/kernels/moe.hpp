// devpass/runtime/kernels/moe.hpp — mixture-of-experts routing and the expert MLPs.
//
// Conventions:
//   top_k_routing (logits: f32 [t, E]) -> (ids: i64 [t, k], weights: f32 [t, k])
//     attrs {"k": k} (default: the outputs' width; when given it must equal it), 0 < k <= E.
//     ids[i] are the k largest logits of row i, largest first, ties to the lower expert id;
//     weights[i] = softmax over those k logits (Mixtral's routing).
//   moe_experts (x: f32 [t, d], ids: i64 [t, k], weights: f32 [t, k],
//                w_gate: f32 [E, d, f], w_up: f32 [E, d, f], w_down: f32 [E, f, d]) -> f32 [t, d]
//     out[i] = sum_j weights[i, j] * (silu(x[i] W_gate[e]) * (x[i] W_up[e])) W_down[e], e = ids[i, j]
//     (a SwiGLU expert). An expert id outside [0, E) is an error naming the node (host) or is
//     skipped (CUDA). Every dot product sums in portable::dot_lanes order, the sum over j in
//     order, as the CUDA kernels do (portable_math.hpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "devpass/runtime/kernel.hpp"
#include "devpass/runtime/kernels/attrs.hpp"
#include "devpass/runtime/kernels/elementwise.hpp"
#include "devpass/runtime/kernels/portable_math.hpp"
#include "devpass/runtime/kernels/signature.hpp"

namespace devpass::runtime::kernels {

inline void top_k_routing_f32(const float* logits, std::int64_t* ids, float* weights, std::size_t rows,
                              std::size_t experts, std::size_t k) {
  std::vector<char> taken(experts);
  for (std::size_t r = 0; r < rows; ++r) {
    const float* row = logits + r * experts;
    std::fill(taken.begin(), taken.end(), 0);
    for (std::size_t j = 0; j < k; ++j) {
      std::size_t best = experts;
      for (std::size_t e = 0; e < experts; ++e)
        if (!taken[e] && (best == experts || row[e] > row[best])) best = e;
      taken[best] = 1;
      ids[r * k + j] = static_cast<std::int64_t>(best);
    }
    // Softmax over the selected logits; the first is the largest.
    const float top = row[ids[r * k]];
    float sum = 0.0f;
    for (std::size_t j = 0; j < k; ++j) sum += weights[r * k + j] = portable::exp_f32(row[ids[r * k + j]] - top);
    for (std::size_t j = 0; j < k; ++j) weights[r * k + j] /= sum;
  }
}

struct moe_dims {
  std::size_t tokens, d, k, experts, hidden;
};

// Precondition: every id is in [0, experts).
inline void moe_experts_f32(const float* x, const std::int64_t* ids, const float* weights, const float* w_gate,
                            const float* w_up, const float* w_down, float* out, moe_dims m) {
  // Every dot product in portable::dot_lanes order, as the CUDA kernels sum.
  std::vector<float> gate(m.hidden), up(m.hidden), g(m.hidden), y(m.d);
  std::vector<float> lanes(portable::dot_lanes * std::max(m.hidden, m.d));
  for (std::size_t i = 0; i < m.tokens; ++i) {
    const float* xi = x + i * m.d;
    float* oi = out + i * m.d;
    for (std::size_t c = 0; c < m.d; ++c) oi[c] = 0.0f;
    for (std::size_t j = 0; j < m.k; ++j) {
      const auto e = static_cast<std::size_t>(ids[i * m.k + j]);
      const float* wg = w_gate + e * m.d * m.hidden;
      const float* wu = w_up + e * m.d * m.hidden;
      const float* wd = w_down + e * m.hidden * m.d;
      const auto x_at = [&](std::size_t c) { return xi[c]; };
      portable::lane_order_dots(
          m.d, m.hidden, x_at, [&](std::size_t c) { return wg + c * m.hidden; }, lanes.data(), gate.data());
      portable::lane_order_dots(
          m.d, m.hidden, x_at, [&](std::size_t c) { return wu + c * m.hidden; }, lanes.data(), up.data());
      // y = (silu(gate) * up) W_down.
      for (std::size_t f = 0; f < m.hidden; ++f) g[f] = silu_f32(gate[f]) * up[f];
      portable::lane_order_dots(
          m.hidden, m.d, [&](std::size_t f) { return g[f]; }, [&](std::size_t f) { return wd + f * m.d; }, lanes.data(),
          y.data());
      const float w = weights[i * m.k + j];
      for (std::size_t c = 0; c < m.d; ++c) oi[c] += w * y[c];
    }
  }
}

[[nodiscard]] inline bool top_k_routing_fits(const node& n, input_specs in) {
  if (!arity_is(n, in, 1, 2) || !has_rank(in[0], dtype::float32, 2) || n.outputs[0].shape.size() != 2) return false;
  const std::int64_t t = in[0]->shape[0], experts = in[0]->shape[1];
  const std::int64_t k = n.outputs[0].shape[1];
  return attr_int(n, "k", k) == k && k > 0 && k <= experts && is(&n.outputs[0], dtype::int64, {t, k}) &&
         is(&n.outputs[1], dtype::float32, {t, k});
}

[[nodiscard]] inline bool moe_experts_fits(const node& n, input_specs in) {
  if (!arity_is(n, in, 6, 1) || !has_rank(in[0], dtype::float32, 2) || !has_rank(in[1], dtype::int64, 2) ||
      !has_rank(in[3], dtype::float32, 3))
    return false;
  const std::int64_t t = in[0]->shape[0], d = in[0]->shape[1], k = in[1]->shape[1];
  const std::int64_t experts = in[3]->shape[0], hidden = in[3]->shape[2];
  return in[1]->shape[0] == t && in[3]->shape[1] == d && is(in[2], dtype::float32, {t, k}) &&
         is(in[4], dtype::float32, in[3]->shape) && is(in[5], dtype::float32, {experts, hidden, d}) &&
         is(&n.outputs[0], dtype::float32, in[0]->shape);
}

[[nodiscard]] inline moe_dims moe_shape(const tensor_spec& x, const tensor_spec& ids, const tensor_spec& w_gate) {
  return {static_cast<std::size_t>(x.shape[0]), static_cast<std::size_t>(x.shape[1]),
          static_cast<std::size_t>(ids.shape[1]), static_cast<std::size_t>(w_gate.shape[0]),
          static_cast<std::size_t>(w_gate.shape[2])};
}

[[nodiscard]] inline kernel_entry top_k_routing_kernel() {
  return {top_k_routing_fits,
          [](const kernel_call& c) {
            const auto& s = *c.inputs[0].spec;
            top_k_routing_f32(c.inputs[0].as<const float>(), c.outputs[0].as<std::int64_t>(), c.outputs[1].as<float>(),
                              static_cast<std::size_t>(s.shape[0]), static_cast<std::size_t>(s.shape[1]),
                              static_cast<std::size_t>(c.op.outputs[0].shape[1]));
          },
          {}};
}

[[nodiscard]] inline kernel_entry moe_experts_kernel() {
  return {moe_experts_fits,
          [](const kernel_call& c) {
            const auto m = moe_shape(*c.inputs[0].spec, *c.inputs[1].spec, *c.inputs[3].spec);
            const auto* ids = c.inputs[1].as<const std::int64_t>();
            for (std::size_t i = 0; i < m.tokens * m.k; ++i)
              if (ids[i] < 0 || static_cast<std::size_t>(ids[i]) >= m.experts)
                throw graph_error(
                    "", c.op.id, "inputs[1]",
                    "expert id " + std::to_string(ids[i]) + " is outside [0, " + std::to_string(m.experts) + ")");
            moe_experts_f32(c.inputs[0].as<const float>(), ids, c.inputs[2].as<const float>(),
                            c.inputs[3].as<const float>(), c.inputs[4].as<const float>(), c.inputs[5].as<const float>(),
                            c.outputs[0].as<float>(), m);
          },
          {}};
}

}  // namespace devpass::runtime::kernels
