// devpass/graph/reserve.hpp — reserving vertex and edge storage in a graph (any model: a vecS
// adjacency_list) before it is filled (on request, in memory the system is asked to back with
// huge pages), and faulting in at once the part of it a pass is about to fill.
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
// the machines you run on, not a default (docs/performance.md#room-for-the-copies).
enum class page_advice : std::uint8_t { system_default, huge_pages };

namespace detail {
// madvise(advice) on the whole `page`-sized, `page`-aligned pages inside [data, data + bytes):
// none when the block holds none. Linux; elsewhere nothing.
inline void advise_whole_pages(const void* data, std::size_t bytes, std::uintptr_t page, int advice) noexcept {
#if defined(__linux__)
  const auto first = reinterpret_cast<std::uintptr_t>(data);
  const std::uintptr_t begin = (first + page - 1) & ~(page - 1);
  const std::uintptr_t end = (first + bytes) & ~(page - 1);
  if (end > begin) (void)madvise(reinterpret_cast<void*>(begin), end - begin, advice);
#else
  (void)data, (void)bytes, (void)page, (void)advice;
#endif
}

// Asks the kernel to back the 2 MiB-aligned part of [data, data + bytes) with transparent huge
// pages (Linux's madvise(MADV_HUGEPAGE); elsewhere nothing). Advice only: where the system has
// them off, or refuses, nothing changes; a block smaller than two huge pages gets none (small
// graphs never split the heap's mappings).
inline void advise_huge_pages(const void* data, std::size_t bytes) noexcept {
#if defined(MADV_HUGEPAGE)
  advise_whole_pages(data, bytes, std::uintptr_t{2} << 20, MADV_HUGEPAGE);
#else
  (void)data, (void)bytes;
#endif
}

// Faults in the whole 4 KiB pages inside [data, data + bytes) at once, writable (Linux 5.14's
// madvise(MADV_POPULATE_WRITE); on an older kernel, or elsewhere, nothing: the pages then fault
// in one at a time as they are written, as they always did).
inline void populate_pages(const void* data, std::size_t bytes) noexcept {
#if defined(MADV_POPULATE_WRITE)
  advise_whole_pages(data, bytes, 4096, MADV_POPULATE_WRITE);
#elif defined(__linux__)
  advise_whole_pages(data, bytes, 4096, 23);  // the kernel's value; older C libraries lack the name
#else
  (void)data, (void)bytes;
#endif
}

template <class Vector>
void populate_after_end(const Vector& storage, std::size_t count) {
  const std::size_t room = storage.capacity() - storage.size();
  populate_pages(storage.data() + storage.size(), (count < room ? count : room) * sizeof(*storage.data()));
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

// Room for the copies a pass adds to a graph of `nodes` nodes and `edges` edges: vertex storage for
// `capacity` nodes (node_capacity_for(nodes), as read_graph reserves) and edge storage for the
// graph's edges and one more per node of room (a copy reads one value). For a model filled from
// elsewhere; allocated before it is filled, as reserve_nodes says.
template <class G>
void reserve_room(G& g, std::size_t nodes, std::size_t edges, std::size_t capacity,
                  page_advice advice = page_advice::system_default) {
  reserve_nodes(g, capacity > nodes ? capacity : nodes, advice);
  reserve_edges(g, edges + (capacity > nodes ? capacity - nodes : 0), advice);
}

// Faults in, in one request to the kernel, the reserved storage the next `nodes` vertices and
// `edges` edges added to g will be written to (at most the room there is): for a pass that knows
// how many it is about to add. Nothing changes but when the pages are faulted in: one by one as
// they are first written costs the pass a trap per 4 KiB page
// (docs/performance.md#room-for-the-copies); the pages are the same, so memory use is the same. Linux 5.14 or later;
// elsewhere nothing.
template <class G>
void populate_room(const G& g, std::size_t nodes, std::size_t edges) {
  detail::populate_after_end(g.m_vertices, nodes);
  detail::populate_after_end(g.m_edges, edges);
}

// populate_room for a pass that adds nodes as it goes, not knowing how many: call step(g) as
// often as it likes (a comparison when nothing is due); whenever the vertices or edges reach
// what was faulted in, the next `chunk` of each is. Memory use grows by at most a chunk beyond
// what the pass fills.
template <class G>
class room_populator {
 public:
  explicit room_populator(std::size_t chunk = 4096) : chunk_(chunk) {}
  void step(const G& g) {
    keep_ahead(g.m_vertices, nodes_until_);
    keep_ahead(g.m_edges, edges_until_);
  }

 private:
  // The next chunk of `storage`'s room, once its size reaches `until` (then moved on a chunk).
  template <class Vector>
  void keep_ahead(const Vector& storage, std::size_t& until) const {
    if (storage.size() < until) return;
    detail::populate_after_end(storage, chunk_);
    until = storage.size() + chunk_;
  }

  std::size_t chunk_, nodes_until_ = 0, edges_until_ = 0;
};

}  // namespace devpass
