// Shared device helpers of src/cuda/kernels_*.cu (included only from .cu files).
// exp, erf, sin/cos and the activations come from portable_math.hpp, the same code the host
// kernels run, and reductions follow its block order: with --fmad=false (DevpassCuda.cmake) the
// CUDA kernels compute the host kernels' bits.
#pragma once

#include <cuda_runtime.h>

#include "devpass/runtime/kernels/cuda_kernels.hpp"
#include "devpass/runtime/kernels/portable_math.hpp"

namespace devpass::cuda::kernels::detail {

constexpr int threads = devpass::runtime::kernels::portable::block_lanes;
namespace portable = devpass::runtime::kernels::portable;

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

}  // namespace devpass::cuda::kernels::detail
