// bench/graph_api_propagation.hpp — the devpass policy's job written by hand against the same
// graph type and accessors the passes use (no rule tables, no driver): one sweep that inserts one
// h2d per (host value, device), one d2d per (device value, other device) and one d2h per device
// value a host reader reads, a copy of a constant resident (made once, at load: the default
// resident_constants), then the device annotation. For `scripts/bench propagate`, between the
// flat-array program (what the representation costs) and the devpass policy (what the rule engine
// adds on top). The copies and ids the policy makes with its default options
// (tests/test_bench_baselines.cpp).
#pragma once

#include <array>
#include <optional>
#include <string>

#include "devpass/graph/graph.hpp"
#include "devpass/graph/id_allocator.hpp"

namespace devpass::bench {

struct graph_api_result {
  std::size_t h2d = 0, d2h = 0, d2d = 0;  // made on every execution
  std::size_t resident = 0;               // made once, at load (copies of constants)
};

inline graph_api_result graph_api_propagate_shared(graph& g) {
  graph_api_result r;
  id_allocator ids(g);
  const std::size_t original = boost::num_vertices(g);
  for (vertex v = 0; v < original; ++v) {
    const op_kind op = g[v].op;
    const device where = g[v].device;
    const bool device_reader = op == op_kind::delegate && !where.is_host();
    const bool host_reader =
        op == op_kind::call || op == op_kind::output || (op == op_kind::delegate && where.is_host());
    if (!device_reader && !host_reader) continue;
    const std::uint32_t arity = g[v].arity;
    std::array<value_ref, 8> on_stack;
    std::vector<value_ref> on_heap;
    value_ref* slots = on_stack.data();
    if (arity > on_stack.size()) on_heap.resize(arity), slots = on_heap.data();
    for (const auto e : boost::make_iterator_range(boost::in_edges(v, g)))
      if (g[e].slot < arity) slots[g[e].slot] = value_ref{boost::source(e, g), g[e].output};
    for (std::uint32_t slot = 0; slot < arity; ++slot) {
      const value_ref x = slots[slot];
      const device from = location_of(g, x);
      op_kind kind;
      device side;
      if (device_reader && from != where)
        kind = from.is_host() ? op_kind::h2d_copy : op_kind::d2d_copy, side = where;
      else if (host_reader && !from.is_host())
        kind = op_kind::d2h_copy, side = from;
      else
        continue;
      std::optional<vertex> copy;
      for_each_use(g, x, [&](use u) {
        if (!copy && g[u.consumer].op == kind && g[u.consumer].device == side) copy = u.consumer;
      });
      if (!copy) {
        std::string id = value_name(g, x);
        id += kind == op_kind::h2d_copy ? "@h2d[" : kind == op_kind::d2d_copy ? "@d2d[" : "@d2h";
        if (kind != op_kind::d2h_copy) id += to_string(side) + "]";
        tensor_spec spec = spec_of(g, x);
        spec.device = kind == op_kind::d2h_copy ? cpu_device : side;
        // A constant's value, or a resident copy's, is the same on every execution.
        const bool resident = g[x.producer].op == op_kind::constant || g[x.producer].resident;
        node made{.id = ids.make_derived(x.producer, std::move(id)), .op = kind, .device = side, .resident = resident};
        made.outputs.push_back(std::move(spec));
        copy = add_node(g, std::move(made));
        connect(g, x, *copy, 0);
        ++(resident ? r.resident : kind == op_kind::h2d_copy ? r.h2d : kind == op_kind::d2h_copy ? r.d2h : r.d2d);
      }
      set_operand(g, v, slot, value_ref{*copy, 0});
    }
  }
  for (const auto v : boost::make_iterator_range(boost::vertices(g)))
    for (std::uint32_t k = 0; k < g[v].outputs.size(); ++k) g[v].outputs[k].device = location_of(g, {v, k});
  return r;
}

}  // namespace devpass::bench
