// devpass/runtime/prepared_method.hpp — a method ready to run many times: its planned buffers
// allocated once, its constants loaded once, when it is prepared (each constant, and each resident
// copy of one onto the devices that read it: load_copies()), and, in graph mode, its device work
// recorded (or captured as CUDA graphs) on the first run and replayed on every later one.
//
//   prepared_method m(g, plan, allocators, kernels, {.seed = 7, .graphs = graph_mode::when_capturable});
//   auto first = m.run(inputs);    // runs node by node, recording each segment of device work
//   auto later = m.run(inputs2);   // copies inputs2 into their planned buffers, replays the segments
//
// Graph mode follows capturability(g, plan) (planning/capturability.hpp): each segment of device
// work is recorded once and replayed; host work between segments, inputs, constants (from the
// cache) and the outputs run normally on every run; resident copies are in no segment: a replay
// copies no weight. Method inputs are copied into their planned buffers at every
// run, so new inputs reach the replayed work at the addresses it was recorded with.
//  - graph_mode::off: node by node on every run (as execute(), but the buffers stay allocated).
//  - graph_mode::when_capturable: replays what can be replayed; a method the verdict rejects, or a
//    segment this machine cannot replay, runs node by node (not_replayed() says why).
//  - graph_mode::required: the same, but a rejected method or an unreplayable segment is an error
//    at construction, naming the node and the cause in capture_text's words.
// How a segment is replayed: on emulated devices, a schedule (runtime/schedule.hpp) of the
// resolved copies and kernels with their bound pointers; on one real CUDA device (devpass::cuda
// linked), a CUDA graph captured from the device's stream (runtime/cuda/cuda_graph.hpp). A
// segment that spans several real devices, or runs a GPU kernel without a CUDA implementation,
// is not replayed.
//
// run()'s call_options::streams gives the caller's stream per device: every copy and kernel of
// that device goes to it (the capture too; a CUDA graph is launched on it), and the run does not
// wait for that device before it returns; the caller orders its use of the outputs on its stream
// and synchronizes it before the method (or the tensors) go. The graph, plan, allocators and
// kernels must outlive the method; the method is neither copyable nor movable (recorded steps
// point into it).
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "devpass/graph/error.hpp"
#include "devpass/graph/graph.hpp"
#include "devpass/planning/capturability.hpp"
#include "devpass/planning/memory_plan.hpp"
#include "devpass/runtime/executor.hpp"
#include "devpass/runtime/segment_replay.hpp"
#include "devpass/runtime/stream.hpp"

namespace devpass::runtime {

enum class graph_mode : std::uint8_t { off, when_capturable, required };

[[nodiscard]] constexpr std::string_view to_string(graph_mode m) noexcept {
  switch (m) {
    case graph_mode::off: return "off";
    case graph_mode::when_capturable: return "when_capturable";
    case graph_mode::required: return "required";
  }
  return "";
}

struct prepare_options {
  std::uint64_t seed = 0;               // for constants
  constant_cache* constants = nullptr;  // null: the method keeps its own
  graph_mode graphs = graph_mode::off;
};

struct call_options {
  std::span<const device_stream> streams = {};  // the caller's stream per device (runtime/stream.hpp)
  std::vector<node_time>* profile = nullptr;    // as execute_options::profile; a replayed segment is one entry
};

class prepared_method {
 public:
  prepared_method(const graph& g, const memory_plan& plan, allocator_registry& allocators,
                  const kernel_registry& kernels, const prepare_options& options = {})
      : g_(g),
        plan_(plan),
        allocators_(allocators),
        kernels_(kernels),
        options_(options),
        verdict_(capturability(g, plan)) {
    if (options_.constants == nullptr) options_.constants = &own_constants_;
    if (options_.graphs != graph_mode::off) choose_segments();
    allocate_arenas(plan_, allocators_, arenas_);  // once, for every run
    // The weights, once: every constant and resident copy into the cache, where every run finds
    // them (a cache given with them in it already, by another method, loads nothing again).
    const execute_options loading{.seed = options_.seed, .constants = options_.constants};
    load_ = execution(g_, plan_, allocators_, kernels_, {}, loading, arenas_, pending_host_reads_,
                      replaying() ? &replay_ : nullptr, true)
                .load()
                .copies;
  }
  prepared_method(const prepared_method&) = delete;
  prepared_method& operator=(const prepared_method&) = delete;

