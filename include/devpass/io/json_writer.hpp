// devpass/io/json_writer.hpp — writes a graph as devpass.graph/1 (docs/file-format.md).
//
//   write_graph(g, os, order)         order: the nodes to write, in that order (e.g. a memory
//                                     plan's execution order); default topological_order(g)
//   to_json(g, order)                 the same text as a string
//   write_graph_file(g, path, order)  all or nothing: a temporary file renamed over `path`
//
// Format: compact JSON, one node per line, fields in a fixed order (id, op, device, resident,
// kernel, inputs, outputs, attrs); `device` only when not cpu, `resident` only when true; spec `device`, `mem_id`, `offset` only
// when set; attrs verbatim. Laws: deterministic (same graph, same bytes); read(write(g)) is g up
// to vertex order; write(read(write(g))) == write(g).
//
// Speed: fields are formatted straight into a block that goes to the stream whole
// (detail/write_buffer.hpp); no string is made per field or per input reference, and the write
// order is checked once (docs/performance.md, "Files").
#pragma once

#include <cstdint>
#include <ostream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "devpass/graph/graph.hpp"
#include "devpass/io/atomic_file.hpp"
#include "devpass/io/detail/json_string.hpp"
#include "devpass/io/detail/write_buffer.hpp"

namespace devpass {

namespace detail {

inline void write_spec(write_buffer& out, const tensor_spec& spec) {
  out.text("{\"dtype\":\"");
  out.text(to_string(spec.type));
  out.text("\",\"shape\":[");
  for (std::size_t i = 0; i < spec.shape.size(); ++i) {
    if (i != 0) out.text(',');
    out.integer(spec.shape[i]);
  }
  out.text(']');
  if (spec.device) {
    out.text(",\"device\":\"");
    out.device_name(*spec.device);
    out.text('"');
  }
  if (spec.mem_id) {
    out.text(",\"mem_id\":");
    out.integer(*spec.mem_id);
  }
  if (spec.offset) {
    out.text(",\"offset\":");
    out.integer(*spec.offset);
  }
  out.text('}');
}

// One node as a JSON object (no newline). `inputs` is scratch space reused across calls.
inline void write_node(write_buffer& out, const graph& g, vertex v, std::vector<value_ref>& inputs) {
  const node& n = g[v];
  out.text("{\"id\":");
  out.json_string(n.id);
  out.text(",\"op\":\"");
  out.text(to_string(n.op));
  out.text('"');
  if (!n.device.is_host()) {
    out.text(",\"device\":\"");
    out.device_name(n.device);
    out.text('"');
  }
  if (n.resident) out.text(",\"resident\":true");
  if (!n.kernel.empty()) {
    out.text(",\"kernel\":");
    out.json_string(n.kernel);
  }
  if (n.arity != 0) {
    constexpr vertex unconnected = static_cast<vertex>(-1);
    inputs.assign(n.arity, value_ref{unconnected, 0});
    for (const auto e : boost::make_iterator_range(boost::in_edges(v, g)))
      if (g[e].slot < n.arity) inputs[g[e].slot] = value_ref{boost::source(e, g), g[e].output};
    out.text(",\"inputs\":[");
    for (std::uint32_t s = 0; s < n.arity; ++s) {
      if (inputs[s].producer == unconnected)
        throw graph_error("", n.id, "inputs", "input " + std::to_string(s) + " is not connected");
      if (s != 0) out.text(',');
      const value_ref in = inputs[s];
      if (in.output == 0)
        out.json_string(g[in.producer].id);
      else
        out.json_string_with_output(g[in.producer].id, in.output);
    }
    out.text(']');
  }
  if (!n.outputs.empty()) {
    out.text(",\"outputs\":[");
    for (std::size_t k = 0; k < n.outputs.size(); ++k) {
      if (k != 0) out.text(',');
      write_spec(out, n.outputs[k]);
    }
    out.text(']');
  }
  if (!n.attrs.empty()) {
    out.text(",\"attrs\":");
    out.text(n.attrs);
  }
  out.text('}');
}

// Checks that `order` names every live node of g exactly once.
inline void check_write_order(const graph& g, const std::vector<vertex>& order) {
  const std::size_t n = boost::num_vertices(g);
  std::vector<char> seen(n, 0);
  for (const vertex v : order) {
    if (v >= n || g[v].erased) throw graph_error("", "", "order", "names a vertex that is not a live node");
    if (seen[v]) throw graph_error("", g[v].id, "order", "the node appears twice in the write order");
    seen[v] = 1;
  }
  // Every entry is a distinct live node, so one is missing exactly when a live node is unseen.
  for (vertex v = 0; v < n; ++v)
    if (!seen[v] && !g[v].erased) throw graph_error("", g[v].id, "order", "the node is missing from the write order");
}

// Calls write(nodes) with the nodes to write: `order`, checked, or else a topological order (of
// 32-bit entries: the writer's order sits at devpass-opt's peak RSS). Order and structure
// problems throw before write is called.
template <class Write>
void with_write_order(const graph& g, const std::vector<vertex>* order, Write&& write) {
  if (order) {
    check_write_order(g, *order);
    write(*order);
  } else {
    write(topological_order_as<std::uint32_t>(g));
  }
}

// Writes the nodes of a checked write order.
template <class Order>
void write_nodes(const graph& g, std::ostream& os, const Order& nodes) {
  write_buffer out(os);
  out.text("{\"format\":\"devpass.graph/1\",\"name\":");
  out.json_string(method_name(g));
  out.text(",\"nodes\":[\n");
  std::vector<value_ref> scratch;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    write_node(out, g, nodes[i], scratch);
    out.text(i + 1 < nodes.size() ? std::string_view(",\n") : std::string_view("\n"));
  }
  out.text("]}\n");
  out.flush();
}

}  // namespace detail

// Writes `g` to `os`. Throws graph_error for a cycle (naming a node on it), an unconnected input
// slot, or an `order` that does not name every live node exactly once.
inline void write_graph(const graph& g, std::ostream& os, const std::vector<vertex>* order = nullptr) {
  detail::with_write_order(g, order, [&](const auto& nodes) { detail::write_nodes(g, os, nodes); });
}

[[nodiscard]] inline std::string to_json(const graph& g, const std::vector<vertex>* order = nullptr) {
  std::ostringstream os;
  write_graph(g, os, order);
  return std::move(os).str();
}

// Writes `g` to `path` ("-": standard output); on any error the file at `path` is untouched.
inline void write_graph_file(const graph& g, const std::string& path, const std::vector<vertex>* order = nullptr) {
  // Order and structure problems surface before any file exists; the order is checked once.
  detail::with_write_order(g, order, [&](const auto& nodes) {
    write_file_atomically(path, [&](std::ostream& os) { detail::write_nodes(g, os, nodes); });
  });
}

}  // namespace devpass
