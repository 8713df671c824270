// devpass/graph/reserve.hpp — reserving vertex and edge storage in a graph (any model: a vecS
// adjacency_list) before it is filled, in memory the system may back with huge pages.
#pragma once

#include <cstddef>
#include <cstdint>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace devpass {

namespace detail {
// Asks the kernel to back the 2 MiB-aligned part of [data, data + bytes) with transparent huge
// pages (Linux's madvise(MADV_HUGEPAGE); elsewhere nothing). Advice only: where the system has
// them off, or refuses, nothing changes; a block smaller than two huge pages gets none. Why: a
// pass that adds half a million copies to a 1M-node graph fills about 100 MB of reserved vertex
// storage, and the kernel faulting it in 4 KiB at a time was a fifth of the executorch policy's
// run (docs/performance.md, "Huge pages for the room").
inline void advise_huge_pages(const void* data, std::size_t bytes) noexcept {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  constexpr std::uintptr_t huge_page = std::uintptr_t{2} << 20;
  const auto first = reinterpret_cast<std::uintptr_t>(data);
  const std::uintptr_t begin = (first + huge_page - 1) & ~(huge_page - 1);
  const std::uintptr_t end = (first + bytes) & ~(huge_page - 1);
  if (end > begin) (void)madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#else
  (void)data;
  (void)bytes;
#endif
}

template <class Vector>
void reserve_advised(Vector& storage, std::size_t capacity) {
  if (capacity <= storage.capacity()) return;  // storage someone else allocated is left as it is
  storage.reserve(capacity);
  advise_huge_pages(storage.data(), storage.capacity() * sizeof(*storage.data()));
}
}  // namespace detail

// Vertex storage for `capacity` nodes, allocated now when the graph has less (read_graph reserves
// node_capacity_for of the file's count: room for the copies passes add). Storage it allocates
// is advised huge pages (above). Moves every node when it allocates: call it before filling.
template <class G>
void reserve_nodes(G& g, std::size_t capacity) {
  detail::reserve_advised(g.m_vertices, capacity);
}

// Edge storage for `capacity` edges, likewise.
template <class G>
void reserve_edges(G& g, std::size_t capacity) {
  detail::reserve_advised(g.m_edges, capacity);
}

}  // namespace devpass
