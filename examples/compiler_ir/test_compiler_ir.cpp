// examples/compiler_ir/test_compiler_ir.cpp — the compiler's doctest suite, written on its own IR
// (compiler_ir.hpp), never on devpass::graph: fixtures from the graph builder made through the
// model's add_node (build_as<cir::graph>) or from the IR's own front-end calls, checked with
// devpass/testing.hpp's model-generic checks. It pins the model (concept, roles, op names, traits,
// shapes, attributes, refused requests), the team's rule table (what fires and what must not),
// devpass's fusion and cast families on the IR's vocabulary (what they build, where, and what they
// leave), and the pipeline under the team's policy (each phase's counters, the copies made, and a
// result that verifies).
// Built as its own doctest program and run by CTest (label `example`).
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include "devpass/testing.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "compiler_ir.hpp"
#include "devpass/pipeline/instrumentation.hpp"
#include "front_end.hpp"
#include "pipeline.hpp"

namespace {

using cir::opcode;
using devpass::dtype;
using devpass::op_kind;
using devpass::op_trait;
using devpass::value_ref;
using devpass::vertex;
using devpass::testing::graph_builder;
using namespace devpass::dsl;

static_assert(devpass::check_graph_model<cir::graph>());
static_assert(devpass::check_plannable_graph_model<cir::graph>());
static_assert(devpass::pattern::has_op_vocabulary<cir::graph>);
static_assert(devpass::model_requirements::traits<cir::graph> && devpass::model_requirements::value_shape<cir::graph> &&
              devpass::model_requirements::attr<cir::graph> && devpass::model_requirements::add_node<cir::graph>);
// The fused kernels compute (their role follows their device); the collective computes, a copy does not.
static_assert(cir::computes(opcode::conv2d_add_relu) && cir::computes(opcode::linear_add_gelu) &&
              cir::computes(opcode::linear_gelu) && cir::computes(opcode::all_reduce) &&
              !cir::computes(opcode::upload));
static_assert(cir::name_of(opcode::cast) == "cast" && cir::name_of(opcode::conv2d_add_relu) == "conv2d_add_relu" &&
              cir::name_of(opcode::linear_add_gelu) == "linear_add_gelu" &&
              cir::name_of(opcode::linear_gelu) == "linear_gelu" && cir::name_of(opcode::all_reduce) == "all_reduce");

// The value a name stands for in g; fails the test when no live node has that name.
value_ref value(const cir::graph& g, std::string_view name) {
  const auto found = devpass::testing::find_value(g, name);
  REQUIRE_MESSAGE(found, "no live node named ", name);
  return *found;
}
vertex node(const cir::graph& g, std::string_view name) { return value(g, name).producer; }
std::vector<std::int64_t> shape_of(const cir::graph& g, std::string_view name) {
  const auto dims = devpass::value_shape(g, value(g, name));
  return {dims.begin(), dims.end()};
}

// A conv → add → relu block on cuda:0, then a transpose, an all_reduce and a cast to float16, as
// the front end writes them.
cir::graph conv_block() {
  const auto host = devpass::cpu_device, gpu0 = devpass::cuda_device(0);
  cir::graph g;
  const vertex image = cir::add_op(g, opcode::param, host, "image", {}, dtype::float32, {1, 3, 8, 8});
  const vertex w = cir::add_op(g, opcode::weight, host, "w", {}, dtype::float32, {4, 3, 3, 3});
  const vertex b = cir::add_op(g, opcode::weight, host, "b", {}, dtype::float32, {1, 4, 4, 4});
  const vertex conv =
      cir::add_op(g, opcode::conv2d, gpu0, "conv", {image, w}, dtype::float32, {1, 4, 4, 4}, cir::stride(2));
  const vertex sum = cir::add_op(g, opcode::add, gpu0, "sum", {conv, b}, dtype::float32, {1, 4, 4, 4});
  const vertex act = cir::add_op(g, opcode::relu, gpu0, "act", {sum}, dtype::float32, {1, 4, 4, 4});
  const vertex swapped =
      cir::add_op(g, opcode::transpose, gpu0, "swapped", {act}, dtype::float32, {1, 4, 4, 4}, cir::swap_dims(2, 3));
  const vertex reduced = cir::add_op(g, opcode::all_reduce, gpu0, "reduced", {swapped}, dtype::float32, {1, 4, 4, 4},
                                     cir::reduce_by(cir::reduction::sum));
  const vertex half = cir::add_op(g, opcode::cast, gpu0, "half", {reduced}, dtype::float16, {1, 4, 4, 4});
  cir::add_ret(g, "out", {half});
  return g;
}

// A node of the builder with attributes (the builder's own calls take none).
devpass::node with_attrs(std::string id, std::string_view on, std::string op, std::string attrs,
                         devpass::tensor_spec result) {
  devpass::node n{.id = std::move(id), .op = op_kind::delegate, .kernel = std::move(op), .attrs = std::move(attrs)};
  n.device = *devpass::parse_device(on);
  n.outputs.push_back(std::move(result));
  return n;
}

}  // namespace

