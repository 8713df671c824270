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
