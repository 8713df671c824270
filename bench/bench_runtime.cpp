// bench_runtime — the executor's cost per node on the emulated path; where a GPU is usable, its
// cost per node there against the same kernels launched by hand, and the CUDA allocator's copy
// bandwidth against a raw cudaMemcpyAsync of the same bytes in the same run (the ratio is the
// figure to watch; goal >= 0.9); and graph mode's replay (emulated, and as a CUDA graph on a GPU)
// against the same prepared method run node by node. JSON lines as scripts/bench expects.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "bench_report.hpp"
#include "devpass/planning/memory_planner.hpp"
#include "devpass/runtime/default_allocators.hpp"
#include "devpass/runtime/executor.hpp"
#include "devpass/runtime/prepared_method.hpp"
#if defined(DEVPASS_HAS_CUDA)
#include <cuda_runtime_api.h>

#include "devpass/runtime/cuda/cuda_allocator.hpp"
#include "devpass/runtime/cuda/device_query.hpp"
#include "devpass/runtime/cuda/kernels.hpp"
#include "devpass/runtime/kernels/builtin.hpp"
#endif

using namespace devpass;
using namespace devpass::runtime;

namespace {

void emit(const std::string& metric, double value, const char* unit) {
  devpass::bench::emit("runtime", metric, value, unit);
}
using devpass::bench::best_seconds;

// input -> h2d -> n delegates on cuda:0 -> d2h -> output. Each delegate runs `kernel` on the
// previous value (in every one of its `arity` slots).
graph chain(std::uint32_t n, const std::string& kernel = "inc", std::uint32_t arity = 1) {
  const tensor_spec s{dtype::float32, {16}};
  graph g;
  node in{.id = "x", .op = op_kind::input, .outputs = {s}};
  vertex prev = add_node(g, in);
  node h2d{.id = "x@h2d", .op = op_kind::h2d_copy, .device = cuda_device(0), .outputs = {s}};
  const vertex c = add_node(g, h2d);
  connect(g, {prev, 0}, c, 0);
  prev = c;
  for (std::uint32_t i = 0; i < n; ++i) {
    node d{.id = "d" + std::to_string(i),
           .op = op_kind::delegate,
           .device = cuda_device(0),
           .arity = arity,
           .kernel = kernel,
           .outputs = {s}};
    const vertex v = add_node(g, d);
    for (std::uint32_t slot = 0; slot < arity; ++slot) connect(g, {prev, 0}, v, slot);
    prev = v;
  }
  node d2h{.id = "y@d2h", .op = op_kind::d2h_copy, .device = cuda_device(0), .outputs = {s}};
  const vertex back = add_node(g, d2h);
  connect(g, {prev, 0}, back, 0);
  node out{.id = "out", .op = op_kind::output};
  connect(g, {back, 0}, add_node(g, out), 0);
  return g;
}

void executor_overhead() {
  constexpr std::uint32_t nodes = 20000;
  kernel_registry kernels;
  kernels.add(
      "inc",
      {nullptr, [](const kernel_call& c) { c.outputs[0].as<float>()[0] = c.inputs[0].as<float>()[0] + 1; }, nullptr});
  graph g = chain(nodes);
  default_allocators allocators = make_default_allocators(devices_of(g), false);
  const auto inputs = make_method_inputs(g, allocators.registry, 1);
  const memory_plan unplanned{};
  const double own = best_seconds(5, [&] { (void)execute(g, unplanned, allocators.registry, kernels, inputs); });
  const memory_plan plan = plan_memory(g);
  const double planned = best_seconds(5, [&] { (void)execute(g, plan, allocators.registry, kernels, inputs); });
  emit("executor_ns_per_node_planned_emulated", planned / (nodes + 4) * 1e9, "ns");
  emit("executor_ns_per_node_unplanned_emulated", own / (nodes + 4) * 1e9, "ns");
}

// One prepared method run node by node and one in graph mode, which records (emulated devices) or
// captures (CUDA) its segments on a first run and replays them after; best of 5 each. Both keep
// their arenas and constants, so the difference is the executor's per-node work (and, on a GPU,
// the launches). A replayed time of 0 means graph mode replayed nothing (why, on stderr).
struct replay_times {
  double by_node = 0, replay = 0;
};
replay_times time_replay(const graph& g, const memory_plan& plan, allocator_registry& allocators,
                         const kernel_registry& kernels, const std::vector<tensor>& inputs, graph_mode mode) {
  prepared_method normal(g, plan, allocators, kernels);
  prepared_method replayed(g, plan, allocators, kernels, {.graphs = mode});
  (void)replayed.run(inputs);  // records or captures
  if (replayed.replayed_segments() == 0) {
    for (const std::string& why : replayed.not_replayed())
      std::fprintf(stderr, "bench_runtime: no replay: %s\n", why.c_str());
    return {};
  }
  return {.by_node = best_seconds(5, [&] { (void)normal.run(inputs); }),
          .replay = best_seconds(5, [&] { (void)replayed.run(inputs); })};
}

// Graph mode on emulated devices: what a replayed schedule saves of the executor's per-node work
// (plan checks, operand lookups, kernel lookup), with the kernels' own cost in both runs.
void emulated_replay() {
  constexpr std::uint32_t nodes = 20000;
  kernel_registry kernels;
  kernels.add(
      "inc",
      {nullptr, [](const kernel_call& c) { c.outputs[0].as<float>()[0] = c.inputs[0].as<float>()[0] + 1; }, nullptr});
  graph g = chain(nodes);
  const memory_plan plan = plan_memory(g);
  default_allocators allocators = make_default_allocators(devices_of(g), false);
  const auto inputs = make_method_inputs(g, allocators.registry, 1);
  const replay_times t = time_replay(g, plan, allocators.registry, kernels, inputs, graph_mode::required);
  emit("executor_ns_per_node_replay_emulated", t.replay / (nodes + 4) * 1e9, "ns");
  emit("emulated_replay_over_normal_per_node", t.replay / t.by_node, "ratio");
}

#if defined(DEVPASS_HAS_CUDA)
void copy_bandwidth() {
  if (cuda::usable_device_count() == 0) return;
  constexpr std::uint64_t bytes = std::uint64_t{256} << 20;
  auto dev = cuda::make_cuda_allocator(cuda_device(0));
  auto pinned = cuda::make_pinned_host_allocator();
  device_buffer d(*dev, bytes, 256), h(*pinned, bytes, 64);
  std::vector<std::byte> pageable(bytes, std::byte{1});
  std::fill_n(h.bytes(), bytes, std::byte{2});
  auto stream = static_cast<cudaStream_t>(dev->native_stream());
  const auto gbs = [&](double seconds) { return static_cast<double>(bytes) / seconds / 1e9; };

  // The same bytes by hand: cudaMemcpyAsync on the device's stream, then a wait.
  const auto raw = [&](void* to, const void* from, cudaMemcpyKind kind) {
    return [=] {
      cudaMemcpyAsync(to, from, bytes, kind, stream);
      cudaStreamSynchronize(stream);
    };
  };
  // <name><ours>_bandwidth, <name>_raw_bandwidth and <name>_vs_raw (raw time / ours).
  const auto report = [&](const std::string& name, const char* ours_label, double ours, double by_hand) {
    emit(name + ours_label + "_bandwidth", gbs(ours), "GB/s");
    emit(name + "_raw_bandwidth", gbs(by_hand), "GB/s");
    emit(name + "_vs_raw", by_hand / ours, "ratio");
  };

  const double h2d = best_seconds(10, [&] {
    dev->copy_host_to_device(d.data(), h.data(), bytes);
    dev->synchronize();
  });
  const double h2d_raw = best_seconds(10, raw(d.data(), h.data(), cudaMemcpyHostToDevice));
  const double d2h = best_seconds(10, [&] { dev->copy_device_to_host(h.data(), d.data(), bytes); });
  const double d2h_raw = best_seconds(10, raw(h.data(), d.data(), cudaMemcpyDeviceToHost));
  const double h2d_pageable = best_seconds(5, [&] {
    dev->copy_host_to_device(d.data(), pageable.data(), bytes);
    dev->synchronize();
  });
  report("h2d_pinned", "", h2d, h2d_raw);
  report("d2h_pinned", "", d2h, d2h_raw);
  // Pageable memory: our staging through pinned chunks against the driver's own staging
  // (cudaMemcpyAsync from pageable memory), same bytes, same stream.
  const double h2d_pageable_raw = best_seconds(5, raw(d.data(), pageable.data(), cudaMemcpyHostToDevice));
  const double d2h_pageable = best_seconds(5, [&] { dev->copy_device_to_host(pageable.data(), d.data(), bytes); });
  const double d2h_pageable_raw = best_seconds(5, raw(pageable.data(), d.data(), cudaMemcpyDeviceToHost));
  report("h2d_pageable", "_staged", h2d_pageable, h2d_pageable_raw);
  report("d2h_pageable", "_staged", d2h_pageable, d2h_pageable_raw);
}

// The executor on a real GPU: a chain of `add` delegates (16 floats each, so launch-bound) run by
// execute() against the same kernels launched back to back on the same stream by hand.
void executor_overhead_gpu() {
  if (cuda::usable_device_count() == 0) return;
  constexpr std::uint32_t nodes = 5000;
  kernel_registry kernels;
  register_builtin_kernels(kernels);
  graph g = chain(nodes, "add", 2);
  default_allocators allocators = make_default_allocators(devices_of(g), true);
  if (allocators.emulated) return;
  const auto inputs = make_method_inputs(g, allocators.registry, 1);
  const memory_plan plan = plan_memory(g);
  const double executor = best_seconds(5, [&] { (void)execute(g, plan, allocators.registry, kernels, inputs); });

  device_allocator& dev = allocators.registry.find(cuda_device(0));
  device_buffer a(dev, 64, 256), b(dev, 64, 256);
  auto stream = static_cast<cudaStream_t>(dev.native_stream());
  const double raw = best_seconds(5, [&] {
    for (std::uint32_t i = 0; i < nodes; ++i) {
      float* x = reinterpret_cast<float*>((i % 2 ? b : a).data());
      float* y = reinterpret_cast<float*>((i % 2 ? a : b).data());
      (void)cuda::kernels::add_f32(x, x, y, 16, stream);
    }
    cudaStreamSynchronize(stream);
  });
  emit("executor_ns_per_node_planned_cuda", executor / (nodes + 4) * 1e9, "ns");
  emit("raw_launch_ns_per_kernel_cuda", raw / nodes * 1e9, "ns");
  emit("executor_vs_raw_launch_cuda", raw / executor, "ratio");

  // Graph mode on the GPU: the chain's device segment captured as one CUDA graph.
  const replay_times t = time_replay(g, plan, allocators.registry, kernels, inputs, graph_mode::when_capturable);
  if (t.replay == 0) return;
  emit("executor_ns_per_node_replay_cuda", t.replay / (nodes + 4) * 1e9, "ns");
  emit("cuda_replay_over_normal_per_node", t.replay / t.by_node, "ratio");
  emit("replay_vs_raw_launch_cuda", raw / t.replay, "ratio");
}
#endif

}  // namespace

int main() {
  executor_overhead();
  emulated_replay();
#if defined(DEVPASS_HAS_CUDA)
  copy_bandwidth();
  executor_overhead_gpu();
#endif
}
