#include "devpass/runtime/cuda/device_query.hpp"

#include <cuda_runtime_api.h>

namespace devpass::cuda {

int usable_device_count() noexcept {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();  // clear the sticky error so later probes start clean
    return 0;
  }
  return count;
}

std::string unavailable_reason() {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    (void)cudaGetLastError();
    return cudaGetErrorString(status);
  }
  return count == 0 ? "no CUDA device" : "";
}

}  // namespace devpass::cuda
