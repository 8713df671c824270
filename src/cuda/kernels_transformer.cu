// CUDA builds of the transformer builtin kernels (rotary, attention over a KV cache, top-k
// routing, MoE experts). Conventions: include/devpass/runtime/kernels/*.hpp; interface:
// runtime/cuda/kernels.hpp. Every sum runs in the host kernel's order (portable_math.hpp), so the
// results are the host's bits.
#include "kernels_common.cuh"

namespace devpass::cuda::kernels {
namespace {

using namespace detail;

__global__ void rotary(const float* x, const std::int64_t* positions, float* out, std::size_t rows, std::size_t n,
                       std::size_t head_dim, double log_theta) {
  const std::size_t half = head_dim / 2, per_row = (n / head_dim) * half, total = rows * per_row;
  for (std::size_t t = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; t < total;
       t += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const std::size_t r = t / per_row, h = (t % per_row) / half * head_dim, i = t % half;
    const portable::sin_cos sc = portable::sin_cos_f64(portable::rope_angle(positions[r], i, head_dim, log_theta));
    const auto c = static_cast<float>(sc.cos);
    const auto s = static_cast<float>(sc.sin);
    const float a = x[r * n + h + i], b = x[r * n + h + i + half];
    out[r * n + h + i] = a * c - b * s;
    out[r * n + h + i + half] = b * c + a * s;
  }
}

__global__ void write_cache(const float* k, const float* v, const std::int64_t* positions, float* cache,
                            std::size_t tokens, std::size_t n, std::size_t rows) {
  const std::size_t total = tokens * n, plane = rows * n;
  for (std::size_t t = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; t < total;
       t += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const std::int64_t p = positions[t / n];
    if (p < 0 || static_cast<std::size_t>(p) >= rows) continue;
    cache[static_cast<std::size_t>(p) * n + t % n] = k[t];
    cache[plane + static_cast<std::size_t>(p) * n + t % n] = v[t];
  }
}

// One block per (token, head); dynamic shared memory: `rows` scores then `threads` scratch.
__global__ void attend(const float* q, const std::int64_t* positions, const float* cache, float* out, std::size_t n,
                       std::size_t rows, std::size_t head_dim) {
  extern __shared__ float shared[];
  float* scores = shared;
  float* scratch = shared + rows;
  const std::size_t i = blockIdx.x, h = blockIdx.y * head_dim;
  const float* keys = cache;
  const float* values = cache + rows * n;
  float* o = out + i * n + h;
  const std::int64_t p = positions[i];
  if (p < 0 || static_cast<std::size_t>(p) >= rows) {
    for (std::size_t e = threadIdx.x; e < head_dim; e += threads) o[e] = 0.0f;
    return;
  }
  const auto last = static_cast<std::size_t>(p);
  const float scale = 1.0f / sqrtf(static_cast<float>(head_dim));
  const float* qi = q + i * n + h;
  float top = -INFINITY;
  for (std::size_t j = threadIdx.x; j <= last; j += threads) {
    float dot = 0.0f;
    for (std::size_t e = 0; e < head_dim; ++e) dot = __fadd_rn(dot, __fmul_rn(qi[e], keys[j * n + h + e]));
    scores[j] = dot * scale;
    top = fmaxf(top, scores[j]);
  }
  top = block_reduce<true>(top, scratch);
  float sum = 0.0f;
  for (std::size_t j = threadIdx.x; j <= last; j += threads) {
    scores[j] = portable::exp_f32(scores[j] - top);
    sum += scores[j];
  }
  sum = block_reduce<false>(sum, scratch);
  for (std::size_t e = threadIdx.x; e < head_dim; e += threads) {
    float acc = 0.0f;
    for (std::size_t j = 0; j <= last; ++j) acc = __fadd_rn(acc, __fmul_rn(scores[j] / sum, values[j * n + h + e]));
    o[e] = acc;
  }
}

// One thread per row: the k largest logits, largest first, ties to the lower id; then softmax.
__global__ void top_k_routing(const float* logits, std::int64_t* ids, float* weights, std::size_t rows,
                              std::size_t experts, std::size_t k) {
  const std::size_t r = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (r >= rows) return;
  const float* row = logits + r * experts;
  for (std::size_t j = 0; j < k; ++j) {
    std::size_t best = experts;
    for (std::size_t e = 0; e < experts; ++e) {
      bool taken = false;
      for (std::size_t t = 0; t < j; ++t) taken = taken || ids[r * k + t] == static_cast<std::int64_t>(e);
      if (!taken && (best == experts || row[e] > row[best])) best = e;
    }
    ids[r * k + j] = static_cast<std::int64_t>(best);
  }
  const float top = row[ids[r * k]];
  float sum = 0.0f;
  for (std::size_t j = 0; j < k; ++j) {
    weights[r * k + j] = portable::exp_f32(row[ids[r * k + j]] - top);
    sum += weights[r * k + j];
  }
  for (std::size_t j = 0; j < k; ++j) weights[r * k + j] /= sum;
}

// The MoE block in two kernels, so that even one decode token spreads over many blocks:
// expert_hidden writes g[i, j, f] = silu(x[i] W_gate[e]) * (x[i] W_up[e]) for e = ids[i, j],
// expert_down sums out[i, c] = sum_j w[i, j] * (g[i, j] W_down[e])[c], j in order. Blocks are
// dot_tile outputs (f, then c) times dot_lanes lanes; every dot product sums in
// portable::lane_order_dots' order, as the host kernel does. Ids outside [0, experts) are skipped
// (the whole block takes the same branch, so the lane_tree barriers stay uniform).
__global__ void expert_hidden(const float* x, const std::int64_t* ids, const float* w_gate, const float* w_up, float* g,
                              std::size_t d, std::size_t k, std::size_t experts, std::size_t hidden) {
  __shared__ float partial[dot_lanes][dot_tile];
  const std::size_t row = blockIdx.x;  // i * k + j
  const std::size_t f = blockIdx.y * static_cast<std::size_t>(dot_tile) + threadIdx.x;
  const std::int64_t id = ids[row];
  if (id < 0 || static_cast<std::size_t>(id) >= experts) return;
  const auto e = static_cast<std::size_t>(id);
  const float* xi = x + (row / k) * d;
  const float* wg = w_gate + e * d * hidden;
  const float* wu = w_up + e * d * hidden;
  float gate = 0.0f, up = 0.0f;
  if (f < hidden) {
#pragma unroll 8  // loads run ahead of the two dependent sums
    for (std::size_t c = threadIdx.y; c < d; c += dot_lanes) {
      gate = gate + xi[c] * wg[c * hidden + f];
      up = up + xi[c] * wu[c * hidden + f];
    }
  }
  gate = lane_tree(partial, gate);
  up = lane_tree(partial, up);
  if (threadIdx.y == 0 && f < hidden) g[row * hidden + f] = portable::silu_f32(gate) * up;
}

__global__ void expert_down(const std::int64_t* ids, const float* weights, const float* g, const float* w_down,
                            float* out, std::size_t d, std::size_t k, std::size_t experts, std::size_t hidden) {
  __shared__ float partial[dot_lanes][dot_tile];
  const std::size_t i = blockIdx.x;
  const std::size_t c = blockIdx.y * static_cast<std::size_t>(dot_tile) + threadIdx.x;
  float o = 0.0f;
  for (std::size_t j = 0; j < k; ++j) {
    const std::int64_t id = ids[i * k + j];
    if (id < 0 || static_cast<std::size_t>(id) >= experts) continue;
    const float* gj = g + (i * k + j) * hidden;
    const float* wd = w_down + static_cast<std::size_t>(id) * hidden * d;
    float y = 0.0f;
    if (c < d) {
#pragma unroll 8
      for (std::size_t f = threadIdx.y; f < hidden; f += dot_lanes) y = y + gj[f] * wd[f * d + c];
    }
    y = lane_tree(partial, y);
    o = o + weights[i * k + j] * y;
  }
  if (threadIdx.y == 0 && c < d) out[i * d + c] = o;
}

}  // namespace

status rotary_f32(const float* x, const std::int64_t* positions, float* out, std::size_t rows, std::size_t n,
                  std::size_t head_dim, double theta, void* stream) {
  // log(theta) on the host, as the host kernel computes it, so both see the same angle.
  rotary<<<blocks_for(rows * n / 2), threads, 0, as_stream(stream)>>>(x, positions, out, rows, n, head_dim,
                                                                      std::log(theta));
  return launched();
}

status attention_f32(const float* q, const float* k, const float* v, const float* cache, const std::int64_t* positions,
                     float* out, float* cache_out, std::size_t tokens, std::size_t width, std::size_t cache_rows,
                     std::size_t head_dim, void* stream) {
  const cudaStream_t s = as_stream(stream);
  if (cache_out != cache) {
    const cudaError_t e =
        cudaMemcpyAsync(cache_out, cache, 2 * cache_rows * width * sizeof(float), cudaMemcpyDeviceToDevice, s);
    if (e != cudaSuccess) return cudaGetErrorString(e);
  }
  if (tokens == 0) return nullptr;
  write_cache<<<blocks_for(tokens * width), threads, 0, s>>>(k, v, positions, cache_out, tokens, width, cache_rows);
  if (const status st = launched()) return st;
  const dim3 grid(static_cast<unsigned>(tokens), static_cast<unsigned>(width / head_dim));
  const std::size_t shared = (cache_rows + threads) * sizeof(float);
  attend<<<grid, threads, shared, s>>>(q, positions, cache_out, out, width, cache_rows, head_dim);
  return launched();
}

status top_k_routing_f32(const float* logits, std::int64_t* ids, float* weights, std::size_t rows, std::size_t experts,
                         std::size_t k, void* stream) {
  if (rows == 0) return nullptr;
  top_k_routing<<<blocks_for(rows), threads, 0, as_stream(stream)>>>(logits, ids, weights, rows, experts, k);
  return launched();
}

status moe_experts_f32(const float* x, const std::int64_t* ids, const float* weights, const float* w_gate,
                       const float* w_up, const float* w_down, float* out, std::size_t tokens, std::size_t d,
                       std::size_t k, std::size_t experts, std::size_t hidden, void* stream) {
  if (tokens == 0 || d == 0) return nullptr;
  const cudaStream_t s = as_stream(stream);
  const dim3 block(dot_tile, dot_lanes);
  float* g = nullptr;  // the hidden activations, stream-ordered scratch
  if (tokens * k * hidden != 0) {
    const cudaError_t e = cudaMallocAsync(reinterpret_cast<void**>(&g), tokens * k * hidden * sizeof(float), s);
    if (e != cudaSuccess) return cudaGetErrorString(e);
    const dim3 grid(static_cast<unsigned>(tokens * k), static_cast<unsigned>((hidden + dot_tile - 1) / dot_tile));
    expert_hidden<<<grid, block, 0, s>>>(x, ids, w_gate, w_up, g, d, k, experts, hidden);
  }
  status st = launched();
  if (st == nullptr) {
    const dim3 grid(static_cast<unsigned>(tokens), static_cast<unsigned>((d + dot_tile - 1) / dot_tile));
    expert_down<<<grid, block, 0, s>>>(ids, weights, g, w_down, out, d, k, experts, hidden);
    st = launched();
  }
  if (g != nullptr) {
    const cudaError_t e = cudaFreeAsync(g, s);
    if (st == nullptr && e != cudaSuccess) st = cudaGetErrorString(e);
  }
  return st;
}

}  // namespace devpass::cuda::kernels
