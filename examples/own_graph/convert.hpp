// examples/own_graph/convert.hpp — devpass::graph (what devpass's file reader gives) into the
// compiler's own IR, vertex for vertex and edge for edge, so the same graph can be run through
// devpass on both models and the results compared (tests/test_own_graph.cpp, bench_propagate).
#pragma once

#include "devpass/graph/graph.hpp"
#include "own_graph.hpp"

namespace mycc {

[[nodiscard]] inline opcode opcode_of(devpass::op_kind k) {
  using devpass::op_kind;
  switch (k) {
    case op_kind::input: return opcode::param;
    case op_kind::constant: return opcode::weight;
    case op_kind::delegate: return opcode::kernel;
    case op_kind::call: return opcode::host_op;
    case op_kind::h2d_copy: return opcode::upload;
    case op_kind::d2h_copy: return opcode::download;
    case op_kind::d2d_copy: return opcode::peer_copy;
    case op_kind::output: return opcode::ret;
  }
  return opcode::host_op;
}

// With room for `capacity` vertices (as devpass's reader reserves: node_capacity_for).
[[nodiscard]] inline ir_graph from_devpass(const devpass::graph& source, std::size_t capacity = 0) {
  ir_graph g;
  g.m_vertices.reserve(std::max(capacity, boost::num_vertices(source)));
  module& m = g[boost::graph_bundle];
  m.values.reserve(g.m_vertices.capacity() + boost::num_vertices(source) / 4);
  for (const auto v : boost::make_iterator_range(boost::vertices(source))) {
    const devpass::node& n = source[v];
    op_node node{opcode_of(n.op),
                 n.erased,
                 encode(n.device),
                 n.arity,
                 static_cast<std::uint32_t>(m.values.size()),
                 static_cast<std::uint16_t>(n.outputs.size()),
                 static_cast<std::uint32_t>(m.names.size())};
    m.names.push_back(n.id);
    for (const devpass::tensor_spec& spec : n.outputs)
      m.values.push_back({spec.byte_size(), spec.type, spec.device ? encode(*spec.device) : device_code{0xFFFF},
                          spec.mem_id.value_or(-1), spec.offset.value_or(0)});
    boost::add_vertex(node, g);
  }
  for (const auto e : boost::make_iterator_range(boost::edges(source)))
    boost::add_edge(boost::source(e, source), boost::target(e, source), source[e], g);
  return g;
}

}  // namespace mycc
