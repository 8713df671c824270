// Graph mode on a real GPU: segments captured as CUDA graphs on the first run and launched on
// later ones must give a normal execute()'s bytes, on the device's own stream and on a caller's.
// Every case skips cleanly without a GPU.
#include <doctest/doctest.h>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "../graph_dir.hpp"
#include "../read_graph_declared.hpp"
#include "devpass/passes/propagate_device.hpp"
#include "devpass/planning/memory_planner.hpp"
#include "devpass/runtime/cuda/device_query.hpp"
#include "devpass/runtime/default_allocators.hpp"
#include "devpass/runtime/kernels/builtin_fwd.hpp"
#include "devpass/runtime/prepared_method.hpp"

using namespace devpass;
using devpass::testing_support::read_graph_file;
using namespace devpass::runtime;

namespace {
bool no_gpu() {
  if (cuda::usable_device_count() > 0) return false;
  MESSAGE("skipped: no usable CUDA device (" << cuda::unavailable_reason() << ")");
  return true;
}

std::vector<std::vector<std::byte>> bytes_of(const execution_result& r) {
  std::vector<std::vector<std::byte>> out;
  for (const tensor& t : r.outputs) out.push_back(read_to_host(t));
  return out;
}

// A stream of cuda:0 the test owns, destroyed after a final wait.
struct owned_stream {
  cudaStream_t stream = nullptr;
  owned_stream() { REQUIRE(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) == cudaSuccess); }
  ~owned_stream() {
    (void)cudaStreamSynchronize(stream);
    (void)cudaStreamDestroy(stream);
  }
};
}  // namespace

TEST_CASE(
    "cuda graph replay: every single-GPU shared graph replays the bytes of a normal run, own and caller's stream") {
  if (no_gpu()) return;
  kernel_registry kernels;
  register_builtin_kernels(kernels);
  int graphs_run = 0, captured = 0;
  for (const char* folder : {"cases", "models"}) {
    for (const auto& entry : std::filesystem::directory_iterator(devpass::testing_support::graph_path(folder))) {
      const std::string name = entry.path().filename().string();
      CAPTURE(name);
      graph g = read_graph_file(entry.path().string());
      int needed = 0;
      for (const device d : devices_of(g))
        if (!d.is_host()) needed = std::max(needed, d.index + 1);
      if (needed > 1) {
        MESSAGE("skipped " << name << ": a CUDA graph is captured from one device's stream");
        continue;
      }
      (void)propagate_device(g);
      const memory_plan plan = plan_memory(g);
      default_allocators allocators = make_default_allocators(devices_of(g), true);
      REQUIRE_FALSE(allocators.emulated);
      for (const bool caller_stream : {false, true}) {
        CAPTURE(caller_stream);
        prepared_method method(g, plan, allocators.registry, kernels,
                               {.seed = 3, .graphs = graph_mode::when_capturable});
        for (const std::string& why : method.not_replayed()) MESSAGE(name << ": " << why);
        captured += method.replayed_segments() != 0;
        owned_stream stream;
        const device_stream streams[] = {{cuda_device(0), stream.stream}};
        for (const std::uint64_t seed : {1u, 2u, 3u}) {
          const auto inputs = make_method_inputs(g, allocators.registry, seed);
          const execution_result normal = execute(g, plan, allocators.registry, kernels, inputs, {.seed = 3});
          const execution_result replay = method.run(
              inputs,
              {.streams = caller_stream ? std::span<const device_stream>(streams) : std::span<const device_stream>{}});
          // The run did not wait for cuda:0 when given its stream: the caller does, before reading.
          if (caller_stream) REQUIRE(cudaStreamSynchronize(stream.stream) == cudaSuccess);
          CHECK(bytes_of(replay) == bytes_of(normal));
          CHECK(replay.copies.h2d.count == normal.copies.h2d.count);
        }
      }
      ++graphs_run;
    }
  }
  CHECK(graphs_run >= 9);
  MESSAGE(captured << " of " << 2 * graphs_run << " prepared methods replayed CUDA graphs");
  CHECK(captured >= 1);  // segments with a GPU kernel lacking a CUDA implementation run node by node
}
