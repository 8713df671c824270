// Patterns over a model's own op vocabulary (pattern/op_patterns.hpp): devpass::graph's interned
// kernel names, and the own IR's enum (examples/own_graph/), with operands, captures, rules and
// explanations; op_name interning.
#include "devpass/pattern/op_patterns.hpp"

#include "convert.hpp"  // examples/own_graph: a compiler's own IR, whose vocabulary is an enum
#include "devpass/passes/propagate_device_fwd.hpp"
#include "devpass/rules.hpp"
#include "devpass/testing.hpp"
#include "random_graph.hpp"

using namespace devpass;
using namespace devpass::dsl;
using devpass::testing::graph_builder;
using devpass::testing::value_of;

namespace {
constexpr auto x = "x"_c;
constexpr auto y = "y"_c;
constexpr auto r = "r"_c;

// relu(add(x, w)) on cuda:0, and a second relu of x on the host.
graph relu_of_add() {
  return graph_builder{}
      .input("x", {2, 2})
      .constant("w", {2, 2}, "cuda:0")
      .delegate("s", "cuda:0", "aten.add.Tensor", {"x", "w"})
      .delegate("r", "cuda:0", "aten.relu.default", {"s"})
      .call("q", "aten.relu.default", {"x"})
      .output({"r", "q"})
      .build();
}
}  // namespace

TEST_CASE("op_name: one id per distinct name, the same from every node that holds the text") {
  CHECK(op_name::of("aten.relu.default") == op_name::of(std::string("aten.relu.default")));
  CHECK(op_name::of("aten.relu.default") != op_name::of("aten.gelu.default"));
  CHECK(op_name::of("aten.relu.default").view() == "aten.relu.default");
  CHECK(op_name::of("").empty());
  const graph g = relu_of_add();
  // r's and q's kernels are read from one file or built apart: equal ids either way.
  CHECK(graph_model<graph>::op(g, *find_node(g, "r")) == op_name::of("aten.relu.default"));
  CHECK(graph_model<graph>::op(g, *find_node(g, "q")) == graph_model<graph>::op(g, *find_node(g, "r")));
  CHECK(graph_model<graph>::op(g, *find_node(g, "x")).empty());  // inputs have no op
}

TEST_CASE("op patterns on devpass::graph: by kernel name, with operands, bound, explained") {
  const graph g = relu_of_add();
  CHECK_MATCHES(op<"aten.relu.default">, g, "r");
  CHECK_MATCHES(op<"aten.relu.default">(op<"aten.add.Tensor">(input, constant)), g, "r");
  CHECK_MATCHES(op<"aten.relu.default">, g, "q");  // any role: a call names its op too
  CHECK_NOT_MATCHES(op<"aten.relu.default">, g, "s");
  CHECK_NOT_MATCHES(op<"aten.relu.default">, g, "x");
  CHECK_NOT_MATCHES(op<"aten.relu.default">(op<"aten.add.Tensor">(input)), g, "r");  // arity 2, not 1

  constexpr auto relu_of_sum = op<"aten.relu.default">(op<"aten.add.Tensor">(any.as(x), any.as(y)));
  pattern::capture_set<std::remove_cvref_t<decltype(relu_of_sum)>::binds> caps;
  REQUIRE(relu_of_sum.match(g, value_of(g, "r"), caps));
  CHECK(caps.get(x) == value_of(g, "x"));
  CHECK(caps.get(y) == value_of(g, "w"));

  CHECK(pattern::describe(op<"aten.relu.default">(op<"aten.add.Tensor">(any, constant.as(y)))) ==
        "op<\"aten.relu.default\">(op<\"aten.add.Tensor\">(any, constant as y))");
  CHECK(pattern::explain(op<"aten.relu.default">(op<"aten.mul.Tensor">), g, value_of(g, "r")) ==
        "operand 0 of 'r': node 's' is aten.add.Tensor, expected aten.mul.Tensor");
  CHECK(pattern::explain(op<"aten.relu.default">, g, value_of(g, "x")) ==
        "node 'x' is no op, expected aten.relu.default");
}

