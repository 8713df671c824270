// Result patterns (rules/build_actions.hpp): build<"op">(captures...) made by replace and by
// build_into_use / share_into_use, on devpass::graph (ids from the allocator, kernels, specs) and
// on a compiler's own IR (examples/own_graph/); what they count, trace and tell the independence
// analysis.
#include "devpass/rules/build_actions.hpp"

#include "convert.hpp"  // examples/own_graph
#include "devpass/graph/verify_structure.hpp"
#include "devpass/rules.hpp"
#include "devpass/rules/single_pass.hpp"
#include "devpass/testing.hpp"

using namespace devpass;
using namespace devpass::dsl;
using devpass::testing::graph_builder;
using devpass::testing::value_of;

namespace {
constexpr auto x = "x"_c;
constexpr auto w = "w"_c;
constexpr auto b = "b"_c;
constexpr auto c = "c"_c;
constexpr auto a = "a"_c;
constexpr auto r = "r"_c;
constexpr auto k = "k"_c;

// relu(add(conv2d(x, w), b)) on cuda:0; `extra` reads the add too when asked.
graph conv_block(bool add_read_elsewhere = false) {
  graph_builder gb;
  gb.input("x", {1, 3, 8, 8})
      .constant("w", {3, 3, 3, 3})
      .constant("b", {1, 3, 8, 8})
      .delegate("conv", "cuda:0", "conv2d", {"x", "w"})
      .delegate("sum", "cuda:0", "add", {"conv", "b"})
      .delegate("act", "cuda:0", "relu", {"sum"});
  if (add_read_elsewhere) gb.call("extra", "neg", {"sum"});
  return add_read_elsewhere ? gb.output({"act", "extra"}).build() : gb.output({"act"}).build();
}

constexpr auto conv_add_relu = op<"relu">(op<"add">(op<"conv2d">(any.as(x), any.as(w)).as(c), any.as(b)).as(a)).as(r);
constexpr auto fuse =
    make_table(conv_add_relu[one_use(c) && one_use(a)] /
               (replace(r, build<"fused_conv_add_relu">(x, w, b)), erase_if_dead(a), erase_if_dead(c)));
}  // namespace

TEST_CASE("replace: the chain becomes one node on the same device, reading the captures in order") {
  graph g = conv_block();
  CHECK_CONVERGES(fuse, g);
  CHECK_FALSE(find_node(g, "act"));
  CHECK_FALSE(find_node(g, "sum"));
  CHECK_FALSE(find_node(g, "conv"));
  const vertex fused = *find_node(g, "act@fused_conv_add_relu");
  CHECK(g[fused].op == op_kind::delegate);
  CHECK(g[fused].device == cuda_device(0));
  CHECK(g[fused].kernel.view() == "fused_conv_add_relu");
  CHECK(g[fused].outputs[0] == tensor_spec{dtype::float32, {1, 3, 8, 8}});
  CHECK(operand(g, fused, 0) == value_of(g, "x"));
  CHECK(operand(g, fused, 1) == value_of(g, "w"));
  CHECK(operand(g, fused, 2) == value_of(g, "b"));
  CHECK(operand(g, *find_node(g, "out"), 0) == value_ref{fused, 0});
  CHECK(verify_structure(g).ok());
}

TEST_CASE("replace: not where an intermediate value has another reader (the guard keeps it)") {
  graph g = conv_block(true);
  CHECK_CONVERGES(fuse, g);
  CHECK(find_node(g, "act"));
  CHECK(find_node(g, "sum"));
  CHECK_FALSE(find_node(g, "act@fused_conv_add_relu"));
}

TEST_CASE("replace: a value its node does not have is an error naming the node, not a read past its outputs") {
  // A relu that declares no output: value 0 of it matches a value root, and there is no value to
  // lay the fused node out as.
  node mute{.id = "act", .op = op_kind::delegate, .kernel = "relu"};
  mute.device = cuda_device(0);
  graph g = graph_builder{}
                .input("x", {1, 3, 8, 8})
                .constant("w", {3, 3, 3, 3})
                .constant("b", {1, 3, 8, 8})
                .delegate("conv", "cuda:0", "conv2d", {"x", "w"})
                .delegate("sum", "cuda:0", "add", {"conv", "b"})
                .add(mute, {"sum"})
                .output({"x"})
                .build();
  rules::rewrite_context<testing::no_options> ctx(g, {});
  CHECK_THROWS_WITH_AS(apply_rules(fuse, ctx),
                       doctest::Contains("node 'act': outputs: replace(r, ...): the node has no output 0 to replace"),
                       graph_error);
}

