// devpass/testing.hpp: the text of every type and its doctest::StringMaker, the graph builder,
// the expect_* functions' exact messages, and the CHECK_* macros passing and failing.
#include "devpass/testing.hpp"

#include "convert.hpp"  // examples/own_graph: a compiler's own IR
#include "devpass/passes/propagate_device.hpp"
#include "devpass/planning/memory_planner.hpp"

using namespace devpass;
using namespace devpass::dsl;
using devpass::testing::graph_builder;

namespace {
constexpr auto x = "x"_c;
constexpr auto d = "d"_c;
constexpr auto h = "h"_c;
constexpr auto c = "c"_c;

tensor_spec f32() { return {dtype::float32, {2, 2}}; }

// x -> a (cuda:0 relu) -> b (host add, also reads x) -> out, by hand.
graph small_by_hand() {
  graph g;
  g[boost::graph_bundle].name = "forward";
  const vertex xv = add_node(g, {.id = "x", .op = op_kind::input, .outputs = {f32()}});
  const vertex a =
      add_node(g, {.id = "a", .op = op_kind::delegate, .device = cuda_device(0), .kernel = "relu", .outputs = {f32()}});
  const vertex b = add_node(g, {.id = "b", .op = op_kind::call, .kernel = "add", .outputs = {f32()}});
  const vertex out = add_node(g, {.id = "out", .op = op_kind::output});
  connect(g, {xv, 0}, a, 0);
  connect(g, {a, 0}, b, 0);
  connect(g, {xv, 0}, b, 1);
  connect(g, {b, 0}, out, 0);
  return g;
}

graph small() {
  return graph_builder{}
      .method("forward")
      .input("x", {2, 2})
      .delegate("a", "cuda:0", "relu", {"x"})
      .call("b", "add", {"a", "x"})
      .output({"b"})
      .build();
}

// x on cuda:0 -> d2h -> h2d to cuda:0 -> k (cuda:0) -> out: a round trip to elide.
graph round_trip() {
  return graph_builder{}
      .input("x", {4}, "cuda:0")
      .d2h_copy("d", "cuda:0", "x")
      .h2d_copy("h", "cuda:0", "d")
      .delegate("k", "cuda:0", "neg", {"h"})
      .output({"k"})
      .build();
}

std::string text(const doctest::String& s) { return s.c_str(); }
// An expect_* result as text, so that a failed comparison prints both messages.
std::string message(const std::optional<std::string>& failure) { return failure ? *failure : "(holds)"; }
}  // namespace

TEST_CASE("to_string: a graph is a header and one line per live node, in vertex order") {
  CHECK(testing::to_string(small()) ==
        "graph 'forward': 4 nodes\n"
        "  #0 x input cpu -> float32[2,2]\n"
        "  #1 a delegate cuda:0 relu (x) -> float32[2,2]\n"
        "  #2 b call cpu add (a, x) -> float32[2,2]\n"
        "  #3 out output cpu (b)");
  graph g = small();
  g[boost::graph_bundle].name.clear();
  g[1].attrs = R"({"alpha":1})";
  erase_node(g, 2);  // leaves 'out' reading nothing
  CHECK(testing::to_string(g) ==
        "graph: 3 nodes (and 1 erased, not shown)\n"
        "  #0 x input cpu -> float32[2,2]\n"
        "  #1 a delegate cuda:0 relu (x) -> float32[2,2] attrs {\"alpha\":1}\n"
        "  #3 out output cpu (?)");
}

TEST_CASE("to_string: a big graph shows its first max_nodes nodes, then how many more") {
  graph_builder b;
  b.input("x", {1});
  for (int i = 0; i < 50; ++i) b.call("c" + std::to_string(i), "neg", {i == 0 ? "x" : "c" + std::to_string(i - 1)});
  b.output({"c49"});
  const graph g = b.build();
  const std::string t = testing::to_string(g);
  CHECK(std::count(t.begin(), t.end(), '\n') == 41);
  CHECK(t.find("  #39 c38 call cpu neg (c37) -> float32[1]\n  ... 12 more nodes") != std::string::npos);
  CHECK(t.ends_with("... 12 more nodes"));
  const std::string three = testing::to_string(g, {.max_nodes = 3});
  CHECK(three.ends_with("  #2 c1 call cpu neg (c0) -> float32[1]\n  ... 49 more nodes"));
}

