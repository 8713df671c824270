// devpass/testing/to_string.hpp — a readable text form of every graph type, for test messages.
//
//   to_string(spec)      float32[2,2]@cuda:0 mem 2+64   (device and buffer+offset once set)
//   to_string(node)      a delegate cuda:0 relu (arity 1) -> float32[2,2]   (" (resident)" for a resident copy)
//   to_string(g, v)      a node as a line of its graph: #1 a delegate cuda:0 relu (x) -> float32[2,2]
//   to_string(g)         a header line, then one line per live node in vertex order, the first
//                        text_options::max_nodes of them, then "  ... N more nodes"
//   to_string(value)     {producer #3, output 1}   (a value_ref alone cannot name its node)
//   to_string(g, value)  's:1' (#3)
//   to_string(census)    h2d 1 (16 B), d2h 0 (0 B), d2d 0 (0 B)[, resident 2 (64 B)]
//   to_string(plan)      a header line, one line per buffer, the execution order
//   to_string(counters)  3 rewrites (14 matches tried, 1 node added, 2 removed)
// node_line(g, v), to_string(g, value) and to_string(g) take any graph model too (below): a
// compiler's own IR prints from what its model says.
// Devices, dtypes and ops already have devpass::to_string. Nothing here includes doctest:
// testing.hpp turns these into doctest::StringMakers. Deterministic: the same graph gives the
// same text (vertex order, not the order edges were made in).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "devpass/graph/concat.hpp"
#include "devpass/graph/copy_census.hpp"
#include "devpass/graph/graph.hpp"
#include "devpass/planning/memory_plan.hpp"
#include "devpass/rules/context.hpp"

