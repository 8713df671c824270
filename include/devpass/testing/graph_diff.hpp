// devpass/testing/graph_diff.hpp — whether two graphs are the same, and if not, a readable diff.
//
// Two graphs are the same when they have the same method name and the same live node ids, and
// the nodes with one id agree on op, device, resident, kernel, inputs (the value each slot reads, by name:
// "x", "s:1"), outputs (every spec field: dtype, shape, device, mem_id, offset) and attrs. Vertex
// numbers and edge order are not compared: a pass that appends its copies and a hand-written
// graph that lists them where they are read are the same graph. Erased nodes are not compared.
//
//   expect_same_graph(a, b, "g", "expected")  nullopt when the same, else the diff, e.g.
//     graphs differ: g has 6 nodes, expected has 5
//       only in g: 'x@h2d[cuda:0]'
//       first differing node 'a' (inputs, outputs):
//         g:        #1 a delegate cuda:0 relu (x@h2d[cuda:0]) -> float32[2,2]@cuda:0
//         expected: #1 a delegate cuda:0 relu (x) -> float32[2,2]
//       1 node differs: 'a'
// Ids are listed in the vertex order of the graph they come from, at most 10 per line. Any graph
// model: its nodes' ids are their names (graph_model::name), compared as above through the model.
#pragma once

#include <algorithm>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "devpass/graph/graph.hpp"
#include "devpass/testing/to_string.hpp"

