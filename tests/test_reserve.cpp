// Reserving graph storage (graph/reserve.hpp): reserve_nodes and reserve_edges allocate only when
// the graph has less room and keep what it holds; they leave the storage they allocate to the
// system's page policy unless asked for huge pages, and then advise them on its 2 MiB-aligned part
// (on Linux, read back from /proc/self/smaps). read_graph reserves its room the same way, as its
// read_options say.
#include <doctest/doctest.h>

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "devpass/graph/graph.hpp"
#include "devpass/graph/reserve.hpp"
#include "read_graph_declared.hpp"

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace {

using namespace devpass;

[[maybe_unused]] const char* byte_at(const void* base, std::size_t offset) {
  return static_cast<const char*>(base) + offset;
}

graph chain(std::size_t nodes) {
  graph g;
  vertex last = add_node(g, {.id = "x", .op = op_kind::input, .outputs = {tensor_spec{dtype::float32, {4}}}});
  for (std::size_t i = 1; i < nodes; ++i) {
    const vertex v = add_node(g, {.id = "n" + std::to_string(i),
                                  .op = op_kind::call,
                                  .arity = 1,
                                  .kernel = "relu",
                                  .outputs = {tensor_spec{dtype::float32, {4}}}});
    connect(g, value_ref{last, 0}, v, 0);
    last = v;
  }
  return g;
}

#if defined(__linux__) && defined(MADV_HUGEPAGE)
// The VmFlags of the mapping that holds `address` (e.g. "rd wr mr mw me ac hg"), if any.
std::optional<std::string> vm_flags_at(const void* address) {
  const auto at = reinterpret_cast<std::uintptr_t>(address);
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    std::uintptr_t begin = 0, end = 0;
    char dash = 0;
    std::istringstream head(line);
    if (head >> std::hex >> begin >> dash >> end && dash == '-') {
      inside = begin <= at && at < end;
      continue;
    }
    if (inside && line.rfind("VmFlags:", 0) == 0) return line.substr(8) + " ";
  }
  return std::nullopt;
}

bool advised(const void* address) {
  const auto flags = vm_flags_at(address);
  return flags && flags->find(" hg ") != std::string::npos;
}

// Whether this system takes the advice at all (a kernel without transparent huge pages, or a
// sandbox that filters madvise, refuses it; the advice is then nothing, and these cases skip).
bool kernel_has_huge_pages() {
  constexpr std::size_t bytes = std::size_t{4} << 20;
  void* mapped = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mapped == MAP_FAILED) return false;
  const auto huge_page = std::uintptr_t{2} << 20;
  const auto aligned = (reinterpret_cast<std::uintptr_t>(mapped) + huge_page - 1) & ~(huge_page - 1);
  const bool taken = madvise(reinterpret_cast<void*>(aligned), huge_page, MADV_HUGEPAGE) == 0;
  munmap(mapped, bytes);
  return taken;
}

#endif

#if defined(__linux__)
// The 4 KiB pages wholly inside [from, from + bytes): the first one's address and how many.
struct page_run {
  std::uintptr_t begin = 0;
  std::size_t count = 0;
};
page_run pages_of(const void* from, std::size_t bytes) {
  constexpr std::uintptr_t page = 4096;
  const auto begin = (reinterpret_cast<std::uintptr_t>(from) + page - 1) & ~(page - 1);
  const auto end = (reinterpret_cast<std::uintptr_t>(from) + bytes) & ~(page - 1);
  return {begin, end > begin ? (end - begin) / page : 0};
}
std::size_t pages_inside(const void* from, std::size_t bytes) { return pages_of(from, bytes).count; }

// How many of those pages are resident (mincore).
std::size_t resident_pages(const void* from, std::size_t bytes) {
  const page_run run = pages_of(from, bytes);
  if (run.count == 0) return 0;
  std::vector<unsigned char> in_core(run.count);
  if (mincore(reinterpret_cast<void*>(run.begin), run.count * 4096, in_core.data()) != 0) return 0;
  std::size_t count = 0;
  for (const unsigned char c : in_core) count += c & 1u;
  return count;
}

// Keeps the kernel from backing `storage` with transparent huge pages where the system would on
// its own (`always`): one write would then fault in 2 MiB, and "nothing beyond the asked pages"
// could not be checked.
template <class Storage>
void without_huge_pages(const Storage& storage) {
#if defined(MADV_NOHUGEPAGE)
  detail::advise_whole_pages(storage.data(), storage.capacity() * sizeof(*storage.data()), 4096, MADV_NOHUGEPAGE);
#else
  (void)storage;
#endif
}

