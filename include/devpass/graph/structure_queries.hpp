// devpass/graph/structure_queries.hpp — what a pass asks of a graph's structure, over any graph
// model (graph_model.hpp): the operands and uses of values, where a value lives, names for
// messages, and the node lists (by kind, the method's inputs and outputs).
//
// An edge u -> v carries {output, slot}: input slot `slot` of v reads output `output` of u.
// Every slot in [0, arity) of a node has exactly one in-edge in a valid graph.
#pragma once

#include <algorithm>
#include <boost/graph/adjacency_list.hpp>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "devpass/graph/graph_model.hpp"

namespace devpass {

// Asks the processor to start loading vertex v's storage (its edge lists' headers and the first
// two cache lines of its property): for a sweep that will read vertices all over a large graph,
// a few steps ahead, so that the cache misses overlap instead of following one another.
template <class G>
void prefetch_vertex(const G& g, vertex v) {
  const char* at = reinterpret_cast<const char*>(&g.m_vertices[v]);
  __builtin_prefetch(at);
  __builtin_prefetch(at + 64);
  __builtin_prefetch(at + 128);
}

// The value that input slot `slot` of `consumer` reads, if that slot is connected.
template <class G>
[[nodiscard]] std::optional<value_ref> operand(const G& g, vertex consumer, std::uint32_t slot) {
  for (const auto e : boost::make_iterator_range(boost::in_edges(consumer, g)))
    if (edge_slot(g, e) == slot) return value_ref{boost::source(e, g), edge_output(g, e)};
  return std::nullopt;
}

// The values a node reads, by slot. Precondition: every slot is connected (a verified graph).
template <class G>
[[nodiscard]] std::vector<value_ref> operands(const G& g, vertex consumer) {
  std::vector<value_ref> result(arity_of(g, consumer));
  for (const auto e : boost::make_iterator_range(boost::in_edges(consumer, g)))
    if (edge_slot(g, e) < result.size()) result[edge_slot(g, e)] = value_ref{boost::source(e, g), edge_output(g, e)};
  return result;
}

// Calls f(use) for every use of `value`, in the order of the producer's out-edge list.
template <class G, class F>
void for_each_use(const G& g, value_ref value, F&& f) {
  for (const auto e : boost::make_iterator_range(boost::out_edges(value.producer, g)))
    if (edge_output(g, e) == value.output) f(use{boost::target(e, g), edge_slot(g, e)});
}

// Every use of `value`, ordered by (consumer, slot) so callers see a deterministic order.
template <class G>
[[nodiscard]] std::vector<use> uses(const G& g, value_ref value) {
  std::vector<use> result;
  for_each_use(g, value, [&](use u) { result.push_back(u); });
  std::sort(result.begin(), result.end(),
            [](use a, use b) { return a.consumer != b.consumer ? a.consumer < b.consumer : a.slot < b.slot; });
  return result;
}

template <class G>
[[nodiscard]] std::size_t use_count(const G& g, value_ref value) {
  // A node with one output: every out-edge is a use of it, no edge property to read.
  if (output_count(g, value.producer) == 1) return value.output == 0 ? boost::out_degree(value.producer, g) : 0;
  std::size_t count = 0;
  for_each_use(g, value, [&](use) { ++count; });
  return count;
}

// Where a value lives: its mark when a pass has set it; else the node's device for device-side
// producers and for inputs and constants (an input's device is where the caller provides it, a
// constant's where it lives); else the host (calls, d2h copies).
template <class G>
[[nodiscard]] device location_of(const G& g, value_ref value) {
  // A rule's consumer capture is value 0 of its node, which a node without outputs (a delegate
  // whose results nobody declared) does not have: such a value is where its node puts it.
  if (value.output < output_count(g, value.producer))
    if (const auto d = marked_device(g, value)) return *d;
  const op_kind op = role_of(g, value.producer);
  if (op == op_kind::call || op == op_kind::d2h_copy) return cpu_device;
  return node_device(g, value.producer);
}

// The device a node runs on (a delegate's or copy's device; the host for calls and the output
// node), else, for an input or constant, where its value lives.
template <class G>
[[nodiscard]] device device_of(const G& g, value_ref v) {
  const op_kind op = role_of(g, v.producer);
  if (op == op_kind::delegate || op == op_kind::h2d_copy || op == op_kind::d2d_copy) return node_device(g, v.producer);
  if (op == op_kind::output || op == op_kind::call) return cpu_device;
  return location_of(g, v);
}

// Whether a value is a constant's: produced by a `constant`, or by a resident copy (which copies
// one, once, at load). It is the same on every execution, so a copy of it can be made once too.
template <class G>
[[nodiscard]] bool is_constant_value(const G& g, value_ref v) {
  return role_of(g, v.producer) == op_kind::constant || is_resident(g, v.producer);
}

// A node's name as a string, for messages.
template <class G>
[[nodiscard]] std::string display_name(const G& g, vertex v) {
  return std::string(std::string_view(node_name(g, v)));
}

// The text form of a value in messages (and devpass::graph's files): "name" for output 0,
// "name:k" otherwise.
template <class G>
[[nodiscard]] std::string value_name(const G& g, value_ref value) {
  std::string text = display_name(g, value.producer);
  if (value.output != 0) {
    // Two appends, not `":" + std::to_string(...)`: g++ 12 warns (-Wstringop-overflow, a false
    // positive) on the inlined operator+ in every TU that instantiates this.
    text += ':';
    text += std::to_string(value.output);
  }
  return text;
}

template <class G>
[[nodiscard]] bool has_erased_nodes(const G& g) {
  for (vertex v = 0, n = boost::num_vertices(g); v < n; ++v)
    if (is_erased(g, v)) return true;
  return false;
}

// Nodes by role, in vertex order.
template <class G>
[[nodiscard]] std::vector<vertex> nodes_of_kind(const G& g, op_kind kind) {
  std::vector<vertex> result;
  for (vertex v = 0, n = boost::num_vertices(g); v < n; ++v)
    if (!is_erased(g, v) && role_of(g, v) == kind) result.push_back(v);
  return result;
}
template <class G>
[[nodiscard]] std::vector<vertex> method_inputs(const G& g) {
  return nodes_of_kind(g, op_kind::input);
}

// The output node, if there is exactly one.
template <class G>
[[nodiscard]] std::optional<vertex> output_node(const G& g) {
  const auto outs = nodes_of_kind(g, op_kind::output);
  if (outs.size() != 1) return std::nullopt;
  return outs.front();
}
// The method outputs, in order (the operands of the output node).
template <class G>
[[nodiscard]] std::vector<value_ref> method_outputs(const G& g) {
  const auto out = output_node(g);
  return out ? operands(g, *out) : std::vector<value_ref>{};
}

}  // namespace devpass
