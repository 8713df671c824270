#include <doctest/doctest.h>

#include "devpass/passes/propagate_device.hpp"
#include "devpass/rules.hpp"
#include "devpass/testing.hpp"
#include "devpass/testing/graph_builder.hpp"
#include "random_graph.hpp"

using namespace devpass;
using namespace devpass::dsl;

namespace {
constexpr auto x = "x"_c;
constexpr auto d = "d"_c;
constexpr auto h = "h"_c;

// x(cuda delegate) -> d2h d -> h2d h -> consumer delegate; d also feeds a relu. The handles are
// the vertices in the order written.
struct round_trip_graph {
  graph g;
  vertex a = 0, x = 1, d = 2, h = 3, consumer = 4, relu = 5, out = 6;
  explicit round_trip_graph(device h_device = cuda_device(0))
      : g(testing::graph_builder{}
              .input("a", {2, 2})
              .delegate("x", "cuda:0", "k", {"a"})
              .d2h_copy("d", "cuda:0", "x")
              .h2d_copy("h", to_string(h_device), "d")
              .delegate("c", to_string(h_device), "k", {"h"})
              .call("r", "relu", {"d"})
              .output({"c", "r"})
              .build()) {}
};

constexpr auto round_trip = h2d_copy(d2h_copy(any.as(x)).as(d)).as(h);
}  // namespace

TEST_CASE("pattern: nested op patterns match and bind captures") {
  round_trip_graph s;
  capture_set<decltype(round_trip)::binds> caps;
  REQUIRE(round_trip.match(s.g, {s.h, 0}, caps));
  CHECK(caps.get(x) == value_ref{s.x, 0});
  CHECK(caps.get(d) == value_ref{s.d, 0});
  CHECK(caps.get(h) == value_ref{s.h, 0});
}

TEST_CASE("pattern: does not match other shapes, and explains why") {
  round_trip_graph s;
  capture_set<decltype(round_trip)::binds> caps;
  CHECK_FALSE(round_trip.match(s.g, {s.d, 0}, caps));
  CHECK(explain(round_trip, s.g, {s.d, 0}) == "node 'd' is d2h_copy, expected h2d_copy");
  CHECK_FALSE(round_trip.match(s.g, {s.consumer, 0}, caps));
  constexpr auto via_relu = h2d_copy(call);
  set_operand(s.g, s.h, 0, {s.relu, 0});
  CHECK(explain(round_trip, s.g, {s.h, 0}) == "operand 0 of 'h': node 'r' is call, expected d2h_copy");
  CHECK_FALSE(explain(via_relu, s.g, {s.h, 0}));
}

TEST_CASE("pattern: operand count must equal the arity when operands are given") {
  round_trip_graph s;
  capture_set<type_list<>> caps;
  CHECK(delegate(any).match(s.g, {s.x, 0}, caps));
  CHECK_FALSE(delegate(any, any).match(s.g, {s.x, 0}, caps));
  CHECK(explain(delegate(any, any), s.g, {s.x, 0}) == "node 'x' has 1 operands, expected 2");
  CHECK(delegate.match(s.g, {s.x, 0}, caps));
}

TEST_CASE("pattern: describes itself") {
  CHECK(describe(round_trip) == "h2d_copy(d2h_copy(any as x) as d) as h");
  CHECK(describe(on_use(delegate.as(d), any.as(x))) == "on_use(delegate as d, any as x)");
  CHECK(describe(each_output(delegate.as(d))) == "each_output(delegate as d)");
}

TEST_CASE("pattern: captures are only published when the whole pattern matched") {
  round_trip_graph s;
  set_operand(s.g, s.h, 0, {s.relu, 0});  // h2d(call): the inner d2h does not match
  struct options {};
  rewrite_context<options> ctx(s.g, options{});
  bool fired = false;
  const auto table =
      make_table(round_trip / apply([&](auto&, value_ref, value_ref, value_ref) { fired = true; }, x, d, h));
  apply_rules(table, ctx);
  CHECK_FALSE(fired);
  CHECK(ctx.counters.rewrites == 0);
  CHECK(ctx.counters.matches_tried > 0);
}

