// Reserving graph storage (graph/reserve.hpp): reserve_nodes and reserve_edges allocate only when
// the graph has less room, keep what it holds, and advise huge pages on the 2 MiB-aligned part of
// the storage they allocate (on Linux, read back from /proc/self/smaps); read_graph's room is
// reserved that way.
#include <doctest/doctest.h>

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

#include "devpass/graph/graph.hpp"
#include "devpass/graph/reserve.hpp"
#include "read_graph_declared.hpp"

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace {

using namespace devpass;

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

const char* byte_at(const void* base, std::size_t offset) { return static_cast<const char*>(base) + offset; }
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

TEST_CASE("reserve_nodes and read_graph: the room is advised huge pages") {
  if (!kernel_has_huge_pages()) return;
  graph g = chain(3);
  reserve_nodes(g, 100'000);  // about 20 MB of vertices
  const std::size_t bytes = g.m_vertices.capacity() * sizeof(*g.m_vertices.data());
  CHECK(advised(byte_at(g.m_vertices.data(), bytes / 2)));

  // A file of 12,000 nodes: read_graph reserves twice that, several MB of vertices and edges.
  std::string text = R"({"format": "devpass.graph/1", "name": "m", "nodes": [)"
                     R"({"id": "n0", "op": "input", "outputs": [{"dtype": "float32", "shape": [4]}]})";
  for (int i = 1; i < 12'000; ++i)
    text += R"(, {"id": "n)" + std::to_string(i) + R"(", "op": "call", "kernel": "relu", "inputs": ["n)" +
            std::to_string(i - 1) + R"("], "outputs": [{"dtype": "float32", "shape": [4]}]})";
  text += R"(, {"id": "out", "op": "output", "inputs": ["n11999"]}]})";
  const graph read = testing_support::read_graph_string(text);
  CHECK(boost::num_vertices(read) == 12'001);
  const std::size_t vertex_bytes = read.m_vertices.capacity() * sizeof(*read.m_vertices.data());
  const std::size_t edge_bytes = read.m_edges.capacity() * sizeof(*read.m_edges.data());
  REQUIRE(vertex_bytes > 4 * (std::size_t{1} << 20));
  CHECK(advised(byte_at(read.m_vertices.data(), vertex_bytes / 2)));
  if (edge_bytes > 4 * (std::size_t{1} << 20)) CHECK(advised(byte_at(read.m_edges.data(), edge_bytes / 2)));
}
#endif
