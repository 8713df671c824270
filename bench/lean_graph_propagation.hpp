// bench/lean_graph_propagation.hpp — the floor of the graph type itself: the devpass policy's job
// (one copy per value and device, as flat_propagate_shared) on a Boost.Graph adjacency_list
// whose node property is as small as a device-typed node can be (op, device, arity; no id, no
// kernel, no output specs) and whose edges are the devpass graph's (vecS, {output, slot}).
// It answers how much of the gap between the devpass graph and a flat program is the
// adjacency_list (a vertex with two edge vectors of its own) and how much is the node property.
#pragma once

#include <cstdint>
#include <vector>

#include "devpass/graph/graph.hpp"

namespace devpass::bench {

struct lean_node {
  op_kind op = op_kind::call;
  device where;
  std::uint32_t arity = 0;
};
using lean_graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS, lean_node, edge_info,
                                         boost::no_property, boost::vecS>;

// Fills `lean` (empty) with `g`'s nodes and edges, with room for `capacity` nodes.
inline void fill_lean(lean_graph& lean, const graph& g, std::size_t capacity) {
  lean.m_vertices.reserve(capacity);
  for (const auto v : boost::make_iterator_range(boost::vertices(g)))
    lean[boost::add_vertex(lean)] = lean_node{g[v].op, g[v].device, g[v].arity};
  for (const auto e : boost::make_iterator_range(boost::edges(g)))
    boost::add_edge(boost::source(e, g), boost::target(e, g), g[e], lean);
}

struct lean_result {
  std::size_t h2d = 0, d2h = 0, d2d = 0;
};

// Returns the copies made, per kind.
inline lean_result lean_propagate_shared(lean_graph& g) {
  const std::size_t original = boost::num_vertices(g);
  // Where an original node's values live: a device delegate's device, else the host.
  const auto location = [&](vertex p) {
    const lean_node& n = g[p];
    if (n.op == op_kind::delegate || n.op == op_kind::h2d_copy || n.op == op_kind::d2d_copy) return n.where;
    return cpu_device;
  };
  lean_result made;
  std::vector<std::pair<std::uint32_t, value_ref>> moves;  // (slot, new operand) of the node at hand
  for (vertex v = 0; v < original; ++v) {
    const lean_node n = g[v];
    const bool device_reader = n.op == op_kind::delegate && !n.where.is_host();
    const bool host_reader =
        n.op == op_kind::call || n.op == op_kind::output || (n.op == op_kind::delegate && n.where.is_host());
    if (!device_reader && !host_reader) continue;
    moves.clear();
    for (const auto e : boost::make_iterator_range(boost::in_edges(v, g))) {
      const vertex p = boost::source(e, g);
      const device from = location(p);
      op_kind kind;
      device side;
      if (device_reader && from != n.where)
        kind = from.is_host() ? op_kind::h2d_copy : op_kind::d2d_copy, side = n.where;
      else if (host_reader && !from.is_host())
        kind = op_kind::d2h_copy, side = from;
      else
        continue;
      // Read before add_edge: it may move the edge vector, and `e` points into it.
      const std::uint32_t output = g[e].output, slot = g[e].slot;
      vertex copy = 0;
      bool found = false;
      for (const auto use : boost::make_iterator_range(boost::out_edges(p, g))) {
        const vertex c = boost::target(use, g);
        if (g[use].output == output && g[c].op == kind && g[c].where == side) copy = c, found = true;
      }
      if (!found) {
        copy = boost::add_vertex(g);
        g[copy] = lean_node{kind, side, 1};
        boost::add_edge(p, copy, edge_info{output, 0}, g);
        ++(kind == op_kind::h2d_copy ? made.h2d : kind == op_kind::d2h_copy ? made.d2h : made.d2d);
      }
      moves.emplace_back(slot, value_ref{copy, 0});
    }
    // Rewire after the walk over v's in-edges (moving an edge changes that list).
    for (const auto& [slot, to] : moves) move_in_edge(g, v, slot, to);
  }
  return made;
}

}  // namespace devpass::bench
