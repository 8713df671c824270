// A model complete for the passes and nothing more: no set_buffer, no op vocabulary, no add_node.
// The compile_fail tests that ask for one of those include it.
#pragma once

#include <devpass/graph/graph_model.hpp>

struct my_op {
  devpass::op_kind kind = devpass::op_kind::call;
  bool dead = false;
  std::uint32_t inputs = 0;
};
using my_graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS, my_op, devpass::edge_info,
                                       boost::no_property, boost::vecS>;

template <>
struct devpass::graph_model<my_graph> {
  static op_kind role(const my_graph& g, vertex v) { return g[v].kind; }
  static bool erased(const my_graph& g, vertex v) { return g[v].dead; }
  static void mark_erased(my_graph& g, vertex v) { g[v].dead = true; }
  static std::uint32_t arity(const my_graph& g, vertex v) { return g[v].inputs; }
  static void set_arity(my_graph& g, vertex v, std::uint32_t a) { g[v].inputs = a; }
  static std::uint32_t output_count(const my_graph&, vertex) { return 1; }
  static device node_device(const my_graph&, vertex) { return cpu_device; }
  static std::optional<device> marked_device(const my_graph&, value_ref) { return std::nullopt; }
  static void mark_device(my_graph&, value_ref, device) {}
  static dtype value_dtype(const my_graph&, value_ref) { return dtype::float32; }
  static std::uint64_t value_bytes(const my_graph&, value_ref) { return 4; }
  static std::string_view name(const my_graph&, vertex) { return "op"; }
  static vertex add_copy(my_graph& g, const copy_request&) { return boost::add_vertex(g); }
};