TEST_CASE("op patterns in rules: a rule by op name rewrites only the nodes with that op") {
  // Every relu of a relu is the inner relu (idempotent): a rule a compiler writes by op name.
  graph g = graph_builder{}
                .input("x", {4})
                .delegate("r1", "cuda:0", "aten.relu.default", {"x"})
                .delegate("r2", "cuda:0", "aten.relu.default", {"r1"})
                .delegate("g", "cuda:0", "aten.gelu.default", {"r2"})
                .delegate("g2", "cuda:0", "aten.gelu.default", {"g"})
                .output({"g2"})
                .build();
  constexpr auto fold =
      make_table(op<"aten.relu.default">(op<"aten.relu.default">.as(x)).as(r) / (rewire(r, x), erase(r)));
  CHECK_CONVERGES(fold, g);
  CHECK_FALSE(find_node(g, "r2"));
  CHECK(find_node(g, "g2"));  // gelu(gelu(...)) is not relu(relu(...))
  CHECK(operand(g, *find_node(g, "g"), 0) == value_of(g, "r1"));
}

TEST_CASE("op patterns on a compiler's own IR: its enum vocabulary, names checked at compile time") {
  const graph source = graph_builder{}
                           .input("x", {2, 2})
                           .delegate("a", "cuda:0", "relu", {"x"})
                           .call("b", "add", {"a", "x"})
                           .output({"b"})
                           .build();
  mycc::ir_graph g = mycc::from_devpass(source);
  propagate_device(g, {});
  CHECK_MATCHES(op<"kernel">(op<"upload">(op<"param">)), g, "a");
  CHECK_MATCHES(op<"host_op">(op<"download">(op<"kernel">), op<"param">), g, "b");
  CHECK_NOT_MATCHES(op<"kernel">, g, "b");
  CHECK(pattern::explain(op<"kernel">, g, *testing::find_value(g, "b")) == "node 'b' is host_op, expected kernel");
}

namespace mycc_rules {  // docs/writing-passes.md's rule table and test, as written there
using namespace devpass::dsl;
constexpr auto u = "u"_c;
constexpr auto d = "d"_c;
inline constexpr auto bounces = make_table(op<"upload">(op<"download">(any.as(x)).as(d)).as(u)[same_device(u, x)] /
                                           (rewire(u, x), erase(u), erase_if_dead(d)));
}  // namespace mycc_rules

TEST_CASE("writing-passes.md: a value bounced through the host is read directly, on the own IR") {
  mycc::ir_graph g = graph_builder{}
                         .input("x", {4})
                         .delegate("a", "cuda:0", "relu", {"x"})
                         .d2h_copy("down", "cuda:0", "a")
                         .h2d_copy("up", "cuda:0", "down")
                         .delegate("b", "cuda:0", "relu", {"up"})
                         .output({"b"})
                         .build_as<mycc::ir_graph>();
  CHECK_MATCHES(op<"upload">(op<"download">), g, "up");
  CHECK_CONVERGES(mycc_rules::bounces, g);
  CHECK_COPIES(g, 0, 0, 0);
  CHECK(operand(g, testing::find_value(g, "b")->producer, 0) == testing::find_value(g, "a"));
}

TEST_CASE("op patterns on an enum vocabulary: the root filter changes no count and no rewrite") {
  // With a trace the driver tries every rule at every node; without one it passes the nodes whose
  // op no root names (rules/root_filter.hpp).
  std::size_t removed = 0;
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    mycc::ir_graph filtered = mycc::from_devpass(testing::random_graph(seed, {.nodes = 120}));
    propagate_device(filtered, {.policy = copy_policy::executorch, .elide = false});
    mycc::ir_graph unfiltered = filtered;
    struct no_options {};
    rules::rewrite_context<no_options, mycc::ir_graph> plain(filtered, {});
    rules::rewrite_context<no_options, mycc::ir_graph, rules::tracing::on> traced(unfiltered, {});
    rules::rule_trace quiet;
    quiet.report = [](void*, std::string_view, std::string_view, std::string_view, std::string_view) {};
    traced.trace = &quiet;
    const rewrite_counters with = apply_rules(mycc_rules::bounces, plain);
    const rewrite_counters without = apply_rules(mycc_rules::bounces, traced);
    CHECK(with.matches_tried == without.matches_tried);
    CHECK(with.rewrites == without.rewrites);
    CHECK(with.nodes_removed == without.nodes_removed);
    REQUIRE(boost::num_vertices(filtered) == boost::num_vertices(unfiltered));
    for (vertex v = 0; v < boost::num_vertices(filtered); ++v) CHECK(operands(filtered, v) == operands(unfiltered, v));
    removed += with.nodes_removed;
  }
  CHECK(removed > 0);
}
