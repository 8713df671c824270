// Shared device helpers of src/cuda/kernels_*.cu (included only from .cu files).
// exp, erf, sin/cos and the activations come from portable_math.hpp, the same code the host
// kernels run, and reductions follow its block order: with --fmad=false (devpassCuda.cmake) the
// CUDA kernels compute the host kernels' bits.
#pragma once

#include <cuda_runtime.h>

#include "devpass/runtime/cuda/kernels.hpp"
#include "devpass/runtime/kernels/portable_math.hpp"

namespace devpass::cuda::kernels::detail {

namespace portable = devpass::runtime::kernels::portable;
constexpr int threads = portable::block_lanes;

inline cudaStream_t as_stream(void* s) { return static_cast<cudaStream_t>(s); }
inline unsigned blocks_for(std::size_t n) {
  const std::size_t b = (n + threads - 1) / threads;
  return static_cast<unsigned>(b < 65535 ? (b == 0 ? 1 : b) : 65535);
}
inline status launched() {
  const cudaError_t e = cudaGetLastError();
  return e == cudaSuccess ? nullptr : cudaGetErrorString(e);
}

// Block-wide sum or max of one value per thread in a fixed tree order (deterministic, and the
// order portable::block_order_sum reproduces on the host); requires blockDim.x == threads and
// `scratch` of `threads` floats.
template <bool is_max>
__device__ float block_reduce(float v, float* scratch) {
  scratch[threadIdx.x] = v;
  __syncthreads();
  for (int width = threads / 2; width > 0; width /= 2) {
    if (threadIdx.x < width) {
      const float other = scratch[threadIdx.x + width];
      scratch[threadIdx.x] = is_max ? fmaxf(scratch[threadIdx.x], other) : scratch[threadIdx.x] + other;
    }
    __syncthreads();
  }
  const float result = scratch[0];
  __syncthreads();
  return result;
}

// Dot products in portable::dot_lanes order: a block of dot_tile outputs (threadIdx.x) times
// dot_lanes lanes (threadIdx.y). lane_tree combines one output's lane partial sums pairwise
// (lane t += lane t + w, w = dot_lanes/2, ..., 1) and returns the total to every lane; every
// thread of the block must call it.
constexpr int dot_lanes = portable::dot_lanes;
constexpr int dot_tile = 32;

__device__ inline float lane_tree(float (&partial)[dot_lanes][dot_tile], float mine) {
  partial[threadIdx.y][threadIdx.x] = mine;
  __syncthreads();
  for (unsigned width = dot_lanes / 2; width > 0; width /= 2) {
    if (threadIdx.y < width)
      partial[threadIdx.y][threadIdx.x] = partial[threadIdx.y][threadIdx.x] + partial[threadIdx.y + width][threadIdx.x];
    __syncthreads();
  }
  const float total = partial[0][threadIdx.x];
  __syncthreads();  // the next call may overwrite partial
  return total;
}

}  // namespace devpass::cuda::kernels::detail
