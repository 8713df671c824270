// devpass/graph/structure_mutation.hpp — the structural changes every pass makes, over any
// graph model (graph_model.hpp): connect, rewire (set_operand, move_in_edge, replace_uses), erase a node, and
// compact the graph once.
//
// Descriptor rules (the same for every model):
//  - adding a vertex keeps every vertex and edge descriptor valid but may move vertex storage:
//    do not hold a reference to a vertex property across it, nor an iterator over a vertex's
//    in- or out-edges (a list may hold its first entries in the vertex: inline_vec_s).
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
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

#include "devpass/graph/graph_model.hpp"
#include "devpass/graph/structure_queries.hpp"

namespace devpass {

// Feeds input slot `slot` of `consumer` from `value`; grows the consumer's arity if needed.
template <class G>
void connect(G& g, value_ref value, vertex consumer, std::uint32_t slot) {
  const auto position = static_cast<std::uint32_t>(boost::out_degree(value.producer, g));
  typename G::edge_property_type edge{};
  edge.*edge_fields<G>::output = value.output;
  edge.*edge_fields<G>::slot = slot;
  edge.*edge_fields<G>::position = position;
  boost::add_edge(value.producer, consumer, edge, g);
  if (slot + 1 > arity_of(g, consumer)) graph_model<G>::set_arity(g, consumer, slot + 1);
}

namespace detail {
// Removes the entry of `edge_entry` from `list`, a producer's out-edge list, in O(1) when its
// out_position hint is right: the last entry moves into its place (so a list's order is the order
// its entries were added in only until the first removal; nothing reads meaning into it). A
// stale hint costs one pass over the list, which renews every hint in it.
template <class G, class List, class EdgeIter>
void unlink_out_edge(List& list, const EdgeIter& edge_entry) {
  constexpr auto position = edge_fields<G>::position;
  std::size_t at = edge_entry->get_property().*position;
  if (at >= list.size() || list[at].get_iter() != edge_entry) {
    for (std::size_t i = 0; i < list.size(); ++i) {
      list[i].get_iter()->get_property().*position = static_cast<std::uint32_t>(i);
      if (list[i].get_iter() == edge_entry) at = i;
    }
  }
  if (at + 1 != list.size()) {
    list[at] = std::move(list.back());
    list[at].get_iter()->get_property().*position = static_cast<std::uint32_t>(at);
  }
  list.pop_back();
}

}  // namespace detail

// Makes input slot `slot` of `consumer` read `value` instead of what it read before. The edge is
// moved in place (its entry in g.m_edges, its property and its place in the consumer's in-edge
// list are kept; only the producers' out-edge lists change): no edge is made or dropped. False
// when the slot has no in-edge. Needs only the adjacency_list's storage and devpass's edge
// property, not the graph concept: set_operand is this plus connect for an unconnected slot.
template <class G>
bool move_in_edge(G& g, vertex consumer, std::uint32_t slot, value_ref value) {
  for (auto& in : g.m_vertices[consumer].m_in_edges) {
    const auto edge_entry = in.get_iter();
    if (edge_entry->get_property().*edge_fields<G>::slot != slot) continue;
    edge_entry->get_property().*edge_fields<G>::output = value.output;
    const vertex old_producer = in.get_target();
    if (old_producer != value.producer) {
      detail::unlink_out_edge<G>(g.m_vertices[old_producer].m_out_edges, edge_entry);
      auto& new_out = g.m_vertices[value.producer].m_out_edges;
      edge_entry->get_property().*edge_fields<G>::position = static_cast<std::uint32_t>(new_out.size());
      new_out.emplace_back(consumer, edge_entry, &g.m_edges);
      in.get_target() = value.producer;
      edge_entry->m_source = value.producer;
    }
    return true;
  }
  return false;
}

template <class G>
void set_operand(G& g, vertex consumer, std::uint32_t slot, value_ref value) {
  if (!move_in_edge(g, consumer, slot, value)) connect(g, value, consumer, slot);
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
    list.erase(
        std::find_if(list.begin(), list.end(), [&](const auto& e) { return e.get_iter() == edge_entry.get_iter(); }));
  };
  for (const auto& out : stored.m_out_edges) {
    if (out.get_target() != v) unlink(g.m_vertices[out.get_target()].m_in_edges, out);
    out.get_iter()->m_source = out.get_iter()->m_target = dead_vertex;
  }
  for (const auto& in : stored.m_in_edges) {
    if (in.get_target() != v) detail::unlink_out_edge<G>(g.m_vertices[in.get_target()].m_out_edges, in.get_iter());
    in.get_iter()->m_source = in.get_iter()->m_target = dead_vertex;
  }
  stored.m_out_edges.clear();
  stored.m_in_edges.clear();
  graph_model<G>::mark_erased(g, v);
  graph_model<G>::set_arity(g, v, 0);
}

// Removes every erased node and dead edge in one sweep, keeping the order of the others and of
// each node's edge lists. Invalidates every descriptor. O(V + E), in place: the sweep renumbers
// the vertex and edge indexes stored in the edges and in every node's lists, then slides the
// live nodes and edges down (rebuilding a second graph instead costs an allocation per node and
// per edge). A model's vertex property moves with its vertex.
// Passes append what they add, so erased nodes and dead edges usually lie past a long prefix
// that keeps its numbers (the input graph): the renumbering tables cover only what follows the
// first erased node and the first dead edge, a node before it stays where it is, and a list entry
// is rewritten only when it refers past either: after a literal elision, which erases only
// copies appended at the end, most nodes keep their numbers (figures, and marking the lists to
// rewrite from the edge vector, which was slower: docs/performance.md).
template <class G>
void compact(G& g) {
  const std::size_t n = boost::num_vertices(g);
  vertex first = 0;  // the first erased node; every node before it keeps its number
  while (first < n && !is_erased(g, first)) ++first;
  if (first == n) return;                                // dead edges come only from erased nodes
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

}  // namespace devpass
