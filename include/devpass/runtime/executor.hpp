// devpass/runtime/executor.hpp — runs a graph after device propagation and memory planning.
//
// execute() allocates one device_buffer per planned buffer on its device, binds the method
// inputs, runs the nodes in plan order and returns the method outputs:
//  - a value with a mem_id lives at `offset` in its arena; a value without one (constants, and
//    inputs or outputs the caller owns on a device) gets its own allocation, or is the caller's
//    input tensor itself;
//  - input: the caller's tensor, which must live where the input's spec says (a host tensor, or a
//    device tensor when propagation skipped the input's h2d copy);
//  - constant: fill_deterministic(seed, node id), on the device it lives on;
//  - h2d_copy / d2h_copy / d2d_copy: a copy through the allocators, counted per direction; a
//    resident one (a copy of a constant) is made once: with execute_options::constants it is the
//    cache's entry for that constant on that device, made by the first run and found by the
//    others, and counted apart (copy_stats::load);
//  - delegate (on its device) and call (on the host): the registry's kernel when one fits the
//    node, its host implementation on the host and on emulated devices, its CUDA one on a GPU
//    (staged through host memory when it has none); else the opaque kernel, and the node is
//    listed in `opaque_nodes`. Every operand must already live where the node runs: a graph that
//    lacks a copy is an error naming the node and slot, never a silent host read.
// Outputs come back where their values live (host tensors, or device tensors when propagation
// skipped their d2h copy); read_to_host() reads any tensor back. An empty plan (no buffers, no
// order) is valid: every value then gets its own allocation, in topological order.
// Errors: graph_error for a graph or plan that does not fit, device_error from the allocators;
// every buffer is freed on every path.
//
// execute_options::streams gives a caller's stream per device (runtime/stream.hpp): that device's
// copies and kernels go to it. execute() still waits for those streams before it returns, as it
// frees its arenas; a prepared_method (runtime/prepared_method.hpp), whose arenas outlive the
// call, does not, and is where graph mode (record or capture once, replay after) lives.
//
// The parts: tensor.hpp (tensors, host I/O), method_setup.hpp (inputs, devices, the host graph),
// constant_cache.hpp, profile.hpp, execute_options.hpp (options and result), value_store.hpp and
// node_runner.hpp (one node of a run), segment_replay.hpp (graph mode's segments); this header
// is the run loop and execute().
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "devpass/graph/error.hpp"
#include "devpass/graph/graph.hpp"
#include "devpass/planning/memory_plan.hpp"
#include "devpass/runtime/allocator.hpp"
#include "devpass/runtime/allocator_registry.hpp"
#include "devpass/runtime/constant_cache.hpp"
#include "devpass/runtime/execute_options.hpp"
#include "devpass/runtime/kernel.hpp"
#include "devpass/runtime/method_setup.hpp"
#include "devpass/runtime/node_runner.hpp"
#include "devpass/runtime/profile.hpp"
#include "devpass/runtime/segment_replay.hpp"
#include "devpass/runtime/stream.hpp"
#include "devpass/runtime/tensor.hpp"
#include "devpass/runtime/value_store.hpp"

namespace devpass::runtime {

// One device_buffer per planned buffer (plan.buffers[1..]) on its device, into `arenas`.
inline void allocate_arenas(const memory_plan& plan, const allocator_registry& allocators,
                            std::vector<device_buffer>& arenas) {
  arenas.clear();
  arenas.resize(plan.buffers.size());
  for (std::size_t i = 1; i < plan.buffers.size(); ++i) {
    const planned_buffer& b = plan.buffers[i];
    if (b.mem_id != static_cast<std::int32_t>(i))
      throw graph_error("", "", "plan.buffers",
                        "buffer " + std::to_string(i) + " has mem_id " + std::to_string(b.mem_id));
    device_allocator& a = allocators.find(b.device);
    try {
      arenas[i] = device_buffer(a, b.size, b.alignment == 0 ? 16 : b.alignment);
    } catch (const device_error& e) {
      throw device_error(e.op(), "", e.device(), "arena mem_id " + std::to_string(i) + ": " + e.detail());
    }
  }
}

// One run of a method over given arenas: execute() runs one with arenas of its own, a
// prepared_method one per call over the arenas it keeps.
class execution {
 public:
  // `arenas` holds the planned buffers: allocated here when it does not hold them yet, else
  // reused (a prepared method's). `pending`: copies that may still read host memory, carried from
  // run to run when the arenas are (a caller's stream is not waited for at the end, so the next
  // run's first host write must wait for the last run's copies out of its host arena).
  // `persistent`: the arenas outlive this run, so devices with a caller's stream are not waited
  // for at the end. `replay`: graph mode's segments, or null.
  execution(const graph& g, const memory_plan& plan, allocator_registry& allocators, const kernel_registry& kernels,
            std::span<const tensor> inputs, const execute_options& options, std::vector<device_buffer>& arenas,
            std::vector<pending_host_read>& pending, replay_state* replay = nullptr, bool persistent = false)
      : g_(g),
        plan_(plan),
        allocators_(allocators),
        options_(options),
        pending_host_reads_(pending),
        replay_(replay),
        persistent_(persistent),
        arenas_(arenas),
        runner_(g, plan, allocators, kernels, inputs, options, arenas, pending, replay != nullptr) {}

