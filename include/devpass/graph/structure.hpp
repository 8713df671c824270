// devpass/graph/structure.hpp — the structural operations every pass uses, over any graph model
// (graph_model.hpp): operands and uses of values, rewiring, erasing and compacting, the node
// lists passes ask for, and a deterministic topological order.
//
// An edge u -> v carries {output, slot}: input slot `slot` of v reads output `output` of u.
// Every slot in [0, arity) of a node has exactly one in-edge in a valid graph.
//
// Descriptor rules (the same for every model):
//  - adding a vertex keeps every vertex descriptor valid but may move vertex storage: do not
//    hold a reference to a vertex property across it.
//  - connect may move the edge vector: it invalidates every edge descriptor but no vertex
//    descriptor. set_operand / replace_uses change the edge lists of the ends: edge iterators of
//    those vertices are invalidated.
//  - erase_node only isolates the node and marks it erased (a tombstone); its edges stay in
//    g.m_edges, dead (source and target dead_vertex), so num_edges and boost::edges count them
//    until compact(). compact() removes all tombstones and dead edges in one O(V+E) sweep and
//    invalidates every descriptor. Never call boost::remove_vertex, remove_edge or clear_vertex
//    on such a graph: they do not know about dead edges (and remove_vertex is O(V+E) per call).
// These touch adjacency_list's storage (m_vertices, m_edges), which is public and stable in
// Boost.Graph, where Boost's own functions would allocate or be quadratic.
#pragma once

#include <algorithm>
#include <boost/graph/adjacency_list.hpp>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <queue>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "devpass/graph/error.hpp"
#include "devpass/graph/graph_model.hpp"