TEST_CASE("model: each op plays the role its op and device give it") {
  const cir::graph g = graph_builder{}
                           .input("x", {2, 3})
                           .constant("w", {3, 3})
                           .delegate("mm", "cuda:0", "matmul", {"x", "w"}, {{2, 3}})
                           .d2h_copy("down", "cuda:0", "mm")
                           .call("r", "relu", {"down"})
                           .delegate("host_gelu", "cpu", "gelu", {"r"})
                           .h2d_copy("up", "cuda:1", "host_gelu")
                           .d2d_copy("peer", "cuda:0", "up")
                           .delegate("reduced", "cuda:0", "all_reduce", {"peer", "mm"})
                           .output({"reduced"})
                           .build_as<cir::graph>();
  struct expected {
    std::string_view name;
    opcode op;
    op_kind role;
  };
  for (const expected& e : {expected{"x", opcode::param, op_kind::input},
                            {"w", opcode::weight, op_kind::constant},
                            {"mm", opcode::matmul, op_kind::delegate},
                            {"down", opcode::download, op_kind::d2h_copy},
                            {"r", opcode::relu, op_kind::call},
                            // A delegate on the host is a call in the IR: its role follows its device.
                            {"host_gelu", opcode::gelu, op_kind::call},
                            {"up", opcode::upload, op_kind::h2d_copy},
                            {"peer", opcode::peer_copy, op_kind::d2d_copy},
                            {"reduced", opcode::all_reduce, op_kind::delegate},
                            {"out", opcode::ret, op_kind::output}}) {
    CAPTURE(e.name);
    CHECK(g[node(g, e.name)].op == e.op);
    CHECK(devpass::role_of(g, node(g, e.name)) == e.role);
  }
  CHECK(devpass::node_device(g, node(g, "peer")) == devpass::cuda_device(0));
  CHECK(devpass::operand(g, node(g, "reduced"), 1) == value(g, "mm"));
}

TEST_CASE("model: copies are named in the IR's words, laid out as their source, marked where they write") {
  cir::graph g = conv_block();
  using model = devpass::graph_model<cir::graph>;
  using devpass::copy_naming;
  const value_ref act = value(g, "act");
  const vertex down = model::add_copy(g, {op_kind::d2h_copy, devpass::cuda_device(0), act, copy_naming::after_value});
  const vertex up = model::add_copy(
      g, {op_kind::h2d_copy, devpass::cuda_device(1), value(g, "w"), copy_naming::after_value_and_device});
  const vertex feed = model::add_copy(
      g, {op_kind::d2d_copy, devpass::cuda_device(1), act, copy_naming::after_use, devpass::use{node(g, "half"), 0}});
  CHECK(devpass::node_name(g, down) == "act@download");
  CHECK(devpass::node_name(g, up) == "w@upload[cuda:1]");
  CHECK(devpass::node_name(g, feed) == "half@peer_copy.0");
  CHECK(g[down].op == opcode::download);
  CHECK(g[up].op == opcode::upload);
  CHECK(g[feed].op == opcode::peer_copy);
  CHECK(devpass::marked_device(g, {down, 0}) == devpass::cpu_device);
  CHECK(devpass::marked_device(g, {up, 0}) == devpass::cuda_device(1));
  CHECK(devpass::node_device(g, down) == devpass::cuda_device(0));  // a download's device side: where it reads
  CHECK(shape_of(g, "w@upload[cuda:1]") == shape_of(g, "w"));
  CHECK(devpass::value_bytes(g, {feed, 0}) == devpass::value_bytes(g, act));
}

TEST_CASE("model: op patterns match the IR's own op names, operands slot by slot") {
  const cir::graph g = conv_block();
  CHECK_MATCHES(op<"conv2d">(op<"param">, op<"weight">), g, "conv");
  CHECK_MATCHES(op<"relu">(op<"add">(op<"conv2d">, op<"weight">)), g, "act");
  CHECK_MATCHES(op<"cast">(op<"all_reduce">(op<"transpose">(op<"relu">))), g, "half");
  CHECK_MATCHES(delegate(input, constant), g, "conv");  // devpass's roles work beside the op names
  CHECK_NOT_MATCHES(op<"gelu">, g, "act");
  CHECK_NOT_MATCHES(op<"conv2d">(op<"weight">, op<"param">), g, "conv");  // operands in the wrong slots
  CHECK_NOT_MATCHES(op<"add">(op<"conv2d">), g, "sum");                   // arity 2, not 1
  CHECK(devpass::pattern::explain(op<"gelu">, g, value(g, "act")) == "node 'act' is relu, expected gelu");
  CHECK(devpass::pattern::explain(op<"relu">(op<"add">(op<"conv2d">, op<"param">)), g, value(g, "act")) ==
        "operand 0 of 'act': operand 1 of 'sum': node 'b' is weight, expected param");
}

TEST_CASE("model: op traits, value shapes and attributes answer from the IR's own fields") {
  const cir::graph g = conv_block();
  const auto traits = [&](std::string_view name) { return devpass::op_traits_of(g, node(g, name)); };
  CHECK(traits("conv") == (op_trait::pure | op_trait::device_kernel));
  for (const opcode fused : {opcode::conv2d_add_relu, opcode::linear_add_gelu, opcode::linear_gelu}) {
    cir::graph one;
    const vertex x = cir::add_op(one, opcode::param, devpass::cpu_device, "x", {}, dtype::float32, {4});
    const vertex k = cir::add_op(one, fused, devpass::cuda_device(0), "k", {x, x, x}, dtype::float32, {4});
    CAPTURE(cir::name_of(fused));
    CHECK(devpass::op_traits_of(one, k) == (op_trait::pure | op_trait::device_kernel));  // not elementwise
    CHECK(devpass::role_of(one, k) == op_kind::delegate);
  }
  CHECK(traits("act") == (op_trait::elementwise | op_trait::pure | op_trait::device_kernel));
  CHECK(traits("half") == (op_trait::elementwise | op_trait::pure | op_trait::device_kernel));
  CHECK(traits("swapped") == (op_trait::view | op_trait::pure | op_trait::device_kernel));
  CHECK(traits("reduced") == devpass::op_traits(op_trait::device_kernel));  // a collective is not pure
  CHECK(traits("image").empty());
  CHECK(traits("out").empty());

  CHECK(shape_of(g, "image") == std::vector<std::int64_t>{1, 3, 8, 8});
  CHECK(shape_of(g, "conv") == std::vector<std::int64_t>{1, 4, 4, 4});
  CHECK(devpass::value_bytes(g, value(g, "conv")) == 64 * 4);  // 64 float32 elements
  // A cast keeps the shape; its target dtype is its result's dtype.
  CHECK(shape_of(g, "half") == shape_of(g, "reduced"));
  CHECK(devpass::value_dtype(g, value(g, "half")) == dtype::float16);
  CHECK(devpass::value_bytes(g, value(g, "half")) == 64 * 2);

  CHECK(devpass::node_attr(g, node(g, "reduced"), "reduce") == "\"sum\"");
  CHECK(devpass::node_attr(g, node(g, "swapped"), "dims") == "[2,3]");
  CHECK(devpass::node_attr(g, node(g, "conv"), "stride") == "2");
  CHECK_FALSE(devpass::node_attr(g, node(g, "reduced"), "dims"));
  CHECK_FALSE(devpass::node_attr(g, node(g, "act"), "reduce"));
}

