// devpass/io/json_writer.hpp — writes a graph as devpass.graph/1 (docs/file-format.md).
//
//   write_graph(g, os, order)         order: the nodes to write, in that order (e.g. a memory
//                                     plan's execution order); default topological_order(g)
//   to_json(g, order)                 the same text as a string
//   write_graph_file(g, path, order)  all or nothing: a temporary file renamed over `path`
//
// Format: compact JSON, one node per line, fields in a fixed order (id, op, device, kernel,
// inputs, outputs, attrs); `device` only when not cpu; spec `device`, `mem_id`, `offset` only
// when set; attrs verbatim. Laws: deterministic (same graph, same bytes); read(write(g)) is g up
// to vertex order; write(read(write(g))) == write(g).
#pragma once

#include <charconv>
#include <cstdint>
#include <ostream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "devpass/graph/graph.hpp"
#include "devpass/graph/json_string.hpp"
#include "devpass/io/atomic_file.hpp"

namespace devpass {

namespace detail {

template <class Int>
void append_integer(std::string& out, Int value) {
  char buffer[24];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  out.append(buffer, result.ptr);
}

inline void append_spec(std::string& out, const tensor_spec& spec) {
  out += "{\"dtype\":\"";
  out += to_string(spec.type);
  out += "\",\"shape\":[";
  for (std::size_t i = 0; i < spec.shape.size(); ++i) {
    if (i != 0) out += ',';
    append_integer(out, spec.shape[i]);
  }
  out += ']';
  if (spec.device) {
    out += ",\"device\":\"";
    out += to_string(*spec.device);
    out += '"';
  }
  if (spec.mem_id) {
    out += ",\"mem_id\":";
    append_integer(out, *spec.mem_id);
  }
  if (spec.offset) {
    out += ",\"offset\":";
    append_integer(out, *spec.offset);
  }
  out += '}';
}

// One node as a JSON object (no newline). `inputs` is scratch space reused across calls.
inline void append_node(std::string& out, const graph& g, vertex v, std::vector<value_ref>& inputs) {
  const node& n = g[v];
  out += "{\"id\":";
  append_json_string(out, n.id);
  out += ",\"op\":\"";
  out += to_string(n.op);
  out += '"';
  if (!n.device.is_host()) {
    out += ",\"device\":\"";
    out += to_string(n.device);
    out += '"';
  }
  if (!n.kernel.empty()) {
    out += ",\"kernel\":";
    append_json_string(out, n.kernel);
  }
  if (n.arity != 0) {
    constexpr vertex unconnected = static_cast<vertex>(-1);
    inputs.assign(n.arity, value_ref{unconnected, 0});
    for (const auto e : boost::make_iterator_range(boost::in_edges(v, g)))
      if (g[e].slot < n.arity) inputs[g[e].slot] = value_ref{boost::source(e, g), g[e].output};
    out += ",\"inputs\":[";
    for (std::uint32_t s = 0; s < n.arity; ++s) {
      if (inputs[s].producer == unconnected) throw graph_error("", n.id, "inputs", "input " + std::to_string(s) + " is not connected");
      if (s != 0) out += ',';
      const value_ref in = inputs[s];
      if (in.output == 0) {
        append_json_string(out, g[in.producer].id);
      } else {
        append_json_string(out, g[in.producer].id + ":" + std::to_string(in.output));
      }
    }
    out += ']';
  }
  if (!n.outputs.empty()) {
    out += ",\"outputs\":[";
    for (std::size_t k = 0; k < n.outputs.size(); ++k) {
      if (k != 0) out += ',';
      append_spec(out, n.outputs[k]);
    }
    out += ']';
  }
  if (!n.attrs.empty()) {
    out += ",\"attrs\":";
    out += n.attrs;
  }
  out += '}';
}

// The nodes to write: `order` checked to name every live node once, or a topological order.
inline std::vector<vertex> write_order(const graph& g, const std::vector<vertex>* order) {
  if (!order) return topological_order(g);
  const std::size_t n = boost::num_vertices(g);
  std::vector<char> seen(n, 0);
  std::size_t live = 0;
  for (vertex v = 0; v < n; ++v) live += g[v].erased ? 0 : 1;
  for (const vertex v : *order) {
    if (v >= n || g[v].erased) throw graph_error("", "", "order", "names a vertex that is not a live node");
    if (seen[v]) throw graph_error("", g[v].id, "order", "the node appears twice in the write order");
    seen[v] = 1;
  }
  if (order->size() != live) {
    for (vertex v = 0; v < n; ++v)
      if (!g[v].erased && !seen[v]) throw graph_error("", g[v].id, "order", "the node is missing from the write order");
  }
  return *order;
}

}  // namespace detail

// Writes `g` to `os`. Throws graph_error for a cycle (naming a node on it), an unconnected input
// slot, or an `order` that does not name every live node exactly once.
inline void write_graph(const graph& g, std::ostream& os, const std::vector<vertex>* order = nullptr) {
  const std::vector<vertex> nodes = detail::write_order(g, order);
  std::string buffer;
  buffer.reserve(1 << 16);
  buffer += "{\"format\":\"devpass.graph/1\",\"name\":";
  detail::append_json_string(buffer, method_name(g));
  buffer += ",\"nodes\":[\n";
  std::vector<value_ref> scratch;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    detail::append_node(buffer, g, nodes[i], scratch);
    buffer += i + 1 < nodes.size() ? ",\n" : "\n";
    if (buffer.size() > (1 << 16) - 4096) {
      os.write(buffer.data(), static_cast<std::streamsize>(buffer.size()));
      buffer.clear();
    }
  }
  buffer += "]}\n";
  os.write(buffer.data(), static_cast<std::streamsize>(buffer.size()));
}

[[nodiscard]] inline std::string to_json(const graph& g, const std::vector<vertex>* order = nullptr) {
  std::ostringstream os;
  write_graph(g, os, order);
  return std::move(os).str();
}

// Writes `g` to `path` ("-": standard output); on any error the file at `path` is untouched.
inline void write_graph_file(const graph& g, const std::string& path, const std::vector<vertex>* order = nullptr) {
  // Order and structure problems surface before any file exists.
  const std::vector<vertex> nodes = detail::write_order(g, order);
  write_file_atomically(path, [&](std::ostream& os) { write_graph(g, os, &nodes); });
}

}  // namespace devpass