// Whether this kernel populates on request (MADV_POPULATE_WRITE, Linux 5.14): else populate_room
// is nothing, and these cases skip.
bool kernel_populates() {
  constexpr std::size_t bytes = std::size_t{1} << 20;
  void* mapped = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mapped == MAP_FAILED) return false;
#if defined(MADV_NOHUGEPAGE)
  (void)madvise(mapped, bytes, MADV_NOHUGEPAGE);
#endif
  detail::populate_pages(mapped, bytes);
  const bool populated = resident_pages(mapped, bytes) == bytes / 4096;
  munmap(mapped, bytes);
  return populated;
}
#endif

}  // namespace

TEST_CASE("reserve_nodes and reserve_edges: room allocated once, the graph unchanged") {
  graph g = chain(5);
  const std::string before = g[vertex{4}].id + std::to_string(boost::num_edges(g));
  reserve_nodes(g, 1000);
  reserve_edges(g, 2000);
  CHECK(g.m_vertices.capacity() >= 1000);
  CHECK(g.m_edges.capacity() >= 2000);
  CHECK(boost::num_vertices(g) == 5);
  CHECK(g[vertex{4}].id + std::to_string(boost::num_edges(g)) == before);
  CHECK(operands(g, 4) == std::vector<value_ref>{{3, 0}});

  // Enough room already: nothing is allocated, the storage stays where it is.
  const auto* nodes_at = g.m_vertices.data();
  const auto* edges_at = g.m_edges.data();
  reserve_nodes(g, 10);
  reserve_edges(g, 10);
  CHECK(g.m_vertices.data() == nodes_at);
  CHECK(g.m_edges.data() == edges_at);
}

TEST_CASE("reserve_room: room for `capacity` nodes, and an edge for each node of room") {
  graph empty;
  reserve_room(empty, 100, 300, node_capacity_for(100));
  CHECK(empty.m_vertices.capacity() == node_capacity_for(100));
  CHECK(empty.m_edges.capacity() == 300 + (node_capacity_for(100) - 100));
  CHECK(boost::num_vertices(empty) == 0);
  graph tight;
  reserve_room(tight, 100, 300, 50);  // a capacity under the count: the count, and no edge room
  CHECK(tight.m_vertices.capacity() == 100);
  CHECK(tight.m_edges.capacity() == 300);
}

#if defined(__linux__) && defined(MADV_HUGEPAGE)
TEST_CASE("advise_huge_pages: only the whole 2 MiB pages inside the block") {
  if (!kernel_has_huge_pages()) return;
  constexpr std::size_t mib = std::size_t{1} << 20;
  // A mapping of our own, 2 MiB-aligned inside: 8 MiB from an aligned address.
  void* mapped = mmap(nullptr, 12 * mib, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  REQUIRE(mapped != MAP_FAILED);
  const auto aligned = (reinterpret_cast<std::uintptr_t>(mapped) + 2 * mib - 1) & ~(2 * mib - 1);
  const void* base = reinterpret_cast<const void*>(aligned);

  // 1 MiB past an aligned address for 4 MiB: only the huge page at [2, 4) MiB lies wholly inside.
  detail::advise_huge_pages(byte_at(base, 1 * mib), 4 * mib);
  CHECK_FALSE(advised(byte_at(base, 1 * mib)));
  CHECK(advised(byte_at(base, 2 * mib)));
  CHECK(advised(byte_at(base, 4 * mib - 1)));
  CHECK_FALSE(advised(byte_at(base, 4 * mib)));

  // A block smaller than a huge page gets no advice, wherever it lies.
  detail::advise_huge_pages(byte_at(base, 6 * mib + 4096), mib);
  CHECK_FALSE(advised(byte_at(base, 6 * mib + 4096)));
  munmap(mapped, 12 * mib);
}

// A file of `nodes` nodes in a chain: read_graph reserves twice that, several MB of vertices and
// edges for 12,000.
std::string chain_file(int nodes) {
  std::string text = R"({"format": "devpass.graph/1", "name": "m", "nodes": [)"
                     R"({"id": "n0", "op": "input", "outputs": [{"dtype": "float32", "shape": [4]}]})";
  for (int i = 1; i < nodes; ++i)
    text += R"(, {"id": "n)" + std::to_string(i) + R"(", "op": "call", "kernel": "relu", "inputs": ["n)" +
            std::to_string(i - 1) + R"("], "outputs": [{"dtype": "float32", "shape": [4]}]})";
  return text + R"(, {"id": "out", "op": "output", "inputs": ["n)" + std::to_string(nodes - 1) + R"("]}]})";
}

template <class Storage>
const char* middle_of(const Storage& storage) {
  return byte_at(storage.data(), storage.capacity() * sizeof(*storage.data()) / 2);
}