TEST_CASE("model: add_node reads the request's attributes and refuses what the IR cannot hold") {
  SUBCASE("attributes from the request's JSON") {
    const cir::graph g =
        graph_builder{}
            .input("x", {2, 3, 4})
            .add(with_attrs("t", "cuda:0", "transpose", R"({"dims":[1,2]})", {dtype::float32, {2, 4, 3}}), {"x"})
            .add(with_attrs("s", "cuda:0", "all_reduce", R"({"reduce":"max"})", {dtype::float32, {2, 4, 3}}), {"t"})
            .add(with_attrs("c", "cuda:0", "conv2d", R"({"stride":3})", {dtype::float32, {2, 4, 3}}), {"s"})
            .add(with_attrs("f", "cuda:0", "conv2d_add_relu", R"({"stride":4})", {dtype::float32, {2, 4, 3}}),
                 {"c", "x", "x"})
            .delegate("l", "cuda:0", "linear_gelu", {"f", "x", "x"})
            .output({"l"})
            .build_as<cir::graph>();
    CHECK(devpass::node_attr(g, node(g, "t"), "dims") == "[1,2]");
    CHECK(devpass::node_attr(g, node(g, "s"), "reduce") == "\"max\"");
    CHECK(devpass::node_attr(g, node(g, "c"), "stride") == "3");
    CHECK(devpass::node_attr(g, node(g, "f"), "stride") == "4");
    CHECK(g[node(g, "f")].op == opcode::conv2d_add_relu);
    CHECK(g[node(g, "l")].op == opcode::linear_gelu);
    CHECK(shape_of(g, "t") == std::vector<std::int64_t>{2, 4, 3});
  }
  SUBCASE("an op name the IR lacks") {
    CHECK_THROWS_WITH_AS((void)graph_builder{}
                             .input("x", {2})
                             .delegate("y", "cuda:0", "softmax", {"x"})
                             .output({"y"})
                             .build_as<cir::graph>(),
                         "node 'y': op: 'softmax' is no op of the IR", devpass::graph_error);
  }
  SUBCASE("an op asked to play a role it does not play") {
    devpass::node source{.id = "p", .op = op_kind::input, .kernel = "relu"};
    source.outputs.push_back({dtype::float32, {2}});
    CHECK_THROWS_WITH_AS((void)graph_builder{}.add(source).output({"p"}).build_as<cir::graph>(),
                         "node 'p': op: 'relu' on cpu plays call, not input", devpass::graph_error);
  }
  SUBCASE("an attribute value the IR cannot keep") {
    CHECK_THROWS_WITH_AS(
        (void)graph_builder{}
            .input("x", {2})
            .add(with_attrs("s", "cuda:0", "all_reduce", R"({"reduce":"prod"})", {dtype::float32, {2}}), {"x"})
            .output({"s"})
            .build_as<cir::graph>(),
        R"(node 's': attrs: reduce "prod" is not one of "sum", "max", "min", "avg")", devpass::graph_error);
  }
}

TEST_CASE("rules: a transpose of a transpose of the same dimensions is elided") {
  cir::graph g = graph_builder{}
                     .input("x", {2, 3})
                     .delegate("t", "cuda:0", "transpose", {"x"}, {{3, 2}})
                     .delegate("u", "cuda:0", "transpose", {"t"}, {{2, 3}})
                     .delegate("r", "cuda:0", "relu", {"u"})
                     .output({"r"})
                     .build_as<cir::graph>();
  CHECK_MATCHES(op<"transpose">(op<"transpose">(input)), g, "u");
  CHECK_CONVERGES(cir::rules::simplify, g);
  const cir::graph expected =
      graph_builder{}.input("x", {2, 3}).delegate("r", "cuda:0", "relu", {"x"}).output({"r"}).build_as<cir::graph>();
  CHECK_SAME_GRAPH(g, expected);
}

TEST_CASE("rules: a transpose pair stays when the middle value has another reader") {
  cir::graph g = graph_builder{}
                     .input("x", {2, 3})
                     .delegate("t", "cuda:0", "transpose", {"x"}, {{3, 2}})
                     .delegate("u", "cuda:0", "transpose", {"t"}, {{2, 3}})
                     .delegate("other", "cuda:0", "gelu", {"t"})
                     .output({"u", "other"})
                     .build_as<cir::graph>();
  const cir::graph before = g;
  CHECK_MATCHES(op<"transpose">(op<"transpose">(input)), g, "u");  // the pattern matches; the guard refuses
  CHECK_CONVERGES(cir::rules::simplify, g);
  CHECK_SAME_GRAPH(g, before);
}