namespace devpass::testing {

namespace detail {

// The live nodes of g by id (the first one of each), and the ids used twice. An id is a node's
// name (devpass::graph: its id).
struct id_index {
  std::unordered_map<std::string, vertex> first;
  std::vector<std::string> duplicates;
  template <class G>
  explicit id_index(const G& g) {
    for (vertex v = 0, n = boost::num_vertices(g); v < n; ++v)
      if (!is_erased(g, v) && !first.emplace(display_name(g, v), v).second) duplicates.push_back(display_name(g, v));
  }
};

template <class G>
std::string input_name(const G& g, vertex v, std::uint32_t slot) {
  const auto in = operand(g, v, slot);
  return in ? value_name(g, *in) : std::string("?");
}
template <class G>
bool same_inputs(const G& a, vertex va, const G& b, vertex vb) {
  bool same = arity_of(a, va) == arity_of(b, vb);
  for (std::uint32_t slot = 0; same && slot < arity_of(a, va); ++slot)
    same = input_name(a, va, slot) == input_name(b, vb, slot);
  return same;
}

// The fields in which node va of a and node vb of b differ, in node order; empty when none.
inline std::vector<std::string_view> differing_fields(const graph& a, vertex va, const graph& b, vertex vb) {
  const node &x = a[va], &y = b[vb];
  std::vector<std::string_view> fields;
  if (x.op != y.op) fields.push_back("op");
  if (x.device != y.device) fields.push_back("device");
  if (x.resident != y.resident) fields.push_back("resident");
  if (x.kernel != y.kernel) fields.push_back("kernel");
  if (!same_inputs(a, va, b, vb)) fields.push_back("inputs");
  if (x.outputs != y.outputs) fields.push_back("outputs");
  if (x.attrs != y.attrs) fields.push_back("attrs");
  return fields;
}

// The same for any other model, from what it says: role, device, resident, inputs, and each value's
// dtype, bytes and marked device ("outputs").
template <modeled_graph G>
std::vector<std::string_view> differing_fields(const G& a, vertex va, const G& b, vertex vb) {
  std::vector<std::string_view> fields;
  if (role_of(a, va) != role_of(b, vb)) fields.push_back("op");
  if (node_device(a, va) != node_device(b, vb)) fields.push_back("device");
  if (is_resident(a, va) != is_resident(b, vb)) fields.push_back("resident");
  if (!same_inputs(a, va, b, vb)) fields.push_back("inputs");
  bool same_outputs = output_count(a, va) == output_count(b, vb);
  for (std::uint32_t k = 0; same_outputs && k < output_count(a, va); ++k)
    same_outputs = value_dtype(a, {va, k}) == value_dtype(b, {vb, k}) &&
                   value_bytes(a, {va, k}) == value_bytes(b, {vb, k}) &&
                   marked_device(a, {va, k}) == marked_device(b, {vb, k});
  if (!same_outputs) fields.push_back("outputs");
  return fields;
}

// A graph's method name: devpass::graph's, none for other models.
template <class G>
std::string method_of(const G& g) {
  if constexpr (std::is_same_v<G, graph>)
    return method_name(g);
  else
    return {};
}

inline std::string id_list(const std::vector<std::string>& ids) {
  constexpr std::size_t shown = 10;
  std::string text;
  for (std::size_t i = 0; i < ids.size() && i < shown; ++i) ((text += i == 0 ? "'" : ", '") += ids[i]) += "'";
  if (ids.size() > shown) text += " ... and " + std::to_string(ids.size() - shown) + " more";
  return text;
}

template <class G>
std::size_t live_nodes(const G& g) {
  std::size_t n = 0;
  for (vertex v = 0, end = boost::num_vertices(g); v < end; ++v) n += is_erased(g, v) ? std::size_t{0} : std::size_t{1};
  return n;
}

}  // namespace detail

// nullopt when a and b are the same graph (see the header comment); else the diff, naming the
// graphs a_name and b_name (the macros pass the expressions). Any graph model: another model's
// nodes are compared by name, role, device, inputs and their values' dtype, bytes and marks.
template <modeled_graph G>
[[nodiscard]] std::optional<std::string> expect_same_graph(const G& a, const G& b, std::string_view a_name = "a",
                                                           std::string_view b_name = "b") {
  const detail::id_index in_a(a), in_b(b);
  std::vector<std::string> only_a, only_b, differing;
  std::optional<std::pair<vertex, vertex>> first;
  std::vector<std::string_view> first_fields;
  for (vertex v = 0, n = boost::num_vertices(a); v < n; ++v) {
    if (is_erased(a, v)) continue;
    std::string id = display_name(a, v);
    const auto it = in_b.first.find(id);
    if (it == in_b.first.end()) {
      only_a.push_back(std::move(id));
      continue;
    }
    if (in_a.first.at(id) != v) continue;  // a duplicate: the first one was compared
    auto fields = detail::differing_fields(a, v, b, it->second);
    if (fields.empty()) continue;
    differing.push_back(std::move(id));
    if (!first) first = {v, it->second}, first_fields = std::move(fields);
  }
  for (vertex v = 0, n = boost::num_vertices(b); v < n; ++v)
    if (!is_erased(b, v) && !in_a.first.contains(display_name(b, v))) only_b.push_back(display_name(b, v));
  const std::string method_a = detail::method_of(a), method_b = detail::method_of(b);
  const bool same_method = method_a == method_b;
  if (same_method && only_a.empty() && only_b.empty() && differing.empty() && in_a.duplicates.empty() &&
      in_b.duplicates.empty())
    return std::nullopt;

  const std::string an(a_name), bn(b_name);
  const std::size_t na = detail::live_nodes(a), nb = detail::live_nodes(b);
  std::string text = "graphs differ: ";
  if (na == nb)
    text += an + " and " + bn + " have " + detail::plural(na, "node", "nodes") + " each";
  else
    text += an + " has " + detail::plural(na, "node", "nodes") + ", " + bn + " has " + std::to_string(nb);
  if (!same_method) text += "\n  method: " + an + " '" + method_a + "', " + bn + " '" + method_b + "'";
  if (!in_a.duplicates.empty()) text += "\n  ids used twice in " + an + ": " + detail::id_list(in_a.duplicates);
  if (!in_b.duplicates.empty()) text += "\n  ids used twice in " + bn + ": " + detail::id_list(in_b.duplicates);
  if (!only_a.empty()) text += "\n  only in " + an + ": " + detail::id_list(only_a);
  if (!only_b.empty()) text += "\n  only in " + bn + ": " + detail::id_list(only_b);
  if (first) {
    text += "\n  first differing node '" + display_name(a, first->first) + "' (";
    for (std::size_t i = 0; i < first_fields.size(); ++i) (text += i == 0 ? "" : ", ") += first_fields[i];
    text += "):";
    // Both lines start at one column, so the two nodes read one above the other.
    const std::size_t width = std::max(an.size(), bn.size()) + 2;
    text += "\n    " + (an + ":").append(width - an.size() - 1, ' ') + node_line(a, first->first);
    text += "\n    " + (bn + ":").append(width - bn.size() - 1, ' ') + node_line(b, first->second);
    text +=
        "\n  " + detail::plural(differing.size(), "node differs", "nodes differ") + ": " + detail::id_list(differing);
  }
  return text;
}

}  // namespace devpass::testing
