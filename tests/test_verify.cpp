#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "devpass/graph/verify.hpp"

using namespace devpass;

namespace {
tensor_spec f32(std::int64_t n) { return {dtype::float32, {n, n}}; }

// x(cpu) -> h(h2d cuda:0) -> d(delegate cuda:0) -> b(d2h) -> r(call) -> out; d also -> out.
struct placed_graph {
  graph g;
  vertex x, h, d, b, r, out;
  placed_graph() {
    x = add_node(g, {.id = "x", .op = op_kind::input, .outputs = {f32(2)}});
    h = add_node(g, {.id = "h", .op = op_kind::h2d_copy, .device = cuda_device(0), .outputs = {f32(2)}});
    d = add_node(g,
                 {.id = "d", .op = op_kind::delegate, .device = cuda_device(0), .kernel = "add", .outputs = {f32(2)}});
    b = add_node(g, {.id = "b", .op = op_kind::d2h_copy, .device = cuda_device(0), .outputs = {f32(2)}});
    r = add_node(g, {.id = "r", .op = op_kind::call, .kernel = "relu", .outputs = {f32(2)}});
    out = add_node(g, {.id = "out", .op = op_kind::output});
    connect(g, {x, 0}, h, 0);
    connect(g, {h, 0}, d, 0);
    connect(g, {h, 0}, d, 1);
    connect(g, {d, 0}, b, 0);
    connect(g, {b, 0}, r, 0);
    connect(g, {r, 0}, out, 0);
    connect(g, {d, 0}, out, 1);
  }
};

std::vector<std::string> lines(const verify_report& r) {
  std::vector<std::string> result;
  for (const auto& p : r.problems) result.emplace_back(p.what());
  return result;
}
}  // namespace

TEST_CASE("verify: a well-formed placed graph passes both checks") {
  placed_graph s;
  const auto r = verify(s.g);
  CHECK(r.ok());
  CHECK(r.problems.empty());
  CHECK(r.to_string().empty());
}

TEST_CASE("verify_structure: reports an empty id and a duplicate id") {
  placed_graph s;
  s.g[s.r].id = "d";
  s.g[s.h].id = "";
  const auto r = verify_structure(s.g);
  REQUIRE(r.problems.size() == 2);
  CHECK(r.problems[0].node() == "");
  CHECK(r.problems[0].field() == "id");
  CHECK(r.problems[0].problem() == "node #1 has an empty id");
  CHECK(r.problems[1].node() == "d");
  CHECK(r.problems[1].field() == "id");
  CHECK(r.problems[1].problem() == "duplicate id (also node #2)");
}

TEST_CASE("verify_structure: every later copy of an id is reported against the first") {
  placed_graph s;
  s.g[s.b].id = "x";
  s.g[s.r].id = "x";
  CHECK(lines(verify_structure(s.g)) == std::vector<std::string>{"node 'x': id: duplicate id (also node #0)",
                                                                 "node 'x': id: duplicate id (also node #0)"});
}

TEST_CASE("verify_structure: duplicates far apart in a long graph are found, erased nodes' ids are not counted") {
  // Ids are hashed some nodes ahead of the check (first_id_index::prefetch): a graph many times
  // that distance, erased nodes between, the first of each id far from its copy.
  graph g;
  vertex last = add_node(g, {.id = "in", .op = op_kind::input, .outputs = {f32(2)}});
  for (int i = 0; i < 100; ++i) {
    const vertex dead =
        add_node(g, {.id = i % 10 ? "dead" + std::to_string(i) : "c3", .op = op_kind::constant, .outputs = {f32(2)}});
    erase_node(g, dead);
    const vertex c =
        add_node(g, {.id = "c" + std::to_string(i), .op = op_kind::call, .kernel = "relu", .outputs = {f32(2)}});
    connect(g, {last, 0}, c, 0);
    last = c;
  }
  connect(g, {last, 0}, add_node(g, {.id = "out", .op = op_kind::output}), 0);
  CHECK(verify_structure(g).ok());
  g[140].id = "c5";  // vertex 140 is c69; c5 is vertex 12
  g[200].id = "c5";
  g[198].id = "in";
  CHECK(lines(verify_structure(g)) == std::vector<std::string>{"node 'c5': id: duplicate id (also node #12)",
                                                               "node 'in': id: duplicate id (also node #0)",
                                                               "node 'c5': id: duplicate id (also node #12)"});
}