TEST_CASE("rules: transposes of different dimensions are no pair") {
  const auto gpu0 = devpass::cuda_device(0);
  cir::graph g;
  const vertex x = cir::add_op(g, opcode::param, devpass::cpu_device, "x", {}, dtype::float32, {2, 3, 4});
  const vertex t = cir::add_op(g, opcode::transpose, gpu0, "t", {x}, dtype::float32, {3, 2, 4}, cir::swap_dims(0, 1));
  const vertex u = cir::add_op(g, opcode::transpose, gpu0, "u", {t}, dtype::float32, {3, 4, 2}, cir::swap_dims(1, 2));
  cir::add_ret(g, "out", {u});
  const cir::graph before = g;
  CHECK_CONVERGES(cir::rules::simplify, g);
  CHECK_SAME_GRAPH(g, before);
}

TEST_CASE("rules: a chain of shape views folds into one view of the base") {
  SUBCASE("reshapes of a view") {
    cir::graph g = graph_builder{}
                       .input("x", {2, 3, 4})
                       .delegate("a", "cuda:0", "view", {"x"}, {{6, 4}})
                       .delegate("b", "cuda:0", "reshape", {"a"}, {{24}})
                       .delegate("c", "cuda:0", "reshape", {"b"}, {{4, 6}})
                       .delegate("r", "cuda:0", "relu", {"c"})
                       .output({"r"})
                       .build_as<cir::graph>();
    CHECK_CONVERGES(cir::rules::simplify, g);
    const cir::graph expected = graph_builder{}
                                    .input("x", {2, 3, 4})
                                    .delegate("c", "cuda:0", "reshape", {"x"}, {{4, 6}})
                                    .delegate("r", "cuda:0", "relu", {"c"})
                                    .output({"r"})
                                    .build_as<cir::graph>();
    CHECK_SAME_GRAPH(g, expected);
    CHECK(shape_of(g, "c") == std::vector<std::int64_t>{4, 6});
  }
  SUBCASE("views of a view") {
    cir::graph g = graph_builder{}
                       .input("x", {2, 3, 4})
                       .delegate("a", "cuda:0", "view", {"x"}, {{6, 4}})
                       .delegate("b", "cuda:0", "view", {"a"}, {{24}})
                       .output({"b"})
                       .build_as<cir::graph>();
    CHECK_CONVERGES(cir::rules::simplify, g);
    CHECK_FALSE(devpass::testing::find_value(g, "a"));
    CHECK(devpass::operand(g, node(g, "b"), 0) == value(g, "x"));
  }
}

TEST_CASE("rules: a view of a reshape is not folded: the reshape may be what made its input contiguous") {
  cir::graph g = graph_builder{}
                     .input("x", {2, 3})
                     .delegate("t", "cuda:0", "transpose", {"x"}, {{3, 2}})
                     .delegate("r", "cuda:0", "reshape", {"t"}, {{6}})
                     .delegate("v", "cuda:0", "view", {"r"}, {{2, 3}})
                     .output({"v"})
                     .build_as<cir::graph>();
  const cir::graph before = g;
  CHECK_CONVERGES(cir::rules::simplify, g);
  CHECK_SAME_GRAPH(g, before);
}

TEST_CASE("rules: a view whose input view has another reader is not folded") {
  cir::graph g = graph_builder{}
                     .input("x", {2, 3, 4})
                     .delegate("a", "cuda:0", "view", {"x"}, {{6, 4}})
                     .delegate("b", "cuda:0", "view", {"a"}, {{24}})
                     .delegate("other", "cuda:0", "relu", {"a"})
                     .output({"b", "other"})
                     .build_as<cir::graph>();
  const cir::graph before = g;
  CHECK_CONVERGES(cir::rules::simplify, g);
  CHECK_SAME_GRAPH(g, before);
}

TEST_CASE("rules: a reshape to the shape it has is its input; one to another shape stays") {
  cir::graph g = graph_builder{}
                     .input("x", {2, 3})
                     .delegate("same", "cuda:0", "reshape", {"x"}, {{2, 3}})
                     .delegate("flipped", "cuda:0", "reshape", {"x"}, {{3, 2}})
                     .delegate("r", "cuda:0", "relu", {"same"})
                     .delegate("q", "cuda:0", "relu", {"flipped"})
                     .output({"r", "q"})
                     .build_as<cir::graph>();
  CHECK_CONVERGES(cir::rules::simplify, g);
  CHECK_FALSE(devpass::testing::find_value(g, "same"));
  CHECK(devpass::operand(g, node(g, "r"), 0) == value(g, "x"));
  CHECK(devpass::operand(g, node(g, "q"), 0) == value(g, "flipped"));
}

TEST_CASE("rules: pure ops nobody reads go, with what only they read; an unread all_reduce stays") {
  cir::graph g = graph_builder{}
                     .input("x", {4})
                     .delegate("live", "cuda:0", "relu", {"x"})
                     .delegate("dead_sum", "cuda:0", "add", {"x", "x"})
                     .delegate("dead", "cuda:0", "gelu", {"dead_sum"})
                     .delegate("unread", "cuda:0", "all_reduce", {"live"})
                     .output({"live"})
                     .build_as<cir::graph>();
  CHECK_CONVERGES(cir::rules::simplify, g);
  CHECK_FALSE(devpass::testing::find_value(g, "dead"));
  CHECK_FALSE(devpass::testing::find_value(g, "dead_sum"));
  CHECK(devpass::operand(g, node(g, "unread"), 0) == value(g, "live"));
}

