// Guards on what a model says beyond roles (pattern/value_guards.hpp: traits, shapes,
// attributes; guards.hpp: same_dtype, round_trips_exactly), optional chain links (maybe), and
// the guards in rules, on devpass::graph and on the own IR where it has the operation.
#include "devpass/pattern/value_guards.hpp"

#include "devpass/rules.hpp"
#include "devpass/rules/independence.hpp"
#include "devpass/testing.hpp"

using namespace devpass;
using namespace devpass::dsl;
using devpass::testing::graph_builder;
using devpass::testing::value_of;

namespace {
constexpr auto x = "x"_c;
constexpr auto y = "y"_c;
constexpr auto r = "r"_c;

// What a guard reads: the graph (rules' contexts have more).
struct reading {
  const graph& g;
};
// Whether guard `gd` holds with x (and y) bound to these values; its explanation when not.
template <class Guard>
bool holds(Guard gd, const graph& g, value_ref at_x, value_ref at_y = {}) {
  pattern::capture_set<type_list<std::remove_cvref_t<decltype(x)>, std::remove_cvref_t<decltype(y)>>> caps;
  caps.set(x, at_x);
  caps.set(y, at_y);
  const reading ctx{g};
  const bool held = gd.test(ctx, caps);
  CHECK(pattern::explain_guard(gd, ctx, caps).has_value() == !held);  // the explanation agrees
  return held;
}

// x (f16 [2,3]) -> widen (f32) -> narrow (f16); v: a view with attrs; s: an all-reduce-like call.
graph described() {
  node widen{.id = "widen", .op = op_kind::delegate, .kernel = "aten._to_copy.default"};
  widen.device = cuda_device(0);
  widen.outputs.push_back(tensor_spec{dtype::float32, {2, 3}});
  node narrow{.id = "narrow", .op = op_kind::delegate, .kernel = "aten._to_copy.default"};
  narrow.device = cuda_device(0);
  narrow.outputs.push_back(tensor_spec{dtype::float16, {2, 3}});
  node lossy{.id = "lossy", .op = op_kind::delegate, .kernel = "aten._to_copy.default"};
  lossy.device = cuda_device(0);
  lossy.outputs.push_back(tensor_spec{dtype::int8, {2, 3}});
  node view{.id = "v", .op = op_kind::delegate, .kernel = "aten.view.default"};
  view.device = cuda_device(0);
  view.attrs = R"({"size":[6],"mode":"flat"})";
  view.outputs.push_back(tensor_spec{dtype::float16, {6}});
  return graph_builder{}
      .input("x", {{2, 3}, dtype::float16})
      .add(widen, {"x"})
      .add(narrow, {"widen"})
      .add(lossy, {"widen"})
      .add(view, {"narrow"})
      .delegate("relu", "cuda:0", "aten.relu.default", {"v"})
      .output({"relu", "lossy"})
      .build();
}
}  // namespace

TEST_CASE("value guards: traits, rank and shape, attributes") {
  const graph g = described();
  CHECK(holds(has_trait<op_trait::view>(x), g, value_of(g, "v")));
  CHECK_FALSE(holds(has_trait<op_trait::view>(x), g, value_of(g, "relu")));
  CHECK(holds(has_trait<op_trait::elementwise>(x), g, value_of(g, "relu")));
  CHECK(holds(rank_is<2>(x), g, value_of(g, "x")));
  CHECK_FALSE(holds(rank_is<1>(x), g, value_of(g, "x")));
  CHECK(holds(shape_is<2, 3>(x), g, value_of(g, "widen")));
  CHECK_FALSE(holds(shape_is<3, 2>(x), g, value_of(g, "widen")));
  CHECK(holds(shape_is<6>(x), g, value_of(g, "v")));
  CHECK(holds(has_attr<"size">(x), g, value_of(g, "v")));
  CHECK_FALSE(holds(has_attr<"dim">(x), g, value_of(g, "v")));
  CHECK(holds(attr_is<"mode", "flat">(x), g, value_of(g, "v")));       // a JSON string, unquoted
  CHECK(holds(attr_is<"size", "[6]">(x), g, value_of(g, "v")));        // any other text as written
  CHECK_FALSE(holds(attr_is<"mode", "fla">(x), g, value_of(g, "v")));  // whole text only
  CHECK_FALSE(holds(attr_is<"mode", "flat">(x), g, value_of(g, "x")));
}