namespace devpass {

// Feeds input slot `slot` of `consumer` from `value`; grows the consumer's arity if needed.
template <class G>
void connect(G& g, value_ref value, vertex consumer, std::uint32_t slot) {
  const auto position = static_cast<std::uint32_t>(boost::out_degree(value.producer, g));
  typename G::edge_property_type edge{};
  edge.output = value.output;
  edge.slot = slot;
  edge.out_position = position;
  boost::add_edge(value.producer, consumer, edge, g);
  if (slot + 1 > arity_of(g, consumer)) graph_model<G>::set_arity(g, consumer, slot + 1);
}

// The value that input slot `slot` of `consumer` reads, if that slot is connected.
template <class G>
[[nodiscard]] std::optional<value_ref> operand(const G& g, vertex consumer, std::uint32_t slot) {
  for (const auto e : boost::make_iterator_range(boost::in_edges(consumer, g)))
    if (g[e].slot == slot) return value_ref{boost::source(e, g), g[e].output};
  return std::nullopt;
}

// The values a node reads, by slot. Precondition: every slot is connected (a verified graph).
template <class G>
[[nodiscard]] std::vector<value_ref> operands(const G& g, vertex consumer) {
  std::vector<value_ref> result(arity_of(g, consumer));
  for (const auto e : boost::make_iterator_range(boost::in_edges(consumer, g)))
    if (g[e].slot < result.size()) result[g[e].slot] = value_ref{boost::source(e, g), g[e].output};
  return result;
}

// Calls f(use) for every use of `value`, in the order of the producer's out-edge list.
template <class G, class F>
void for_each_use(const G& g, value_ref value, F&& f) {
  for (const auto e : boost::make_iterator_range(boost::out_edges(value.producer, g)))
    if (g[e].output == value.output) f(use{boost::target(e, g), g[e].slot});
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

// Makes input slot `slot` of `consumer` read `value` instead of what it read before. The edge is
// moved in place (its entry in g.m_edges, its property and its place in the consumer's in-edge
// list are kept; only the producers' out-edge lists change): no edge is made or dropped. False
// when the slot has no in-edge.
template <class G>
bool move_in_edge(G& g, vertex consumer, std::uint32_t slot, value_ref value) {
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

template <class G>
void set_operand(G& g, vertex consumer, std::uint32_t slot, value_ref value) {
  if (!detail::move_in_edge(g, consumer, slot, value)) connect(g, value, consumer, slot);
}

// Every use of `from` for which keep(use) is false now reads `to`. Returns how many moved.
template <class G, class Keep>
std::size_t replace_uses_if(G& g, value_ref from, value_ref to, Keep&& keep) {
  std::vector<use> moved;
  for_each_use(g, from, [&](use u) {
    if (!keep(u)) moved.push_back(u);
  });
  for (const use u : moved) set_operand(g, u.consumer, u.slot, to);
  return moved.size();
}
template <class G>
std::size_t replace_uses(G& g, value_ref from, value_ref to) {
  return replace_uses_if(g, from, to, [](use) { return false; });
}

// Isolates `v` and marks it erased: its edges leave the other ends' lists and stay in g.m_edges,
// dead. Cheap; compact() reclaims the storage later.
template <class G>
void erase_node(G& g, vertex v) {
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
  graph_model<G>::mark_erased(g, v);
  graph_model<G>::set_arity(g, v, 0);
}

template <class G>
[[nodiscard]] bool has_erased_nodes(const G& g) {
  for (vertex v = 0, n = boost::num_vertices(g); v < n; ++v)
    if (is_erased(g, v)) return true;
  return false;
}

// Removes every erased node and dead edge in one sweep, keeping the order of the others and of
// each node's edge lists. Invalidates every descriptor. O(V + E), in place: the sweep renumbers
// the vertex and edge indexes stored in the edges and in every node's lists, then slides the
// live nodes and edges down (rebuilding a second graph instead costs an allocation per node and
// per edge). A model's vertex property moves with its vertex.
// Passes append what they add, so erased nodes and dead edges usually lie past a long prefix
// that keeps its numbers (the input graph): the renumbering tables cover only what follows the
// first erased node and the first dead edge, a node before it stays where it is, and a list entry
// is rewritten only when it refers past either. At 1M nodes the executorch policy's elision
// erases 1.4M of 2.9M nodes, all of them copies: this compaction took 0.27 s there with
// whole-graph tables and every entry rewritten, 0.20-0.22 s now (the rest is mostly reading each
// live node's lists, a cache miss each, and freeing the erased nodes' lists). Marking the lists
// to rewrite from the edge vector instead of reading them all was slower (0.28-0.32 s).
template <class G>
void compact(G& g) {
  const std::size_t n = boost::num_vertices(g);
  vertex first = 0;  // the first erased node; every node before it keeps its number
  while (first < n && !is_erased(g, first)) ++first;
  if (first == n) return;  // dead edges come only from erased nodes
  std::vector<vertex> renumber(n - first, dead_vertex);  // of nodes first.. (dead_vertex: erased)
  vertex next = first;
  for (vertex v = first; v < n; ++v)
    if (!is_erased(g, v)) renumber[v - first] = next++;
  const std::size_t edge_count = g.m_edges.size();
  std::size_t first_dead = 0;  // the first dead edge; every edge before it keeps its index
  while (first_dead < edge_count && g.m_edges[first_dead].m_source != dead_vertex) ++first_dead;
  std::vector<std::size_t> edge_renumber(edge_count - first_dead, 0);  // of edges first_dead..
  std::size_t next_edge = first_dead;
  for (std::size_t i = first_dead; i < edge_count; ++i)
    if (g.m_edges[i].m_source != dead_vertex) edge_renumber[i - first_dead] = next_edge++;
  const auto new_vertex = [&](vertex v) { return v < first ? v : renumber[v - first]; };
  // The node lists first: an entry's old edge index is read through the edge vector, which must
  // not have moved yet.
  const auto edges_begin = g.m_edges.begin();
  using stored_edge = typename std::remove_cvref_t<decltype(g.m_vertices.front().m_out_edges)>::value_type;
  const auto renumber_list = [&](auto& list) {
    for (auto& e : list) {
      const auto old_index = static_cast<std::size_t>(e.get_iter() - edges_begin);
      if (e.get_target() < first && old_index < first_dead) continue;  // refers to nothing that moves
      const std::size_t index = old_index < first_dead ? old_index : edge_renumber[old_index - first_dead];
      e = stored_edge(new_vertex(e.get_target()), edges_begin + static_cast<std::ptrdiff_t>(index), &g.m_edges);
    }
  };
  next = 0;
  for (vertex v = 0; v < n; ++v) {
    if (v >= first && renumber[v - first] == dead_vertex) continue;
    auto& stored = g.m_vertices[v];
    renumber_list(stored.m_out_edges);
    renumber_list(stored.m_in_edges);
    if (next != v) g.m_vertices[next] = std::move(stored);
    ++next;
  }
  g.m_vertices.erase(g.m_vertices.begin() + static_cast<std::ptrdiff_t>(next), g.m_vertices.end());
  next_edge = first_dead;
  for (std::size_t i = 0; i < edge_count; ++i) {
    auto& e = g.m_edges[i];
    if (e.m_source == dead_vertex) continue;
    e.m_source = new_vertex(e.m_source);
    e.m_target = new_vertex(e.m_target);
    if (i >= first_dead) {
      if (next_edge != i) g.m_edges[next_edge] = std::move(e);
      ++next_edge;
    }
  }
  g.m_edges.erase(g.m_edges.begin() + static_cast<std::ptrdiff_t>(next_edge), g.m_edges.end());
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

namespace detail {
// The live edges as a compact successor table (CSR) with each node's in-degree, read from the
// graph's edge list in two sequential sweeps: walking each node's own edge vectors instead costs
// a cache miss per node, which is most of an ordering's time on a large graph (figures in
// docs/performance.md). `live[v]` is zero for an erased node; `each(s, t)` sees each live edge.
struct successor_table {
  std::vector<std::uint32_t> first;      // successors of v: targets[first[v] .. first[v + 1])
  std::vector<std::uint32_t> targets;
  std::vector<std::uint32_t> in_degree;  // live in-edges per node (the orderings count it down)

  template <class G, class Each>
  successor_table(const G& g, const std::vector<std::uint8_t>& live, Each&& each) {
    const std::size_t n = boost::num_vertices(g);
    if (n >= std::numeric_limits<std::uint32_t>::max() || boost::num_edges(g) >= std::numeric_limits<std::uint32_t>::max())
      throw graph_error("", "", "nodes", "more than 2^32 - 2 nodes or edges: too many to order");
    first.assign(n + 1, 0);
    in_degree.assign(n, 0);
    const auto is_live = [&](vertex s, vertex t) { return s != dead_vertex && live[s] && live[t]; };
    for (const auto e : boost::make_iterator_range(boost::edges(g))) {
      const vertex s = boost::source(e, g), t = boost::target(e, g);
      if (!is_live(s, t)) continue;
      ++first[s + 1];
      ++in_degree[t];
      each(s, t);
    }
    for (std::size_t v = 0; v < n; ++v) first[v + 1] += first[v];
    targets.resize(first[n]);
    std::vector<std::uint32_t> fill(first.begin(), first.end() - 1);
    for (const auto e : boost::make_iterator_range(boost::edges(g))) {
      const vertex s = boost::source(e, g), t = boost::target(e, g);
      if (is_live(s, t)) targets[fill[s]++] = static_cast<std::uint32_t>(t);
    }
  }
  [[nodiscard]] std::span<const std::uint32_t> of(vertex v) const { return {targets.data() + first[v], targets.data() + first[v + 1]}; }
};
}  // namespace detail

// A deterministic topological order of the live nodes: Kahn's algorithm that always takes the
// ready node with the smallest key. A node's key is its vertex index, so a graph already in
// topological vertex order keeps its order. Passes append copies at the end of the vertex list,
// so copies are keyed by their neighbours instead: an h2d_copy or d2d_copy by its first
// consumer (it runs just before the node that needs it: the device copy lives no longer than
// needed), a d2h_copy by its producer (it runs right after it: the device value is freed as soon
// as possible). Memory planning relies on this. Throws graph_error naming a node on a cycle.
template <class G>
[[nodiscard]] std::vector<vertex> topological_order(const G& g) {
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
      if (!is_erased(g, v)) order.push_back(v);
    return order;
  }
  enum : std::uint8_t { erased, plain, keyed_by_consumer, keyed_by_producer };
  std::vector<std::uint8_t> kind(n);
  std::vector<std::uint32_t> key(n);
  std::size_t live = 0;
  for (vertex v = 0; v < n; ++v) {
    key[v] = static_cast<std::uint32_t>(v);
    if (is_erased(g, v)) continue;
    ++live;
    const op_kind op = role_of(g, v);
    kind[v] = op == op_kind::h2d_copy || op == op_kind::d2d_copy ? keyed_by_consumer
              : op == op_kind::d2h_copy                           ? keyed_by_producer
                                                                  : plain;
  }
  detail::successor_table next(g, kind, [&](vertex s, vertex t) {
    if (kind[s] == keyed_by_consumer) key[s] = std::min(key[s], static_cast<std::uint32_t>(t));
    if (kind[t] == keyed_by_producer) key[t] = std::min(key[t], static_cast<std::uint32_t>(s));
  });
  std::vector<std::uint32_t>& waiting = next.in_degree;  // counted down
  using entry = std::uint64_t;  // key << 32 | vertex: both below 2^32 (successor_table checks)
  std::priority_queue<entry, std::vector<entry>, std::greater<>> ready;
  for (vertex v = 0; v < n; ++v)
    if (kind[v] != erased && waiting[v] == 0) ready.push(std::uint64_t{key[v]} << 32 | v);
  std::vector<vertex> order;
  order.reserve(live);
  while (!ready.empty()) {
    const vertex v = static_cast<std::uint32_t>(ready.top());
    ready.pop();
    order.push_back(v);
    for (const std::uint32_t t : next.of(v))
      if (--waiting[t] == 0) ready.push(std::uint64_t{key[t]} << 32 | t);
  }
  if (order.size() != live) {
    // Every node left waiting is on a cycle or downstream of one; walk predecessors that are
    // still waiting until one repeats: that one is on a cycle.
    vertex v = 0;
    while (is_erased(g, v) || waiting[v] == 0) ++v;
    std::vector<char> seen(n, 0);
    while (!seen[v]) {
      seen[v] = 1;
      for (const auto e : boost::make_iterator_range(boost::in_edges(v, g)))
        if (waiting[boost::source(e, g)] != 0) { v = boost::source(e, g); break; }
    }
    throw graph_error("", display_name(g, v), "inputs", "cycle: the node depends on itself");
  }
  return order;
}

}  // namespace devpass