TEST_CASE(
    "fusion: conv2d → add → relu is one conv2d_add_relu on the chain's device, reading x, w, b, with its stride") {
  cir::graph g = conv_block();
  const devpass::rewrite_counters counters = devpass::fuse_ops<cir::fusion_names>(g);
  CHECK(counters.rewrites == 1);
  CHECK(counters.nodes_added == 1);
  CHECK(counters.nodes_removed == 3);
  const vertex fused = node(g, "act@conv2d_add_relu");
  CHECK(g[fused].op == opcode::conv2d_add_relu);
  CHECK(devpass::role_of(g, fused) == op_kind::delegate);
  CHECK(devpass::node_device(g, fused) == devpass::cuda_device(0));
  CHECK(devpass::operands(g, fused) == std::vector<value_ref>{value(g, "image"), value(g, "w"), value(g, "b")});
  CHECK(devpass::node_attr(g, fused, "stride") == "2");  // the conv's (attrs_of)
  CHECK(shape_of(g, "act@conv2d_add_relu") == std::vector<std::int64_t>{1, 4, 4, 4});
  CHECK(devpass::operand(g, node(g, "swapped"), 0) == value_ref{fused, 0});
  for (const std::string_view gone : {"conv", "sum", "act"}) {
    CAPTURE(gone);
    CHECK_FALSE(devpass::testing::find_value(g, gone));
  }
  CHECK(devpass::verify_propagation_input(g).ok());
  CHECK(devpass::fuse_ops<cir::fusion_names>(g).rewrites == 0);  // the fused node heads no chain
}

TEST_CASE("fusion: the add's operands in either order; of two convs, the one in slot 0 is fused, with its stride") {
  const auto host = devpass::cpu_device, gpu1 = devpass::cuda_device(1);
  const auto f32 = dtype::float32;
  SUBCASE("add(b, conv2d(x, w)) on cuda:1") {
    cir::graph g;
    const vertex x = cir::add_op(g, opcode::param, host, "x", {}, f32, {1, 2, 6, 6});
    const vertex w = cir::add_op(g, opcode::weight, host, "w", {}, f32, {2, 2, 3, 3});
    const vertex b = cir::add_op(g, opcode::weight, host, "b", {}, f32, {1, 2, 2, 2});
    const vertex conv = cir::add_op(g, opcode::conv2d, gpu1, "conv", {x, w}, f32, {1, 2, 2, 2}, cir::stride(3));
    const vertex sum = cir::add_op(g, opcode::add, gpu1, "sum", {b, conv}, f32, {1, 2, 2, 2});
    cir::add_ret(g, "out", {cir::add_op(g, opcode::relu, gpu1, "act", {sum}, f32, {1, 2, 2, 2})});
    CHECK(devpass::fuse_ops<cir::fusion_names>(g).rewrites == 1);
    const vertex fused = node(g, "act@conv2d_add_relu");
    CHECK(devpass::node_device(g, fused) == gpu1);
    CHECK(devpass::operands(g, fused) == std::vector<value_ref>{value(g, "x"), value(g, "w"), value(g, "b")});
    CHECK(devpass::node_attr(g, fused, "stride") == "3");
  }
  SUBCASE("add(conv2d(x, w) stride 2, conv2d(x, w) stride 3): the slot-0 conv, the other read as the bias") {
    cir::graph g;
    const vertex x = cir::add_op(g, opcode::param, host, "x", {}, f32, {1, 2, 6, 6});
    const vertex w = cir::add_op(g, opcode::weight, host, "w", {}, f32, {2, 2, 3, 3});
    const vertex c2 = cir::add_op(g, opcode::conv2d, gpu1, "c2", {x, w}, f32, {1, 2, 2, 2}, cir::stride(2));
    const vertex c3 = cir::add_op(g, opcode::conv2d, gpu1, "c3", {x, w}, f32, {1, 2, 2, 2}, cir::stride(3));
    const vertex sum = cir::add_op(g, opcode::add, gpu1, "sum", {c2, c3}, f32, {1, 2, 2, 2});
    cir::add_ret(g, "out", {cir::add_op(g, opcode::relu, gpu1, "act", {sum}, f32, {1, 2, 2, 2})});
    CHECK(devpass::fuse_ops<cir::fusion_names>(g).rewrites == 1);
    const vertex fused = node(g, "act@conv2d_add_relu");
    CHECK(devpass::operands(g, fused) == std::vector<value_ref>{value(g, "x"), value(g, "w"), value(g, "c3")});
    CHECK(devpass::node_attr(g, fused, "stride") == "2");
    CHECK_FALSE(devpass::testing::find_value(g, "c2"));
  }
}

namespace {
// relu(add(conv2d(x, w), b)) on cuda:0, the add on `add_on`; `extra`: a gelu reading that value too.
cir::graph conv_chain(const char* extra = nullptr, const char* add_on = "cuda:0") {
  graph_builder gb;
  gb.input("x", {1, 2, 4, 4})
      .constant("w", {2, 2, 1, 1})
      .constant("b", {1, 2, 4, 4})
      .delegate("conv", "cuda:0", "conv2d", {"x", "w"}, {{1, 2, 4, 4}})
      .delegate("sum", add_on, "add", {"conv", "b"})
      .delegate("act", "cuda:0", "relu", {"sum"});
  if (extra) gb.delegate("other", "cuda:0", "gelu", {extra});
  return (extra ? gb.output({"act", "other"}) : gb.output({"act"})).build_as<cir::graph>();
}
}  // namespace

TEST_CASE("fusion: not where an intermediate value has another reader, nor across devices") {
  for (const auto& variant :
       {std::pair<const char*, const char*>{"conv", "cuda:0"}, {"sum", "cuda:0"}, {nullptr, "cuda:1"}}) {
    // Named copies, not structured bindings: CAPTURE's lambda may not name a binding (clang 14).
    const char* const extra = variant.first;
    const char* const add_on = variant.second;
    CAPTURE(extra ? extra : "-");
    CAPTURE(add_on);
    cir::graph g = conv_chain(extra, add_on);
    const cir::graph before = g;
    CHECK(devpass::fuse_ops<cir::fusion_names>(g).rewrites == 0);
    CHECK_SAME_GRAPH(g, before);
    CHECK(g[node(g, "act")].op == opcode::relu);
  }
  // The same chain with nothing else reading its values fuses: the cases above differ in that only.
  cir::graph g = conv_chain();
  CHECK(devpass::fuse_ops<cir::fusion_names>(g).rewrites == 1);
}