TEST_CASE("to_string: specs, nodes, values, census, counters and plans") {
  tensor_spec s{dtype::int64, {3}};
  CHECK(testing::to_string(s) == "int64[3]");
  CHECK(testing::to_string(tensor_spec{dtype::bool_, {}}) == "bool[]");
  s.device = cuda_device(1);
  CHECK(testing::to_string(s) == "int64[3]@cuda:1");
  s.mem_id = 2;
  s.offset = 64;
  CHECK(testing::to_string(s) == "int64[3]@cuda:1 mem 2+64");

  const graph g = small();
  CHECK(testing::to_string(g[2]) == "b call cpu add (arity 2) -> float32[2,2]");
  CHECK(testing::to_string(g[0]) == "x input cpu -> float32[2,2]");
  CHECK(testing::node_line(g, 2) == "#2 b call cpu add (a, x) -> float32[2,2]");
  CHECK(testing::to_string(value_ref{3, 1}) == "{producer #3, output 1}");
  CHECK(testing::to_string(use{2, 1}) == "{consumer #2, slot 1}");
  CHECK(testing::to_string(g, value_ref{1, 0}) == "'a' (#1)");
  CHECK(testing::to_string(g, value_ref{1, 2}) == "{producer #1, output 2} ('a' has 1 output)");
  CHECK(testing::to_string(g, value_ref{9, 0}) == "{producer #9, output 0} (not in the graph)");

  const copy_census census{.h2d = 2, .d2h = 1, .h2d_bytes = 32, .d2h_bytes = 16};
  CHECK(testing::to_string(census) == "h2d 2 (32 B), d2h 1 (16 B), d2d 0 (0 B)");
  copy_census loaded = census;
  loaded.add(op_kind::h2d_copy, 64, true);
  CHECK(testing::to_string(loaded) == "h2d 2 (32 B), d2h 1 (16 B), d2d 0 (0 B), resident 1 (64 B)");
  CHECK(loaded.copies() == 4);
  CHECK(loaded.bytes() == 48);  // per execution; the resident copy's bytes move once
  CHECK(testing::to_string(rules::rewrite_counters{14, 3, 1, 2}) ==
        "3 rewrites (14 matches tried, 1 node added, 2 removed)");
  CHECK(testing::to_string(rules::rewrite_counters{1, 1, 0, 1}) ==
        "1 rewrite (1 matches tried, 0 nodes added, 1 removed)");

  memory_plan plan;
  plan.order = {0, 1, 2, 3};
  plan.buffers = {{}, {1, cpu_device, 48, 32, 16}, {2, cuda_device(0), 256, 16, 256}};
  CHECK(testing::to_string(plan) ==
        "memory plan: 2 buffers, 4 steps\n"
        "  mem_id 1 cpu: 48 B (lower bound 32 B, alignment 16)\n"
        "  mem_id 2 cuda:0: 256 B (lower bound 16 B, alignment 256)\n"
        "  order: #0 #1 #2 #3");
  CHECK(testing::to_string(g, plan).ends_with("  order: x a b out"));
}

TEST_CASE("to_string: a real plan names every buffer and the order") {
  graph g = small();
  propagate_device(g);
  const memory_plan plan = plan_memory(g);
  const std::string t = testing::to_string(g, plan);
  CHECK(t.starts_with("memory plan: 2 buffers, 6 steps\n  mem_id 1 cpu: "));
  CHECK(t.find("\n  mem_id 2 cuda:0: ") != std::string::npos);
  CHECK(t.ends_with("  order: x x@h2d[cuda:0] a a@d2h b out"));
}

