#include <doctest/doctest.h>

#include <sstream>
#include <string>

#include "devpass/io/dot_writer.hpp"
#include "graph_dir.hpp"
#include "read_graph_declared.hpp"

using namespace devpass;
using devpass::testing_support::read_graph_file;

namespace {

std::string dot_of(const graph& g) {
  std::ostringstream os;
  write_dot(g, os);
  return os.str();
}

// The attribute list of node n<v> as written.
std::string node_line(const std::string& dot, vertex v) {
  const std::string head = "  n" + std::to_string(v) + " [";
  const auto at = dot.find(head);
  REQUIRE(at != std::string::npos);
  return dot.substr(at, dot.find('\n', at) - at);
}

// x(cpu) -> h(h2d_copy cuda:0) -> d(cuda:0) -> e(cuda:1, via d2d) -> back(d2h) -> out
graph placed_graph() {
  graph g;
  g[boost::graph_bundle].name = "placed";
  const tensor_spec big{dtype::float32, {1024, 800}};  // 3,276,800 B = 3.1 MiB
  const vertex x = add_node(g, {.id = "x", .op = op_kind::input, .outputs = {{dtype::float32, {2, 2}}}});
  const vertex h = add_node(
      g, {.id = "x@h2d", .op = op_kind::h2d_copy, .device = cuda_device(0), .outputs = {{dtype::float32, {2, 2}}}});
  const vertex d = add_node(g, {.id = "d",
                                .op = op_kind::delegate,
                                .device = cuda_device(0),
                                .kernel = "grow",
                                .outputs = {big, {dtype::int8, {3}}}});
  const vertex c = add_node(g, {.id = "d@d2d", .op = op_kind::d2d_copy, .device = cuda_device(1), .outputs = {big}});
  const vertex e =
      add_node(g, {.id = "e", .op = op_kind::delegate, .device = cuda_device(1), .kernel = "k", .outputs = {big}});
  const vertex b = add_node(g, {.id = "e@d2h", .op = op_kind::d2h_copy, .device = cuda_device(1), .outputs = {big}});
  const vertex w = add_node(g, {.id = "w", .op = op_kind::constant, .outputs = {{dtype::int8, {1}}}});
  const vertex out = add_node(g, {.id = "out", .op = op_kind::output});
  connect(g, {x, 0}, h, 0);
  connect(g, {h, 0}, d, 0);
  connect(g, {d, 0}, c, 0);
  connect(g, {c, 0}, e, 0);
  connect(g, {e, 0}, b, 0);
  connect(g, {b, 0}, out, 0);
  connect(g, {d, 1}, out, 1);
  connect(g, {w, 0}, out, 2);
  return g;
}

}  // namespace

TEST_CASE("dot: byte counts read in binary units") {
  CHECK(format_bytes(0) == "0 B");
  CHECK(format_bytes(16) == "16 B");
  CHECK(format_bytes(1023) == "1023 B");
  CHECK(format_bytes(1024) == "1.0 KiB");
  CHECK(format_bytes(1536) == "1.5 KiB");
  CHECK(format_bytes(3276800) == "3.1 MiB");
  CHECK(format_bytes(1024 * 1024 - 1) == "1.0 MiB");
  CHECK(format_bytes(std::uint64_t{5} << 30) == "5.0 GiB");
}

TEST_CASE("dot: fills nodes by device, one colour per device") {
  const std::string dot = dot_of(placed_graph());
  CHECK(node_line(dot, 0) == R"(  n0 [label="x\ninput", shape=invhouse, style=filled, fillcolor="#e8e8e8"];)");
  CHECK(node_line(dot, 2) == R"(  n2 [label="d\ndelegate grow\ncuda:0", fillcolor="#9ecae1"];)");
  CHECK(node_line(dot, 4) == R"(  n4 [label="e\ndelegate k\ncuda:1", fillcolor="#a1d99b"];)");
  CHECK(node_line(dot, 6) == R"(  n6 [label="w\nconstant", shape=note, style=filled, fillcolor="#e8e8e8"];)");
  CHECK(node_line(dot, 7) == R"(  n7 [label="out\noutput", shape=house, style=filled, fillcolor="#e8e8e8"];)");
}

TEST_CASE("dot: draws copies with their own shape and colours") {
  const std::string dot = dot_of(placed_graph());
  for (const vertex v : {1u, 3u, 5u}) {
    const std::string line = node_line(dot, v);
    CHECK(line.find(R"(shape=cds, style="filled,bold", color="#d62728", fillcolor="#fff2a8")") != std::string::npos);
  }
  CHECK(node_line(dot, 1).find(R"(label="x@h2d\nh2d_copy\ncuda:0")") != std::string::npos);
}

TEST_CASE("dot: labels edges with the bytes they carry") {
  const std::string dot = dot_of(placed_graph());
  CHECK(dot.find("  n0 -> n1 [label=\"16 B\"];\n") != std::string::npos);
  CHECK(dot.find("  n2 -> n3 [label=\":0 3.1 MiB\"];\n") != std::string::npos);
  CHECK(dot.find("  n5 -> n7 [label=\"3.1 MiB\"];\n  n2 -> n7 [label=\":1 3 B\"];\n  n6 -> n7 [label=\"1 B\"];\n") !=
        std::string::npos);
}

TEST_CASE("dot: is a complete digraph and deterministic") {
  const graph g = placed_graph();
  const std::string dot = dot_of(g);
  CHECK(dot.rfind("digraph \"placed\" {\n", 0) == 0);
  CHECK(dot.substr(dot.size() - 2) == "}\n");
  std::size_t arrows = 0;
  for (std::size_t at = dot.find("->"); at != std::string::npos; at = dot.find("->", at + 2)) ++arrows;
  CHECK(arrows == boost::num_edges(g));
  CHECK(dot_of(placed_graph()) == dot);
}

TEST_CASE("dot: escapes quotes and backslashes in names") {
  graph g;
  g[boost::graph_bundle].name = "a\"b";
  const vertex x = add_node(g, {.id = "x\\\"y", .op = op_kind::input, .outputs = {{dtype::int8, {1}}}});
  const vertex out = add_node(g, {.id = "out", .op = op_kind::output});
  connect(g, {x, 0}, out, 0);
  const std::string dot = dot_of(g);
  CHECK(dot.rfind("digraph \"a\\\"b\" {", 0) == 0);
  CHECK(node_line(dot, 0).find(R"(label="x\\\"y\ninput")") != std::string::npos);
}

TEST_CASE("dot: skips erased nodes") {
  graph g = placed_graph();
  const vertex dead = add_node(g, {.id = "dead", .op = op_kind::constant, .outputs = {{dtype::int8, {1}}}});
  erase_node(g, dead);
  CHECK(dot_of(g) == dot_of(placed_graph()));
}

TEST_CASE("dot: draws a two-GPU sample graph with one arrow per edge") {
  const graph g = read_graph_file(devpass::testing_support::graph_path("models/resnet18.two_gpu.json"));
  const std::string dot = dot_of(g);
  std::size_t arrows = 0;
  for (std::size_t at = dot.find("->"); at != std::string::npos; at = dot.find("->", at + 2)) ++arrows;
  CHECK(arrows == boost::num_edges(g));
  CHECK(dot.find("#a1d99b") != std::string::npos);  // the second GPU is there
}
