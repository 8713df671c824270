// devpass/graph/graph.hpp — the graph every pass rewrites: a Boost.Graph bidirectional
// adjacency_list with bundled node, edge and method properties, and the accessors passes need.
//
// A node produces `outputs.size()` values; a value is (producer, output index). An edge u -> v
// carries {output, slot}: input slot `slot` of v reads output `output` of u. Every slot in
// [0, arity) of a node has exactly one in-edge in a valid graph.
//
// Storage (all vecS): the nodes in one vector, each node's out- and in-edges in two vectors, and
// the edges themselves (source, target, {output, slot}) in one vector, g.m_edges, in the order
// they were made. The per-node edge entries hold an index into it. A vector rather than Boost's
// default std::list: no allocation per edge, and the edges of nodes made one after the other lie
// one after the other, so a sweep over the nodes reads them as a stream (measured: reading the
// edge properties through list nodes was a third of the propagation's matching time).
//
// Descriptor rules:
//  - add_node keeps every vertex descriptor valid but may move node storage: do not hold a
//    `node&` across it.
//  - connect may move the edge vector: it invalidates every edge descriptor (they point at
//    properties) but no vertex descriptor. set_operand / replace_uses change the edge lists of
//    the ends: edge iterators of those vertices are invalidated.
//  - erase_node only isolates the node and marks it erased (a tombstone); its edges stay in
//    g.m_edges, dead (source and target dead_vertex), so num_edges and boost::edges count them
//    until compact(). compact() removes all tombstones and dead edges in one O(V+E) sweep and
//    invalidates every descriptor. Never call boost::remove_vertex, remove_edge or clear_vertex
//    on a graph: they do not know about dead edges (and remove_vertex is O(V+E) per call).
#pragma once

#include <algorithm>
#include <boost/graph/adjacency_list.hpp>
#include <cstdint>
#include <functional>
#include <optional>
#include <queue>
#include <string>
#include <string_view>
#include <vector>

#include "devpass/graph/device.hpp"
#include "devpass/graph/error.hpp"
#include "devpass/graph/op_kind.hpp"
#include "devpass/graph/tensor_spec.hpp"