TEST_CASE("StringMaker: doctest prints devpass types with their to_string") {
  const graph g = small();
  CHECK(text(doctest::toString(g)) == testing::to_string(g));
  CHECK(text(doctest::toString(g[1])) == testing::to_string(g[1]));
  CHECK(text(doctest::toString(value_ref{1, 0})) == "{producer #1, output 0}");
  CHECK(text(doctest::toString(use{2, 1})) == "{consumer #2, slot 1}");
  CHECK(text(doctest::toString(g[1].outputs[0])) == "float32[2,2]");
  CHECK(text(doctest::toString(cuda_device(3))) == "cuda:3");
  CHECK(text(doctest::toString(copy_census{.d2d = 1, .d2d_bytes = 8})) == "h2d 0 (0 B), d2h 0 (0 B), d2d 1 (8 B)");
  CHECK(text(doctest::toString(memory_plan{})) == "memory plan: 0 buffers, 0 steps");
  CHECK(text(doctest::toString(rules::rewrite_counters{})) == "0 rewrites (0 matches tried, 0 nodes added, 0 removed)");
  // And in a comparison: CHECK_EQ's operands print through them.
  CHECK_EQ(g[1].outputs[0], f32());
  CHECK_EQ(count_copies(g), copy_census{});
}

TEST_CASE("graph_builder: the graph equals the one built by hand, node for node") {
  const graph built = small(), by_hand = small_by_hand();
  CHECK(testing::to_string(built) == testing::to_string(by_hand));  // same vertex order, same operands
  CHECK(testing::expect_same_graph(built, by_hand) == std::nullopt);
  CHECK(method_name(built) == "forward");
  CHECK(boost::num_edges(built) == 4);
}

TEST_CASE("graph_builder: dtypes, devices, constants, multiple outputs, copies, forward references") {
  const graph g = graph_builder{}
                      .input("ids", {{4}, dtype::int64})
                      .input("kv", {8, 8}, "cuda:0")
                      .constant("w", {8, 8}, "cuda")
                      .delegate("s", "cuda:0", "split", {"kv", "w"}, {{8, 4}, {{8, 4}, dtype::float16}})
                      .call("e", "embed", {"ids@h", "s:1"}, {{4, 8}})  // reads a copy written below
                      .d2d_copy("s@d2d", "cuda:1", "s")
                      .d2h_copy("s:1@d2h", "cuda:0", "s:1")
                      .h2d_copy("ids@h", "cuda:0", "ids")
                      .output("result", {"e", "s@d2d"})
                      .build_unchecked();  // e reads device values: fine for the builder, wrong for verify_devices
  CHECK(testing::to_string(g) ==
        "graph: 9 nodes\n"
        "  #0 ids input cpu -> int64[4]\n"
        "  #1 kv input cuda:0 -> float32[8,8]\n"
        "  #2 w constant cuda:0 -> float32[8,8]\n"
        "  #3 s delegate cuda:0 split (kv, w) -> float32[8,4], float16[8,4]\n"
        "  #4 e call cpu embed (ids@h, s:1) -> float32[4,8]\n"
        "  #5 s@d2d d2d_copy cuda:1 (s) -> float32[8,4]\n"
        "  #6 s:1@d2h d2h_copy cuda:0 (s:1) -> float16[8,4]\n"
        "  #7 ids@h h2d_copy cuda:0 (ids) -> int64[4]\n"
        "  #8 result output cpu (e, s@d2d)");
  CHECK(verify_structure(g).ok());
  CHECK_FALSE(verify_devices(g).ok());

  // add(): any node as given, here with attrs and a spec device.
  node m{.id = "m", .op = op_kind::call, .kernel = "scale", .attrs = R"({"by":2})"};
  m.outputs.push_back({dtype::float32, {2}, cpu_device});
  const graph with_attrs = graph_builder{}.input("x", {2}).add(std::move(m), {"x"}).output({"m"}).build();
  CHECK(testing::node_line(with_attrs, 1) == "#1 m call cpu scale (x) -> float32[2]@cpu attrs {\"by\":2}");
}