TEST_CASE("guards: same_device, uses, dtype, user predicates and combinators") {
  round_trip_graph s;
  struct options {
    bool flag = true;
  } opts;
  rewrite_context<options> ctx(s.g, opts);
  capture_set<decltype(round_trip)::binds> caps;
  REQUIRE(round_trip.match(s.g, {s.h, 0}, caps));
  CHECK(same_device(h, x).test(ctx, caps));
  CHECK(many_uses(d).test(ctx, caps));
  CHECK_FALSE(one_use(d).test(ctx, caps));
  CHECK(one_use(h).test(ctx, caps));
  CHECK(dtype_is<dtype::float32>(x).test(ctx, caps));
  CHECK_FALSE(dtype_is<dtype::int64>(x).test(ctx, caps));
  CHECK(on_device(x).test(ctx, caps));
  CHECK(on_host(d).test(ctx, caps));
  CHECK(device_delegate(x).test(ctx, caps));
  CHECK_FALSE(device_delegate(d).test(ctx, caps));
  const auto named_x = satisfies([](const auto& c, value_ref v) { return c.g[v.producer].id == "x"; }, x);
  CHECK(named_x.test(ctx, caps));
  CHECK((named_x && !one_use(d)).test(ctx, caps));
  CHECK_FALSE((!named_x || one_use(d)).test(ctx, caps));
  CHECK(when([](const auto& c) { return c.options.flag; }).test(ctx, caps));
  CHECK((same_device(h, x) && many_uses(d)).describe() == "same_device(h, x) && many_uses(d)");

  round_trip_graph cross(cuda_device(1));
  rewrite_context<options> ctx2(cross.g, opts);
  REQUIRE(round_trip.match(cross.g, {cross.h, 0}, caps));
  CHECK_FALSE(same_device(h, x).test(ctx2, caps));
}

TEST_CASE("patterns: explain is match with a reason: it gives one exactly when match fails") {
  // One code path: on random graphs before and after propagation, every pattern below either
  // matches a value or explain() says why, never both and never neither.
  constexpr auto two_operands = delegate(any, any);
  constexpr auto copy_of_delegate = h2d_copy(delegate);
  const auto agree = [](auto p, const graph& g) {
    std::size_t matched = 0, explained = 0;
    for (vertex v = 0; v < boost::num_vertices(g); ++v) {
      pattern::capture_set<typename decltype(p)::binds> caps;
      const bool m = p.match(g, value_ref{v, 0}, caps);
      const auto why = explain(p, g, value_ref{v, 0});
      CHECK(m == !why.has_value());
      (m ? matched : explained) += 1;
    }
    return std::pair{matched, explained};
  };
  std::size_t matched = 0;
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    graph g = testing::random_graph(seed);
    for (int pass = 0; pass < 2; ++pass) {
      matched += agree(round_trip, g).first + agree(two_operands, g).first + agree(copy_of_delegate, g).first;
      propagate_device(g, {.policy = copy_policy::executorch, .elide = false});
    }
  }
  CHECK(matched > 20);  // the patterns do match somewhere: both answers are exercised
}

