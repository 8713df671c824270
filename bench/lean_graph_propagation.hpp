// bench/lean_graph_propagation.hpp — the floor of the graph type itself: each policy's job written
// by hand on a Boost.Graph adjacency_list whose node property is as small as a device-typed node
// can be (op, device, output count, arity; no id, no kernel, no output specs) and whose edges are
// the devpass graph's (vecS, {output, slot}): the devpass policy's (one copy per value and device,
// as flat_propagate_shared) and the executorch policy's with the elided copies never made (as
// flat_propagate_fused). They answer how much of the gap between the devpass graph and a flat
// program is the adjacency_list (a vertex with two edge vectors of its own) and how much is the
// node property, and so what any model of the graph concept could reach against a peer.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <vector>

#include "devpass/graph/graph.hpp"
#include "devpass/graph/reserve.hpp"

namespace devpass::bench {

struct lean_node {
  op_kind op = op_kind::call;
  device where;
  std::uint16_t outputs = 0;  // in the padding after `where`: the node stays 12 bytes
  std::uint32_t arity = 0;
};
static_assert(sizeof(lean_node) == 12);
using lean_graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS, lean_node, edge_info,
                                         boost::no_property, boost::vecS>;

// Fills `lean` (empty) with `g`'s nodes and edges, with room for `capacity` nodes and for an edge
// each (as read_graph reserves a graph it reads).
inline void fill_lean(lean_graph& lean, const graph& g, std::size_t capacity) {
  const std::size_t nodes = boost::num_vertices(g);
  reserve_room(lean, nodes, boost::num_edges(g), capacity);
  for (const auto v : boost::make_iterator_range(boost::vertices(g))) {
    if (g[v].outputs.size() > 0xFFFF) throw std::length_error("fill_lean: a node of more than 65535 outputs");
    lean[boost::add_vertex(lean)] =
        lean_node{g[v].op, g[v].device, static_cast<std::uint16_t>(g[v].outputs.size()), g[v].arity};
  }
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
        g[copy] = lean_node{kind, side, 1, 1};
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

// The executorch policy's job with the copies elision would remove never made, as
// flat_propagate_fused does it: a d2h copy per device-delegate value read anywhere but on its own
// device, then for every slot of a device delegate not reading its own device an h2d copy of its
// own (from the host value, or from that d2h copy), and every other reader of a device value
// moved to its d2h copy. Returns the copies made, per kind; the bench checks them against the
// policy's.
inline lean_result lean_propagate_executorch_fused(lean_graph& g) {
  const std::size_t original = boost::num_vertices(g);
  const auto on_device = [&](vertex v) { return g[v].op == op_kind::delegate && !g[v].where.is_host(); };
  const auto stays = [&](vertex reader, vertex producer) {  // a device value read on its own device
    return on_device(reader) && on_device(producer) && g[reader].where == g[producer].where;
  };
  std::vector<std::uint32_t> first_value(original + 1, 0);
  for (vertex v = 0; v < original; ++v) first_value[v + 1] = first_value[v] + g[v].outputs;
  // Per device value: 0 while no reader needs it on the host, 1 when one does, then its d2h copy
  // (a copy's index is never 0 or 1: the original nodes come first).
  std::vector<vertex> d2h_of(first_value[original], 0);
  std::size_t h2d = 0;
  for (vertex v = 0; v < original; ++v)
    for (const auto e : boost::make_iterator_range(boost::in_edges(v, g))) {
      const vertex p = boost::source(e, g);
      if (stays(v, p)) continue;
      if (on_device(p)) d2h_of[first_value[p] + g[e].output] = 1;
      if (on_device(v)) ++h2d;
    }
  std::size_t d2h = 0;
  for (const vertex need : d2h_of) d2h += need;
  populate_room(g, d2h + h2d, d2h + h2d);  // as the framework's making does
  lean_result made;
  for (vertex p = 0; p < original; ++p)
    for (std::uint32_t k = 0; k < g[p].outputs; ++k)
      if (vertex& copy = d2h_of[first_value[p] + k]; copy != 0) {
        copy = boost::add_vertex(lean_node{op_kind::d2h_copy, g[p].where, 1, 1}, g);
        boost::add_edge(p, copy, edge_info{k, 0}, g);
        ++made.d2h;
      }
  std::vector<std::pair<std::uint32_t, value_ref>> moves;  // (slot, new operand) of the node at hand
  for (vertex v = 0; v < original; ++v) {
    moves.clear();
    for (const auto e : boost::make_iterator_range(boost::in_edges(v, g))) {
      const vertex p = boost::source(e, g);
      if (stays(v, p) || (!on_device(p) && !on_device(v))) continue;
      // Read before add_edge: it may move the edge vector, and `e` points into it.
      const std::uint32_t slot = g[e].slot;
      value_ref from{p, g[e].output};
      if (on_device(p)) from = value_ref{d2h_of[first_value[p] + from.output], 0};
      if (on_device(v)) {
        const vertex copy = boost::add_vertex(lean_node{op_kind::h2d_copy, g[v].where, 1, 1}, g);
        boost::add_edge(from.producer, copy, edge_info{from.output, 0}, g);
        from = value_ref{copy, 0};
        ++made.h2d;
      }
      moves.emplace_back(slot, from);
    }
    // Rewire after the walk over v's in-edges (moving an edge changes that list).
    for (const auto& [slot, to] : moves) move_in_edge(g, v, slot, to);
  }
  return made;
}

}  // namespace devpass::bench