TEST_CASE("replace: attrs_of(c) gives the new node c's attributes (a fused conv keeps its stride)") {
  node conv{.id = "conv", .op = op_kind::delegate, .kernel = "conv2d"};
  conv.device = cuda_device(0);
  conv.attrs = R"({"stride":[2,2]})";
  conv.outputs.push_back(tensor_spec{dtype::float32, {1, 3, 4, 4}});
  graph g = graph_builder{}
                .input("x", {1, 3, 8, 8})
                .constant("w", {3, 3, 3, 3})
                .constant("b", {1, 3, 4, 4})
                .add(conv, {"x", "w"})
                .delegate("sum", "cuda:0", "add", {"conv", "b"})
                .delegate("act", "cuda:0", "relu", {"sum"})
                .output({"act"})
                .build();
  constexpr auto keep_stride =
      make_table(conv_add_relu[one_use(c) && one_use(a)] /
                 (replace(r, build<"fused_conv_add_relu">(x, w, b).attrs_of(c)), erase_if_dead(a), erase_if_dead(c)));
  CHECK_CONVERGES(keep_stride, g);
  const vertex fused = *find_node(g, "act@fused_conv_add_relu");
  CHECK(g[fused].attrs.view() == R"({"stride":[2,2]})");
  CHECK(node_attr(g, fused, "stride") == "[2,2]");
  CHECK(rules::detail::element<0>(keep_stride.rules)
            .describe()
            .find("build<\"fused_conv_add_relu\">(x, w, b).attrs_of(c)") != std::string::npos);
}

TEST_CASE("replace: counters, ids made unique, the trace names the result") {
  graph g = conv_block();
  node taken{.id = "act@fused_conv_add_relu", .op = op_kind::input};
  taken.outputs.push_back(tensor_spec{dtype::float32, {1}});
  (void)add_node(g, taken);  // the id the result would take is taken
  rules::rewrite_context<testing::no_options, graph, rules::tracing::on> ctx(g, {});
  std::vector<std::string> applied;
  rules::rule_trace trace;
  trace.user = &applied;
  trace.report = [](void* user, std::string_view rule, std::string_view, std::string_view, std::string_view why) {
    if (why == "applied") static_cast<std::vector<std::string>*>(user)->emplace_back(rule);
  };
  ctx.trace = &trace;
  const rules::rewrite_counters counters = apply_rules(fuse, ctx);
  CHECK(counters.rewrites == 1);
  CHECK(counters.nodes_added == 1);
  CHECK(counters.nodes_removed == 3);
  CHECK(find_node(g, "act@fused_conv_add_relu#2"));
  REQUIRE(applied.size() == 1);
  CHECK(applied[0].find("replace(r, build<\"fused_conv_add_relu\">(x, w, b)), erase_if_dead(a), erase_if_dead(c)") !=
        std::string::npos);
}

namespace {
// The dtype slot 0 of a "matmul16" wants: float16.
constexpr auto wanted_dtype = [](const auto& ctx, const build_site& s) {
  return s.site && ctx.g[s.site->consumer].kernel.view() == "matmul16" ? dtype::float16 : value_dtype(ctx.g, s.like);
};
constexpr auto needs_cast = [](const auto& ctx, value_ref consumer, value_ref value) {
  return ctx.g[consumer.producer].kernel.view() == "matmul16" && value_dtype(ctx.g, value) != dtype::float16;
};
constexpr auto insert_casts = make_table(on_use(any.as(k), any.as(x))[satisfies(needs_cast, k, x)] /
                                         share_into_use(build<"cast">(x).with_dtype(wanted_dtype).named<"to_f16">()));
constexpr auto insert_casts_each = make_table(on_use(any.as(k), any.as(x))[satisfies(needs_cast, k, x)] /
                                              build_into_use(build<"cast">(x).with_dtype<dtype::float16>()));
graph two_readers() {
  return graph_builder{}
      .input("x", {4, 4})
      .input("h", {{4, 4}, dtype::float16})
      .delegate("m1", "cuda:0", "matmul16", {"x", "h"})
      .delegate("m2", "cuda:0", "matmul16", {"h", "x"})
      .call("host", "matmul16", {"x", "x"})
      .output({"m1", "m2", "host"})
      .build();
}
}  // namespace