TEST_CASE("fusion: gelu(add(linear(x, w), b)) and gelu(linear(x, w, b)) on the IR") {
  cir::graph g = graph_builder{}
                     .input("x", {2, 8})
                     .constant("w", {8, 8})
                     .constant("b", {8})
                     .delegate("l1", "cuda:0", "linear", {"x", "w"}, {{2, 8}})
                     .delegate("s1", "cuda:0", "add", {"l1", "b"})
                     .delegate("g1", "cuda:0", "gelu", {"s1"})
                     .delegate("l2", "cuda:0", "linear", {"g1", "w", "b"})
                     .delegate("g2", "cuda:0", "gelu", {"l2"})
                     .output({"g2"})
                     .build_as<cir::graph>();
  const devpass::rewrite_counters counters = devpass::fuse_ops<cir::fusion_names>(g);
  CHECK(counters.rewrites == 2);
  CHECK(counters.nodes_added == 2);
  CHECK(counters.nodes_removed == 5);
  const vertex first = node(g, "g1@linear_add_gelu");
  CHECK(g[first].op == opcode::linear_add_gelu);
  CHECK(devpass::operands(g, first) == std::vector<value_ref>{value(g, "x"), value(g, "w"), value(g, "b")});
  const vertex second = node(g, "g2@linear_gelu");
  CHECK(g[second].op == opcode::linear_gelu);
  CHECK(devpass::node_device(g, second) == devpass::cuda_device(0));
  CHECK(devpass::operands(g, second) == std::vector<value_ref>{{first, 0}, value(g, "w"), value(g, "b")});
  CHECK(devpass::operand(g, node(g, "out"), 0) == value_ref{second, 0});
  CHECK(devpass::verify_propagation_input(g).ok());
}

TEST_CASE("casts: one cast per value and dtype, where the value lives, from the signatures of the IR's ops") {
  // x on the host, h on cuda:0; two matmuls want both operands in float16, a linear its slot 0 in
  // bfloat16 (its slot 1 is past its list: any dtype).
  cir::graph g = graph_builder{}
                     .input("x", {4, 4})
                     .delegate("h", "cuda:0", "relu", {"x"})
                     .delegate("m1", "cuda:0", "matmul", {"x", "h"})
                     .delegate("m2", "cuda:0", "matmul", {"h", "x"})
                     .call("l", "linear", {"x", "h"})
                     .output({"m1", "m2", "l"})
                     .build_as<cir::graph>();
  devpass::cast_signatures signatures;
  signatures.set("matmul", {dtype::float16, dtype::float16});
  signatures.set("linear", {dtype::bfloat16});
  const devpass::rewrite_counters counters = devpass::insert_casts<"cast">(g, signatures);
  CHECK(counters.rewrites == 5);  // m1.0, m1.1, m2.0, m2.1, l.0
  CHECK(counters.nodes_added == 3);
  struct expected {
    std::string_view cast, of;
    op_kind role;
    devpass::device on;
    dtype type;
  };
  for (const expected& e : {expected{"x@cast", "x", op_kind::call, devpass::cpu_device, dtype::float16},
                            {"h@cast", "h", op_kind::delegate, devpass::cuda_device(0), dtype::float16},
                            {"x@cast#2", "x", op_kind::call, devpass::cpu_device, dtype::bfloat16}}) {
    CAPTURE(e.cast);
    const vertex c = node(g, e.cast);
    CHECK(g[c].op == opcode::cast);
    CHECK(devpass::role_of(g, c) == e.role);
    CHECK(devpass::node_device(g, c) == e.on);
    CHECK(devpass::value_dtype(g, {c, 0}) == e.type);
    CHECK(shape_of(g, e.cast) == std::vector<std::int64_t>{4, 4});
    CHECK(devpass::operands(g, c) == std::vector<value_ref>{value(g, e.of)});
  }
  CHECK(devpass::operands(g, node(g, "m1")) == std::vector<value_ref>{value(g, "x@cast"), value(g, "h@cast")});
  CHECK(devpass::operands(g, node(g, "m2")) == std::vector<value_ref>{value(g, "h@cast"), value(g, "x@cast")});
  CHECK(devpass::operands(g, node(g, "l")) == std::vector<value_ref>{value(g, "x@cast#2"), value(g, "h")});
  CHECK(devpass::insert_casts<"cast">(g, signatures).rewrites == 0);  // nothing left to cast
  // Propagation then bridges the casts' readers: x and x@cast uploaded, h and the results downloaded.
  (void)cir::compile(g);
  CHECK_COPIES(g, 2, 3, 0);
  CHECK(devpass::verify_devices(g).ok());
}

TEST_CASE("casts: a round trip f16 → f32 → f16 is elided; f32 → f16 → f32 loses precision and stays") {
  const auto round_trip = [](dtype from, dtype via) {
    return graph_builder{}
        .input("x", {{2, 3}, from})
        .delegate("up", "cuda:0", "cast", {"x"}, {{{2, 3}, via}})
        .delegate("down", "cuda:0", "cast", {"up"}, {{{2, 3}, from}})
        .delegate("use", "cuda:0", "relu", {"down"})
        .output({"use"})
        .build_as<cir::graph>();
  };
  SUBCASE("exact: both casts go, the reader reads x") {
    cir::graph g = round_trip(dtype::float16, dtype::float32);
    const devpass::rewrite_counters counters = devpass::elide_cast_round_trips<"cast">(g);
    CHECK(counters.rewrites == 1);
    CHECK(counters.nodes_removed == 2);
    CHECK_FALSE(devpass::testing::find_value(g, "up"));
    CHECK_FALSE(devpass::testing::find_value(g, "down"));
    CHECK(devpass::operand(g, node(g, "use"), 0) == value(g, "x"));
    CHECK(devpass::verify_propagation_input(g).ok());
  }
  SUBCASE("lossy: kept as it is") {
    cir::graph g = round_trip(dtype::float32, dtype::float16);
    const cir::graph before = g;
    CHECK(devpass::elide_cast_round_trips<"cast">(g).rewrites == 0);
    CHECK_SAME_GRAPH(g, before);
    CHECK(devpass::operand(g, node(g, "use"), 0) == value(g, "down"));
  }
}

