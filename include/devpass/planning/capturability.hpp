// devpass/planning/capturability.hpp — can a method be captured as a CUDA graph and replayed?
//
//   capture_verdict capturability(const graph& g, const memory_plan& plan);
//
// After device propagation and memory planning devpass knows what a capture needs to know. In the
// plan's execution order, device work is every node a device stream runs: delegates on a device
// and the copies (h2d, d2h, d2d) made on every execution. Host work is what the host runs: calls
// and host delegates. (Inputs, constants and the output node run nothing; resident copies run once,
// when the method is loaded, so no replay holds them.)
//  - segments: maximal runs of device work with no host work between them, in execution order.
//    Host work before the first or after the last device work runs outside the replay; host work
//    between two runs splits the method there, and each split is a reason naming the host node:
//    `host_reads_device_value` when it reads a value a d2h of the run before it produced (the host
//    waits for the device), else `host_work`.
//  - blockers: a replay reuses the addresses of the capture, so every value device work reads or
//    writes on a device needs a planned buffer. `runtime_allocation`: a device value without one,
//    which the executor allocates at every run; `caller_buffer`: a method input or output left on
//    a device (skip_h2d / skip_d2h) and not planned: the caller's memory changes per call (plan it,
//    plan_options::plan_device_method_inputs / _outputs, and a call copies into it). Constants
//    and resident copies are not blockers: the constant cache keeps them where they were loaded.
//  - verdict: not_capturable when there is a blocker; else no_device_work, one_graph, or segments.
// Shapes are static in devpass.graph/1 (the reader rejects any other), so no value has a dynamic
// shape. docs/runtime.md, "CUDA graphs: the capturability verdict", explains each reason and how a
// policy removes it.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "devpass/graph/graph.hpp"
#include "devpass/planning/memory_plan.hpp"