TEST_CASE("graph_builder: annotate_devices writes where every value lives, as propagation does") {
  graph propagated = small();
  propagate_device(propagated);
  const graph expected = graph_builder{}
                             .method("forward")
                             .input("x", {2, 2})
                             .delegate("a", "cuda:0", "relu", {"x@h2d[cuda:0]"})
                             .call("b", "add", {"a@d2h", "x"})
                             .output({"b"})
                             .h2d_copy("x@h2d[cuda:0]", "cuda:0", "x")
                             .d2h_copy("a@d2h", "cuda:0", "a")
                             .annotate_devices()
                             .build();
  CHECK(testing::to_string(expected) == testing::to_string(propagated));
  CHECK(testing::expect_same_graph(propagated, expected) == std::nullopt);
}

TEST_CASE("graph_builder: misuse is a graph_error naming the node and the field") {
  const auto error_of = [](auto&& make) -> std::string {
    try {
      (void)make();
    } catch (const graph_error& e) {
      return e.what();
    }
    return "no error";
  };
  CHECK(error_of([] {
          return graph_builder{}.input("x", {2}).call("b", "add", {"x", "y"}).output({"b"}).build();
        }) == "node 'b': inputs: input 1 reads 'y', which no node of the builder defines");
  CHECK(error_of([] { return graph_builder{}.input("x", {2}).input("x", {2}).output({"x"}).build(); }) ==
        "node 'x': id: the builder has two nodes with this id");
  CHECK(error_of([] { return graph_builder{}.input("x", {2}).delegate("a", "gpu:0", "relu", {"x"}); }) ==
        "node 'a': device: 'gpu:0' is not a device (cpu, cuda, cuda:N)");
  CHECK(error_of([] { return graph_builder{}.call("r", "rand", {}).output({"r"}).build(); }) ==
        "node 'r': outputs: no operand to take the layout from: give its outputs");
  CHECK(error_of([] { return graph_builder{}.input("x", {2}).call("b", "neg", {"x:1"}).output({"b"}).build(); }) ==
        "node 'b': inputs: input 0 reads output 1 of 'x', which has 1 output(s)");
  CHECK(error_of([] {
          return graph_builder{}.call("a", "neg", {"b"}).call("b", "neg", {"a"}).output({"b"}).build();
        }) == "node 'a': outputs: its layout is inferred from operand 0 in a cycle: give its outputs");
  // What verify_structure finds, the first problem, with how many more there are.
  CHECK(error_of([] { return graph_builder{}.input("x", {2}).h2d_copy("h", "cpu", "x").build(); }) ==
        "node 'h': device: a h2d_copy needs a device side, not cpu (and 1 more problems)");
  CHECK(error_of([] {
          return graph_builder{}.input("x", {2}).call("b", "neg", {"x"}, {{3}, {3}}).output({"b:2"}).build();
        }) == "node 'out': inputs: input 0 reads output 2 of 'b', which has 2 output(s)");
  // build_unchecked() makes such graphs on purpose.
  const graph bad = graph_builder{}.input("x", {2}).h2d_copy("h", "cpu", "x").build_unchecked();
  CHECK(verify_structure(bad).problems.size() == 2);
}

TEST_CASE("find_value, value_of: a value by its name in files") {
  const graph g = graph_builder{}.input("x", {2}).call("s", "split", {"x"}, {{1}, {1}}).output({"s:1"}).build();
  CHECK(testing::find_value(g, "s:1") == value_ref{1, 1});
  CHECK(testing::find_value(g, "x") == value_ref{0, 0});
  CHECK(testing::find_value(g, "y") == std::nullopt);
  CHECK(testing::find_value(g, "s:99999999999") == std::nullopt);
  CHECK(testing::value_of(g, "s") == value_ref{1, 0});
  CHECK_THROWS_WITH_AS((void)testing::value_of(g, "y"), "node 'y': no node with this id in the graph", graph_error);
  CHECK_THROWS_WITH_AS((void)testing::value_of(g, "s:2"), "node 's': outputs: no output 2 (the node has 2)",
                       graph_error);
}