namespace {
// x and w on the host; a matmul on cuda:0 and a relu of x on cuda:1, summed by an all_reduce on
// cuda:0; a cast to float16 on the host; and a transpose pair the pipeline elides.
cir::graph two_gpus() {
  return graph_builder{}
      .input("x", {2, 3})
      .constant("w", {3, 3})
      .delegate("mm", "cuda:0", "matmul", {"x", "w"}, {{2, 3}})
      .delegate("t", "cuda:0", "transpose", {"mm"}, {{3, 2}})
      .delegate("u", "cuda:0", "transpose", {"t"}, {{2, 3}})
      .delegate("p", "cuda:1", "relu", {"x"})
      .delegate("s", "cuda:0", "all_reduce", {"u", "p"})
      .call("h", "cast", {"s"}, {{{2, 3}, dtype::float16}})
      .output({"h"})
      .build_as<cir::graph>();
}
}  // namespace

TEST_CASE("pipeline: the rules, then one upload per (host value, GPU), a peer copy between GPUs, a download") {
  cir::graph g = two_gpus();
  devpass::pipeline::phase_statistics phases;
  const devpass::pipeline::table_result done = cir::compile(g, cir::options_for(), phases);
  // No signatures: insert-casts does not run; nothing to fuse, no cast round trip.
  REQUIRE(phases.phases.size() == 6);
  CHECK(phases.phases[0].name == "simplify-views");
  CHECK(phases.phases[0].result.counters.rewrites == 1);       // the transpose pair
  CHECK(phases.phases[0].result.counters.nodes_removed == 2);  // its two transposes
  CHECK(phases.phases[1].name == "fuse");
  CHECK(phases.phases[1].result.counters.rewrites == 0);
  CHECK(phases.phases[2].name == "elide-cast-round-trips");
  CHECK(phases.phases[2].result.counters.rewrites == 0);
  CHECK(phases.phases[3].name == "check-propagation-input");
  CHECK(phases.phases[4].name == "insert-shared-copies");
  CHECK(phases.phases[4].result.counters.nodes_added == 5);
  CHECK(phases.phases[5].name == "annotate-devices");
  CHECK(done.counters.nodes_removed == 2);
  CHECK_COPIES(g, 3, 1, 1);
  CHECK(done.copies_made == devpass::count_copies(g));
  const cir::graph expected =
      graph_builder{}
          .input("x", {2, 3})
          .constant("w", {3, 3})
          .delegate("mm", "cuda:0", "matmul", {"x@upload[cuda:0]", "w@upload[cuda:0]"}, {{2, 3}})
          .delegate("p", "cuda:1", "relu", {"x@upload[cuda:1]"})
          .delegate("s", "cuda:0", "all_reduce", {"mm", "p@peer_copy[cuda:0]"})
          .call("h", "cast", {"s@download"}, {{{2, 3}, dtype::float16}})
          .output({"h"})
          .h2d_copy("x@upload[cuda:0]", "cuda:0", "x")
          .h2d_copy("w@upload[cuda:0]", "cuda:0", "w")
          .h2d_copy("x@upload[cuda:1]", "cuda:1", "x")
          .d2d_copy("p@peer_copy[cuda:0]", "cuda:0", "p")
          .d2h_copy("s@download", "cuda:0", "s")
          .annotate_devices()
          .build_as<cir::graph>();
  CHECK_SAME_GRAPH(g, expected);
  CHECK(devpass::verify_devices(g).ok());
}

namespace {
// The team's policy with its own knob off.
struct without_view_rules : cir::policy {
  static constexpr bool simplify_views = false;
};
}  // namespace

TEST_CASE("pipeline: what the policy compiles out does not run, and options it cannot honour are refused") {
  SUBCASE("a policy without the view rules copies, and leaves the transposes") {
    cir::graph g = two_gpus();
    const devpass::pipeline::table_result done = cir::compile<without_view_rules>(g);
    CHECK(done.counters.nodes_removed == 0);
    CHECK(devpass::operand(g, node(g, "s"), 0) == value(g, "u"));
    CHECK_COPIES(g, 3, 1, 1);
    CHECK(devpass::verify_devices(g).ok());
  }
  SUBCASE("ExecuTorch's copies, which the team's policy compiles out, are a config_error before any rewrite") {
    cir::graph g = two_gpus();
    cir::compile_options options = cir::options_for();
    options.policy = devpass::copy_policy::executorch;
    CHECK_THROWS_AS(cir::compile(g, options), devpass::config_error);
    CHECK(devpass::testing::find_value(g, "t"));
    CHECK_COPIES(g, 0, 0, 0);
  }
  SUBCASE("a value marked off its producer's device is refused, naming it, before any copy") {
    cir::graph g = two_gpus();
    devpass::mark_device(g, value(g, "p"), devpass::cuda_device(0));
    CHECK_THROWS_WITH_AS(cir::compile(g),
                         "node 'p': outputs[0]: a delegate produces on cuda:1 but the value is marked on cuda:0",
                         devpass::graph_error);
    CHECK_COPIES(g, 0, 0, 0);
  }
}

