// examples/own_graph/convert.hpp — devpass::graph (what devpass's file reader gives) into the
// compiler's own IR, vertex for vertex and edge for edge, so the same graph can be run through
// devpass on both models and the results compared (tests/test_own_graph.cpp, bench_propagate).
#pragma once

#include "devpass/graph/graph.hpp"
#include "devpass/graph/reserve.hpp"
#include "own_graph.hpp"

namespace mycc {

// Fills `g` (empty) with `source`'s nodes and edges, with room for `capacity` vertices and for
// an edge each (as devpass's reader reserves: node_capacity_for). In place, because an
// adjacency_list has no move: assigning a returned graph (`g = from_devpass(...)`) copies it
// vertex by vertex into storage of its own growth, and the module's value table into one of
// exactly its size, so the room would be lost.
inline void fill_from_devpass(ir_graph& g, const devpass::graph& source, std::size_t capacity = 0) {
  const std::size_t nodes = boost::num_vertices(source);
  devpass::reserve_room(g, nodes, boost::num_edges(source), capacity);
  module& m = g[boost::graph_bundle];
  m.values.reserve(g.m_vertices.capacity() + nodes / 4);
  for (const auto v : boost::make_iterator_range(boost::vertices(source))) {
    const devpass::node& n = source[v];
    op_node node{opcode_of(n.op),
                 n.erased,
                 encode(n.device),
                 n.arity,
                 static_cast<std::uint32_t>(m.values.size()),
                 static_cast<std::uint16_t>(n.outputs.size()),
                 n.resident,
                 static_cast<std::uint32_t>(m.names.size())};
    m.names.push_back(n.id);
    for (const devpass::tensor_spec& spec : n.outputs)
      m.values.push_back({spec.byte_size(), spec.type, spec.device ? encode(*spec.device) : device_code{0xFFFF},
                          spec.mem_id.value_or(-1), spec.offset.value_or(0)});
    boost::add_vertex(node, g);
  }
  // The same edges, in the same order, as the IR's own edge struct (its position hints stay
  // devpass::graph's: a stale hint costs time, never correctness).
  for (const auto e : boost::make_iterator_range(boost::edges(source)))
    boost::add_edge(boost::source(e, source), boost::target(e, source),
                    operand_edge{source[e].output, source[e].slot, source[e].out_position}, g);
}

// The same as a new graph (initialise with it: `ir_graph g = from_devpass(source);` keeps the room).
[[nodiscard]] inline ir_graph from_devpass(const devpass::graph& source, std::size_t capacity = 0) {
  ir_graph g;
  fill_from_devpass(g, source, capacity);
  return g;
}

}  // namespace mycc
