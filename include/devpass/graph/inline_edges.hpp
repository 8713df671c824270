// devpass/graph/inline_edges.hpp — inline_vec_s<N>, an out-edge-list selector for
// boost::adjacency_list (Boost.Graph's extension point for the adjacency list's storage:
// container_gen and parallel_edge_traits): a vecS whose per-vertex lists are
// inline_vector<StoredEdge, N>, so that each vertex holds its first N out-edge and N in-edge
// entries itself and allocates a heap block only for more. Random access, parallel edges
// allowed, the same operations as std::vector's: every structural operation of devpass runs on
// it as on vecS, and so do Boost.Graph's add_edge, out_degree and in_degree, out_edges, in_edges,
// edges, adjacent_vertices and the copy constructor. Not boost::edge(u, v, g) or edge_range: they
// call Boost's container traits qualified, which sees only the overloads declared before Boost's
// header (devpass finds an operand by its slot, never an edge by its ends). devpass::graph uses
// inline_vec_s<1> (docs/graph-concept.md#what-a-model-is); a compiler's own IR may too.
#pragma once

#include <boost/graph/adjacency_list.hpp>
#include <boost/pending/container_traits.hpp>
#include <cstdint>

#include "devpass/graph/inline_vector.hpp"

namespace devpass {

// Out- and in-edge lists with their first N entries inline (N >= 1; for none, vecS).
template <std::uint32_t N>
struct inline_vec_s {};

// What Boost.Graph asks of a list through its container traits (boost/pending/container_traits.hpp),
// found by argument-dependent lookup where Boost calls them unqualified (add_edge's push): a
// random-access back-insertion sequence, as std::vector, whose iterators an insertion or erasure
// invalidates.
template <class T, std::uint32_t N>
boost::graph_detail::vector_tag container_category(const inline_vector<T, N>&) {
  return {};
}
template <class T, std::uint32_t N>
boost::graph_detail::unstable_tag iterator_stability(const inline_vector<T, N>&) {
  return {};
}

}  // namespace devpass

namespace boost {
template <std::uint32_t N, class ValueType>
struct container_gen<devpass::inline_vec_s<N>, ValueType> {
  static_assert(N >= 1, "devpass: inline_vec_s<N> needs N >= 1 (for no entry inline, vecS)");
  using type = devpass::inline_vector<ValueType, N>;
};
// Two input slots of one node may read the same value: two edges between the same vertices.
template <std::uint32_t N>
struct parallel_edge_traits<devpass::inline_vec_s<N>> {
  using type = allow_parallel_edge_tag;
};
}  // namespace boost