TEST_CASE(
    "verify_structure: a graph with erased nodes and edges against vertex order has no cycle, and one with a cycle is "
    "named") {
  graph g;
  const vertex out = add_node(g, {.id = "out", .op = op_kind::output});
  erase_node(g, add_node(g, {.id = "gone", .op = op_kind::constant, .outputs = {f32(2)}}));
  const vertex r = add_node(g, {.id = "r", .op = op_kind::call, .kernel = "relu", .outputs = {f32(2)}});
  const vertex x = add_node(g, {.id = "x", .op = op_kind::input, .outputs = {f32(2)}});
  connect(g, {x, 0}, r, 0);
  connect(g, {r, 0}, out, 0);
  CHECK(verify_structure(g).ok());
  const vertex s = add_node(g, {.id = "s", .op = op_kind::call, .kernel = "relu", .outputs = {f32(2)}});
  g[r].arity = 2;
  connect(g, {s, 0}, r, 1);
  connect(g, {r, 0}, s, 0);
  CHECK(lines(verify_structure(g)) == std::vector<std::string>{"node 'r': inputs: cycle: the node depends on itself"});
}

TEST_CASE("verify_structure: an id ending in ':<digits>' is reported (a reference would read an output)") {
  placed_graph s;
  s.g[s.r].id = "r:1";
  s.g[s.h].id = "h:x1";  // fine: not digits after the last ':'
  CHECK(lines(verify_structure(s.g)) ==
        std::vector<std::string>{
            "node 'r:1': id: an id cannot end in ':<digits>': references would read it as an output index"});
}

TEST_CASE("verify_structure: a vertex order that is not topological is not a cycle") {
  graph g;
  const vertex out = add_node(g, {.id = "out", .op = op_kind::output});
  const vertex r = add_node(g, {.id = "r", .op = op_kind::call, .kernel = "relu", .outputs = {f32(2)}});
  const vertex x = add_node(g, {.id = "x", .op = op_kind::input, .outputs = {f32(2)}});
  connect(g, {x, 0}, r, 0);
  connect(g, {r, 0}, out, 0);
  CHECK(verify(g).ok());
}

TEST_CASE("verify_structure: names a node on a cycle") {
  placed_graph s;
  // r feeds h's (second) slot: h -> d -> b -> r -> h.
  s.g[s.h].op = op_kind::delegate;
  s.g[s.h].kernel = "k";
  connect(s.g, {s.r, 0}, s.h, 1);
  const auto r = verify_structure(s.g);
  REQUIRE(r.problems.size() == 1);
  CHECK(r.problems[0].field() == "inputs");
  CHECK(r.problems[0].problem() == "cycle: the node depends on itself");
  const std::string on_cycle = r.problems[0].node();
  CHECK((on_cycle == "h" || on_cycle == "d" || on_cycle == "b" || on_cycle == "r"));
}

TEST_CASE("verify_structure: every input slot is connected exactly once") {
  placed_graph s;
  s.g[s.d].arity = 3;              // slot 2 unconnected
  connect(s.g, {s.x, 0}, s.r, 0);  // r's slot 0 fed twice
  const auto r = verify_structure(s.g);
  CHECK(lines(r) == std::vector<std::string>{"node 'd': inputs: input 2 is not connected",
                                             "node 'r': inputs: input 0 is connected 2 times"});
}

TEST_CASE("verify_structure: an edge must name an output its producer has") {
  placed_graph s;
  boost::add_edge(s.d, s.out, edge_info{3, 2}, s.g);
  s.g[s.out].arity = 3;
  const auto r = verify_structure(s.g);
  CHECK(lines(r) ==
        std::vector<std::string>{"node 'out': inputs: input 2 reads output 3 of 'd', which has 1 output(s)"});
}