namespace {
// x (float16) on the host, widened on cuda:0 for gelu(linear(wide, w, b)), a chain that fuses, and
// for a matmul whose signature wants float16 (the test's signatures): its operand is cast back to
// float16, a round trip elided, and the float32 weight cast on the host. A transpose pair after it.
cir::graph mixed_precision() {
  return graph_builder{}
      .input("x", {{2, 8}, dtype::float16})
      .constant("w", {8, 8})
      .constant("b", {8})
      .delegate("wide", "cuda:0", "cast", {"x"}, {{{2, 8}, dtype::float32}})
      .delegate("l", "cuda:0", "linear", {"wide", "w", "b"})
      .delegate("act", "cuda:0", "gelu", {"l"})
      .delegate("m", "cuda:0", "matmul", {"wide", "w"})
      .delegate("t", "cuda:0", "transpose", {"m"}, {{8, 2}})
      .delegate("u", "cuda:0", "transpose", {"t"}, {{2, 8}})
      .output({"act", "u"})
      .build_as<cir::graph>();
}
devpass::cast_signatures half_matmul() {
  devpass::cast_signatures signatures;
  signatures.set("matmul", {dtype::float16, dtype::float16});
  return signatures;
}
}  // namespace

TEST_CASE("pipeline: views, fusion, casts and their round trips, then the copies, each phase counted") {
  cir::graph g = mixed_precision();
  const devpass::cast_signatures signatures = half_matmul();
  devpass::pipeline::phase_statistics phases;
  const devpass::pipeline::table_result done = cir::compile(g, cir::options_for(&signatures), phases);
  struct expected {
    std::string_view phase;
    std::size_t rewrites, added, removed;
  };
  const expected each[] = {
      {"simplify-views", 1, 0, 2},          // the transpose pair
      {"fuse", 1, 1, 2},                    // linear + gelu
      {"insert-casts", 2, 2, 0},            // wide and w to float16 for the matmul
      {"elide-cast-round-trips", 1, 0, 1},  // x → wide → wide@cast: the matmul reads x; wide stays
      {"check-propagation-input", 0, 0, 0},
      // x (read by wide and m), w, b and w@cast uploaded; the two results downloaded
      {"insert-shared-copies", 7, 6, 0},
      {"annotate-devices", 0, 0, 0},
  };
  REQUIRE(phases.phases.size() == std::size(each));
  for (std::size_t i = 0; i < std::size(each); ++i) {
    CAPTURE(each[i].phase);
    const devpass::rewrite_counters& counters = phases.phases[i].result.counters;
    CHECK(phases.phases[i].name == each[i].phase);
    CHECK(counters.rewrites == each[i].rewrites);
    CHECK(counters.nodes_added == each[i].added);
    CHECK(counters.nodes_removed == each[i].removed);
  }
  CHECK(done.counters.nodes_added == 9);
  CHECK(done.counters.nodes_removed == 5);
  CHECK_COPIES(g, 4, 2, 0);
  CHECK(done.copies_made == devpass::count_copies(g));

  const cir::graph expected_graph =
      graph_builder{}
          .input("x", {{2, 8}, dtype::float16})
          .constant("w", {8, 8})
          .constant("b", {8})
          .delegate("wide", "cuda:0", "cast", {"x@upload[cuda:0]"}, {{{2, 8}, dtype::float32}})
          .delegate("act@linear_gelu", "cuda:0", "linear_gelu", {"wide", "w@upload[cuda:0]", "b@upload[cuda:0]"},
                    {{2, 8}})
          .call("w@cast", "cast", {"w"}, {{{8, 8}, dtype::float16}})
          .delegate("m", "cuda:0", "matmul", {"x@upload[cuda:0]", "w@cast@upload[cuda:0]"}, {{2, 8}})
          .output({"act@linear_gelu@download", "m@download"})
          .h2d_copy("x@upload[cuda:0]", "cuda:0", "x")
          .h2d_copy("w@upload[cuda:0]", "cuda:0", "w")
          .h2d_copy("b@upload[cuda:0]", "cuda:0", "b")
          .h2d_copy("w@cast@upload[cuda:0]", "cuda:0", "w@cast")
          .d2h_copy("act@linear_gelu@download", "cuda:0", "act@linear_gelu")
          .d2h_copy("m@download", "cuda:0", "m")
          .annotate_devices()
          .build_as<cir::graph>();
  CHECK_SAME_GRAPH(g, expected_graph);
  // What the graph comparison does not see: the ops.
  CHECK(g[node(g, "act@linear_gelu")].op == opcode::linear_gelu);
  CHECK(g[node(g, "w@cast")].op == opcode::cast);
  CHECK(g[node(g, "m")].op == opcode::matmul);
  CHECK(devpass::verify_propagation_input(g).ok());
  CHECK(devpass::verify_devices(g).ok());
}

namespace {
// The team's policy with fusion compiled out.
struct without_fusion : cir::policy {
  static constexpr bool fuse_kernels = false;
};
}  // namespace

TEST_CASE("pipeline: a policy without fusion has no fuse phase and leaves the chain; the casts still run") {
  cir::graph g = mixed_precision();
  const devpass::cast_signatures signatures = half_matmul();
  devpass::pipeline::phase_statistics phases;
  (void)cir::compile<without_fusion>(g, cir::options_for<without_fusion>(&signatures), phases);
  REQUIRE(phases.phases.size() == 6);
  CHECK(phases.phases[0].name == "simplify-views");
  CHECK(phases.phases[1].name == "insert-casts");
  CHECK(phases.phases[1].result.counters.nodes_added == 2);
  CHECK(g[node(g, "act")].op == opcode::gelu);
  CHECK(devpass::operand(g, node(g, "act"), 0) == value(g, "l"));
  CHECK_FALSE(devpass::testing::find_value(g, "act@linear_gelu"));
  CHECK(devpass::operand(g, node(g, "m"), 1) == value(g, "w@cast@upload[cuda:0]"));
  CHECK(devpass::verify_devices(g).ok());
}