  // Loads the method: runs its constants and resident copies, in plan order, so that the runs
  // after it find them in the constant cache and move no weight. Needs options.constants. The
  // resident copies it made: the result's copies.load.
  execution_result load() {
    if (options_.constants == nullptr)
      throw graph_error("", "", "constants", "loading a method needs a constant cache to load into");
    if (arenas_.size() != plan_.buffers.size()) allocate_arenas(plan_, allocators_, arenas_);
    const std::vector<vertex> order = plan_.order.empty() ? topological_order(g_) : plan_.order;
    for (const vertex v : order) {
      check_live(v);
      const node& n = g_[v];
      if (n.op == op_kind::constant || (n.resident && is_copy(n.op))) runner_.run(v);
    }
    for (const device d : allocators_.devices()) allocators_.find(d).synchronize();
    pending_host_reads_.clear();  // waited for just now
    return std::move(runner_.result());
  }

  execution_result run() {
    const stream_binding streams(allocators_, options_.streams);
    if (arenas_.size() != plan_.buffers.size()) allocate_arenas(plan_, allocators_, arenas_);
    runner_.bind_input_order();
    const std::vector<vertex> order = plan_.order.empty() ? topological_order(g_) : plan_.order;
    if (replay_ != nullptr) {
      // Inputs, constants and resident copies first: a method input lives from step 0
      // (lifetimes.hpp) and graph mode takes every constant, and every resident copy of one, from
      // the cache, so none can clobber a planned value; and none may sit inside a segment, whose
      // nodes run (or replay) together at its first node: a replay copies no weight.
      for (const vertex v : order) {
        check_live(v);
        if (runs_before_segments(g_[v])) runner_.run(v);
      }
    }
    for (const vertex v : order) {
      check_live(v);
      if (replay_ != nullptr) {
        if (runs_before_segments(g_[v])) continue;
        if (const std::int32_t s = replay_->segment_of[v]; s >= 0) {
          replay_segment& segment = replay_->segments[static_cast<std::size_t>(s)];
          if (segment.mode != segment_mode::normal) {
            if (v == segment.nodes.front())
              segment.recorded ? segment.replay(g_, runner_) : segment.record(g_, runner_);
            continue;  // ran with its segment
          }
        }
      }
      runner_.run(v);
    }
    runner_.collect_outputs();
    // A caller's stream orders the caller's use of the results; a run that keeps its buffers
    // does not wait for it. execute() frees its arenas on return, so it waits for every device.
    for (const device d : allocators_.devices())
      if (!persistent_ || stream_for(options_.streams, d) == nullptr) allocators_.find(d).synchronize();
    // Waited for just now: the copies queued on the stream each device was synchronized on.
    std::erase_if(pending_host_reads_, [&](const pending_host_read& r) {
      return stream_for(options_.streams, r.allocator->device()) == r.stream && (!persistent_ || r.stream == nullptr);
    });
    return std::move(runner_.result());
  }

 private:
  // What graph mode runs before its segments, on every run: the method inputs, the constants and
  // the resident copies (the last two from the cache after the first run).
  [[nodiscard]] static bool runs_before_segments(const node& n) {
    return n.op == op_kind::input || n.op == op_kind::constant || (n.resident && is_copy(n.op));
  }

  void check_live(vertex v) const {
    if (v >= boost::num_vertices(g_) || g_[v].erased)
      throw graph_error("", "", "plan.order", "vertex " + std::to_string(v) + " is not a live node");
  }

  const graph& g_;
  const memory_plan& plan_;
  allocator_registry& allocators_;
  const execute_options& options_;
  std::vector<pending_host_read>& pending_host_reads_;
  replay_state* replay_;
  const bool persistent_;
  std::vector<device_buffer>& arenas_;
  node_runner runner_;
};

[[nodiscard]] inline execution_result execute(const graph& g, const memory_plan& plan, allocator_registry& allocators,
                                              const kernel_registry& kernels, std::span<const tensor> inputs,
                                              const execute_options& options = {}) {
  std::vector<device_buffer> arenas;  // outlive the execution, which waits for every device before it ends
  std::vector<pending_host_read> pending;
  return execution(g, plan, allocators, kernels, inputs, options, arenas, pending).run();
}

}  // namespace devpass::runtime