namespace devpass {

enum class capture_cause : std::uint8_t { host_work, host_reads_device_value, runtime_allocation, caller_buffer };

[[nodiscard]] constexpr std::string_view to_string(capture_cause c) noexcept {
  switch (c) {
    case capture_cause::host_work: return "host_work";
    case capture_cause::host_reads_device_value: return "host_reads_device_value";
    case capture_cause::runtime_allocation: return "runtime_allocation";
    case capture_cause::caller_buffer: return "caller_buffer";
  }
  return "";
}

struct capture_reason {
  std::string node;  // the node's id
  capture_cause cause = capture_cause::host_work;
  std::string detail;
  [[nodiscard]] bool blocks() const noexcept {
    return cause == capture_cause::runtime_allocation || cause == capture_cause::caller_buffer;
  }
};

struct capture_segment {
  std::vector<vertex> nodes;  // device work, in execution order
};

enum class capture_kind : std::uint8_t { one_graph, segments, not_capturable, no_device_work };

[[nodiscard]] constexpr std::string_view to_string(capture_kind k) noexcept {
  switch (k) {
    case capture_kind::one_graph: return "one_graph";
    case capture_kind::segments: return "segments";
    case capture_kind::not_capturable: return "not_capturable";
    case capture_kind::no_device_work: return "no_device_work";
  }
  return "";
}

struct capture_verdict {
  capture_kind kind = capture_kind::no_device_work;
  std::vector<capture_segment> segments;
  std::vector<capture_reason> reasons;  // splits and blockers, in execution order
};

// What a capture holds: copies made on every execution and delegates on a device. What splits or
// blocks it: calls and host delegates.
[[nodiscard]] inline bool is_device_work(const node& n) {
  return (is_copy(n.op) && !n.resident) || (n.op == op_kind::delegate && !n.device.is_host());
}
[[nodiscard]] inline bool is_host_work(const node& n) {
  return n.op == op_kind::call || (n.op == op_kind::delegate && n.device.is_host());
}

// Precondition: `plan` is plan_memory's for g as it is now (propagated: copies explicit).
[[nodiscard]] inline capture_verdict capturability(const graph& g, const memory_plan& plan) {
  capture_verdict verdict;
  std::vector<std::vector<char>> is_output(boost::num_vertices(g));
  for (const vertex v : plan.order)
    if (g[v].op == op_kind::output)
      for (const value_ref out : operands(g, v)) {
        auto& flags = is_output[out.producer];
        flags.resize(g[out.producer].outputs.size(), 0);
        flags[out.output] = 1;
      }
  const auto is_method_output = [&](value_ref x) {
    return x.output < is_output[x.producer].size() && is_output[x.producer][x.output];
  };

  // Blockers: each value device work touches on a device, once per producer.
  std::vector<char> checked(boost::num_vertices(g), 0);
  const auto check_value = [&](value_ref x) {
    const node& p = g[x.producer];
    if (x.output >= p.outputs.size()) return;
    const device at = location_of(g, x);
    if (at.is_host() || p.op == op_kind::constant || p.resident || p.outputs[x.output].mem_id) return;
    if (p.op == op_kind::input || is_method_output(x))
      verdict.reasons.push_back({p.id, capture_cause::caller_buffer,
                                 std::string(p.op == op_kind::input ? "method input" : "method output") + " '" +
                                     value_name(g, x) + "' on " + to_string(at) +
                                     " has no planned buffer: its address changes with every call"});
    else
      verdict.reasons.push_back(
          {p.id, capture_cause::runtime_allocation,
           "'" + value_name(g, x) + "' on " + to_string(at) + " has no planned buffer: it is allocated at every run"});
  };

  capture_segment current;
  std::vector<char> d2h_in_current(boost::num_vertices(g), 0);
  const auto close_segment = [&] {
    if (current.nodes.empty()) return;
    for (const vertex v : current.nodes) d2h_in_current[v] = 0;
    verdict.segments.push_back(std::move(current));
    current = {};
  };
  std::vector<std::size_t> pending_splits;  // reasons of host work after the current segment
  for (const vertex v : plan.order) {
    const node& n = g[v];
    if (is_device_work(n)) {
      // Host work seen since the last device work splits the method: it was between two runs.
      if (!pending_splits.empty()) {
        close_segment();
        pending_splits.clear();
      }
      const auto check_values_of = [&](vertex p) {
        if (checked[p]) return;
        checked[p] = 1;
        for (std::uint32_t k = 0; k < g[p].outputs.size(); ++k) check_value({p, k});
      };
      for (const value_ref in : operands(g, v)) check_values_of(in.producer);
      check_values_of(v);
      current.nodes.push_back(v);
      if (n.op == op_kind::d2h_copy) d2h_in_current[v] = 1;
    } else if (is_host_work(n) && !current.nodes.empty()) {
      bool waits = false;
      std::string read;
      for (const value_ref in : operands(g, v))
        if (d2h_in_current[in.producer]) waits = true, read = value_name(g, in);
      pending_splits.push_back(verdict.reasons.size());
      verdict.reasons.push_back(waits ? capture_reason{n.id, capture_cause::host_reads_device_value,
                                                       "reads '" + read +
                                                           "', which a d2h_copy of the device work before it produced: "
                                                           "the host waits for the device"}
                                      : capture_reason{n.id, capture_cause::host_work,
                                                       std::string("a ") + std::string(to_string(n.op)) +
                                                           " on the host between device work"});
    }
  }
  close_segment();
  // Host work after the last device work runs after the replay: it splits nothing.
  for (auto it = pending_splits.rbegin(); it != pending_splits.rend(); ++it)
    verdict.reasons.erase(verdict.reasons.begin() + static_cast<std::ptrdiff_t>(*it));

  bool blocked = false;
  for (const auto& r : verdict.reasons) blocked = blocked || r.blocks();
  if (blocked)
    verdict.kind = capture_kind::not_capturable;
  else if (verdict.segments.empty())
    verdict.kind = capture_kind::no_device_work;
  else if (verdict.segments.size() == 1)
    verdict.kind = capture_kind::one_graph;
  else
    verdict.kind = capture_kind::segments;
  return verdict;
}

// One line per fact, for devpass-opt --capturability.
[[nodiscard]] inline std::string capture_text(const graph& g, const capture_verdict& v) {
  std::string text = "capturability: ";
  switch (v.kind) {
    case capture_kind::one_graph: text += "one graph"; break;
    case capture_kind::segments: text += std::to_string(v.segments.size()) + " segments (split at host work)"; break;
    case capture_kind::not_capturable: text += "not capturable"; break;
    case capture_kind::no_device_work: text += "no device work"; break;
  }
  text += "\n";
  for (std::size_t s = 0; s < v.segments.size(); ++s) {
    const auto& nodes = v.segments[s].nodes;
    text += "  segment " + std::to_string(s + 1) + ": " + std::to_string(nodes.size()) + " nodes, '" +
            g[nodes.front()].id + "' .. '" + g[nodes.back()].id + "'\n";
  }
  for (const auto& r : v.reasons)
    text += "  node '" + r.node + "': " + std::string(to_string(r.cause)) + ": " + r.detail + "\n";
  return text;
}

}  // namespace devpass
