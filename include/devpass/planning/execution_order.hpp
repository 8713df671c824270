// devpass/planning/execution_order.hpp — the order the executor runs nodes in, and each node's step.
//
// The order is graph.hpp's topological_order: Kahn's algorithm taking the ready node with the
// smallest key (a vertex index; an h2d or d2d copy counts as its first consumer, a d2h copy as
// its producer, so copies run just in time), so it is deterministic and keeps a graph already in topological vertex
// order as it is. Step s is order[s]; erased nodes have no step.
#pragma once

#include <cstdint>
#include <vector>

#include "devpass/graph/graph.hpp"  // devpass::graph, the model most callers plan
#include "devpass/graph/structure.hpp"

namespace devpass {

inline constexpr std::uint32_t no_step = ~std::uint32_t{0};

// Equal to topological_order(g); throws graph_error naming a node on a cycle. Files and passes
// usually keep vertices in topological order already, and then the smallest-index-first order is
// the vertex order itself (the smallest unfinished vertex always has all its producers done), so
// one O(V + E) check replaces the heap.
template <class G>
[[nodiscard]] std::vector<vertex> execution_order(const G& g) {
  const std::size_t n = boost::num_vertices(g);
  std::vector<vertex> order;
  order.reserve(n);
  for (vertex v = 0; v < n; ++v) {
    if (is_erased(g, v)) continue;
    for (const auto e : boost::make_iterator_range(boost::in_edges(v, g)))
      if (boost::source(e, g) >= v) return topological_order(g);
    order.push_back(v);
  }
  return order;
}

// steps[v] is the position of v in `order`, no_step for nodes that are not in it.
template <class G>
[[nodiscard]] std::vector<std::uint32_t> steps_of(const G& g, const std::vector<vertex>& order) {
  std::vector<std::uint32_t> steps(boost::num_vertices(g), no_step);
  for (std::size_t s = 0; s < order.size(); ++s) steps[order[s]] = static_cast<std::uint32_t>(s);
  return steps;
}

}  // namespace devpass
