// devpass/graph/successor_table.hpp — a graph's live edges as a compact successor table (CSR),
// what the orderings and the verifier's cycle check walk instead of the nodes' own edge vectors.
#pragma once

#include <boost/graph/adjacency_list.hpp>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "devpass/graph/error.hpp"
#include "devpass/graph/graph_model.hpp"

namespace devpass {

// The live edges as a compact successor table (CSR) with each node's in-degree, read from the
// graph's edge list in two sequential sweeps: walking each node's own edge vectors instead costs
// a cache miss per node, which is most of an ordering's time on a large graph (figures in
// docs/performance.md). `live[v]` is zero for an erased node; `each(s, t)` sees each live edge.
struct successor_table {
  std::vector<std::uint32_t> first;  // successors of v: targets[first[v] .. first[v + 1])
  std::vector<std::uint32_t> targets;
  std::vector<std::uint32_t> in_degree;  // live in-edges per node (the orderings count it down)

  template <class G, class Each>
  successor_table(const G& g, const std::vector<std::uint8_t>& live, Each&& each) {
    const std::size_t n = boost::num_vertices(g);
    if (n >= std::numeric_limits<std::uint32_t>::max() ||
        boost::num_edges(g) >= std::numeric_limits<std::uint32_t>::max())
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
    // Filled through first[s + 1] (the end of s's range, counted up from the start of it), then
    // shifted back: no cursor array beside the table (it would be at the writer's peak RSS).
    for (std::size_t v = n; v > 0; --v) first[v] = first[v - 1];
    for (const auto e : boost::make_iterator_range(boost::edges(g))) {
      const vertex s = boost::source(e, g), t = boost::target(e, g);
      if (is_live(s, t)) targets[first[s + 1]++] = static_cast<std::uint32_t>(t);
    }
  }
  [[nodiscard]] std::span<const std::uint32_t> of(vertex v) const {
    return {targets.data() + first[v], targets.data() + first[v + 1]};
  }
};

}  // namespace devpass
