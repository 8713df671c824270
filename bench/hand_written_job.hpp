// bench/hand_written_job.hpp — the whole job of propagate_device(g, options) written by hand on
// devpass::graph: both copy policies, chosen at run time by the same propagate_options, with the
// pass's checks and counters; plain loops over the graph's accessors, no rule table, no driver,
// no pipeline. For `scripts/bench compile` (default_pipeline_over_hand_written_job): what the
// default pipeline's TU costs over a TU that does the same job without the framework. In the
// pass's order:
//   - its checks: validate(options); with copies enabled, verify_propagation_input, its first
//     problem thrown before anything changes; under the executorch policy with
//     skip_h2d_for_method_inputs, a method input read by more than one node refused with the
//     pass's message;
//   - its counters: the copy census before (count_copies) and after (before plus each copy made);
//   - legacy mode (enable_non_cpu_memory_planning off): delegate inputs and outputs tagged with
//     the delegate's device, nothing else;
//   - skip_h2d_for_method_inputs: a host method input read by a device delegate lives on the
//     device of the first such delegate (vertex order, then slot);
//   - executorch policy: an h2d copy per device-delegate slot that does not read a value the file
//     places on its device, a d2h copy per device value read on the host (by the output node too,
//     unless skip_d2h_for_method_outputs and it is the value's only reader), each reader on the
//     host moved to it; with `elide`, the round trips h2d(d2h(x)) back onto x's device never made
//     (nor a d2h that only they read);
//   - devpass policy: one h2d copy per (host value, device), one d2d copy per (device value, other
//     device), one d2h copy per device value read on the host, shared by every reader; a copy of a
//     constant resident when resident_constants is on;
//   - every value marked with the device it lives on.
// It leaves the graph propagate_device leaves (the same nodes in the same order, ids, slots,
// marks: the written file byte for byte) and the same census, under every option, on every graph
// that holds no copy node yet: the graphs ExecuTorch hands the pass, tests/data/graphs and the
// random test graphs (tests/test_hand_written_job.cpp checks them). A graph that already holds
// copies with copies enabled (where the pass also elides the round trips those copies make) is
// refused with std::invalid_argument.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "devpass/graph/copy_census.hpp"
#include "devpass/graph/graph.hpp"
#include "devpass/graph/id_allocator.hpp"
#include "devpass/graph/verify_devices.hpp"
#include "devpass/passes/propagate_options.hpp"

