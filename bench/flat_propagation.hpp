// bench/flat_propagation.hpp — the baseline for `scripts/bench propagate`: a minimal hand-written
// flat-array implementation of the same job as the executorch policy (insert an h2d per device
// delegate input slot and a d2h per used device-delegate output, then elide same-device round
// trips and drop dead d2h copies, then compact). No graph library, no strings, no patterns:
// what a tuned special-purpose program costs.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "devpass/graph/graph.hpp"
#include "flat_graph.hpp"

namespace devpass::bench {

inline flat_graph to_flat(const graph& g) {
  flat_graph f;
  const auto n = boost::num_vertices(g);
  for (vertex v = 0; v < n; ++v) {
    const node& x = g[v];
    f.op.push_back(x.op == op_kind::input      ? flat_graph::input
                   : x.op == op_kind::constant ? flat_graph::constant
                   : x.op == op_kind::delegate ? flat_graph::delegate
                   : x.op == op_kind::output   ? flat_graph::output
                                               : flat_graph::call);
    f.dev.push_back(x.op == op_kind::delegate && !x.device.is_host() ? x.device.index : -1);
    f.first_input.push_back(static_cast<std::uint32_t>(f.src_node.size()));
    f.arity.push_back(x.arity);
    for (const value_ref in : operands(g, v)) {
      f.src_node.push_back(static_cast<std::uint32_t>(in.producer));
      f.src_output.push_back(in.output);
    }
    f.outputs.push_back(static_cast<std::uint32_t>(x.outputs.size()));
  }
  return f;
}

// A copy of `f` whose per-node arrays have room for `nodes` nodes (and its operand arrays for as
// many more operands as nodes added), as a tuned program would reserve before it grows them.
inline flat_graph with_room(const flat_graph& f, std::size_t nodes) {
  flat_graph copy;
  const std::size_t added = nodes > f.op.size() ? nodes - f.op.size() : 0;
  const auto fill = [](auto& to, const auto& from, std::size_t capacity) {
    to.reserve(std::max(capacity, from.size()));
    to.assign(from.begin(), from.end());
  };
  fill(copy.op, f.op, nodes);
  fill(copy.dev, f.dev, nodes);
  fill(copy.first_input, f.first_input, nodes);
  fill(copy.arity, f.arity, nodes);
  fill(copy.outputs, f.outputs, nodes);
  fill(copy.src_node, f.src_node, f.src_node.size() + added);
  fill(copy.src_output, f.src_output, f.src_output.size() + added);
  return copy;
}

struct flat_result {
  std::size_t h2d = 0, d2h = 0, d2d = 0, nodes = 0;
};

// Appends a copy node of kind `kind` on `dev` reading output `output` of `node`; returns its index.
inline std::uint32_t append_copy(flat_graph& f, std::uint8_t kind, std::int32_t dev, std::uint32_t node,
                                 std::uint32_t output) {
  const auto id = static_cast<std::uint32_t>(f.op.size());
  f.op.push_back(kind);
  f.dev.push_back(dev);
  f.first_input.push_back(static_cast<std::uint32_t>(f.src_node.size()));
  f.arity.push_back(1);
  f.src_node.push_back(node);
  f.src_output.push_back(output);
  f.outputs.push_back(1);
  return id;
}

// Insert, elide, compact. Returns the copy counts of the final graph; with `result`, also the
// final graph, and with `was`, for each of its nodes its index before compaction (below the
// input's node count: that node of the input; from it on: the copies, in the order made). The
// bench's timed runs pass neither; bench/dom_flat_process.cpp writes the result out.
inline flat_result flat_propagate(flat_graph f, flat_graph* result = nullptr,
                                  std::vector<std::uint32_t>* was = nullptr) {
  const std::uint32_t original = static_cast<std::uint32_t>(f.op.size());
  const auto add_copy = [&](std::uint8_t kind, std::int32_t dev, std::uint32_t node, std::uint32_t output) {
    return append_copy(f, kind, dev, node, output);
  };
  // Phase 1: an h2d per (device delegate, slot).
  for (std::uint32_t v = 0; v < original; ++v) {
    if (f.op[v] != flat_graph::delegate || f.dev[v] < 0) continue;
    for (std::uint32_t i = f.first_input[v], e = i + f.arity[v]; i < e; ++i) {
      const std::uint32_t h = add_copy(flat_graph::h2d, f.dev[v], f.src_node[i], f.src_output[i]);
      f.src_node[i] = h;
      f.src_output[i] = 0;
    }
  }
  // Phase 2: one d2h per used device-delegate output; every consumer of it reads the d2h.
  // d2h_of[first_value[v] + k] is the d2h of output k of v (0: none yet).
  std::vector<std::uint32_t> first_value(original + 1, 0);
  for (std::uint32_t v = 0; v < original; ++v) first_value[v + 1] = first_value[v] + f.outputs[v];
  std::vector<std::uint32_t> d2h_of(first_value[original], 0);
  const std::size_t operand_count = f.src_node.size();
  for (std::size_t i = 0; i < operand_count; ++i) {
    const std::uint32_t p = f.src_node[i];
    if (p >= original || f.op[p] != flat_graph::delegate || f.dev[p] < 0) continue;
    std::uint32_t& d = d2h_of[first_value[p] + f.src_output[i]];
    if (d == 0) d = add_copy(flat_graph::d2h, f.dev[p], p, f.src_output[i]);
    f.src_node[i] = d;
    f.src_output[i] = 0;
  }
  // Phase 3: h2d(d2h(x)) with x on the h2d's device: the consumer reads x; dead copies go.
  const auto total = static_cast<std::uint32_t>(f.op.size());
  std::vector<std::uint32_t> uses(total, 0);
  for (std::size_t i = 0; i < f.src_node.size(); ++i) ++uses[f.src_node[i]];
  std::vector<std::uint32_t> consumer_operand(total, 0);  // the one operand an h2d feeds
  for (std::uint32_t v = 0; v < original; ++v)
    for (std::uint32_t i = f.first_input[v], e = i + f.arity[v]; i < e; ++i)
      if (f.op[f.src_node[i]] == flat_graph::h2d) consumer_operand[f.src_node[i]] = i;
  std::vector<char> dead(total, 0);
  for (std::uint32_t h = original; h < total; ++h) {
    if (f.op[h] != flat_graph::h2d) continue;
    const std::uint32_t d = f.src_node[f.first_input[h]];
    if (f.op[d] != flat_graph::d2h) continue;
    const std::uint32_t x = f.src_node[f.first_input[d]];
    if (f.dev[x] != f.dev[h]) continue;
    const std::uint32_t i = consumer_operand[h];
    f.src_node[i] = x;
    f.src_output[i] = f.src_output[f.first_input[d]];
    dead[h] = 1;
    if (--uses[d] == 0) dead[d] = 1;
  }
  // Compact: renumber the live nodes and rewrite their operands.
  std::vector<std::uint32_t> renumber(total, 0);
  flat_graph out;
  for (auto* column : {&out.arity, &out.outputs, &out.first_input}) column->reserve(total);
  out.op.reserve(total);
  out.dev.reserve(total);
  out.src_node.reserve(f.src_node.size());
  out.src_output.reserve(f.src_output.size());
  flat_result r;
  for (std::uint32_t v = 0; v < total; ++v) {
    if (dead[v]) continue;
    renumber[v] = static_cast<std::uint32_t>(out.op.size());
    if (was) was->push_back(v);
    out.op.push_back(f.op[v]);
    out.dev.push_back(f.dev[v]);
    out.arity.push_back(f.arity[v]);
    out.outputs.push_back(f.outputs[v]);
    r.h2d += f.op[v] == flat_graph::h2d;
    r.d2h += f.op[v] == flat_graph::d2h;
  }
  for (std::uint32_t v = 0; v < total; ++v) {
    if (dead[v]) continue;
    out.first_input.push_back(static_cast<std::uint32_t>(out.src_node.size()));
    for (std::uint32_t i = f.first_input[v], e = i + f.arity[v]; i < e; ++i) {
      out.src_node.push_back(renumber[f.src_node[i]]);
      out.src_output.push_back(f.src_output[i]);
    }
  }
  r.nodes = out.op.size();
  if (result) *result = std::move(out);
  return r;
}

// The executorch job as a fused flat program: the copies the literal one (flat_propagate) makes
// and then elides are never made, so nothing is erased or compacted. A device delegate's slot reads
// a value of a delegate on its own device directly (the round trip elision removes); any other
// slot gets an h2d reading the value, or the value's d2h when a device made it. A device value gets
// its d2h when some reader is not a delegate on its device. The same copy counts as
// flat_propagate (the bench checks them): the "flat arrays, fused" floor of
// docs/performance.md#peers.
inline flat_result flat_propagate_fused(flat_graph f) {
  const auto original = static_cast<std::uint32_t>(f.op.size());
  std::vector<std::uint32_t> first_value(original + 1, 0);
  for (std::uint32_t v = 0; v < original; ++v) first_value[v + 1] = first_value[v] + f.outputs[v];
  const auto on_device = [&](std::uint32_t v) { return f.op[v] == flat_graph::delegate && f.dev[v] >= 0; };
  // Per device value: 0 while no reader needs it on the host, then (marked 1 below) the d2h copy
  // made for it, by value. A copy's index is never 0 or 1: the original nodes come first.
  std::vector<std::uint32_t> d2h_of(first_value[original], 0);
  for (std::uint32_t v = 0; v < original; ++v)
    for (std::uint32_t i = f.first_input[v], e = i + f.arity[v]; i < e; ++i) {
      const std::uint32_t p = f.src_node[i];
      if (on_device(p) && !(on_device(v) && f.dev[v] == f.dev[p])) d2h_of[first_value[p] + f.src_output[i]] = 1;
    }
  flat_result r;
  for (std::uint32_t p = 0; p < original; ++p)
    for (std::uint32_t k = 0; k < f.outputs[p]; ++k)
      if (std::uint32_t& d = d2h_of[first_value[p] + k]; d != 0)
        d = append_copy(f, flat_graph::d2h, f.dev[p], p, k), ++r.d2h;
  // Every operand of an original node reads where the literal program's elision leaves it.
  for (std::uint32_t v = 0; v < original; ++v)
    for (std::uint32_t i = f.first_input[v], e = i + f.arity[v]; i < e; ++i) {
      std::uint32_t p = f.src_node[i], k = f.src_output[i];
      if (on_device(v) && on_device(p) && f.dev[v] == f.dev[p]) continue;
      if (on_device(p)) p = d2h_of[first_value[p] + k], k = 0;
      if (on_device(v)) p = append_copy(f, flat_graph::h2d, f.dev[v], p, k), k = 0, ++r.h2d;
      f.src_node[i] = p;
      f.src_output[i] = k;
    }
  r.nodes = f.op.size();
  return r;
}

// The devpass policy's job, flat: one h2d per (host value, device), one d2d per (device value,
// other device), one d2h per device value that a host reader (call, host delegate, the output
// node) reads; same-device reads stay direct. No round trip is made, so nothing to elide or
// compact. Returns the copy counts; the bench checks them against the devpass policy's.
inline flat_result flat_propagate_shared(flat_graph f) {
  const auto original = static_cast<std::uint32_t>(f.op.size());
  std::int32_t devices = 1;
  for (const std::int32_t d : f.dev) devices = std::max(devices, d + 1);
  std::vector<std::uint32_t> first_value(original + 1, 0);
  for (std::uint32_t v = 0; v < original; ++v) first_value[v + 1] = first_value[v] + f.outputs[v];
  // The copies of each original value: to_device[value * devices + d] (h2d or d2d), to_host[value].
  const auto device_count = static_cast<std::size_t>(devices);
  std::vector<std::uint32_t> to_device(std::size_t{first_value[original]} * device_count, 0);
  std::vector<std::uint32_t> to_host(first_value[original], 0);
  flat_result r;
  const auto add_copy = [&](std::uint8_t kind, std::int32_t dev, std::uint32_t node, std::uint32_t output) {
    return append_copy(f, kind, dev, node, output);
  };
  // Where a value of an original node lives: a device delegate's device, else the host (-1).
  const auto location = [&](std::uint32_t p) { return f.op[p] == flat_graph::delegate ? f.dev[p] : -1; };
  for (std::uint32_t v = 0; v < original; ++v) {
    const std::uint8_t op = f.op[v];
    const bool device_reader = op == flat_graph::delegate && f.dev[v] >= 0;
    const bool host_reader =
        op == flat_graph::call || op == flat_graph::output || (op == flat_graph::delegate && f.dev[v] < 0);
    if (!device_reader && !host_reader) continue;
    for (std::uint32_t i = f.first_input[v], e = i + f.arity[v]; i < e; ++i) {
      const std::uint32_t p = f.src_node[i], k = f.src_output[i];
      const std::int32_t from = location(p);
      const std::size_t value = first_value[p] + k;
      std::uint32_t* copy = nullptr;
      std::uint8_t kind = 0;
      std::int32_t side = 0;
      if (device_reader && from != f.dev[v]) {
        copy = &to_device[value * device_count + static_cast<std::size_t>(f.dev[v])];
        kind = from < 0 ? flat_graph::h2d : flat_graph::d2d;
        side = f.dev[v];
      } else if (host_reader && from >= 0) {
        copy = &to_host[value];
        kind = flat_graph::d2h;
        side = from;
      }
      if (!copy) continue;
      if (*copy == 0) {
        *copy = add_copy(kind, side, p, k);
        ++(kind == flat_graph::h2d ? r.h2d : kind == flat_graph::d2h ? r.d2h : r.d2d);
      }
      f.src_node[i] = *copy;
      f.src_output[i] = 0;
    }
  }
  r.nodes = f.op.size();
  return r;
}

}  // namespace devpass::bench
