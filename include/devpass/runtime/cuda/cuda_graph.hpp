// devpass/runtime/cuda/cuda_graph.hpp — stream capture into a CUDA graph and its replay, behind
// a plain C++ interface (compiled in devpass::cuda; including this header needs no CUDA headers,
// calling it needs DEVPASS_HAS_CUDA).
//
//   begin_capture(stream, where);               // cudaStreamBeginCapture (thread-local mode)
//   ... issue copies and kernels on `stream` ... // recorded, not run
//   auto graph = end_capture(stream, where);    // cudaStreamEndCapture + cudaGraphInstantiate
//   graph->launch(stream, where);               // cudaGraphLaunch: runs the recorded work again
//
// A captured graph keeps the addresses it was captured with: only work whose buffers stay where
// they are from call to call may be captured (planning/capturability.hpp decides which).
// abort_capture() ends a capture that failed half-way so the stream is usable again. Every CUDA
// failure throws runtime::device_error naming the op, the device and CUDA's error text.
#pragma once

#include <memory>

#include "devpass/graph/device.hpp"

namespace devpass::cuda {

class captured_graph {
 public:
  virtual ~captured_graph() = default;
  // Queues one replay of the captured work on `stream` (any stream of the captured device).
  virtual void launch(void* stream, device where) = 0;
};

void begin_capture(void* stream, device where);
[[nodiscard]] std::unique_ptr<captured_graph> end_capture(void* stream, device where);
void abort_capture(void* stream) noexcept;

}  // namespace devpass::cuda