TEST_CASE("verify_structure: exactly one output node") {
  SUBCASE("none") {
    placed_graph s;
    s.g[s.out].op = op_kind::call;
    s.g[s.out].kernel = "sink";
    const auto r = verify_structure(s.g);
    CHECK(lines(r) == std::vector<std::string>{"nodes: no output node"});
  }
  SUBCASE("two") {
    placed_graph s;
    const vertex o2 = add_node(s.g, {.id = "out2", .op = op_kind::output});
    connect(s.g, {s.r, 0}, o2, 0);
    const auto r = verify_structure(s.g);
    CHECK(lines(r) == std::vector<std::string>{"node 'out2': op: a second output node (the first is 'out')"});
  }
}

TEST_CASE("verify_structure: op arity rules") {
  SUBCASE("input and constant take no inputs") {
    placed_graph s;
    const vertex w = add_node(s.g, {.id = "w", .op = op_kind::constant, .outputs = {f32(2)}});
    connect(s.g, {w, 0}, s.x, 0);
    const auto r = verify_structure(s.g);
    CHECK(lines(r) == std::vector<std::string>{"node 'x': inputs: input takes no inputs, found 1"});
  }
  SUBCASE("input and constant have an output") {
    placed_graph s;
    (void)add_node(s.g, {.id = "y", .op = op_kind::input});
    (void)add_node(s.g, {.id = "w", .op = op_kind::constant});
    const auto r = verify_structure(s.g);
    CHECK(lines(r) == std::vector<std::string>{"node 'y': outputs: an input needs an output",
                                               "node 'w': outputs: a constant needs an output"});
  }
  SUBCASE("a copy has one input and one output of the same layout") {
    placed_graph s;
    s.g[s.b].outputs = {tensor_spec{dtype::float16, {2, 2}}};
    connect(s.g, {s.x, 0}, s.h, 1);
    const auto r = verify_structure(s.g);
    CHECK(lines(r) ==
          std::vector<std::string>{
              "node 'h': inputs: a h2d_copy has exactly one input, found 2",
              "node 'b': outputs: a copy keeps its input's layout: input is float32[2,2], output is float16[2,2]"});
  }
  SUBCASE("a copy with two outputs") {
    placed_graph s;
    s.g[s.h].outputs.push_back(f32(2));
    const auto r = verify_structure(s.g);
    CHECK(lines(r) == std::vector<std::string>{"node 'h': outputs: a h2d_copy has exactly one output, found 2"});
  }
  SUBCASE("the output node has no outputs") {
    placed_graph s;
    s.g[s.out].outputs.push_back(f32(2));
    const auto r = verify_structure(s.g);
    CHECK(lines(r) == std::vector<std::string>{"node 'out': outputs: the output node has no outputs, found 1"});
  }
  SUBCASE("an output node with no inputs is fine") {
    graph g;
    (void)add_node(g, {.id = "out", .op = op_kind::output});
    CHECK(verify(g).ok());
  }
  SUBCASE("delegate and call need a kernel") {
    placed_graph s;
    s.g[s.d].kernel.clear();
    s.g[s.r].kernel.clear();
    const auto r = verify_structure(s.g);
    CHECK(lines(r) == std::vector<std::string>{"node 'd': kernel: a delegate needs a kernel name",
                                               "node 'r': kernel: a call needs a kernel name"});
  }
  SUBCASE("a call runs on the host and a copy has a device side") {
    placed_graph s;
    s.g[s.r].device = cuda_device(1);
    s.g[s.b].device = cpu_device;
    const auto r = verify_structure(s.g);
    CHECK(lines(r) == std::vector<std::string>{"node 'b': device: a d2h_copy needs a device side, not cpu",
                                               "node 'r': device: a call runs on the host, not on cuda:1"});
  }
  SUBCASE("negative dimension") {
    placed_graph s;
    s.g[s.x].outputs[0].shape = {2, -1};
    s.g[s.h].outputs[0].shape = {2, -1};
    const auto r = verify_structure(s.g);
    REQUIRE(r.problems.size() == 2);
    CHECK(r.problems[0].node() == "x");
    CHECK(r.problems[0].problem() == "output 0 has a negative dimension or a size that overflows");
    CHECK(r.problems[1].node() == "h");
  }
}

