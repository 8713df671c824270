// devpass/graph/reserve.hpp — reserving vertex and edge storage in a graph (any model: a vecS
// adjacency_list) before it is filled; on request, in memory the system is asked to back with
// huge pages.
#pragma once

#include <cstddef>
#include <cstdint>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace devpass {

// How the storage reserve_nodes and reserve_edges allocate is backed. `system_default` leaves it
// to the system's policy (Linux: transparent huge pages where the administrator enabled them for
// every mapping, else 4 KiB pages). `huge_pages` asks for transparent huge pages (madvise): fewer
// page faults where the system has huge pages at hand, slower first touches where it must find or
// back fresh 2 MiB blocks (a VM whose host reclaims free memory), so it is a choice to measure on
// the machines you run on, not a default (docs/performance.md, "Huge pages, on request").
enum class page_advice : std::uint8_t { system_default, huge_pages };

namespace detail {
// Asks the kernel to back the 2 MiB-aligned part of [data, data + bytes) with transparent huge
// pages (Linux's madvise(MADV_HUGEPAGE); elsewhere nothing). Advice only: where the system has
// them off, or refuses, nothing changes; a block smaller than two huge pages gets none (small
// graphs never split the heap's mappings).
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
void reserve_storage(Vector& storage, std::size_t capacity, page_advice advice) {
  if (capacity <= storage.capacity()) return;  // storage someone else allocated is left as it is
  storage.reserve(capacity);
  if (advice == page_advice::huge_pages)
    advise_huge_pages(storage.data(), storage.capacity() * sizeof(*storage.data()));
}
}  // namespace detail

// Vertex storage for `capacity` nodes, allocated now when the graph has less (read_graph reserves
// node_capacity_for of the file's count: room for the copies passes add), backed as `advice`
// says. Moves every node when it allocates: call it before filling.
template <class G>
void reserve_nodes(G& g, std::size_t capacity, page_advice advice = page_advice::system_default) {
  detail::reserve_storage(g.m_vertices, capacity, advice);
}

// Edge storage for `capacity` edges, likewise.
template <class G>
void reserve_edges(G& g, std::size_t capacity, page_advice advice = page_advice::system_default) {
  detail::reserve_storage(g.m_edges, capacity, advice);
}

}  // namespace devpass
