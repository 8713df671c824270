// CUDA builds of the dense builtin kernels (elementwise, matmul, rms_norm, softmax, argmax,
// arange, embedding). Conventions: include/devpass/runtime/kernels/*.hpp; interface: runtime/cuda/kernels.hpp.
// Every sum runs in the host kernel's order (portable_math.hpp: block order for row reductions,
// dot_lanes order for matmul), so the results are the host's bits.
#include "kernels_common.cuh"

namespace devpass::cuda::kernels {
namespace {

using namespace detail;

// op: 0 add, 1 mul, 2 silu, 3 gelu
__global__ void elementwise(int op, const float* a, const float* b, float* out, std::size_t n) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    switch (op) {
      case 0: out[i] = a[i] + b[i]; break;
      case 1: out[i] = a[i] * b[i]; break;
      case 2: out[i] = portable::silu_f32(a[i]); break;
      default: out[i] = portable::gelu_f32(a[i]); break;
    }
  }
}

status launch_elementwise(int op, const float* a, const float* b, float* out, std::size_t n, void* stream) {
  elementwise<<<blocks_for(n), threads, 0, as_stream(stream)>>>(op, a, b, out, n);
  return launched();
}

// A block is dot_tile consecutive columns (threadIdx.x, so the loads of b coalesce) times
// dot_lanes lanes (threadIdx.y): lane t sums products t, t + dot_lanes, ... of its column in
// order, then the lanes combine pairwise in shared memory: portable::lane_order_dots' order.
// Rows go over blockIdx.y (looping past 65535), batches over blockIdx.z.
__global__ void matmul(const float* a, const float* b, float* out, std::size_t m, std::size_t k, std::size_t n) {
  __shared__ float partial[dot_lanes][dot_tile];
  const std::size_t s = blockIdx.z, j = blockIdx.x * static_cast<std::size_t>(dot_tile) + threadIdx.x;
  const unsigned lane = threadIdx.y;
  for (std::size_t i = blockIdx.y; i < m; i += gridDim.y) {
    float sum = 0.0f;
    if (j < n) {
      const float* as = a + s * m * k + i * k;
      const float* bs = b + s * k * n + j;
#pragma unroll 8  // loads run ahead of the dependent sum
      for (std::size_t p = lane; p < k; p += dot_lanes) sum = sum + as[p] * bs[p * n];
    }
    const float total = lane_tree(partial, sum);
    if (lane == 0 && j < n) out[s * m * n + i * n + j] = total;
  }
}

__global__ void rms_norm(const float* x, const float* weight, float* out, std::size_t d, float eps) {
  __shared__ float scratch[threads];
  const float* xr = x + blockIdx.x * d;
  float* o = out + blockIdx.x * d;
  float sum = 0.0f;
  for (std::size_t i = threadIdx.x; i < d; i += threads) sum += xr[i] * xr[i];
  sum = block_reduce<false>(sum, scratch);
  const float scale = 1.0f / sqrtf(sum / static_cast<float>(d) + eps);
  for (std::size_t i = threadIdx.x; i < d; i += threads) o[i] = xr[i] * scale * weight[i];
}

__global__ void softmax(const float* x, float* out, std::size_t n) {
  __shared__ float scratch[threads];
  const float* xr = x + blockIdx.x * n;
  float* o = out + blockIdx.x * n;
  float top = -INFINITY;
  for (std::size_t i = threadIdx.x; i < n; i += threads) top = fmaxf(top, xr[i]);
  top = block_reduce<true>(top, scratch);
  float sum = 0.0f;
  for (std::size_t i = threadIdx.x; i < n; i += threads) {
    o[i] = portable::exp_f32(xr[i] - top);
    sum += o[i];
  }
  sum = block_reduce<false>(sum, scratch);
  for (std::size_t i = threadIdx.x; i < n; i += threads) o[i] /= sum;
}

__global__ void argmax(const float* x, std::int64_t* out, std::size_t rows, std::size_t n) {
  const std::size_t r = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (r >= rows) return;
  const float* row = x + r * n;
  std::size_t best = 0;
  for (std::size_t i = 1; i < n; ++i)
    if (row[i] > row[best] || (row[best] != row[best] && row[i] == row[i])) best = i;
  out[r] = static_cast<std::int64_t>(best);
}

__global__ void embedding(const float* table, const std::int64_t* ids, float* out, std::size_t tokens, std::size_t rows,
                          std::size_t d) {
  const std::size_t total = tokens * d;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const std::int64_t id = ids[i / d];
    out[i] = id >= 0 && static_cast<std::size_t>(id) < rows ? table[static_cast<std::size_t>(id) * d + i % d] : 0.0f;
  }
}

__global__ void arange(const std::int64_t* start, std::int64_t* out, std::size_t n) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i < n) out[i] = start[0] + static_cast<std::int64_t>(i);
}

}  // namespace

status add_f32(const float* a, const float* b, float* out, std::size_t n, void* stream) {
  return launch_elementwise(0, a, b, out, n, stream);
}
status mul_f32(const float* a, const float* b, float* out, std::size_t n, void* stream) {
  return launch_elementwise(1, a, b, out, n, stream);
}
status silu_f32(const float* x, float* out, std::size_t n, void* stream) {
  return launch_elementwise(2, x, nullptr, out, n, stream);
}
status gelu_f32(const float* x, float* out, std::size_t n, void* stream) {
  return launch_elementwise(3, x, nullptr, out, n, stream);
}

status matmul_f32(const float* a, const float* b, float* out, std::size_t batch, std::size_t m, std::size_t k,
                  std::size_t n, void* stream) {
  if (batch == 0 || m == 0 || n == 0) return nullptr;
  const dim3 grid(static_cast<unsigned>((n + dot_tile - 1) / dot_tile), static_cast<unsigned>(m < 65535 ? m : 65535),
                  static_cast<unsigned>(batch));
  matmul<<<grid, dim3(dot_tile, dot_lanes), 0, as_stream(stream)>>>(a, b, out, m, k, n);
  return launched();
}

status rms_norm_f32(const float* x, const float* weight, float* out, std::size_t rows, std::size_t d, float eps,
                    void* stream) {
  if (rows == 0) return nullptr;
  rms_norm<<<static_cast<unsigned>(rows), threads, 0, as_stream(stream)>>>(x, weight, out, d, eps);
  return launched();
}

status softmax_f32(const float* x, float* out, std::size_t rows, std::size_t n, void* stream) {
  if (rows == 0) return nullptr;
  softmax<<<static_cast<unsigned>(rows), threads, 0, as_stream(stream)>>>(x, out, n);
  return launched();
}

status argmax_f32(const float* x, std::int64_t* out, std::size_t rows, std::size_t n, void* stream) {
  if (rows == 0) return nullptr;
  argmax<<<blocks_for(rows), threads, 0, as_stream(stream)>>>(x, out, rows, n);
  return launched();
}

status arange_i64(const std::int64_t* start, std::int64_t* out, std::size_t n, void* stream) {
  if (n == 0) return nullptr;
  arange<<<blocks_for(n), threads, 0, as_stream(stream)>>>(start, out, n);
  return launched();
}

status embedding_f32(const float* table, const std::int64_t* ids, float* out, std::size_t tokens, std::size_t rows,
                     std::size_t d, void* stream) {
  embedding<<<blocks_for(tokens * d), threads, 0, as_stream(stream)>>>(table, ids, out, tokens, rows, d);
  return launched();
}

}  // namespace devpass::cuda::kernels