  // One call of the method. `inputs` in method_inputs(g) order, as for execute().
  execution_result run(std::span<const tensor> inputs, const call_options& call = {}) {
    const execute_options options{
        .seed = options_.seed, .constants = options_.constants, .profile = call.profile, .streams = call.streams};
    execution_result result = execution(g_, plan_, allocators_, kernels_, inputs, options, arenas_, pending_host_reads_,
                                        replaying() ? &replay_ : nullptr, true)
                                  .run();
    ++runs_;
    return result;
  }

  [[nodiscard]] const capture_verdict& verdict() const noexcept { return verdict_; }
  [[nodiscard]] graph_mode mode() const noexcept { return options_.graphs; }
  // Segments recorded by the first run and replayed by every later one.
  [[nodiscard]] std::size_t replayed_segments() const noexcept {
    std::size_t n = 0;
    for (const auto& s : replay_.segments) n += s.mode != segment_mode::normal;
    return n;
  }
  // Why segments (or the whole method) run node by node in graph mode, one line each.
  [[nodiscard]] const std::vector<std::string>& not_replayed() const noexcept { return not_replayed_; }
  // The schedule recorded for segment i on emulated devices (empty before the first run).
  [[nodiscard]] const schedule& recorded_schedule(std::size_t i) const { return replay_.segments.at(i).steps; }
  [[nodiscard]] std::size_t runs() const noexcept { return runs_; }
  // The resident copies the method made when it was prepared (copy_stats::load): the weights
  // loaded onto their devices, once. Its runs make none.
  [[nodiscard]] const copy_stats& load_copies() const noexcept { return load_; }

 private:
  [[nodiscard]] bool replaying() const noexcept { return replayed_segments() != 0; }

  // Refuses (required) or gives up (when_capturable) with `node`'s reason.
  void not_replayable(const std::string& node, const std::string& why) {
    if (options_.graphs == graph_mode::required)
      throw graph_error("", node, "graph_mode", "graph_mode::required, but " + why);
    not_replayed_.push_back("node '" + node + "': " + why);
  }

  void choose_segments() {
    if (verdict_.kind == capture_kind::not_capturable) {
      for (const capture_reason& r : verdict_.reasons)
        if (r.blocks()) {
          not_replayable(r.node, "the method is not capturable: " + std::string(to_string(r.cause)) + ": " + r.detail);
          return;  // when_capturable: everything node by node
        }
    }
    replay_.segment_of.assign(boost::num_vertices(g_), -1);
    for (std::size_t i = 0; i < verdict_.segments.size(); ++i) {
      replay_segment segment;
      segment.nodes = verdict_.segments[i].nodes;
      for (const vertex v : segment.nodes) replay_.segment_of[v] = static_cast<std::int32_t>(i);
      segment.mode = mode_for(segment, i);
      replay_.segments.push_back(std::move(segment));
    }
    decide_waits();
  }

