// devpass/runtime/segment_replay.hpp — graph mode's segments: a stretch of device work that a
// prepared method's first run records (emulated devices: a schedule) or captures (one CUDA device:
// a CUDA graph), and that every later run replays, its values put back where the recording left
// them. prepared_method (runtime/prepared_method.hpp) chooses each segment's mode once; the run
// loop (runtime/executor.hpp) calls record() at a segment's first node on the first run, replay()
// on later ones.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "devpass/graph/graph.hpp"
#include "devpass/runtime/allocator.hpp"
#include "devpass/runtime/cuda/cuda_graph.hpp"
#include "devpass/runtime/execute_options.hpp"
#include "devpass/runtime/node_runner.hpp"
#include "devpass/runtime/schedule.hpp"
#include "devpass/runtime/value_store.hpp"

namespace devpass::runtime {

// How a graph-mode method runs one segment of device work (prepared_method decides, once).
enum class segment_mode : std::uint8_t {
  normal,      // node by node, every run
  record,      // emulated devices: the first run records a schedule, later runs replay it
  cuda_graph,  // one real device: the first run captures a CUDA graph (and launches it), later runs launch it
};

struct replay_segment {
  std::vector<vertex> nodes;  // device work, in execution order (the verdict's segment)
  segment_mode mode = segment_mode::normal;
  device_allocator* stream_owner = nullptr;  // cuda_graph: the device whose stream captures and launches
  bool wait_after = false;                   // cuda_graph: the host reads or writes what the graph uses after it
  bool recorded = false;
  schedule steps;                               // record
  std::unique_ptr<cuda::captured_graph> graph;  // cuda_graph
  std::vector<std::vector<value_slot>> slots;   // the nodes' values as the recording run left them
  copy_stats copies;                            // what the segment's copy nodes count per run
  std::vector<std::string> opaque_nodes;

  // The first run: the nodes run one by one while their work is recorded (emulated) or captured
  // (CUDA graph, then launched once: a capture runs nothing).
  void record(const devpass::graph& g, node_runner& runner) {
    const copy_stats before = runner.result().copies;
    const std::size_t opaque_before = runner.result().opaque_nodes.size();
    if (mode == segment_mode::record) {
      steps.steps.clear();
      runner.record_into(&steps);
      try {
        for (const vertex v : nodes) runner.run(v);
      } catch (...) {
        runner.record_into(nullptr);
        steps.steps.clear();
        throw;
      }
      runner.record_into(nullptr);
    } else {
      capture(g, runner);
    }
    slots.clear();
    for (const vertex v : nodes) slots.push_back(runner.values_of(v));
    copies = runner.result().copies - before;
    opaque_nodes.assign(runner.result().opaque_nodes.begin() + static_cast<std::ptrdiff_t>(opaque_before),
                        runner.result().opaque_nodes.end());
    recorded = true;
  }

  // Later runs: the recorded work again, and the values where the recording left them.
  void replay(const devpass::graph& g, node_runner& runner) {
    const auto start = std::chrono::steady_clock::now();
    if (mode == segment_mode::record) {
      steps.replay();
    } else {
      graph->launch(stream_owner->native_stream(), stream_owner->device());
      if (wait_after)
        stream_owner->synchronize();
      else
        runner.note_host_reads(*stream_owner);  // its h2d copies may still read the host arena
    }
    for (std::size_t i = 0; i < nodes.size(); ++i) runner.values_of(nodes[i]) = slots[i];
    execution_result& result = runner.result();
    result.copies += copies;
    result.opaque_nodes.insert(result.opaque_nodes.end(), opaque_nodes.begin(), opaque_nodes.end());
    result.nodes_run += nodes.size();
    if (runner.profiling()) runner.profile_entry(g[nodes.front()].id, "graph_replay", start);
  }

 private:
  void capture([[maybe_unused]] const devpass::graph& g, [[maybe_unused]] node_runner& runner) {
#if defined(DEVPASS_HAS_CUDA)
    device_allocator& owner = *stream_owner;
    void* stream = owner.native_stream();
    const auto start = std::chrono::steady_clock::now();
    cuda::begin_capture(stream, owner.device());
    runner.set_capturing(true);
    try {
      for (const vertex v : nodes) runner.run(v);
      runner.set_capturing(false);
      graph = cuda::end_capture(stream, owner.device());
    } catch (...) {
      runner.set_capturing(false);
      cuda::abort_capture(stream);
      throw;
    }
    graph->launch(stream, owner.device());
    if (wait_after)
      owner.synchronize();
    else
      runner.note_host_reads(owner);  // its h2d copies may still read the host arena
    if (runner.profiling()) runner.profile_entry(g[nodes.front()].id, "graph_capture", start);
#else
    throw std::logic_error("a CUDA graph segment without devpass::cuda");
#endif
  }
};

// What a graph-mode method keeps from run to run.
struct replay_state {
  std::vector<replay_segment> segments;
  std::vector<std::int32_t> segment_of;  // by vertex: the index of the segment it belongs to, or -1
};

}  // namespace devpass::runtime