namespace devpass::testing {

struct text_options {
  std::size_t max_nodes = 40;  // lines of nodes before "... N more nodes"; big graphs stay readable
};

[[nodiscard]] inline std::string to_string(const tensor_spec& s) {
  std::string text(devpass::to_string(s.type));
  text += '[';
  for (std::size_t i = 0; i < s.shape.size(); ++i) {
    if (i != 0) text += ',';
    text += std::to_string(s.shape[i]);
  }
  text += ']';
  if (s.device) text += "@" + devpass::to_string(*s.device);
  if (s.mem_id || s.offset) {
    text += " mem " + (s.mem_id ? std::to_string(*s.mem_id) : std::string("?"));
    if (s.offset) text += "+" + std::to_string(*s.offset);
  }
  return text;
}

namespace detail {
// "-> a, b" for a node's output specs; nothing for a node without outputs (the output node).
inline std::string outputs_text(const node& n) {
  if (n.outputs.empty()) return {};
  std::string text = " ->";
  for (std::size_t k = 0; k < n.outputs.size(); ++k) (text += k == 0 ? " " : ", ") += to_string(n.outputs[k]);
  return text;
}
// "id op device[ kernel]": what a node line starts with.
inline std::string head_text(const node& n) {
  std::string text = n.id.empty() ? std::string("''") : n.id;
  ((text += ' ') += devpass::to_string(n.op)) += ' ';
  text += devpass::to_string(n.device);
  if (!n.kernel.empty()) (text += ' ') += n.kernel;
  return text;
}
inline std::string tail_text(const node& n) {
  std::string text = outputs_text(n);
  if (!n.attrs.empty()) text += " attrs " + n.attrs;
  if (n.resident) text += " (resident)";
  if (n.erased) text += " (erased)";
  return text;
}
inline std::string plural(std::size_t count, std::string_view one, std::string_view many) {
  return std::to_string(count) + " " + std::string(count == 1 ? one : many);
}
}  // namespace detail

// A node without its graph: its inputs are edges, so only their number is known.
[[nodiscard]] inline std::string to_string(const node& n) {
  std::string text = detail::head_text(n);
  if (n.arity != 0) text += " (arity " + std::to_string(n.arity) + ")";
  return text + detail::tail_text(n);
}

[[nodiscard]] inline std::string to_string(value_ref value) {
  return "{producer #" + std::to_string(value.producer) + ", output " + std::to_string(value.output) + "}";
}

[[nodiscard]] inline std::string to_string(use u) {
  return "{consumer #" + std::to_string(u.consumer) + ", slot " + std::to_string(u.slot) + "}";
}

// 's:1' (#3); a value the graph does not hold says so instead of reading past its end.
[[nodiscard]] inline std::string to_string(const graph& g, value_ref value) {
  if (value.producer >= boost::num_vertices(g)) return to_string(value) + " (not in the graph)";
  const node& n = g[value.producer];
  if (value.output >= n.outputs.size())
    return to_string(value) + " ('" + n.id + "' has " + detail::plural(n.outputs.size(), "output", "outputs") + ")";
  return "'" + value_name(g, value) + "' (#" + std::to_string(value.producer) + ")";
}

// One node as a line of its graph: #v id op device kernel (inputs by slot) -> specs. An
// unconnected slot reads "?".
[[nodiscard]] inline std::string node_line(const graph& g, vertex v) {
  const node& n = g[v];
  std::string text = devpass::concat({"#", std::to_string(v), " ", detail::head_text(n)});
  if (n.arity != 0) {
    text += " (";
    for (std::uint32_t slot = 0; slot < n.arity; ++slot) {
      if (slot != 0) text += ", ";
      const auto in = operand(g, v, slot);
      text += in ? value_name(g, *in) : std::string("?");
    }
    text += ")";
  }
  return text + detail::tail_text(n);
}

[[nodiscard]] inline std::string to_string(const graph& g, text_options options = {}) {
  std::size_t live = 0, erased = 0;
  for (const auto v : boost::make_iterator_range(boost::vertices(g))) ++(g[v].erased ? erased : live);
  std::string text = "graph";
  if (!method_name(g).empty()) text += " '" + method_name(g) + "'";
  text += ": " + detail::plural(live, "node", "nodes");
  if (erased != 0) text += " (and " + std::to_string(erased) + " erased, not shown)";
  std::size_t shown = 0;
  for (const auto v : boost::make_iterator_range(boost::vertices(g))) {
    if (g[v].erased) continue;
    if (shown == options.max_nodes) break;
    (text += "\n  ") += node_line(g, v);
    ++shown;
  }
  if (shown < live) text += "\n  ... " + detail::plural(live - shown, "more node", "more nodes");
  return text;
}

// The same texts for any other graph model (graph_model.hpp), from what the model says: a node
// by its name, role and device, its operands by value name, its values by dtype, bytes and the
// device they are marked on.
//   to_string(g, v)      #1 a delegate cuda:0 (x) -> float32 16 B@cuda:0
namespace detail {
template <class G>
std::string model_value_text(const G& g, value_ref x) {
  std::string text(devpass::to_string(value_dtype(g, x)));
  text += ' ';
  text += std::to_string(value_bytes(g, x));
  text += " B";
  if (const auto at = marked_device(g, x)) text += "@" + devpass::to_string(*at);
  return text;
}
template <class G>
std::string model_node_text(const G& g, vertex v) {
  std::string text = display_name(g, v);
  if (text.empty()) text = "''";
  ((text += ' ') += devpass::to_string(role_of(g, v))) += ' ';
  text += devpass::to_string(node_device(g, v));
  if (const std::uint32_t arity = arity_of(g, v); arity != 0) {
    text += " (";
    for (std::uint32_t slot = 0; slot < arity; ++slot) {
      if (slot != 0) text += ", ";
      const auto in = operand(g, v, slot);
      text += in ? value_name(g, *in) : std::string("?");
    }
    text += ")";
  }
  for (std::uint32_t k = 0, n = output_count(g, v); k < n; ++k)
    (text += k == 0 ? " -> " : ", ") += model_value_text(g, value_ref{v, k});
  if (is_resident(g, v)) text += " (resident)";
  if (is_erased(g, v)) text += " (erased)";
  return text;
}
}  // namespace detail

template <modeled_graph G>
[[nodiscard]] std::string node_line(const G& g, vertex v) {
  return devpass::concat({"#", std::to_string(v), " ", detail::model_node_text(g, v)});
}
template <modeled_graph G>
[[nodiscard]] std::string to_string(const G& g, value_ref value) {
  if (value.producer >= boost::num_vertices(g)) return to_string(value) + " (not in the graph)";
  if (value.output >= output_count(g, value.producer))
    return to_string(value) + " ('" + display_name(g, value.producer) + "' has " +
           detail::plural(output_count(g, value.producer), "output", "outputs") + ")";
  return "'" + value_name(g, value) + "' (#" + std::to_string(value.producer) + ")";
}
template <modeled_graph G>
[[nodiscard]] std::string to_string(const G& g, text_options options = {}) {
  std::size_t live = 0, erased = 0;
  for (vertex v = 0, n = boost::num_vertices(g); v < n; ++v) ++(is_erased(g, v) ? erased : live);
  std::string text = "graph: " + detail::plural(live, "node", "nodes");
  if (erased != 0) text += " (and " + std::to_string(erased) + " erased, not shown)";
  std::size_t shown = 0;
  for (vertex v = 0, n = boost::num_vertices(g); v < n && shown < options.max_nodes; ++v) {
    if (is_erased(g, v)) continue;
    (text += "\n  ") += node_line(g, v);
    ++shown;
  }
  if (shown < live) text += "\n  ... " + detail::plural(live - shown, "more node", "more nodes");
  return text;
}

[[nodiscard]] inline std::string to_string(const copy_census& c) {
  std::string text = "h2d " + std::to_string(c.h2d) + " (" + std::to_string(c.h2d_bytes) + " B), d2h " +
                     std::to_string(c.d2h) + " (" + std::to_string(c.d2h_bytes) + " B), d2d " + std::to_string(c.d2d) +
                     " (" + std::to_string(c.d2d_bytes) + " B)";
  if (c.resident != 0)
    text += ", resident " + std::to_string(c.resident) + " (" + std::to_string(c.resident_bytes) + " B)";
  return text;
}

[[nodiscard]] inline std::string to_string(const rules::rewrite_counters& c) {
  return detail::plural(c.rewrites, "rewrite", "rewrites") + " (" + std::to_string(c.matches_tried) +
         " matches tried, " + detail::plural(c.nodes_added, "node", "nodes") + " added, " +
         std::to_string(c.nodes_removed) + " removed)";
}

namespace detail {
inline std::string plan_text(const memory_plan& plan, const graph* g, text_options options) {
  std::string text = "memory plan: " + plural(plan.buffer_count(), "buffer", "buffers") + ", " +
                     plural(plan.order.size(), "step", "steps");
  for (std::size_t i = 1; i < plan.buffers.size(); ++i) {
    const planned_buffer& b = plan.buffers[i];
    text += "\n  mem_id " + std::to_string(b.mem_id) + " " + devpass::to_string(b.device) + ": " +
            std::to_string(b.size) + " B (lower bound " + std::to_string(b.lower_bound) + " B, alignment " +
            std::to_string(b.alignment) + ")";
  }
  if (!plan.order.empty()) {
    text += "\n  order:";
    std::size_t shown = 0;
    for (const vertex v : plan.order) {
      if (shown++ == options.max_nodes) {
        text += " ... " + std::to_string(plan.order.size() - options.max_nodes) + " more";
        break;
      }
      text += ' ';
      text += g && v < boost::num_vertices(*g) ? (*g)[v].id : "#" + std::to_string(v);
    }
  }
  return text;
}
}  // namespace detail

// The execution order by vertex number (#v); with the graph, by node id.
[[nodiscard]] inline std::string to_string(const memory_plan& plan, text_options options = {}) {
  return detail::plan_text(plan, nullptr, options);
}
[[nodiscard]] inline std::string to_string(const graph& g, const memory_plan& plan, text_options options = {}) {
  return detail::plan_text(plan, &g, options);
}

}  // namespace devpass::testing