  // How segment i can be replayed on these allocators, or normal (with the reason noted).
  segment_mode mode_for(replay_segment& segment, std::size_t i) {
    const std::string which = "segment " + std::to_string(i + 1) + " ";
    std::vector<device> devices;
    for (const vertex v : segment.nodes) {
      const node& n = g_[v];
      const auto stable = [&](value_ref x) {
        // The verdict checked the device values; a host value device work reads or writes needs
        // a fixed address too: a planned one, or a constant's or resident copy's (graph mode
        // caches them all).
        const node& p = g_[x.producer];
        if (p.op == op_kind::constant || p.resident || p.outputs.at(x.output).mem_id) return true;
        not_replayable(p.id, which + "cannot be replayed: '" + value_name(g_, x) + "' on " +
                                 to_string(location_of(g_, x)) + " has no planned buffer: " +
                                 (p.op == op_kind::input ? "its address changes with every call"
                                                         : "it is allocated at every run"));
        return false;
      };
      for (const value_ref in : operands(g_, v)) {
        if (!stable(in)) return segment_mode::normal;
        devices.push_back(location_of(g_, in));
      }
      for (std::uint32_t k = 0; k < n.outputs.size(); ++k) {
        if (!stable({v, k})) return segment_mode::normal;
        devices.push_back(location_of(g_, {v, k}));
      }
      devices.push_back(n.device);
    }
    std::vector<device_allocator*> real;
    for (const device d : devices) {
      if (d.is_host()) continue;
      device_allocator& a = allocators_.find(d);
      if (!a.underlying().emulated() && std::find(real.begin(), real.end(), &a) == real.end()) real.push_back(&a);
    }
    if (real.empty()) return segment_mode::record;
#if defined(DEVPASS_HAS_CUDA)
    const bool all_real = std::all_of(devices.begin(), devices.end(), [&](device d) {
      return d.is_host() || !allocators_.find(d).underlying().emulated();
    });
    if (!all_real || real.size() != 1) {
      not_replayable(g_[segment.nodes.front()].id,
                     which + "cannot be captured: its device work spans " +
                         (all_real ? "several CUDA devices" : "real and emulated devices") +
                         " (a CUDA graph is captured from one device's stream)");
      return segment_mode::normal;
    }
    for (const vertex v : segment.nodes) {
      const node& n = g_[v];
      if (n.op != op_kind::delegate) continue;
      std::vector<const tensor_spec*> specs;
      for (const value_ref in : operands(g_, v)) specs.push_back(&spec_of(g_, in));
      const kernel_entry* entry = kernels_.find(n, specs);
      if (entry == nullptr || !entry->cuda) {
        not_replayable(n.id, which + "cannot be captured: kernel '" + n.kernel +
                                 "' has no CUDA implementation here, so it runs on host copies between device work");
        return segment_mode::normal;
      }
    }
    segment.stream_owner = real.front();
    return segment_mode::cuda_graph;
#else
    not_replayable(g_[segment.nodes.front()].id, which +
                                                     "cannot be captured: it runs on a real device and this "
                                                     "program does not link devpass::cuda");
    return segment_mode::normal;
#endif
  }

  // A launched CUDA graph runs asynchronously: the host waits for it when host work follows it
  // or a method output lives on the host (both read or write memory the graph uses).
  void decide_waits() {
    const std::vector<vertex> order = plan_.order.empty() ? topological_order(g_) : plan_.order;
    bool host_output = false;
    for (const value_ref out : method_outputs(g_)) host_output = host_output || location_of(g_, out).is_host();
    for (auto& segment : replay_.segments) {
      if (segment.mode != segment_mode::cuda_graph) continue;
      const auto last = std::find(order.begin(), order.end(), segment.nodes.back());
      const bool host_after = std::any_of(last, order.end(), [&](vertex v) { return is_host_work(g_[v]); });
      segment.wait_after = host_after || host_output;
    }
  }

  const graph& g_;
  const memory_plan& plan_;
  allocator_registry& allocators_;
  const kernel_registry& kernels_;
  prepare_options options_;
  capture_verdict verdict_;
  std::vector<std::string> not_replayed_;
  std::size_t runs_ = 0;
  copy_stats load_;
  replay_state replay_;
  std::vector<pending_host_read> pending_host_reads_;  // copies of a run on a caller's stream
  // Declared last so they are freed first (the cache's tensors and the arenas need the allocators).
  constant_cache own_constants_;
  std::vector<device_buffer> arenas_;
};

}  // namespace devpass::runtime