TEST_CASE("share_into_use: one cast per value and dtype, where the value lives, fed to every slot") {
  graph g = two_readers();
  CHECK_CONVERGES(insert_casts, g);
  const vertex cast = *find_node(g, "x@to_f16");
  CHECK(g[cast].op == op_kind::call);  // x lives on the host: the cast runs there
  CHECK(g[cast].device == cpu_device);
  CHECK(g[cast].outputs[0].type == dtype::float16);
  CHECK(g[cast].outputs[0].shape == tensor_shape{4, 4});
  CHECK(operand(g, *find_node(g, "m1"), 0) == value_ref{cast, 0});
  CHECK(operand(g, *find_node(g, "m1"), 1) == value_of(g, "h"));  // already float16
  CHECK(operand(g, *find_node(g, "m2"), 1) == value_ref{cast, 0});
  CHECK(operand(g, *find_node(g, "host"), 0) == value_ref{cast, 0});
  CHECK(operand(g, *find_node(g, "host"), 1) == value_ref{cast, 0});
  std::size_t casts = 0;
  for (const vertex v : boost::make_iterator_range(boost::vertices(g))) casts += g[v].kernel.view() == "cast";
  CHECK(casts == 1);
  CHECK(verify_structure(g).ok());
}

TEST_CASE("build_into_use: a node per use") {
  graph g = two_readers();
  CHECK_CONVERGES(insert_casts_each, g);
  std::size_t casts = 0;
  for (const vertex v : boost::make_iterator_range(boost::vertices(g))) casts += g[v].kernel.view() == "cast";
  CHECK(casts == 4);  // m1.0, m2.1, host.0, host.1
  CHECK(operand(g, *find_node(g, "host"), 0) != operand(g, *find_node(g, "host"), 1));
}

TEST_CASE("the independence analysis knows what a built node may enable") {
  // The fusion makes a node of r's role that others may read: a table with a rule reading
  // delegates' operands is not independent of it; the cast insertion feeds a slot from a new call
  // or delegate, which re-enables itself (the worklist driver, not single_pass).
  using fuse_rule = std::remove_cvref_t<decltype(rules::detail::element<0>(fuse.rules))>;
  constexpr auto effects = rules::independence::effects_of<fuse_rule>();
  CHECK(effects.nodes == rules::independence::all_kinds);  // r is an op pattern: any role
  CHECK(rules::independence::first_enabling_pair(insert_casts).has_value());
}

TEST_CASE("results on a compiler's own IR: its add_node, its enum vocabulary") {
  mycc::ir_graph g = graph_builder{}
                         .input("x", {4})
                         .delegate("a", "cuda:0", "relu", {"x"})
                         .delegate("b", "cuda:0", "relu", {"a"})
                         .output({"b"})
                         .build_as<mycc::ir_graph>();
  // Two kernels in a row become one (the IR's opcode names roles: "kernel").
  constexpr auto merge = make_table(op<"kernel">(op<"kernel">(op<"param">.as(x)).as(a)).as(r)[one_use(a)] /
                                    (replace(r, build<"kernel">(x)), erase_if_dead(a)));
  CHECK_CONVERGES(merge, g);
  CHECK(boost::num_vertices(g) == 3);  // x, the new kernel, out: a and b erased (and compacted away)
  const auto made = testing::find_value(g, "b@kernel");
  REQUIRE(made);
  CHECK(role_of(g, made->producer) == op_kind::delegate);
  CHECK(node_device(g, made->producer) == cuda_device(0));
  CHECK(operand(g, made->producer, 0) == testing::find_value(g, "x"));
  CHECK_FALSE(testing::find_value(g, "a"));
}