TEST_CASE("guards: explain why they are false, from the test they run") {
  struct no_options {};
  round_trip_graph s(cuda_device(1));  // h copies to cuda:1; x lives on cuda:0
  capture_set<decltype(round_trip)::binds> caps;
  REQUIRE(round_trip.match(s.g, {s.h, 0}, caps));
  const no_options o;
  const rules::rewrite_context<no_options> ctx(s.g, o);
  CHECK(pattern::explain_guard(same_device(h, x), ctx, caps) ==
        "same_device(h, x) is false: h = 'h' on cuda:1, x = 'x' on cuda:0");
  CHECK_FALSE(pattern::explain_guard(on_device(h), ctx, caps));
  // &&: the first false conjunct; ||: both; !: what holds.
  CHECK(pattern::explain_guard(on_device(x) && on_host(h) && unused(d), ctx, caps) ==
        "on_host(h) is false: h = 'h' on cuda:1");
  CHECK(pattern::explain_guard(on_host(x) || on_host(h), ctx, caps) ==
        "neither on_host(x) is false: x = 'x' on cuda:0 nor on_host(h) is false: h = 'h' on cuda:1");
  CHECK(pattern::explain_guard(!on_device(x), ctx, caps) == "!on_device(x) is false: on_device(x) holds");
  CHECK(pattern::explain_guard(when([](const auto&) { return false; }), ctx, caps) == "when(...) is false");
  // explain_guard agrees with test on every guard above.
  CHECK((same_device(h, x)).test(ctx, caps) == !pattern::explain_guard(same_device(h, x), ctx, caps).has_value());
}

TEST_CASE("pattern: p | q matches where either does, binds the same captures, explains both") {
  const graph g = testing::graph_builder{}
                      .input("a", {2})
                      .delegate("r", "cuda:0", "aten.relu.default", {"a"})
                      .delegate("e", "cuda:0", "aten.gelu.default", {"r"})
                      .call("c", "aten.neg.default", {"e"})
                      .output({"c"})
                      .build();
  constexpr auto activation = op<"aten.relu.default">(any.as(x)) | op<"aten.gelu.default">(any.as(x));
  pattern::capture_set<std::remove_cvref_t<decltype(activation)>::binds> caps;
  REQUIRE(activation.match(g, testing::value_of(g, "r"), caps));
  CHECK(caps.get(x) == testing::value_of(g, "a"));
  REQUIRE(activation.match(g, testing::value_of(g, "e"), caps));
  CHECK(caps.get(x) == testing::value_of(g, "r"));  // the second side's binding, the first's undone
  CHECK_FALSE(activation.match(g, testing::value_of(g, "c"), caps));
  // Roles and names mix; a side that fails after binding leaves nothing behind.
  constexpr auto either = delegate(input.as(x)) | call(delegate.as(x));
  CHECK(pattern::describe(either) == "(delegate(input as x) | call(delegate as x))");
  // One op by several names, the same operands: the names once, the operands once.
  CHECK(pattern::describe(activation) == "op<\"aten.relu.default\" | \"aten.gelu.default\">(any as x)");
  constexpr auto three_names = op<"relu">(any.as(x)) | op<"aten.relu.default">(any.as(x)) | op<"gelu">(any.as(x));
  CHECK(pattern::describe(three_names) == "op<\"relu\" | \"aten.relu.default\" | \"gelu\">(any as x)");
  constexpr auto sum_either =
      any_order(op<"add">, any.as(x), constant.as(d)) | any_order(op<"aten.add.Tensor">, any.as(x), constant.as(d));
  CHECK(pattern::describe(sum_either) == "any_order(op<\"add\" | \"aten.add.Tensor\">, any as x, constant as d)");
  // Other operands, or a role beside a name: each side whole.
  CHECK(pattern::describe(op<"relu">(any.as(x)) | op<"gelu">(input.as(x))) ==
        "(op<\"relu\">(any as x) | op<\"gelu\">(input as x))");
  CHECK(pattern::describe(op<"relu">(any.as(x)) | delegate(any.as(x))) ==
        "(op<\"relu\">(any as x) | delegate(any as x))");
  CHECK(pattern::explain(either, g, testing::value_of(g, "e")) ==
        "neither alternative: operand 0 of 'e': node 'r' is delegate, expected input; node 'e' is delegate, expected "
        "call");
  CHECK_FALSE(pattern::explain(either, g, testing::value_of(g, "c")));
  // In a rule table: each gelu or relu of a relu reads the inner relu's operand... as a root.
  graph rewritten = g;
  constexpr auto drop = make_table((op<"aten.relu.default">(any.as(x)) | op<"aten.gelu.default">(any.as(x))).as(d) /
                                   (rewire(d, x), erase(d)));
  CHECK_CONVERGES(drop, rewritten);
  CHECK(operand(rewritten, *find_node(rewritten, "c"), 0) == testing::value_of(rewritten, "a"));
}