TEST_CASE("verify_structure: only a copy of a constant's value is resident") {
  SUBCASE("a resident copy of a constant, and a resident copy of that copy") {
    graph g;
    const vertex w = add_node(g, {.id = "w", .op = op_kind::constant, .outputs = {f32(2)}});
    const vertex h = add_node(
        g, {.id = "h", .op = op_kind::h2d_copy, .device = cuda_device(0), .resident = true, .outputs = {f32(2)}});
    const vertex b = add_node(
        g, {.id = "b", .op = op_kind::d2d_copy, .device = cuda_device(1), .resident = true, .outputs = {f32(2)}});
    const vertex out = add_node(g, {.id = "out", .op = op_kind::output});
    connect(g, {w, 0}, h, 0);
    connect(g, {h, 0}, b, 0);
    connect(g, {b, 0}, out, 0);
    CHECK(verify(g).ok());
  }
  SUBCASE("a resident copy of a value computed at every execution, a resident call") {
    placed_graph s;
    s.g[s.h].resident = true;
    s.g[s.b].resident = true;
    s.g[s.r].resident = true;
    const auto r = verify_structure(s.g);
    CHECK(lines(r) == std::vector<std::string>{
                          "node 'h': resident: a resident copy is made once, at load: it must copy a constant, not "
                          "the input 'x'",
                          "node 'b': resident: a resident copy is made once, at load: it must copy a constant, not "
                          "the delegate 'd'",
                          "node 'r': resident: only a copy can be resident, not a call"});
  }
}

TEST_CASE("verify_structure: reports every violation, in a deterministic order") {
  placed_graph s;
  s.g[s.x].id = "d";              // duplicate
  s.g[s.d].kernel.clear();        // no kernel
  s.g[s.b].arity = 2;             // copy with an unconnected second slot
  s.g[s.out].op = op_kind::call;  // no output node, and a call without kernel
  const auto first = verify_structure(s.g);
  CHECK(lines(first) ==
        std::vector<std::string>{
            "node 'd': id: duplicate id (also node #0)", "node 'd': kernel: a delegate needs a kernel name",
            "node 'b': inputs: a d2h_copy has exactly one input, found 2", "node 'b': inputs: input 1 is not connected",
            "node 'out': kernel: a call needs a kernel name", "nodes: no output node"});
  CHECK(lines(verify_structure(s.g)) == lines(first));
  CHECK(first.to_string() ==
        "node 'd': id: duplicate id (also node #0)\n"
        "node 'd': kernel: a delegate needs a kernel name\n"
        "node 'b': inputs: a d2h_copy has exactly one input, found 2\n"
        "node 'b': inputs: input 1 is not connected\n"
        "node 'out': kernel: a call needs a kernel name\n"
        "nodes: no output node\n");
}

TEST_CASE("verify_structure: erased nodes are ignored") {
  placed_graph s;
  const vertex junk = add_node(s.g, {.id = "d", .op = op_kind::call});
  connect(s.g, {s.x, 0}, junk, 0);
  erase_node(s.g, junk);
  CHECK(verify(s.g).ok());
}

