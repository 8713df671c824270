// devpass/runtime/kernels/attention.hpp — causal multi-head attention over a KV cache.
//
// Convention:
//   attention (q: f32 [t, n], k: f32 [t, n], v: f32 [t, n], cache: f32 [2, S, n], positions: i64 [t])
//          -> (out: f32 [t, n], cache': f32 [2, S, n])
//   attrs {"head_dim": h (default n)}; n % h == 0. cache[0] holds keys, cache[1] values, one row
//   per position. cache' is cache with row positions[i] of the keys set to k[i] and of the values
//   to v[i]; then query row i, head g, attends cache' rows 0..positions[i] (causal):
//     out[i, g] = sum_j softmax_j(q[i, g] . K[j, g] / sqrt(h)) V[j, g]
//   Decode is t = 1 at the next position; prefill is t prompt rows at positions 0..t-1. The cache
//   is functional (a new output), so the graph stays a dataflow graph; the executor may alias it.
//   A position outside [0, S) is an error naming the node (host) or leaves its row untouched (CUDA).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "devpass/runtime/kernel.hpp"
#include "devpass/runtime/kernels/attrs.hpp"
#include "devpass/runtime/kernels/portable_math.hpp"
#include "devpass/runtime/kernels/signature.hpp"

namespace devpass::runtime::kernels {

struct attention_dims {
  std::size_t tokens, width, cache_rows, head_dim;
};

// Precondition: every positions[i] is in [0, cache_rows).
inline void attention_f32(const float* q, const float* k, const float* v, const float* cache,
                          const std::int64_t* positions, float* out, float* cache_out, attention_dims d) {
  const std::size_t n = d.width, plane = d.cache_rows * n;
  if (cache_out != cache) std::memcpy(cache_out, cache, 2 * plane * sizeof(float));
  float* keys = cache_out;
  float* values = cache_out + plane;
  for (std::size_t i = 0; i < d.tokens; ++i) {
    const auto p = static_cast<std::size_t>(positions[i]);
    std::memcpy(keys + p * n, k + i * n, n * sizeof(float));
    std::memcpy(values + p * n, v + i * n, n * sizeof(float));
  }
  const float scale = 1.0f / std::sqrt(static_cast<float>(d.head_dim));
  std::vector<float> scores(d.cache_rows);
  for (std::size_t i = 0; i < d.tokens; ++i) {
    const auto last = static_cast<std::size_t>(positions[i]);
    for (std::size_t h = 0; h < n; h += d.head_dim) {
      const float* qi = q + i * n + h;
      float top = -INFINITY;
      for (std::size_t j = 0; j <= last; ++j) {
        float dot = 0.0f;
        for (std::size_t e = 0; e < d.head_dim; ++e) dot += qi[e] * keys[j * n + h + e];
        scores[j] = dot * scale;
        top = std::max(top, scores[j]);
      }
      for (std::size_t j = 0; j <= last; ++j) scores[j] = portable::exp_f32(scores[j] - top);
      const float sum = portable::block_order_sum(last + 1, [&](std::size_t j) { return scores[j]; });
      float* o = out + i * n + h;
      for (std::size_t e = 0; e < d.head_dim; ++e) o[e] = 0.0f;
      for (std::size_t j = 0; j <= last; ++j) {
        const float w = scores[j] / sum;
        for (std::size_t e = 0; e < d.head_dim; ++e) o[e] += w * values[j * n + h + e];
      }
    }
  }
}

[[nodiscard]] inline bool attention_fits(const node& n, input_specs in) {
  if (!arity_is(n, in, 5, 2) || !has_rank(in[0], dtype::float32, 2) || !has_rank(in[3], dtype::float32, 3))
    return false;
  const auto& qs = in[0]->shape;
  const auto& cs = in[3]->shape;
  const std::int64_t h = attr_int(n, "head_dim", qs[1]);
  return h > 0 && qs[1] % h == 0 && is(in[1], dtype::float32, qs) && is(in[2], dtype::float32, qs) && cs[0] == 2 &&
         cs[2] == qs[1] && is(in[4], dtype::int64, {qs[0]}) && is(&n.outputs[0], dtype::float32, qs) &&
         is(&n.outputs[1], dtype::float32, cs);
}

[[nodiscard]] inline attention_dims attention_shape(const node& n, const tensor_spec& q, const tensor_spec& cache) {
  return {static_cast<std::size_t>(q.shape[0]), static_cast<std::size_t>(q.shape[1]),
          static_cast<std::size_t>(cache.shape[1]), static_cast<std::size_t>(attr_int(n, "head_dim", q.shape[1]))};
}

// Throws graph_error naming the node when a position is outside the cache.
inline void check_positions(const node& n, const std::int64_t* positions, std::size_t tokens, std::size_t rows,
                            std::uint32_t slot) {
  for (std::size_t i = 0; i < tokens; ++i)
    if (positions[i] < 0 || static_cast<std::size_t>(positions[i]) >= rows)
      throw graph_error(
          "", n.id, "inputs[" + std::to_string(slot) + "]",
          "position " + std::to_string(positions[i]) + " is outside the cache's " + std::to_string(rows) + " rows");
}

[[nodiscard]] inline kernel_entry attention_kernel() {
  return {attention_fits,
          [](const kernel_call& c) {
            const auto d = attention_shape(c.op, *c.inputs[0].spec, *c.inputs[3].spec);
            const auto* positions = c.inputs[4].as<const std::int64_t>();
            check_positions(c.op, positions, d.tokens, d.cache_rows, 4);
            attention_f32(c.inputs[0].as<const float>(), c.inputs[1].as<const float>(), c.inputs[2].as<const float>(),
                          c.inputs[3].as<const float>(), positions, c.outputs[0].as<float>(), c.outputs[1].as<float>(),
                          d);
          },
          {}};
}

}  // namespace devpass::runtime::kernels