TEST_CASE("expect_same_graph: vertex order does not matter, every field of a node does") {
  const graph a = small();
  // The same nodes written in another order are the same graph.
  const graph reordered = graph_builder{}
                              .method("forward")
                              .output({"b"})
                              .call("b", "add", {"a", "x"})
                              .delegate("a", "cuda:0", "relu", {"x"})
                              .input("x", {2, 2})
                              .build();
  CHECK(testing::expect_same_graph(a, reordered) == std::nullopt);

  graph g = small();
  propagate_device(g);
  CHECK(message(testing::expect_same_graph(g, a, "g", "expected")) ==
        "graphs differ: g has 6 nodes, expected has 4\n"
        "  only in g: 'x@h2d[cuda:0]', 'a@d2h'\n"
        "  first differing node 'x' (outputs):\n"
        "    g:        #0 x input cpu -> float32[2,2]@cpu\n"
        "    expected: #0 x input cpu -> float32[2,2]\n"
        "  3 nodes differ: 'x', 'a', 'b'");

  graph other = small();
  other[boost::graph_bundle].name = "main";
  other[1].device = cuda_device(1);
  other[1].kernel = "gelu";
  set_operand(other, 2, 1, {1, 0});  // b reads a twice
  const vertex extra = add_node(other, {.id = "z", .op = op_kind::constant, .outputs = {f32()}});
  (void)extra;
  CHECK(message(testing::expect_same_graph(a, other)) ==
        "graphs differ: a has 4 nodes, b has 5\n"
        "  method: a 'forward', b 'main'\n"
        "  only in b: 'z'\n"
        "  first differing node 'a' (device, kernel):\n"
        "    a: #1 a delegate cuda:0 relu (x) -> float32[2,2]\n"
        "    b: #1 a delegate cuda:1 gelu (x) -> float32[2,2]\n"
        "  2 nodes differ: 'a', 'b'");
}

TEST_CASE("expect_same_graph: ids used twice are reported, long lists are cut") {
  const graph twice = graph_builder{}.input("x", {1}).output({"x"}).build_unchecked();
  graph dup = twice;
  (void)add_node(dup, {.id = "x", .op = op_kind::input, .outputs = {{dtype::float32, {1}}}});
  CHECK(message(testing::expect_same_graph(twice, dup)) ==
        "graphs differ: a has 2 nodes, b has 3\n"
        "  ids used twice in b: 'x'");
  graph_builder many;
  many.input("x", {1});
  for (int i = 0; i < 12; ++i) many.call("n" + std::to_string(i), "neg", {"x"});
  many.output({"x"});
  CHECK(message(testing::expect_same_graph(many.build(), twice)) ==
        "graphs differ: a has 14 nodes, b has 2\n"
        "  only in a: 'n0', 'n1', 'n2', 'n3', 'n4', 'n5', 'n6', 'n7', 'n8', 'n9' ... and 2 more");
}