TEST_CASE("reserve_nodes and read_graph: huge pages only when asked for") {
  if (!kernel_has_huge_pages()) return;
  constexpr std::size_t four_mib = std::size_t{4} << 20;
  graph asked = chain(3), left = chain(3);
  reserve_nodes(asked, 100'000, page_advice::huge_pages);  // about 20 MB of vertices
  reserve_edges(asked, 200'000, page_advice::huge_pages);
  reserve_nodes(left, 100'000);
  reserve_edges(left, 200'000);
  CHECK(advised(middle_of(asked.m_vertices)));
  CHECK(advised(middle_of(asked.m_edges)));
  CHECK_FALSE(advised(middle_of(left.m_vertices)));
  CHECK_FALSE(advised(middle_of(left.m_edges)));

  const std::string text = chain_file(12'000);
  const graph read = testing_support::read_graph_string(text);
  const graph read_huge = testing_support::read_graph_string(text, "<string>", {.pages = page_advice::huge_pages});
  REQUIRE(boost::num_vertices(read) == 12'001);
  REQUIRE(boost::num_vertices(read_huge) == 12'001);
  REQUIRE(read.m_vertices.capacity() * sizeof(*read.m_vertices.data()) > four_mib);
  CHECK_FALSE(advised(middle_of(read.m_vertices)));
  CHECK(advised(middle_of(read_huge.m_vertices)));
  if (read_huge.m_edges.capacity() * sizeof(*read_huge.m_edges.data()) > four_mib) {
    CHECK_FALSE(advised(middle_of(read.m_edges)));
    CHECK(advised(middle_of(read_huge.m_edges)));
  }
}
#endif

#if defined(__linux__)
TEST_CASE("populate_room: faults in the room the next nodes and edges take, and no more") {
  if (!kernel_populates()) return;
  // About 40 MB of vertices: above glibc's largest mmap threshold, so always fresh, untouched
  // memory (a smaller block may reuse pages an earlier test faulted in).
  graph g = chain(3);
  reserve_nodes(g, 200'000);
  reserve_edges(g, 40'000);
  without_huge_pages(g.m_vertices);
  const auto* room = g.m_vertices.data() + g.m_vertices.size();
  const std::size_t vertex_size = sizeof(*g.m_vertices.data());
  const std::size_t untouched = resident_pages(byte_at(room, 0), 199'997 * vertex_size);

  populate_room(g, 5'000, 100);
  const std::size_t asked = 5'000 * vertex_size;
  CHECK(resident_pages(room, asked) == pages_inside(room, asked));
  // Beyond it, no more than before (a page or so the allocator touched at the block's end).
  CHECK(resident_pages(byte_at(room, asked + 4096), 199'997 * vertex_size - asked - 4096) <= untouched);
  const auto* edge_room = g.m_edges.data() + g.m_edges.size();
  const std::size_t edge_bytes = 100 * sizeof(*g.m_edges.data());
  CHECK(resident_pages(edge_room, edge_bytes) == pages_inside(edge_room, edge_bytes));

  // More than the room there is: only the room.
  populate_room(g, 1'000'000, 0);
  CHECK(resident_pages(room, 199'997 * vertex_size) == pages_inside(room, 199'997 * vertex_size));
  CHECK(boost::num_vertices(g) == 3);  // nothing was added
}

TEST_CASE("room_populator: a chunk ahead of what a pass has added, never more") {
  if (!kernel_populates()) return;
  graph g = chain(3);
  reserve_nodes(g, 200'000);  // fresh memory, as above
  without_huge_pages(g.m_vertices);
  const auto* base = g.m_vertices.data();
  const std::size_t vertex_size = sizeof(*g.m_vertices.data());
  const auto resident_from = [&](std::size_t first, std::size_t count) {
    return resident_pages(byte_at(base, first * vertex_size), count * vertex_size);
  };
  room_populator<graph> room(1'000);
  room.step(g);  // vertices 3 .. 1003 faulted in
  CHECK(resident_from(3, 1'000) == pages_inside(byte_at(base, 3 * vertex_size), 1'000 * vertex_size));
  CHECK(resident_from(1'100, 5'000) == 0);
  g.m_vertices.resize(900);
  room.step(g);  // not due yet
  CHECK(resident_from(1'100, 5'000) == 0);
  g.m_vertices.resize(1'003);
  room.step(g);  // due: the next 1000
  CHECK(resident_from(1'003, 1'000) == pages_inside(byte_at(base, 1'003 * vertex_size), 1'000 * vertex_size));
  CHECK(resident_from(2'100, 5'000) == 0);
  CHECK(g.m_vertices.data() == base);  // the storage never moved
}
#endif