TEST_CASE("dtype guards: same_dtype, round_trips_exactly (f16 -> f32 -> f16 yes, f32 -> int8 no)") {
  const graph g = described();
  CHECK(holds(same_dtype(x, y), g, value_of(g, "x"), value_of(g, "narrow")));
  CHECK_FALSE(holds(same_dtype(x, y), g, value_of(g, "x"), value_of(g, "widen")));
  CHECK(holds(round_trips_exactly(x, y), g, value_of(g, "x"), value_of(g, "widen")));
  CHECK_FALSE(holds(round_trips_exactly(x, y), g, value_of(g, "widen"), value_of(g, "x")));  // narrowing
  CHECK_FALSE(holds(round_trips_exactly(x, y), g, value_of(g, "widen"), value_of(g, "lossy")));
  static_assert(widens_exactly(dtype::int8, dtype::int32) && widens_exactly(dtype::uint8, dtype::bfloat16));
  static_assert(!widens_exactly(dtype::int32, dtype::float32) && !widens_exactly(dtype::float32, dtype::float32));
  static_assert(!widens_exactly(dtype::int16, dtype::float16) && widens_exactly(dtype::bool_, dtype::int8));
}

TEST_CASE("guards read in rules: the round trip that restores x exactly is elided, the lossy one kept") {
  graph g = described();
  constexpr auto cast = op<"aten._to_copy.default">;
  constexpr auto round_trips =
      make_table(cast(cast(any.as(x)).as(y)).as(r)[same_dtype(r, x) && round_trips_exactly(x, y)] /
                 (rewire(r, x), erase(r), erase_if_dead(y)));
  CHECK_CONVERGES(round_trips, g);
  CHECK_FALSE(find_node(g, "narrow"));
  CHECK(operand(g, *find_node(g, "v"), 0) == value_of(g, "x"));
  CHECK(find_node(g, "widen"));  // still read by the lossy cast
  CHECK(find_node(g, "lossy"));
}

TEST_CASE("maybe(link, p): a chain link that may be absent, the captures bound either way") {
  const graph g = graph_builder{}
                      .input("a", {4})
                      .input("b", {4})
                      .delegate("sum", "cuda:0", "aten.add.Tensor", {"a", "b"})
                      .delegate("act", "cuda:0", "aten.relu.default", {"sum"})
                      .delegate("bare", "cuda:0", "aten.add.Tensor", {"a", "b"})
                      .delegate("neg", "cuda:0", "aten.neg.default", {"sum"})
                      .output({"act", "bare", "neg"})
                      .build();
  constexpr auto add_maybe_relu = maybe(op<"aten.relu.default">, op<"aten.add.Tensor">(any.as(x), any.as(y)));
  CHECK_MATCHES(add_maybe_relu, g, "act");
  CHECK_MATCHES(add_maybe_relu, g, "bare");
  CHECK_NOT_MATCHES(add_maybe_relu, g, "neg");
  pattern::capture_set<std::remove_cvref_t<decltype(add_maybe_relu)>::binds> caps;
  REQUIRE(add_maybe_relu.match(g, value_of(g, "act"), caps));
  CHECK(caps.get(x) == value_of(g, "a"));
  CHECK(caps.get(y) == value_of(g, "b"));
  CHECK(pattern::describe(add_maybe_relu) ==
        "(op<\"aten.relu.default\">(op<\"aten.add.Tensor\">(any as x, any as y)) | op<\"aten.add.Tensor\">(any as x, "
        "any as y))");
}

TEST_CASE("value guards are facts that never change: a table of them stays independent") {
  constexpr auto view_of_view = op<"aten.view.default">(op<"aten.view.default">(any.as(x)).as(y)).as(r);
  constexpr auto fold = make_table(view_of_view[has_trait<op_trait::view>(y) && same_dtype(r, x)] /
                                   apply([](auto&, value_ref, value_ref) {}, r, x));
  using rule_type = std::remove_cvref_t<decltype(rules::detail::element<0>(fold.rules))>;
  constexpr auto reads = rules::independence::footprint_of<rule_type>();
  CHECK(reads.uses == 0);
  CHECK(reads.location == 0);
  CHECK(reads.node_device == 0);
}
