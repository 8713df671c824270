// bench/own_graph_hand_written.hpp — the devpass policy's job written by hand on the compiler's
// own lean IR (examples/own_graph/own_graph.hpp), reading and writing its fields directly: one
// sweep that inserts one h2d per (host value, device), one d2d per (device value, other device)
// and one d2h per device value a host reader reads, a copy of a constant resident (made once, at
// load: the default resident_constants), then marks every value with where it lives. The copies
// propagate_device makes on that IR with its default options (tests/test_bench_baselines.cpp);
// what `own_graph_framework_over_hand_written` divides by.
#pragma once

#include <array>
#include <vector>

#include "devpass/graph/structure.hpp"
#include "own_graph.hpp"

namespace devpass::bench {

struct own_graph_result {
  std::size_t h2d = 0, d2h = 0, d2d = 0;  // made on every execution
  std::size_t resident = 0;               // made once, at load (copies of constants)
};

inline own_graph_result own_graph_propagate_shared(mycc::ir_graph& g) {
  using mycc::opcode;
  own_graph_result r;
  auto& values = g[boost::graph_bundle].values;
  const auto location = [&](value_ref x) {
    const mycc::op_node& n = g[x.producer];
    const mycc::device_code placed = values[n.first_value + x.output].placed;
    if (placed != 0xFFFF) return placed;
    return n.op == opcode::host_op || n.op == opcode::download ? mycc::device_code{0} : n.device;
  };
  const std::size_t original = boost::num_vertices(g);
  std::array<value_ref, 8> on_stack;
  std::vector<value_ref> on_heap;
  for (vertex v = 0; v < original; ++v) {
    const opcode op = g[v].op;
    const mycc::device_code where = g[v].device;
    const bool device_reader = op == opcode::kernel && where != 0;
    const bool host_reader = op == opcode::host_op || op == opcode::ret || (op == opcode::kernel && where == 0);
    if (!device_reader && !host_reader) continue;
    const std::uint32_t arity = g[v].arity;
    value_ref* slots = on_stack.data();
    if (arity > on_stack.size()) on_heap.resize(arity), slots = on_heap.data();
    for (const auto e : boost::make_iterator_range(boost::in_edges(v, g)))
      if (g[e].operand < arity) slots[g[e].operand] = value_ref{boost::source(e, g), g[e].result};
    for (std::uint32_t slot = 0; slot < arity; ++slot) {
      const value_ref x = slots[slot];
      const mycc::device_code from = location(x);
      opcode kind;
      mycc::device_code side;
      if (device_reader && from != where)
        kind = from == 0 ? opcode::upload : opcode::peer_copy, side = where;
      else if (host_reader && from != 0)
        kind = opcode::download, side = from;
      else
        continue;
      vertex copy = 0;
      bool found = false;
      for (const auto e : boost::make_iterator_range(boost::out_edges(x.producer, g))) {
        const vertex c = boost::target(e, g);
        if (!found && g[e].result == x.output && g[c].op == kind && g[c].device == side) copy = c, found = true;
      }
      if (!found) {
        mycc::value_info value = values[g[x.producer].first_value + x.output];
        value.placed = kind == opcode::download ? 0 : side;
        value.mem_id = -1;
        // A constant's value, or a resident copy's, is the same on every execution.
        const bool resident = g[x.producer].op == opcode::weight || g[x.producer].resident;
        copy = boost::add_vertex(mycc::op_node{kind, false, side, 0, static_cast<std::uint32_t>(values.size()), 1,
                                               resident, mycc::op_node::unnamed},
                                 g);
        values.push_back(value);
        connect(g, x, copy, 0);
        ++(resident ? r.resident : kind == opcode::upload ? r.h2d : kind == opcode::download ? r.d2h : r.d2d);
      }
      set_operand(g, v, slot, value_ref{copy, 0});
    }
  }
  for (vertex v = 0, n = boost::num_vertices(g); v < n; ++v)
    for (std::uint32_t k = 0; k < g[v].value_count; ++k) values[g[v].first_value + k].placed = location({v, k});
  return r;
}

}  // namespace devpass::bench
