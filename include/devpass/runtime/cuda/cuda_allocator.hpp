// devpass/runtime/cuda/cuda_allocator.hpp — the CUDA allocators, behind a plain C++ interface
// (compiled in devpass::cuda; including this header needs no CUDA headers).
//
// make_cuda_allocator(cuda:N): one cudaMalloc per allocation (the executor asks for one per
// planned arena), one non-blocking stream per device, events to order copies between devices,
// cudaMemcpyAsync for every copy; host sources that are not pinned are staged through pinned
// buffers (cudaHostAlloc) so the copy stays asynchronous (pageable destinations of d2h copies use
// the driver's staging, measured faster); device to device uses
// cudaMemcpyPeerAsync where cudaDeviceCanAccessPeer allows it, else pinned host memory.
// Making one also sets the device's default memory pool to keep freed memory, so kernels'
// stream-ordered scratch (cudaMallocAsync) is reused from call to call instead of mapped anew.
// make_pinned_host_allocator(): the cpu allocator to use with it (cudaHostAlloc'd memory, so
// copies from planned host arenas go straight to the DMA engine).
// Every CUDA failure throws runtime::device_error naming the op, the node, the device and
// cudaGetErrorString's text.
#pragma once

#include <memory>

#include "devpass/graph/device.hpp"
#include "devpass/runtime/allocator.hpp"

namespace devpass::cuda {

[[nodiscard]] std::unique_ptr<runtime::device_allocator> make_cuda_allocator(device where);
[[nodiscard]] std::unique_ptr<runtime::device_allocator> make_pinned_host_allocator();

}  // namespace devpass::cuda
