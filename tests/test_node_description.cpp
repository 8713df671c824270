// What a model may say about a node beyond the required operations (graph/node_description.hpp,
// graph/op_traits.hpp) — op traits, value shapes, attributes — and making any node through the
// model (node_request with a rewrite state), on devpass::graph.
#include "devpass/graph/node_description.hpp"

#include "devpass/graph/graph.hpp"
#include "devpass/graph/id_allocator.hpp"
#include "devpass/testing.hpp"

using namespace devpass;
using devpass::testing::graph_builder;
using devpass::testing::value_of;

TEST_CASE("op traits: the ATen table by kernel name, none for an op it does not list") {
  CHECK(aten_op_traits("aten.view.default").has(op_trait::view));
  CHECK(aten_op_traits("aten.view.default").has(op_trait::pure));
  CHECK_FALSE(aten_op_traits("aten.view.default").has(op_trait::elementwise));
  CHECK(aten_op_traits("aten.relu.default").has(op_trait::elementwise));
  CHECK(aten_op_traits("aten.relu.default").has(op_trait::device_kernel));
  CHECK_FALSE(aten_op_traits("aten.mm.default").has(op_trait::elementwise));
  CHECK(aten_op_traits("aten.mm.default").has(op_trait::pure));
  CHECK(aten_op_traits("mycc.custom").empty());
  CHECK(aten_op_traits("").empty());
  CHECK(aten_op_traits("aten.view").empty());  // names match whole
  static_assert((op_trait::view | op_trait::pure).has(op_trait::pure));
}

TEST_CASE("json_member: a top-level member's text, strings quoted, nested values whole") {
  constexpr std::string_view attrs = R"({"dim":1,"dtype":"float16","size":[2,3],"sub":{"a":"x,}"},"s":"a\"b"})";
  CHECK(json_member(attrs, "dim") == "1");
  CHECK(json_member(attrs, "dtype") == "\"float16\"");
  CHECK(json_member(attrs, "size") == "[2,3]");
  CHECK(json_member(attrs, "sub") == R"({"a":"x,}"})");
  CHECK(json_member(attrs, "s") == R"("a\"b")");
  CHECK_FALSE(json_member(attrs, "a"));  // only top-level members
  CHECK_FALSE(json_member(attrs, "missing"));
  CHECK_FALSE(json_member("", "dim"));
  CHECK_FALSE(json_member("{}", "dim"));
  CHECK_FALSE(json_member(R"({"dim":[1,2)", "dim"));  // cut short: no member
  static_assert(json_member(R"({"k":true})", "k") == std::optional<std::string_view>("true"));
}

TEST_CASE("devpass::graph describes its nodes: traits from the kernel, the spec's shape, attrs") {
  node viewed{.id = "v", .op = op_kind::delegate, .kernel = "aten.view.default"};
  viewed.device = cuda_device(0);
  viewed.attrs = R"({"size":[4]})";
  viewed.outputs.push_back(tensor_spec{dtype::float16, {4}});
  const graph g = graph_builder{}.input("x", {2, 2}).add(viewed, {"x"}).output({"v"}).build();
  const vertex v = value_of(g, "v").producer;
  CHECK(op_traits_of(g, v).has(op_trait::view));
  CHECK_FALSE(op_traits_of(g, value_of(g, "x").producer).has(op_trait::view));  // an input: no kernel
  const auto shape = value_shape(g, value_of(g, "x"));
  CHECK(std::vector<std::int64_t>(shape.begin(), shape.end()) == std::vector<std::int64_t>{2, 2});
  CHECK(node_attr(g, v, "size") == "[4]");
  CHECK_FALSE(node_attr(g, v, "dim"));
  CHECK_FALSE(node_attr(g, value_of(g, "x").producer, "size"));
}

TEST_CASE("add_node on devpass::graph: the request as given, its id made unique by the allocator") {
  graph g = graph_builder{}.input("x", {2, 2}).output({"x"}).build();
  id_allocator ids(g);
  const tensor_spec half{dtype::float16, {2, 2}};
  const vertex x = value_of(g, "x").producer;
  const node_request cast{op_kind::delegate,        cuda_device(0), "x@cast", "aten._to_copy.default",
                          R"({"dtype":"float16"})", {&half, 1},     x};
  const vertex first = add_node_vertex(g, ids, cast);
  CHECK(g[first].id == "x@cast");
  CHECK(g[first].op == op_kind::delegate);
  CHECK(g[first].device == cuda_device(0));
  CHECK(g[first].kernel.view() == "aten._to_copy.default");
  CHECK(node_attr(g, first, "dtype") == "\"float16\"");
  REQUIRE(g[first].outputs.size() == 1);
  CHECK(g[first].outputs[0].type == dtype::float16);
  CHECK(arity_of(g, first) == 0);  // no operands: the caller connects them
  const vertex second = add_node_vertex(g, ids, cast);
  CHECK(g[second].id != "x@cast");  // the same request twice: two ids
  CHECK(g[second].id.starts_with("x@cast"));
}