namespace devpass::bench {

namespace hand {

// A copy of `value` of kind `kind`, its device side `side`, connected to it and counted, named as
// the pass names it: after the use it feeds when `site` is given ("k@h2d.2"), else after the
// value, and the device but for a d2h ("x@h2d[cuda:0]", "x:1@d2h").
inline vertex add_copy(graph& g, id_allocator& ids, copy_census& made, op_kind kind, device side, value_ref value,
                       const use* site = nullptr, bool resident = false) {
  const vertex base = site ? site->consumer : value.producer;
  std::string id = site ? g[base].id : value_name(g, value);
  id += kind == op_kind::h2d_copy ? "@h2d" : kind == op_kind::d2h_copy ? "@d2h" : "@d2d";
  if (site)
    id += "." + std::to_string(site->slot);
  else if (kind != op_kind::d2h_copy)
    id += "[" + to_string(side) + "]";
  tensor_spec spec = spec_of(g, value);
  spec.device = kind == op_kind::d2h_copy ? cpu_device : side;
  spec.mem_id.reset();
  spec.offset.reset();
  made.add(kind, spec.byte_size(), resident);
  node n{.id = ids.make_derived(base, std::move(id)), .op = kind, .device = side};
  n.resident = resident;
  n.outputs.push_back(std::move(spec));
  const vertex copy = add_node(g, std::move(n));
  connect(g, value, copy, 0);
  return copy;
}

inline bool is_device_delegate(const node& n) { return n.op == op_kind::delegate && !n.device.is_host(); }
inline bool is_host_reader(const node& n) {  // a call, a host delegate
  return n.op == op_kind::call || (n.op == op_kind::delegate && n.device.is_host());
}

// skip_h2d_for_method_inputs: each host method input a device delegate reads lives on the first
// such delegate's device; ExecuTorch's policy refuses an input that more than one node reads.
inline void place_method_inputs(graph& g, bool executorch) {
  for (vertex v = 0, n = boost::num_vertices(g); v < n; ++v) {
    if (!is_device_delegate(g[v])) continue;
    for (const value_ref x : operands(g, v)) {
      if (g[x.producer].op != op_kind::input || !location_of(g, x).is_host()) continue;
      if (executorch) {
        const std::vector<use> readers = uses(g, x);
        if (readers.front().consumer != readers.back().consumer) {
          std::string problem =
              "skip_h2d_for_method_inputs needs a method input with one consumer (ExecuTorch), this one has ";
          for (std::size_t i = 0; i < readers.size(); ++i)
            problem.append(i ? ", '" : "'").append(g[readers[i].consumer].id).append("'");
          throw graph_error("", g[x.producer].id, "consumers", std::move(problem));
        }
      }
      g[x.producer].outputs[x.output].device = g[v].device;
      g[x.producer].device = g[v].device;
    }
  }
}

// ExecuTorch's policy, the elided copies never made: the h2d copies by delegate and slot, then
// the d2h copies by value, each marking the values of the nodes it passes.
inline void executorch_copies(graph& g, const propagate_options& o, id_allocator& ids, copy_census& made) {
  enum : std::uint8_t { host_read = 1, output_read = 2, other_read = 4, h2d_kept = 8 };
  const vertex n = boost::num_vertices(g);
  std::vector<std::uint32_t> first(n + 1, 0);  // per vertex, the index of its output 0 among all values
  for (vertex v = 0; v < n; ++v) first[v + 1] = first[v] + static_cast<std::uint32_t>(g[v].outputs.size());
  std::vector<std::uint8_t> reads(first[n], 0);
  std::vector<std::pair<use, value_ref>> h2d;  // (delegate slot, value) of each h2d copy to make
  for (vertex k = 0; k < n; ++k) {
    const node& reader = g[k];
    const std::vector<value_ref> in = operands(g, k);
    for (std::uint32_t s = 0; s < in.size(); ++s) {
      const value_ref x = in[s];
      std::uint8_t& f = reads[first[x.producer] + x.output];
      if (reader.op == op_kind::output) {
        f |= output_read;
        continue;
      }
      f |= other_read;
      if (is_host_reader(reader)) f |= host_read;
      if (!is_device_delegate(reader)) continue;
      const device at = location_of(g, x);
      const op_kind producer = g[x.producer].op;
      const bool placed = producer == op_kind::input || producer == op_kind::constant;
      // Read where it is: placed on this device by the file, or (elided) a round trip back here.
      if (!at.is_host() && at == reader.device && (placed || o.elide)) continue;
      f |= h2d_kept;
      h2d.push_back({use{k, s}, x});
    }
  }
  for (const auto& [site, x] : h2d) {
    const vertex copy = add_copy(g, ids, made, op_kind::h2d_copy, g[site.consumer].device, x, &site);
    set_operand(g, site.consumer, site.slot, value_ref{copy, 0});
  }
  std::vector<use> moved;
  for (vertex v = 0; v < n; ++v) {
    for (std::uint32_t k = 0; k < g[v].outputs.size(); ++k) {
      const value_ref x{v, k};
      const device at = location_of(g, x);
      g[v].outputs[k].device = at;
      const std::uint8_t f = reads[first[v] + k];
      const bool d2h =
          (f & (host_read | h2d_kept)) || ((f & output_read) && (!o.skip_d2h_for_method_outputs || (f & other_read)));
      if (at.is_host() || !d2h) continue;
      const vertex copy = add_copy(g, ids, made, op_kind::d2h_copy, device_of(g, x), x);
      moved.clear();
      for_each_use(g, x, [&](use u) {
        const node& reader = g[u.consumer];
        if (u.consumer != copy &&
            (reader.op == op_kind::output || reader.op == op_kind::h2d_copy || is_host_reader(reader)))
          moved.push_back(u);
      });
      for (const use u : moved) set_operand(g, u.consumer, u.slot, value_ref{copy, 0});
    }
  }
}

// The devpass policy: at each reader in vertex order, a device delegate's h2d copies (by slot),
// then its d2d copies, or a host reader's d2h copies, each the one there is for its value and
// device, else a new one; then every value marked.
inline void devpass_copies(graph& g, const propagate_options& o, id_allocator& ids, copy_census& made) {
  const vertex n = boost::num_vertices(g);
  for (vertex v = 0; v < n; ++v) {
    const device at = g[v].device;
    const bool device_reader = is_device_delegate(g[v]);
    if (!device_reader && !is_host_reader(g[v]) && (g[v].op != op_kind::output || o.skip_d2h_for_method_outputs))
      continue;
    const std::vector<value_ref> in = operands(g, v);
    const auto feed = [&](std::uint32_t s, op_kind kind, device side) {
      const value_ref x = in[s];
      vertex copy = 0;
      bool found = false;
      for_each_use(g, x, [&](use u) {
        if (!found && g[u.consumer].op == kind && g[u.consumer].device == side) copy = u.consumer, found = true;
      });
      if (!found) {
        const op_kind producer = g[x.producer].op;
        const bool resident = o.resident_constants && (producer == op_kind::constant || g[x.producer].resident);
        copy = add_copy(g, ids, made, kind, side, x, nullptr, resident);
      }
      set_operand(g, v, s, value_ref{copy, 0});
    };
    if (device_reader) {
      for (std::uint32_t s = 0; s < in.size(); ++s)
        if (location_of(g, in[s]).is_host()) feed(s, op_kind::h2d_copy, at);
      for (std::uint32_t s = 0; s < in.size(); ++s)
        if (const device from = location_of(g, in[s]); !from.is_host() && from != at) feed(s, op_kind::d2d_copy, at);
    } else {
      for (std::uint32_t s = 0; s < in.size(); ++s)
        if (!location_of(g, in[s]).is_host()) feed(s, op_kind::d2h_copy, device_of(g, in[s]));
    }
  }
  for (vertex v = 0; v < n; ++v)
    for (std::uint32_t k = 0; k < g[v].outputs.size(); ++k) g[v].outputs[k].device = location_of(g, {v, k});
}

}  // namespace hand

inline propagate_stats hand_written_propagate(graph& g, const propagate_options& o) {
  validate(o);
  propagate_stats stats;
  if (o.enable_non_cpu_memory_planning) {
    verify_report problems = verify_propagation_input(g);
    if (!problems.ok()) throw std::move(problems.problems.front());
  }
  stats.before = count_copies(g);
  stats.after = stats.before;
  if (!o.enable_non_cpu_memory_planning) {  // legacy mode
    for (vertex v = 0, n = boost::num_vertices(g); v < n; ++v) {
      if (!hand::is_device_delegate(g[v])) continue;
      for (tensor_spec& spec : g[v].outputs) spec.device = g[v].device;
      for (const value_ref x : operands(g, v)) g[x.producer].outputs[x.output].device = g[v].device;
    }
    return stats;
  }
  if (stats.before.copies() != 0)
    throw std::invalid_argument("hand_written_propagate: the graph holds copies already (not covered)");
  const bool executorch = o.policy == copy_policy::executorch;
  if (o.skip_h2d_for_method_inputs) hand::place_method_inputs(g, executorch);
  id_allocator ids(g);
  copy_census made;
  if (executorch)
    hand::executorch_copies(g, o, ids, made);
  else
    hand::devpass_copies(g, o, ids, made);
  stats.after += made;
  return stats;
}

}  // namespace devpass::bench
