// devpass/io/dot_writer.hpp — draws a graph for Graphviz (`dot -Tsvg`).
//
//   write_dot(g, os)          nodes in vertex order, named n<vertex>
//   write_dot_file(g, path)   all or nothing, as write_graph_file
//
// What the picture says: the fill colour is where a node runs (grey for cpu, one colour per CUDA
// device); copies are yellow `cds` arrows with a red outline, whatever their device (dashed, and
// labelled "resident, at load", for a copy made once when the method is loaded); inputs and
// the output node are house shapes, constants notes. Each edge is labelled with the bytes of the
// value it carries (":k" first when the producer has several outputs). Deterministic: the same
// graph gives the same bytes.
#pragma once

#include <algorithm>
#include <array>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "devpass/graph/graph.hpp"
#include "devpass/io/atomic_file.hpp"
#include "devpass/io/byte_units.hpp"

namespace devpass {

namespace detail {

// Inside a DOT double-quoted string: quotes and backslashes escaped, newlines as DOT's \n.
inline void append_dot_string(std::string& out, std::string_view text) {
  out += '"';
  for (const char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c != '\r') {
      out += c;
    }
  }
  out += '"';
}

inline constexpr std::string_view dot_cpu_fill = "#e8e8e8";
inline constexpr std::string_view dot_copy_fill = "#fff2a8";
inline constexpr std::string_view dot_copy_outline = "#d62728";
// cuda:N takes colour N modulo the table size.
inline constexpr std::array<std::string_view, 6> dot_cuda_fills{"#9ecae1", "#a1d99b", "#bcbddc",
                                                                "#fbb4c4", "#99d8c9", "#d9b38c"};

inline std::string_view dot_fill(device d) {
  return d.is_host() ? dot_cpu_fill : dot_cuda_fills[d.index % dot_cuda_fills.size()];
}

inline std::string dot_label(const node& n) {
  std::string label = n.id + "\n" + std::string(to_string(n.op));
  if (!n.kernel.empty()) label += " " + n.kernel;
  if (!n.device.is_host() || is_copy(n.op)) label += "\n" + to_string(n.device);
  if (n.resident) label += "\nresident, at load";
  return label;
}

}  // namespace detail

inline void write_dot(const graph& g, std::ostream& os) {
  std::string out;
  out += "digraph ";
  detail::append_dot_string(out, method_name(g));
  out +=
      " {\n  rankdir=TB;\n"
      "  node [fontname=\"Helvetica\", fontsize=10, shape=box, style=\"filled,rounded\"];\n"
      "  edge [fontname=\"Helvetica\", fontsize=9];\n";
  const std::size_t n = boost::num_vertices(g);
  for (vertex v = 0; v < n; ++v) {
    const node& nd = g[v];
    if (nd.erased) continue;
    out += "  n" + std::to_string(v) + " [label=";
    detail::append_dot_string(out, detail::dot_label(nd));
    if (is_copy(nd.op)) {
      out += nd.resident ? ", shape=cds, style=\"filled,bold,dashed\", color=\""
                         : ", shape=cds, style=\"filled,bold\", color=\"";
      out += detail::dot_copy_outline;
      out += "\", fillcolor=\"";
      out += detail::dot_copy_fill;
    } else {
      switch (nd.op) {
        case op_kind::input: out += ", shape=invhouse, style=filled"; break;
        case op_kind::output: out += ", shape=house, style=filled"; break;
        case op_kind::constant: out += ", shape=note, style=filled"; break;
        default: break;
      }
      out += ", fillcolor=\"";
      out += detail::dot_fill(nd.device);
    }
    out += "\"];\n";
  }
  // Edges grouped by consumer, by slot, so the text does not depend on edge insertion history.
  std::vector<std::pair<std::uint32_t, edge>> in;
  for (vertex v = 0; v < n; ++v) {
    if (g[v].erased) continue;
    in.clear();
    for (const auto e : boost::make_iterator_range(boost::in_edges(v, g))) in.emplace_back(g[e].slot, e);
    std::sort(in.begin(), in.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (const auto& [slot, e] : in) {
      const vertex p = boost::source(e, g);
      const node& producer = g[p];
      std::string label;
      if (producer.outputs.size() > 1) label = ":" + std::to_string(g[e].output) + " ";
      if (g[e].output < producer.outputs.size())
        label += format_bytes(producer.outputs[g[e].output].byte_size());
      else
        label += "?";
      out += "  n" + std::to_string(p) + " -> n" + std::to_string(v) + " [label=";
      detail::append_dot_string(out, label);
      out += "];\n";
    }
    if (out.size() > (1 << 16)) {
      os << out;
      out.clear();
    }
  }
  out += "}\n";
  os << out;
}

inline void write_dot_file(const graph& g, const std::string& path) {
  write_file_atomically(path, [&](std::ostream& os) { write_dot(g, os); });
}

}  // namespace devpass