TEST_CASE("pattern: is(x) matches only the value captured as x earlier in the same match") {
  const graph g = testing::graph_builder{}
                      .input("a", {2})
                      .input("b", {2})
                      .delegate("square", "cuda:0", "aten.mul.Tensor", {"a", "a"})
                      .delegate("product", "cuda:0", "aten.mul.Tensor", {"a", "b"})
                      .output({"square", "product"})
                      .build();
  constexpr auto squared = op<"aten.mul.Tensor">(any.as(x), is(x));
  CHECK_MATCHES(squared, g, "square");
  CHECK_NOT_MATCHES(squared, g, "product");
  CHECK(pattern::describe(squared) == "op<\"aten.mul.Tensor\">(any as x, is(x))");
  CHECK(pattern::explain(squared, g, testing::value_of(g, "product")) == "operand 1 of 'product': 'b' is not x ('a')");
  // In a rule: an unused square goes; the used one, and an unused product, stay.
  graph squares = testing::graph_builder{}
                      .input("a", {2})
                      .input("b", {2})
                      .delegate("square", "cuda:0", "aten.mul.Tensor", {"a", "a"})
                      .delegate("unused_square", "cuda:0", "aten.mul.Tensor", {"b", "b"})
                      .delegate("unused_product", "cuda:0", "aten.mul.Tensor", {"a", "b"})
                      .output({"square"})
                      .build();
  CHECK_CONVERGES(make_table(delegate(any.as(x), is(x)).as(d)[unused(d)] / erase(d)), squares);
  CHECK_FALSE(find_node(squares, "unused_square"));
  CHECK(find_node(squares, "unused_product"));
  CHECK(find_node(squares, "square"));  // used by the output: kept
}

TEST_CASE("pattern: any_order(head, p, q) matches a commutative op's two operands in either order") {
  const graph g = testing::graph_builder{}
                      .input("a", {2})
                      .constant("w", {2}, "cuda:0")
                      .delegate("s1", "cuda:0", "aten.add.Tensor", {"a", "w"})
                      .delegate("s2", "cuda:0", "aten.add.Tensor", {"w", "a"})
                      .delegate("s3", "cuda:0", "aten.add.Tensor", {"a", "a"})
                      .output({"s1", "s2", "s3"})
                      .build();
  constexpr auto plus_weight = any_order(op<"aten.add.Tensor">, input.as(x), constant.as(d));
  pattern::capture_set<std::remove_cvref_t<decltype(plus_weight)>::binds> caps;
  for (const char* sum : {"s1", "s2"}) {
    CAPTURE(sum);
    REQUIRE(plus_weight.match(g, testing::value_of(g, sum), caps));
    CHECK(caps.get(x) == testing::value_of(g, "a"));
    CHECK(caps.get(d) == testing::value_of(g, "w"));
  }
  CHECK_NOT_MATCHES(plus_weight, g, "s3");
  CHECK(pattern::describe(plus_weight) == "any_order(op<\"aten.add.Tensor\">, input as x, constant as d)");
  CHECK(pattern::explain(plus_weight, g, testing::value_of(g, "s3")) ==
        "in either order: operand 1 of 's3': node 'a' is input, expected constant; swapped: operand 0 of 's3': node "
        "'a' is input, expected constant");
  // Roles or names as the head, operands without captures.
  CHECK_MATCHES(any_order(op<"aten.add.Tensor">, input, constant), g, "s2");
}