namespace devpass {

// What every sweep over the nodes reads (op, device, arity, erased) sits together after the id,
// in one cache line: a pass over a million nodes then reads one line per node, not two.
struct node {
  std::string id;
  op_kind op = op_kind::call;
  devpass::device device;  // where the node runs; a copy's device side; cpu when the file omits it
  std::uint32_t arity = 0; // number of input slots
  bool erased = false;     // tombstone, see erase_node / compact
  std::string kernel;      // for delegate and call
  std::vector<tensor_spec> outputs;
  std::string attrs;       // the `attrs` object as minified JSON text, empty when absent
};

struct edge_info {
  std::uint32_t output = 0;  // which output of the producer
  std::uint32_t slot = 0;    // which input slot of the consumer
  // Where this edge sits in its producer's out-edge list: a hint that makes removing one use of
  // a value O(1) however many uses it has (a million-way fan-out moves a million uses). Checked
  // before use, and rebuilt for the whole list when stale (a copy of the graph made by
  // Boost.Graph re-adds edges in another order), so a wrong hint costs time, never correctness.
  std::uint32_t out_position = 0;
};

struct method_info {
  std::string name;
};

using graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS, node, edge_info, method_info, boost::vecS>;
using vertex = graph::vertex_descriptor;
using edge = graph::edge_descriptor;

// The source and target of an edge erase_node left in g.m_edges for compact() to drop.
inline constexpr vertex dead_vertex = static_cast<vertex>(-1);

// One value: output `output` of node `producer`.
struct value_ref {
  vertex producer = 0;
  std::uint32_t output = 0;
  friend bool operator==(const value_ref&, const value_ref&) = default;
};

// One use of a value: input slot `slot` of node `consumer`.
struct use {
  vertex consumer = 0;
  std::uint32_t slot = 0;
  friend bool operator==(const use&, const use&) = default;
};

[[nodiscard]] inline const std::string& method_name(const graph& g) { return g[boost::graph_bundle].name; }

// Room for the nodes passes add, to reserve before a graph is filled. Vertex storage is one
// vector, and growing it when full moves every node: measured 0.09–0.11 s for 1M nodes, most of
// it page faults on the new block. Reserved before the graph is filled, the room costs address
// space only, until a pass uses it. read_graph reserves this much; device propagation adds 39%
// (devpass policy) of the synthetic graphs' nodes as copies.
[[nodiscard]] constexpr std::size_t node_capacity_for(std::size_t nodes) noexcept { return nodes + nodes / 2; }

// Moves the node in (boost::add_vertex(property, g) would copy its strings and vectors).
[[nodiscard]] inline vertex add_node(graph& g, node n) {
  const vertex v = boost::add_vertex(g);
  g[v] = std::move(n);
  return v;
}

// Feeds input slot `slot` of `consumer` from `value`; grows the consumer's arity if needed.
inline void connect(graph& g, value_ref value, vertex consumer, std::uint32_t slot) {
  const auto position = static_cast<std::uint32_t>(boost::out_degree(value.producer, g));
  boost::add_edge(value.producer, consumer, edge_info{value.output, slot, position}, g);
  auto& n = g[consumer];
  n.arity = std::max(n.arity, slot + 1);
}

// The value that input slot `slot` of `consumer` reads, if that slot is connected.
[[nodiscard]] inline std::optional<value_ref> operand(const graph& g, vertex consumer, std::uint32_t slot) {
  for (const auto e : boost::make_iterator_range(boost::in_edges(consumer, g)))
    if (g[e].slot == slot) return value_ref{boost::source(e, g), g[e].output};
  return std::nullopt;
}

// The values a node reads, by slot. Precondition: every slot is connected (a verified graph).
[[nodiscard]] inline std::vector<value_ref> operands(const graph& g, vertex consumer) {
  std::vector<value_ref> result(g[consumer].arity);
  for (const auto e : boost::make_iterator_range(boost::in_edges(consumer, g)))
    if (g[e].slot < result.size()) result[g[e].slot] = value_ref{boost::source(e, g), g[e].output};
  return result;
}

// Calls f(use) for every use of `value`, in the order of the producer's out-edge list.
template <class F>
void for_each_use(const graph& g, value_ref value, F&& f) {
  for (const auto e : boost::make_iterator_range(boost::out_edges(value.producer, g)))
    if (g[e].output == value.output) f(use{boost::target(e, g), g[e].slot});
}

// Every use of `value`, ordered by (consumer, slot) so callers see a deterministic order.
[[nodiscard]] inline std::vector<use> uses(const graph& g, value_ref value) {
  std::vector<use> result;
  for_each_use(g, value, [&](use u) { result.push_back(u); });
  std::sort(result.begin(), result.end(),
            [](use a, use b) { return a.consumer != b.consumer ? a.consumer < b.consumer : a.slot < b.slot; });
  return result;
}

[[nodiscard]] inline std::size_t use_count(const graph& g, value_ref value) {
  // A node with one output: every out-edge is a use of it, no edge property to read.
  if (g[value.producer].outputs.size() == 1) return value.output == 0 ? boost::out_degree(value.producer, g) : 0;
  std::size_t count = 0;
  for_each_use(g, value, [&](use) { ++count; });
  return count;
}

[[nodiscard]] inline const tensor_spec& spec_of(const graph& g, value_ref value) {
  return g[value.producer].outputs.at(value.output);
}

// Where a value lives: the spec's device when a pass has set it; else the node's device for
// device-side producers and for inputs and constants (the format: an input's device is where the
// caller provides it, a constant's where it lives); else the host (calls, d2h copies).
[[nodiscard]] inline device location_of(const graph& g, value_ref value) {
  const node& n = g[value.producer];
  // A rule's consumer capture is value 0 of its node, which a node without outputs (a delegate
  // whose results nobody declared) does not have: such a value is where its node puts it.
  if (value.output < n.outputs.size())
    if (const auto& d = n.outputs[value.output].device) return *d;
  if (n.op == op_kind::call || n.op == op_kind::d2h_copy) return cpu_device;
  return n.device;
}

// Makes input slot `slot` of `consumer` read `value` instead of what it read before. The edge is
// moved in place (its entry in g.m_edges, its property and its place in the consumer's in-edge
// list are kept; only the producers' out-edge lists change): no edge is made or dropped. Like
// compact(), this touches adjacency_list's public storage (m_vertices), stable in Boost.Graph.
namespace detail {
// Removes the entry of `edge_entry` from `list`, a producer's out-edge list, in O(1) when its
// out_position hint is right: the last entry moves into its place (so a list's order is the order
// its entries were added in only until the first removal; nothing reads meaning into it). A
// stale hint costs one pass over the list, which renews every hint in it.
template <class List, class EdgeIter>
void unlink_out_edge(List& list, const EdgeIter& edge_entry) {
  std::size_t at = edge_entry->get_property().out_position;
  if (at >= list.size() || list[at].get_iter() != edge_entry) {
    for (std::size_t i = 0; i < list.size(); ++i) {
      list[i].get_iter()->get_property().out_position = static_cast<std::uint32_t>(i);
      if (list[i].get_iter() == edge_entry) at = i;
    }
  }
  if (at + 1 != list.size()) {
    list[at] = std::move(list.back());
    list[at].get_iter()->get_property().out_position = static_cast<std::uint32_t>(at);
  }
  list.pop_back();
}

// set_operand's move, for any bidirectional adjacency_list with a vecS edge list and
// devpass::edge_info edges. False when the slot has no in-edge.
template <class Graph>
bool move_in_edge(Graph& g, vertex consumer, std::uint32_t slot, value_ref value) {
  for (auto& in : g.m_vertices[consumer].m_in_edges) {
    const auto edge_entry = in.get_iter();
    if (edge_entry->get_property().slot != slot) continue;
    edge_entry->get_property().output = value.output;
    const vertex old_producer = in.get_target();
    if (old_producer != value.producer) {
      unlink_out_edge(g.m_vertices[old_producer].m_out_edges, edge_entry);
      auto& new_out = g.m_vertices[value.producer].m_out_edges;
      edge_entry->get_property().out_position = static_cast<std::uint32_t>(new_out.size());
      new_out.emplace_back(consumer, edge_entry, &g.m_edges);
      in.get_target() = value.producer;
      edge_entry->m_source = value.producer;
    }
    return true;
  }
  return false;
}
}  // namespace detail

inline void set_operand(graph& g, vertex consumer, std::uint32_t slot, value_ref value) {
  if (!detail::move_in_edge(g, consumer, slot, value)) connect(g, value, consumer, slot);
}

// Every use of `from` for which keep(use) is false now reads `to`. Returns how many moved.
template <class Keep>
std::size_t replace_uses_if(graph& g, value_ref from, value_ref to, Keep&& keep) {
  std::vector<use> moved;
  for_each_use(g, from, [&](use u) {
    if (!keep(u)) moved.push_back(u);
  });
  for (const use u : moved) set_operand(g, u.consumer, u.slot, to);
  return moved.size();
}
inline std::size_t replace_uses(graph& g, value_ref from, value_ref to) {
  return replace_uses_if(g, from, to, [](use) { return false; });
}

// Isolates `v` and marks it erased: its edges leave the other ends' lists and stay in g.m_edges,
// dead. Cheap; compact() reclaims the storage later.
inline void erase_node(graph& g, vertex v) {
  auto& stored = g.m_vertices[v];
  const auto unlink = [&](auto& list, const auto& edge_entry) {
    list.erase(std::find_if(list.begin(), list.end(), [&](const auto& e) { return e.get_iter() == edge_entry.get_iter(); }));
  };
  for (const auto& out : stored.m_out_edges) {
    if (out.get_target() != v) unlink(g.m_vertices[out.get_target()].m_in_edges, out);
    out.get_iter()->m_source = out.get_iter()->m_target = dead_vertex;
  }
  for (const auto& in : stored.m_in_edges) {
    if (in.get_target() != v) detail::unlink_out_edge(g.m_vertices[in.get_target()].m_out_edges, in.get_iter());
    in.get_iter()->m_source = in.get_iter()->m_target = dead_vertex;
  }
  stored.m_out_edges.clear();
  stored.m_in_edges.clear();
  g[v].erased = true;
  g[v].arity = 0;
}

[[nodiscard]] inline bool has_erased_nodes(const graph& g) {
  for (const auto v : boost::make_iterator_range(boost::vertices(g)))
    if (g[v].erased) return true;
  return false;
}

// Removes every erased node and dead edge in one sweep, keeping the order of the others and of
// each node's edge lists. Invalidates every descriptor. O(V + E), in place: the sweep renumbers
// the vertex and edge indexes stored in the edges and in every node's lists, then slides the
// live nodes and edges down. This reaches into adjacency_list's storage (m_vertices, m_edges),
// which is public and stable in Boost.Graph; rebuilding a second graph instead costs an
// allocation per node and per edge.
inline void compact(graph& g) {
  if (!has_erased_nodes(g)) return;  // dead edges come only from erased nodes
  const std::size_t n = boost::num_vertices(g);
  std::vector<vertex> renumber(n, dead_vertex);
  vertex next = 0;
  for (vertex v = 0; v < n; ++v)
    if (!g[v].erased) renumber[v] = next++;
  const std::size_t edge_count = g.m_edges.size();
  std::vector<std::size_t> edge_renumber(edge_count, 0);
  std::size_t next_edge = 0;
  for (std::size_t i = 0; i < edge_count; ++i)
    if (g.m_edges[i].m_source != dead_vertex) edge_renumber[i] = next_edge++;
  // The node lists first: an entry's old edge index is read through the edge vector, which must
  // not have moved yet.
  const auto edges_begin = g.m_edges.begin();
  using stored_edge = std::remove_cvref_t<decltype(g.m_vertices.front().m_out_edges)>::value_type;
  const auto renumbered = [&](const stored_edge& e) {
    const auto old_index = static_cast<std::size_t>(e.get_iter() - edges_begin);
    return stored_edge(renumber[e.get_target()], edges_begin + static_cast<std::ptrdiff_t>(edge_renumber[old_index]), &g.m_edges);
  };
  next = 0;
  for (vertex v = 0; v < n; ++v) {
    auto& stored = g.m_vertices[v];
    if (stored.m_property.erased) continue;
    for (auto& out : stored.m_out_edges) out = renumbered(out);
    for (auto& in : stored.m_in_edges) in = renumbered(in);
    if (next != v) g.m_vertices[next] = std::move(stored);
    ++next;
  }
  g.m_vertices.erase(g.m_vertices.begin() + static_cast<std::ptrdiff_t>(next), g.m_vertices.end());
  next_edge = 0;
  for (std::size_t i = 0; i < edge_count; ++i) {
    auto& e = g.m_edges[i];
    if (e.m_source == dead_vertex) continue;
    e.m_source = renumber[e.m_source];
    e.m_target = renumber[e.m_target];
    if (next_edge != i) g.m_edges[next_edge] = std::move(e);
    ++next_edge;
  }
  g.m_edges.erase(g.m_edges.begin() + static_cast<std::ptrdiff_t>(next_edge), g.m_edges.end());
}

// Nodes by op, in vertex order.
[[nodiscard]] inline std::vector<vertex> nodes_of_kind(const graph& g, op_kind kind) {
  std::vector<vertex> result;
  for (const auto v : boost::make_iterator_range(boost::vertices(g)))
    if (!g[v].erased && g[v].op == kind) result.push_back(v);
  return result;
}
[[nodiscard]] inline std::vector<vertex> method_inputs(const graph& g) { return nodes_of_kind(g, op_kind::input); }

// The output node, if there is exactly one.
[[nodiscard]] inline std::optional<vertex> output_node(const graph& g) {
  const auto outs = nodes_of_kind(g, op_kind::output);
  if (outs.size() != 1) return std::nullopt;
  return outs.front();
}
// The method outputs, in order (the operands of the output node).
[[nodiscard]] inline std::vector<value_ref> method_outputs(const graph& g) {
  const auto out = output_node(g);
  return out ? operands(g, *out) : std::vector<value_ref>{};
}

// Linear search by id; for repeated lookups build a map once.
[[nodiscard]] inline std::optional<vertex> find_node(const graph& g, std::string_view id) {
  for (const auto v : boost::make_iterator_range(boost::vertices(g)))
    if (!g[v].erased && g[v].id == id) return v;
  return std::nullopt;
}

// A deterministic topological order of the live nodes: Kahn's algorithm that always takes the
// ready node with the smallest key. A node's key is its vertex index, so a graph already in
// topological vertex order keeps its order. Passes append copies at the end of the vertex list,
// so copies are keyed by their neighbours instead: an h2d_copy or d2d_copy by its first
// consumer (it runs just before the node that needs it: the device copy lives no longer than
// needed), a d2h_copy by its producer (it runs right after it: the device value is freed as soon
// as possible). Memory planning relies on this. Throws graph_error naming a node on a cycle.
[[nodiscard]] inline std::vector<vertex> topological_order(const graph& g) {
  const std::size_t n = boost::num_vertices(g);
  // Fast path: when every edge goes from a lower to a higher index (files the writer wrote,
  // graphs built in order), the vertex order is the answer.
  bool forward = true;
  for (const auto e : boost::make_iterator_range(boost::edges(g)))
    if (boost::source(e, g) >= boost::target(e, g) && boost::source(e, g) != dead_vertex) {
      forward = false;
      break;
    }
  if (forward) {
    std::vector<vertex> order;
    order.reserve(n);
    for (vertex v = 0; v < n; ++v)
      if (!g[v].erased) order.push_back(v);
    return order;
  }
  std::vector<vertex> key(n);
  for (vertex v = 0; v < n; ++v) {
    key[v] = v;
    if (g[v].op == op_kind::h2d_copy || g[v].op == op_kind::d2d_copy)
      for (const auto e : boost::make_iterator_range(boost::out_edges(v, g))) key[v] = std::min(key[v], boost::target(e, g));
    else if (g[v].op == op_kind::d2h_copy)
      for (const auto e : boost::make_iterator_range(boost::in_edges(v, g))) key[v] = std::min(key[v], boost::source(e, g));
  }
  using entry = std::pair<vertex, vertex>;  // (key, vertex)
  std::vector<std::uint32_t> waiting(n, 0);
  std::priority_queue<entry, std::vector<entry>, std::greater<>> ready;
  std::size_t live = 0;
  for (vertex v = 0; v < n; ++v) {
    if (g[v].erased) continue;
    ++live;
    waiting[v] = static_cast<std::uint32_t>(boost::in_degree(v, g));
    if (waiting[v] == 0) ready.push({key[v], v});
  }
  std::vector<vertex> order;
  order.reserve(live);
  while (!ready.empty()) {
    const vertex v = ready.top().second;
    ready.pop();
    order.push_back(v);
    for (const auto e : boost::make_iterator_range(boost::out_edges(v, g))) {
      const vertex t = boost::target(e, g);
      if (--waiting[t] == 0) ready.push({key[t], t});
    }
  }
  if (order.size() != live) {
    // Every node left waiting is on a cycle or downstream of one; walk predecessors that are
    // still waiting until one repeats: that one is on a cycle.
    vertex v = 0;
    while (g[v].erased || waiting[v] == 0) ++v;
    std::vector<char> seen(n, 0);
    while (!seen[v]) {
      seen[v] = 1;
      for (const auto e : boost::make_iterator_range(boost::in_edges(v, g)))
        if (waiting[boost::source(e, g)] != 0) { v = boost::source(e, g); break; }
    }
    throw graph_error("", g[v].id, "inputs", "cycle: the node depends on itself");
  }
  return order;
}

// Whether an id ends in ":<digits>", which no id may: a reference "id:k" names output k of node
// id, so such an id would be ambiguous (the reader and the verifier reject it).
[[nodiscard]] inline bool ends_in_output_index(std::string_view id) noexcept {
  const auto colon = id.rfind(':');
  return colon != std::string_view::npos && colon + 1 < id.size() &&
         id.find_first_not_of("0123456789", colon + 1) == std::string_view::npos;
}

// The text form of a value reference in files and messages: "id" for output 0, "id:k" otherwise.
[[nodiscard]] inline std::string value_name(const graph& g, value_ref value) {
  return value.output == 0 ? g[value.producer].id : g[value.producer].id + ":" + std::to_string(value.output);
}

}  // namespace devpass