TEST_CASE("expect_matches, expect_not_matches: the explanation, the captures, the node") {
  const graph g = round_trip();
  constexpr auto trip = h2d_copy(d2h_copy(any.as(x)).as(d)).as(h);
  CHECK(testing::expect_matches(trip, g, "h") == std::nullopt);
  CHECK(testing::expect_matches(trip, g, value_ref{2, 0}) == std::nullopt);
  CHECK(testing::expect_not_matches(trip, g, "d") == std::nullopt);
  CHECK(message(testing::expect_matches(trip, g, "k")) ==
        "pattern `h2d_copy(d2h_copy(any as x) as d) as h` does not match 'k' (#3): node 'k' is delegate, expected "
        "h2d_copy\n"
        "  at #3 k delegate cuda:0 neg (h) -> float32[4]");
  CHECK(message(testing::expect_matches(h2d_copy(d2h_copy(call)), g, "h")) ==
        "pattern `h2d_copy(d2h_copy(call))` does not match 'h' (#2): operand 0 of 'h': operand 0 of 'd': node 'x' is "
        "input, "
        "expected call\n"
        "  at #2 h h2d_copy cuda:0 (d) -> float32[4]");
  CHECK(message(testing::expect_not_matches(trip, g, "h")) ==
        "pattern `h2d_copy(d2h_copy(any as x) as d) as h` matches 'h' (#2), expected no match\n"
        "  captures: x = 'x' (#0), d = 'd' (#1), h = 'h' (#2)\n"
        "  at #2 h h2d_copy cuda:0 (d) -> float32[4]");
  CHECK(message(testing::expect_not_matches(delegate, g, "k")) ==
        "pattern `delegate` matches 'k' (#3), expected no match\n"
        "  at #3 k delegate cuda:0 neg (h) -> float32[4]");
  CHECK(message(testing::expect_matches(any, g, "nope")) == "pattern `any` cannot match: no node 'nope' in the graph");
  CHECK(message(testing::expect_matches(any, g, value_ref{7, 0})) ==
        "pattern `any` cannot match: value {producer #7, output 0} (not in the graph) is not a value of the graph");
  CHECK(message(testing::expect_not_matches(any, g, "k:1")) ==
        "pattern `any` cannot match: value {producer #3, output 1} ('k' has 1 output) is not a value of the graph");
}

TEST_CASE("expect_copies: the census and every copy") {
  graph g = small();
  propagate_device(g);
  CHECK(testing::expect_copies(g, 1, 1, 0) == std::nullopt);
  CHECK(message(testing::expect_copies(g, 0, 1, 0)) ==
        "copies: expected h2d 0, d2h 1, d2d 0; found h2d 1 (16 B), d2h 1 (16 B), d2d 0 (0 B)\n"
        "  #4 x@h2d[cuda:0] h2d_copy cuda:0 (x) -> float32[2,2]@cuda:0\n"
        "  #5 a@d2h d2h_copy cuda:0 (a) -> float32[2,2]@cpu");
  CHECK(message(testing::expect_copies(small(), 0, 0, 1)) ==
        "copies: expected h2d 0, d2h 0, d2d 1; found h2d 0 (0 B), d2h 0 (0 B), d2d 0 (0 B)");
}

namespace {
// Marks its operand's producer and turns itself "done" without telling the driver: the producer,
// already swept, is left matching, so a second run rewrites again.
constexpr auto mark_upstream = make_table(
    call.as(c)[satisfies([](const auto& ctx, value_ref v) { return ctx.g[v.producer].kernel == "mark"; }, c)] /
    apply(
        [](auto& ctx, value_ref v) {
          ctx.g[v.producer].kernel = "done";
          if (const auto in = operand(ctx.g, v.producer, 0); in && ctx.g[in->producer].op == op_kind::call)
            ctx.g[in->producer].kernel = "mark";
        },
        c));
// Never stops: every application makes the next one possible.
constexpr auto grow_forever = make_table(
    call.as(c) / apply([](auto& ctx, value_ref v) { ctx.g[v.producer].kernel = ctx.g[v.producer].kernel + "+"; }, c));
// Guards that read options (when) need them passed.
struct elide_options {
  bool elide = true;
};
constexpr auto elide_if_asked =
    make_table(h2d_copy(d2h_copy(any.as(x)).as(d))
                   .as(h)[same_device(h, x) && when([](const auto& ctx) { return ctx.options.elide; })] /
               (rewire(h, x), erase(h), erase_if_dead(d)));
}  // namespace

