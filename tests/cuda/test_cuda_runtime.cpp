// The CUDA allocator and the executor on a real GPU; every case skips cleanly without one.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "../graph_dir.hpp"
#include "../read_graph_declared.hpp"
#include "devpass/passes/propagate_device.hpp"
#include "devpass/planning/memory_planner.hpp"
#include "devpass/runtime/cuda/cuda_allocator.hpp"
#include "devpass/runtime/cuda/device_query.hpp"
#include "devpass/runtime/graph_runner.hpp"
#include "devpass/runtime/kernels/builtin_fwd.hpp"

using namespace devpass;
using devpass::testing_support::read_graph_file;
using namespace devpass::runtime;

namespace {
bool no_gpu() {
  if (cuda::usable_device_count() > 0) return false;
  MESSAGE("skipped: no usable CUDA device (" << cuda::unavailable_reason() << ")");
  return true;
}
std::vector<std::byte> byte_pattern(std::size_t n) {
  std::vector<std::byte> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::byte>(i * 131 + 7);
  return v;
}
}  // namespace

TEST_CASE("cuda: copies round trip through pageable and pinned host memory and within the device") {
  if (no_gpu()) return;
  auto dev = cuda::make_cuda_allocator(cuda_device(0));
  auto pinned = cuda::make_pinned_host_allocator();
  CHECK_FALSE(dev->emulated());
  CHECK(dev->native_stream() != nullptr);
  const std::size_t n = (std::size_t{20} << 20) + 3;  // several staging chunks and a ragged tail
  const auto source = byte_pattern(n);
  device_buffer a(*dev, n, 256), b(*dev, n, 256), host(*pinned, n, 64);
  dev->copy_host_to_device(a.data(), source.data(), n, "h2d");
  dev->copy_device_to_device(b.data(), *dev, a.data(), n, "d2d");
  std::vector<std::byte> back(n);
  dev->copy_device_to_host(back.data(), b.data(), n, "d2h");
  CHECK(back == source);
  dev->copy_device_to_host(host.data(), a.data(), n, "d2h pinned");
  CHECK(std::memcmp(host.data(), source.data(), n) == 0);
  CHECK_THROWS_AS(dev->copy_device_to_host(back.data(), source.data(), 8, "foreign"), device_error);
}

TEST_CASE("cuda: device to device between two GPUs") {
  if (no_gpu()) return;
  if (cuda::usable_device_count() < 2) {
    MESSAGE("skipped: one CUDA device");
    return;
  }
  auto d0 = cuda::make_cuda_allocator(cuda_device(0));
  auto d1 = cuda::make_cuda_allocator(cuda_device(1));
  const auto source = byte_pattern(1 << 20);
  device_buffer a(*d0, source.size()), b(*d1, source.size());
  d0->copy_host_to_device(a.data(), source.data(), source.size());
  d1->copy_device_to_device(b.data(), *d0, a.data(), source.size());
  std::vector<std::byte> back(source.size());
  d1->copy_device_to_host(back.data(), b.data(), back.size());
  CHECK(back == source);
}

TEST_CASE("cuda: an impossible allocation names the op, the node and the device") {
  if (no_gpu()) return;
  auto dev = cuda::make_cuda_allocator(cuda_device(0));
  try {
    (void)dev->allocate(std::uint64_t{1} << 50, 256, "huge");
    FAIL("allocation of 1 PiB succeeded");
  } catch (const device_error& e) {
    CHECK(e.op() == "cudaMalloc");
    CHECK(e.node() == "huge");
    CHECK(e.device() == cuda_device(0));
    CHECK(std::string(e.what()).find("node 'huge': cudaMalloc on cuda:0: cudaErrorMemoryAllocation") == 0);
  }
}

TEST_CASE("cuda: every shared graph on the GPU computes the host reference's checksums, both policies") {
  if (no_gpu()) return;
  kernel_registry kernels;
  register_builtin_kernels(kernels);
  // The builtin kernels compute the host kernels' bits on the GPU (portable_math.hpp), and the
  // rest fall back to the opaque kernel on host copies, so checksums must be equal.
  const int gpus = cuda::usable_device_count();
  int graphs_run = 0;
  for (const char* folder : {"cases", "models"}) {
    for (const auto& entry : std::filesystem::directory_iterator(devpass::testing_support::graph_path(folder))) {
      const std::string name = entry.path().filename().string();
      CAPTURE(name);
      const graph original = read_graph_file(entry.path().string());
      int needed = 0;
      for (const device d : devices_of(original))
        if (!d.is_host()) needed = std::max(needed, d.index + 1);
      if (needed > gpus) {
        MESSAGE("skipped " << name << ": needs " << needed << " GPUs");
        continue;
      }
      const run_report reference = run_host_reference(original, kernels, {3, true});
      for (const copy_policy policy : {copy_policy::devpass, copy_policy::executorch}) {
        propagate_options options;
        options.policy = policy;
        graph g = original;
        (void)propagate_device(g, options);
        const memory_plan plan = plan_memory(g);
        const run_report placed = run_graph(g, plan, kernels, {3, true});
        CHECK_FALSE(placed.emulated);
        REQUIRE(placed.outputs.size() == reference.outputs.size());
        for (std::size_t i = 0; i < placed.outputs.size(); ++i)
          CHECK(placed.outputs[i].checksum == reference.outputs[i].checksum);
      }
      ++graphs_run;
    }
  }
  CHECK(graphs_run >= 9);  // the single-GPU shared graphs (cases and models)
}
