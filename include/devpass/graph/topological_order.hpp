// devpass/graph/topological_order.hpp — the deterministic topological order of a graph's live
// nodes, over any graph model (graph_model.hpp), that memory planning and the executor run in.
#pragma once

#include <algorithm>
#include <boost/graph/adjacency_list.hpp>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <queue>
#include <span>
#include <vector>

#include "devpass/graph/error.hpp"
#include "devpass/graph/graph_model.hpp"
#include "devpass/graph/structure_queries.hpp"
#include "devpass/graph/successor_table.hpp"

namespace devpass {

namespace detail {
// topological_order with the order's entries of type Index: the writer asks for 32-bit ones
// (the writer's order is at devpass-opt's peak RSS; successor_table checks the count fits).
template <class Index, class G>
[[nodiscard]] std::vector<Index> topological_order_as(const G& g) {
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
    if (n >= std::numeric_limits<Index>::max())
      throw graph_error("", "", "nodes", "more than 2^32 - 2 nodes or edges: too many to order");
    std::vector<Index> order;
    order.reserve(n);
    for (vertex v = 0; v < n; ++v)
      if (!is_erased(g, v)) order.push_back(static_cast<Index>(v));
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
              : op == op_kind::d2h_copy                          ? keyed_by_producer
                                                                 : plain;
  }
  successor_table next(g, kind, [&](vertex s, vertex t) {
    if (kind[s] == keyed_by_consumer) key[s] = std::min(key[s], static_cast<std::uint32_t>(t));
    if (kind[t] == keyed_by_producer) key[t] = std::min(key[t], static_cast<std::uint32_t>(s));
  });
  std::vector<std::uint32_t>& waiting = next.in_degree;  // counted down
  using entry = std::uint64_t;                           // key << 32 | vertex: both below 2^32 (successor_table checks)
  std::priority_queue<entry, std::vector<entry>, std::greater<>> ready;
  for (vertex v = 0; v < n; ++v)
    if (kind[v] != erased && waiting[v] == 0) ready.push(std::uint64_t{key[v]} << 32 | v);
  std::vector<std::uint8_t>().swap(kind);  // not read again: its room goes to the order
  std::vector<Index> order;
  order.reserve(live);
  while (!ready.empty()) {
    const auto v = static_cast<std::uint32_t>(ready.top());
    ready.pop();
    order.push_back(static_cast<Index>(v));
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
        if (waiting[boost::source(e, g)] != 0) {
          v = boost::source(e, g);
          break;
        }
    }
    throw graph_error("", display_name(g, v), "inputs", "cycle: the node depends on itself");
  }
  return order;
}
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
  return detail::topological_order_as<vertex>(g);
}

}  // namespace devpass