TEST_CASE("verify_devices: a consumer reads its operands where it runs") {
  SUBCASE("a cpu call reading a device value") {
    placed_graph s;
    set_operand(s.g, s.r, 0, {s.d, 0});
    CHECK(lines(verify_devices(s.g)) ==
          std::vector<std::string>{"node 'r': inputs[0]: reads 'd' on cuda:0 but a call reads on cpu"});
  }
  SUBCASE("a delegate reading a host value, and one on another device") {
    placed_graph s;
    const vertex e = add_node(
        s.g, {.id = "e", .op = op_kind::delegate, .device = cuda_device(1), .kernel = "mul", .outputs = {f32(2)}});
    connect(s.g, {s.x, 0}, e, 1);
    connect(s.g, {s.d, 0}, e, 0);
    connect(s.g, {e, 0}, s.out, 2);
    CHECK(lines(verify_devices(s.g)) ==
          std::vector<std::string>{"node 'e': inputs[0]: reads 'd' on cuda:0 but a delegate reads on cuda:1",
                                   "node 'e': inputs[1]: reads 'x' on cpu but a delegate reads on cuda:1"});
  }
  SUBCASE("h2d reads the host, d2h reads its device") {
    placed_graph s;
    s.g[s.b].device = cuda_device(1);
    set_operand(s.g, s.h, 0, {s.d, 0});  // also makes a cycle, which verify_devices does not care about
    const auto r = verify_devices(s.g);
    CHECK(lines(r) ==
          std::vector<std::string>{"node 'h': inputs[0]: reads 'd' on cuda:0 but a h2d_copy reads on cpu",
                                   "node 'b': inputs[0]: reads 'd' on cuda:0 but a d2h_copy reads on cuda:1"});
  }
  SUBCASE("d2d reads another device") {
    placed_graph s;
    const vertex c = add_node(s.g, {.id = "c", .op = op_kind::d2d_copy, .device = cuda_device(1), .outputs = {f32(2)}});
    const vertex c2 =
        add_node(s.g, {.id = "c2", .op = op_kind::d2d_copy, .device = cuda_device(0), .outputs = {f32(2)}});
    const vertex c3 =
        add_node(s.g, {.id = "c3", .op = op_kind::d2d_copy, .device = cuda_device(0), .outputs = {f32(2)}});
    connect(s.g, {s.d, 0}, c, 0);   // fine: cuda:0 -> cuda:1
    connect(s.g, {s.d, 0}, c2, 0);  // same device
    connect(s.g, {s.x, 0}, c3, 0);  // from the host
    for (vertex v : {c, c2, c3}) connect(s.g, {v, 0}, s.out, static_cast<std::uint32_t>(s.g[s.out].arity));
    CHECK(verify_structure(s.g).ok());
    CHECK(lines(verify_devices(s.g)) ==
          std::vector<std::string>{
              "node 'c2': inputs[0]: reads 'd' on cuda:0 but a d2d_copy to cuda:0 reads from another device",
              "node 'c3': inputs[0]: reads 'x' on cpu but a d2d_copy to cuda:0 reads from another device"});
  }
  SUBCASE("the output node accepts any device") {
    placed_graph s;
    connect(s.g, {s.h, 0}, s.out, 2);
    connect(s.g, {s.x, 0}, s.out, 3);
    CHECK(verify_devices(s.g).ok());
  }
}

TEST_CASE("verify_devices: a method input placed on a device by its spec lives there") {
  placed_graph s;
  const vertex y = add_node(s.g, {.id = "y", .op = op_kind::input, .outputs = {f32(2)}});
  s.g[y].outputs[0].device = cuda_device(0);
  connect(s.g, {y, 0}, s.d, 2);  // a cuda:0 delegate may read it directly (skip_h2d)
  CHECK(verify(s.g).ok());
  connect(s.g, {y, 0}, s.r, 1);  // a host call may not
  CHECK(lines(verify_devices(s.g)) ==
        std::vector<std::string>{"node 'r': inputs[1]: reads 'y' on cuda:0 but a call reads on cpu"});
}

TEST_CASE("verify_devices: a value's spec device must be where its producer puts it") {
  placed_graph s;
  s.g[s.d].outputs[0].device = cuda_device(0);  // agrees
  s.g[s.b].outputs[0].device = cuda_device(0);  // a d2h produces on the host
  const auto r = verify_devices(s.g);
  REQUIRE(r.problems.size() >= 1);
  CHECK(r.problems[0].node() == "b");
  CHECK(r.problems[0].field() == "outputs[0]");
  CHECK(r.problems[0].problem() == "a d2h_copy produces on cpu but the value is marked on cuda:0");
  // r then reads b on cuda:0 (the spec says so) while running on the host.
  CHECK(lines(r) ==
        std::vector<std::string>{"node 'b': outputs[0]: a d2h_copy produces on cpu but the value is marked on cuda:0",
                                 "node 'r': inputs[0]: reads 'b' on cuda:0 but a call reads on cpu"});
}

TEST_CASE("verify: concatenates structure then device problems") {
  placed_graph s;
  s.g[s.d].kernel.clear();
  set_operand(s.g, s.r, 0, {s.d, 0});
  CHECK(lines(verify(s.g)) ==
        std::vector<std::string>{"node 'd': kernel: a delegate needs a kernel name",
                                 "node 'r': inputs[0]: reads 'd' on cuda:0 but a call reads on cpu"});
}
