// Stream capture into CUDA graphs (see include/devpass/runtime/cuda/cuda_graph.hpp).
// Built with the host compiler against the CUDA runtime API; no Boost, Hana or doctest here.
#include "devpass/runtime/cuda/cuda_graph.hpp"

#include <cuda_runtime_api.h>

#include <string>
#include <string_view>

#include "devpass/runtime/allocator.hpp"

namespace devpass::cuda {
namespace {

void check(cudaError_t status, std::string_view op, device where) {
  if (status == cudaSuccess) return;
  (void)cudaGetLastError();
  throw runtime::device_error(std::string(op), "", where,
                              std::string(cudaGetErrorName(status)) + ": " + cudaGetErrorString(status));
}

class instantiated_graph final : public captured_graph {
 public:
  instantiated_graph(cudaGraph_t graph, device where) : graph_(graph) {
    check(cudaGraphInstantiate(&exec_, graph_, 0), "cudaGraphInstantiate", where);
  }
  ~instantiated_graph() override {
    if (exec_ != nullptr) (void)cudaGraphExecDestroy(exec_);
    if (graph_ != nullptr) (void)cudaGraphDestroy(graph_);
  }
  instantiated_graph(const instantiated_graph&) = delete;
  instantiated_graph& operator=(const instantiated_graph&) = delete;

  void launch(void* stream, device where) override {
    check(cudaGraphLaunch(exec_, static_cast<cudaStream_t>(stream)), "cudaGraphLaunch", where);
  }

 private:
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
};

}  // namespace

void begin_capture(void* stream, device where) {
  // Thread-local: other threads' unrelated CUDA calls do not invalidate this capture.
  check(cudaStreamBeginCapture(static_cast<cudaStream_t>(stream), cudaStreamCaptureModeThreadLocal),
        "cudaStreamBeginCapture", where);
}

std::unique_ptr<captured_graph> end_capture(void* stream, device where) {
  cudaGraph_t graph = nullptr;
  check(cudaStreamEndCapture(static_cast<cudaStream_t>(stream), &graph), "cudaStreamEndCapture", where);
  try {
    return std::make_unique<instantiated_graph>(graph, where);
  } catch (...) {
    (void)cudaGraphDestroy(graph);
    throw;
  }
}

void abort_capture(void* stream) noexcept {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(static_cast<cudaStream_t>(stream), &status) != cudaSuccess ||
      status == cudaStreamCaptureStatusNone) {
    (void)cudaGetLastError();
    return;
  }
  cudaGraph_t graph = nullptr;
  if (cudaStreamEndCapture(static_cast<cudaStream_t>(stream), &graph) == cudaSuccess && graph != nullptr)
    (void)cudaGraphDestroy(graph);
  (void)cudaGetLastError();  // an invalidated capture ends with an error; the stream is usable again
}

}  // namespace devpass::cuda