TEST_CASE("expect_converges: a fixed point reached once and kept, else both runs and the graph") {
  graph g = round_trip();
  CHECK(testing::expect_converges(propagation::elide_table, g) == std::nullopt);
  CHECK(testing::to_string(g) ==
        "graph: 3 nodes\n"
        "  #0 x input cuda:0 -> float32[4]\n"
        "  #1 k delegate cuda:0 neg (x) -> float32[4]\n"
        "  #2 out output cpu (k)");

  graph kept = round_trip();
  CHECK(testing::expect_converges(elide_if_asked, kept, elide_options{false}) == std::nullopt);
  CHECK(count_copies(kept).copies() == 2);
  CHECK(testing::expect_converges(elide_if_asked, kept, elide_options{true}) == std::nullopt);
  CHECK(count_copies(kept).copies() == 0);

  graph chain = graph_builder{}.input("x", {1}).call("p", "neg", {"x"}).call("q", "mark", {"p"}).output({"q"}).build();
  CHECK(message(testing::expect_converges(mark_upstream, chain)) ==
        "the rule table is not at a fixed point after one run: run 2 made 1 rewrite\n"
        "  run 1: 1 rewrite (5 matches tried, 0 nodes added, 0 removed)\n"
        "  run 2: 1 rewrite (5 matches tried, 0 nodes added, 0 removed)\n"
        "  what run 2 changed:\n"
        "    graphs differ: after run 1 and after run 2 have 4 nodes each\n"
        "      first differing node 'p' (kernel):\n"
        "        after run 1: #1 p call cpu mark (x) -> float32[1]\n"
        "        after run 2: #1 p call cpu done (x) -> float32[1]\n"
        "      1 node differs: 'p'\n"
        "  graph after run 1:\n"
        "    graph: 4 nodes\n"
        "      #0 x input cpu -> float32[1]\n"
        "      #1 p call cpu mark (x) -> float32[1]\n"
        "      #2 q call cpu done (p) -> float32[1]\n"
        "      #3 out output cpu (q)");

  graph forever = graph_builder{}.input("x", {1}).call("p", "neg", {"x"}).output({"p"}).build();
  const auto failure = testing::expect_converges(grow_forever, forever);
  REQUIRE(failure);
  CHECK(
      failure->starts_with("the rule table does not reach a fixed point: rule `call as c / apply(...)` was applied "));
  CHECK(failure->find("\n  graph when it stopped:\n    graph: 3 nodes\n      #0 x input cpu -> float32[1]\n      #1 p "
                      "call cpu neg+++") != std::string::npos);
}

TEST_CASE("macros: each passes on a true case") {
  graph g = round_trip();
  constexpr auto trip = h2d_copy(d2h_copy(any.as(x)).as(d)).as(h);
  CHECK_MATCHES(trip, g, "h");
  CHECK_MATCHES(trip, g, value_ref{2, 0});
  REQUIRE_MATCHES(h2d_copy, g, testing::value_of(g, "h"));
  CHECK_NOT_MATCHES(trip, g, "k");
  REQUIRE_NOT_MATCHES(trip, g, "x");
  CHECK_COPIES(g, 1, 1, 0);
  REQUIRE_COPIES(g, 1, 1, 0);
  const graph copy = g;
  CHECK_SAME_GRAPH(g, copy);
  REQUIRE_SAME_GRAPH(copy, g);
  CHECK_CONVERGES(propagation::elide_table, g);
  CHECK_COPIES(g, 0, 0, 0);  // CHECK_CONVERGES left g rewritten
  graph kept = round_trip();
  REQUIRE_CONVERGES(elide_if_asked, kept, elide_options{false});
  CHECK_COPIES(kept, 1, 1, 0);
  DEVPASS_CHECK_COPIES(kept, 1, 1, 0);
  DEVPASS_CHECK_SAME_GRAPH(kept, round_trip());
}

// Each failing check is reported and counted: this case expects exactly its six failures (and
// prints them).
TEST_CASE("macros: a failing check fails the test with its message" * doctest::expected_failures(6)) {
  graph g = round_trip();
  CHECK_MATCHES(h2d_copy(call), g, "h");
  CHECK_NOT_MATCHES(h2d_copy, g, "h");
  CHECK_COPIES(g, 0, 0, 0);
  CHECK_SAME_GRAPH(g, small());
  graph chain = graph_builder{}.input("x", {1}).call("p", "neg", {"x"}).call("q", "mark", {"p"}).output({"q"}).build();
  CHECK_CONVERGES(mark_upstream, chain);
  // An exception thrown by the check's arguments is a failure too, as in CHECK.
  CHECK_COPIES(graph_builder{}.call("b", "neg", {"nope"}).build(), 0, 0, 0);
}

// One failure, not two: the REQUIRE_ form ends the case before the CHECK.
TEST_CASE("macros: a failing REQUIRE_ form ends the test case" * doctest::expected_failures(1)) {
  const graph g = round_trip();
  REQUIRE_COPIES(g, 0, 0, 0);
  CHECK(false);
}

TEST_CASE("testing.hpp on a compiler's own IR: every check, its messages from the model") {
  const graph source = graph_builder{}
                           .input("x", {2, 2})
                           .delegate("a", "cuda:0", "relu", {"x"})
                           .call("b", "add", {"a", "x"})
                           .output({"b"})
                           .build();
  mycc::ir_graph g = graph_builder{}
                         .input("x", {2, 2})
                         .delegate("a", "cuda:0", "relu", {"x"})
                         .call("b", "add", {"a", "x"})
                         .output({"b"})
                         .build_as<mycc::ir_graph>();
  CHECK_SAME_GRAPH(g, mycc::from_devpass(source));  // the builder fills the IR through its add_node
  CHECK_MATCHES(delegate(input.as(x)), g, "a");
  CHECK_MATCHES(call(any, input), g, "b");
  CHECK_NOT_MATCHES(delegate, g, "b");
  CHECK_COPIES(g, 0, 0, 0);
  const mycc::ir_graph before = g;
  CHECK_SAME_GRAPH(g, before);

  propagate_device(g, {});
  CHECK_COPIES(g, 1, 1, 0);
  mycc::ir_graph expected = mycc::from_devpass(source);
  propagate_device(expected, {});
  CHECK_SAME_GRAPH(g, expected);
  CHECK_CONVERGES(propagation::elide_table, g, propagate_options{});

  // What a failure prints, from the model: names, roles, devices, operands, dtype, bytes, marks.
  CHECK(testing::to_string(g) ==
        "graph: 6 nodes\n"
        "  #0 x input cpu -> float32 16 B@cpu\n"
        "  #1 a delegate cuda:0 (h2d_copy#4) -> float32 16 B@cuda:0\n"
        "  #2 b call cpu (d2h_copy#5, x) -> float32 16 B@cpu\n"
        "  #3 out output cpu (b)\n"
        "  #4 h2d_copy#4 h2d_copy cuda:0 (x) -> float32 16 B@cuda:0\n"
        "  #5 d2h_copy#5 d2h_copy cuda:0 (a) -> float32 16 B@cpu");
  CHECK(doctest::toString(g) == testing::to_string(g).c_str());
  const auto diff = testing::expect_same_graph(g, before, "g", "before");
  REQUIRE(diff);
  CHECK(*diff ==
        "graphs differ: g has 6 nodes, before has 4\n"
        "  only in g: 'h2d_copy#4', 'd2h_copy#5'\n"
        "  first differing node 'x' (outputs):\n"
        "    g:      #0 x input cpu -> float32 16 B@cpu\n"
        "    before: #0 x input cpu -> float32 16 B\n"
        "  3 nodes differ: 'x', 'a', 'b'");
  const auto copies = testing::expect_copies(g, 0, 0, 0);
  REQUIRE(copies);
  CHECK(*copies ==
        "copies: expected h2d 0, d2h 0, d2d 0; found h2d 1 (16 B), d2h 1 (16 B), d2d 0 (0 B)\n"
        "  #4 h2d_copy#4 h2d_copy cuda:0 (x) -> float32 16 B@cuda:0\n"
        "  #5 d2h_copy#5 d2h_copy cuda:0 (a) -> float32 16 B@cpu");
  const auto no_match = testing::expect_matches(call(h2d_copy, any), before, "b");
  REQUIRE(no_match);
  CHECK(*no_match ==
        "pattern `call(h2d_copy, any)` does not match 'b' (#2): operand 0 of 'b': node 'a' is delegate, expected "
        "h2d_copy\n"
        "  at #2 b call cpu (a, x) -> float32 16 B");
}
