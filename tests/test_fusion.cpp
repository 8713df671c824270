// Fusion by op names (passes/fusion.hpp): conv2d+add+relu, linear+add+gelu and linear+gelu chains
// become one node on the same device, only where the intermediate values have one reader and the
// chain runs on one device, and not an add with ATen's alpha scale or an approximate gelu; the
// short and the ATen names; the phase in a pipeline; the same table on a compiler's own IR with
// its own names (tests/kernel_ir.hpp); and the model graphs, with the fusions counted, verified
// before and after device propagation.
#include "devpass/passes/fusion.hpp"

#include <string>
#include <vector>

#include "devpass/graph/verify.hpp"
#include "devpass/passes/propagate_device_fwd.hpp"
#include "devpass/pipeline/instrumentation.hpp"
#include "devpass/testing.hpp"
#include "graph_dir.hpp"
#include "kernel_ir.hpp"
#include "read_graph_declared.hpp"

using namespace devpass;
using devpass::testing::graph_builder;
using devpass::testing::value_of;

namespace {
std::size_t count_kernel(const graph& g, std::string_view kernel) {
  std::size_t count = 0;
  for (const vertex v : boost::make_iterator_range(boost::vertices(g)))
    count += !g[v].erased && g[v].kernel.view() == kernel;
  return count;
}

struct chain_names {
  const char* conv = "conv2d";
  const char* add = "add";
  const char* relu = "relu";
};
// relu(add(conv2d(x, w), b)) on `device` (the add on `add_device`); `swapped`: add(b, conv);
// `extra`: a second reader of value `extra` ("conv" or "sum").
graph conv_block(chain_names names = {}, bool swapped = false, const char* extra = nullptr,
                 const char* device = "cuda:0", const char* add_device = "cuda:0") {
  graph_builder gb;
  gb.input("x", {1, 3, 8, 8})
      .constant("w", {3, 3, 3, 3})
      .constant("b", {1, 3, 8, 8})
      .delegate("conv", device, names.conv, {"x", "w"})
      .delegate("sum", add_device, names.add,
                swapped ? std::vector<std::string>{"b", "conv"} : std::vector<std::string>{"conv", "b"})
      .delegate("act", device, names.relu, {"sum"});
  if (extra) gb.call("extra", "neg", {extra});
  return extra ? gb.output({"act", "extra"}).build() : gb.output({"act"}).build();
}
}  // namespace

TEST_CASE("fuse_ops: relu(add(conv2d(x, w), b)) becomes one node on the same device, reading x, w, b") {
  graph g = conv_block();
  const rewrite_counters counters = fuse_ops(g);
  CHECK(counters.rewrites == 1);
  CHECK(counters.nodes_added == 1);
  CHECK(counters.nodes_removed == 3);
  CHECK_FALSE(find_node(g, "conv"));
  CHECK_FALSE(find_node(g, "sum"));
  CHECK_FALSE(find_node(g, "act"));
  const vertex fused = *find_node(g, "act@fused.conv2d_add_relu");
  CHECK(g[fused].op == op_kind::delegate);
  CHECK(g[fused].device == cuda_device(0));
  CHECK(g[fused].kernel.view() == "fused.conv2d_add_relu");
  CHECK(g[fused].outputs.size() == 1);
  CHECK(g[fused].outputs[0] == tensor_spec{dtype::float32, {1, 3, 8, 8}});
  CHECK(operands(g, fused) == std::vector<value_ref>{value_of(g, "x"), value_of(g, "w"), value_of(g, "b")});
  CHECK(operand(g, *find_node(g, "out"), 0) == value_ref{fused, 0});
  CHECK(verify_structure(g).ok());
  CHECK(fuse_ops(g).rewrites == 0);  // the fused node matches no chain
  (void)propagate_device(g);
  CHECK(verify(g).ok());
}

TEST_CASE("fuse_ops: the add's operands in either order; the fused node reads x, w, b either way") {
  graph g = conv_block({}, true);
  CHECK(fuse_ops(g).rewrites == 1);
  const vertex fused = *find_node(g, "act@fused.conv2d_add_relu");
  CHECK(operands(g, fused) == std::vector<value_ref>{value_of(g, "x"), value_of(g, "w"), value_of(g, "b")});
  CHECK(verify_structure(g).ok());
}

TEST_CASE("fuse_ops: ATen's names, and the short and ATen names mixed") {
  SUBCASE("ATen") {
    graph g = conv_block({"aten.convolution.default", "aten.add.Tensor", "aten.relu.default"});
    CHECK(fuse_ops(g).rewrites == 1);
    CHECK(count_kernel(g, "fused.conv2d_add_relu") == 1);
  }
  SUBCASE("mixed") {
    graph g = conv_block({"conv2d", "aten.add.Tensor", "relu"});
    CHECK(fuse_ops(g).rewrites == 1);
    CHECK(count_kernel(g, "fused.conv2d_add_relu") == 1);
  }
}

TEST_CASE("fuse_ops: not where an intermediate value has another reader, nor across devices or roles") {
  SUBCASE("the conv's value read elsewhere") {
    graph g = conv_block({}, false, "conv");
    CHECK(fuse_ops(g).rewrites == 0);
    CHECK(boost::num_vertices(g) == 8);
  }
  SUBCASE("the add's value read elsewhere") {
    graph g = conv_block({}, false, "sum");
    CHECK(fuse_ops(g).rewrites == 0);
  }
  SUBCASE("the add on another device") {
    graph g = conv_block({}, false, nullptr, "cuda:0", "cuda:1");
    CHECK(fuse_ops(g).rewrites == 0);
  }
  SUBCASE("a host call in a chain of delegates on the host") {
    graph g = graph_builder{}
                  .input("x", {4})
                  .constant("w", {4})
                  .constant("b", {4})
                  .delegate("conv", "cpu", "conv2d", {"x", "w"})
                  .call("sum", "add", {"conv", "b"})
                  .delegate("act", "cpu", "relu", {"sum"})
                  .output({"act"})
                  .build();
    CHECK(fuse_ops(g).rewrites == 0);
  }
  SUBCASE("a relu that declares no output: nothing to lay the fused node out as") {
    graph g = testing_support::read_graph_string(R"({"format":"devpass.graph/1","name":"n","nodes":[
        {"id":"x","op":"input","outputs":[{"dtype":"float32","shape":[2]}]},
        {"id":"w","op":"constant","outputs":[{"dtype":"float32","shape":[2]}]},
        {"id":"conv","op":"delegate","device":"cuda:0","kernel":"conv2d","inputs":["x","w"],"outputs":[{"dtype":"float32","shape":[2]}]},
        {"id":"sum","op":"delegate","device":"cuda:0","kernel":"add","inputs":["conv","w"],"outputs":[{"dtype":"float32","shape":[2]}]},
        {"id":"act","op":"delegate","device":"cuda:0","kernel":"relu","inputs":["sum"],"outputs":[]},
        {"id":"out","op":"output","inputs":["x"]}]})");
    CHECK(fuse_ops(g).rewrites == 0);
    CHECK(find_node(g, "act"));
  }
  SUBCASE("a conv with a bias operand: not the chain's two-operand conv2d") {
    graph g = graph_builder{}
                  .input("x", {4})
                  .constant("w", {4})
                  .constant("b", {4})
                  .delegate("conv", "cuda:0", "conv2d", {"x", "w", "b"})
                  .delegate("sum", "cuda:0", "add", {"conv", "b"})
                  .delegate("act", "cuda:0", "relu", {"sum"})
                  .output({"act"})
                  .build();
    CHECK(fuse_ops(g).rewrites == 0);
  }
}

TEST_CASE("fuse_ops: not an add that scales its operand (alpha), nor an approximate gelu") {
  // relu(add(conv2d(x, w), b)) with the add's attributes `add_attrs`, and gelu(linear(x, w, b))
  // with the gelu's `gelu_attrs`.
  const auto chains = [](const char* add_attrs, const char* gelu_attrs) {
    return testing_support::read_graph_string(std::string(R"({"format":"devpass.graph/1","name":"n","nodes":[
        {"id":"x","op":"input","outputs":[{"dtype":"float32","shape":[2]}]},
        {"id":"w","op":"constant","outputs":[{"dtype":"float32","shape":[2]}]},
        {"id":"conv","op":"delegate","device":"cuda:0","kernel":"aten.convolution.default","inputs":["x","w"],"outputs":[{"dtype":"float32","shape":[2]}]},
        {"id":"sum","op":"delegate","device":"cuda:0","kernel":"aten.add.Tensor","inputs":["conv","w"],"attrs":)") +
                                              add_attrs + R"(,"outputs":[{"dtype":"float32","shape":[2]}]},
        {"id":"act","op":"delegate","device":"cuda:0","kernel":"aten.relu.default","inputs":["sum"],"outputs":[{"dtype":"float32","shape":[2]}]},
        {"id":"lin","op":"delegate","device":"cuda:0","kernel":"aten.linear.default","inputs":["act","w","w"],"outputs":[{"dtype":"float32","shape":[2]}]},
        {"id":"gel","op":"delegate","device":"cuda:0","kernel":"aten.gelu.default","inputs":["lin"],"attrs":)" +
                                              gelu_attrs + R"(,"outputs":[{"dtype":"float32","shape":[2]}]},
        {"id":"out","op":"output","inputs":["gel"]}]})");
  };
  SUBCASE("alpha 2 and a tanh gelu: both chains stay") {
    graph g = chains(R"({"alpha":2})", R"({"approximate":"tanh"})");
    CHECK(fuse_ops(g).rewrites == 0);
    CHECK(find_node(g, "sum"));
    CHECK(find_node(g, "gel"));
  }
  SUBCASE("alpha 1.0 and approximate none: both fuse") {
    graph g = chains(R"({"alpha":1.0})", R"({"approximate":"none"})");
    CHECK(fuse_ops(g).rewrites == 2);
    CHECK(count_kernel(g, "fused.conv2d_add_relu") == 1);
    CHECK(count_kernel(g, "fused.linear_gelu") == 1);
  }
  SUBCASE("alpha 1 and no gelu attribute: both fuse") {
    graph g = chains(R"({"alpha":1})", "{}");
    CHECK(fuse_ops(g).rewrites == 2);
  }
  SUBCASE("alpha -1 (a subtraction): the conv chain stays, the gelu fuses") {
    graph g = chains(R"({"alpha":-1})", "{}");
    CHECK(fuse_ops(g).rewrites == 1);
    CHECK(count_kernel(g, "fused.conv2d_add_relu") == 0);
    CHECK(count_kernel(g, "fused.linear_gelu") == 1);
  }
}

TEST_CASE("fuse_ops: gelu(add(linear(x, w), b)) and gelu(linear(x, w, b))") {
  graph g = graph_builder{}
                .input("x", {2, 8})
                .constant("w", {8, 8})
                .constant("b", {8})
                .delegate("l1", "cuda:0", "linear", {"x", "w"})
                .delegate("s1", "cuda:0", "add", {"l1", "b"})
                .delegate("g1", "cuda:0", "gelu", {"s1"})
                .delegate("l2", "cuda:0", "aten.linear.default", {"g1", "w", "b"})
                .delegate("g2", "cuda:0", "aten.gelu.default", {"l2"})
                // linear with a bias, then an add: neither chain (gelu reads the add, whose linear has three operands)
                .delegate("l3", "cuda:0", "linear", {"g2", "w", "b"})
                .delegate("s3", "cuda:0", "add", {"l3", "b"})
                .delegate("g3", "cuda:0", "gelu", {"s3"})
                .output({"g3"})
                .build();
  const rewrite_counters counters = fuse_ops(g);
  CHECK(counters.rewrites == 2);
  CHECK(counters.nodes_added == 2);
  CHECK(counters.nodes_removed == 5);
  const vertex first = *find_node(g, "g1@fused.linear_add_gelu");
  CHECK(operands(g, first) == std::vector<value_ref>{value_of(g, "x"), value_of(g, "w"), value_of(g, "b")});
  const vertex second = *find_node(g, "g2@fused.linear_gelu");
  CHECK(g[second].kernel.view() == "fused.linear_gelu");
  CHECK(operands(g, second) == std::vector<value_ref>{{first, 0}, value_of(g, "w"), value_of(g, "b")});
  CHECK(operand(g, *find_node(g, "l3"), 0) == value_ref{second, 0});
  CHECK(find_node(g, "g3"));
  CHECK(verify_structure(g).ok());
}

TEST_CASE("the fuse phase in a pipeline, before device propagation") {
  const auto pipeline = pipeline::make_pipeline(fusion::fuse<>{});
  graph g = conv_block();
  pipeline::phase_statistics statistics;
  (void)pipeline.run<propagate_policy>(g, fusion::no_options{}, statistics);
  REQUIRE(statistics.phases.size() == 1);
  CHECK(statistics.phases[0].name == "fuse");
  CHECK(statistics.phases[0].result.counters.rewrites == 1);
  (void)propagate_device(g);
  CHECK(verify(g).ok());
}

namespace {
// The compiler's own names: its enum has no "add", "linear" nor ATen's; its fused kernels are its own.
struct kir_names {
  using conv2d = fusion::ops<"conv">;
  using add = fusion::ops<"bias_add">;
  using relu = fusion::ops<"relu">;
  using linear = fusion::ops<"dense">;
  using gelu = fusion::ops<"gelu">;
  static constexpr pattern::fixed_string conv2d_add_relu = "conv_bias_relu";
  static constexpr pattern::fixed_string linear_add_gelu = "dense_bias_gelu";
  static constexpr pattern::fixed_string linear_gelu = "dense_gelu";
};
}  // namespace

TEST_CASE("fusion on a compiler's own IR: its vocabulary, its fused kernels") {
  kir::graph g = graph_builder{}
                     .input("x", {4})
                     .constant("w", {4})
                     .constant("b", {4})
                     .delegate("c", "cuda:1", "conv", {"x", "w"})
                     .delegate("s", "cuda:1", "bias_add", {"b", "c"})
                     .delegate("r", "cuda:1", "relu", {"s"})
                     .delegate("d", "cuda:1", "dense", {"r", "w", "b"})
                     .delegate("g", "cuda:1", "gelu", {"d"})
                     .output({"g"})
                     .build_as<kir::graph>();
  const rewrite_counters counters = fuse_ops<kir_names>(g);
  CHECK(counters.rewrites == 2);
  CHECK(counters.nodes_removed == 5);
  const auto first = testing::find_value(g, "r@conv_bias_relu");
  REQUIRE(first);
  CHECK(g[first->producer].op == kir::kernel::conv_bias_relu);
  CHECK(g[first->producer].role == op_kind::delegate);
  CHECK(g[first->producer].on == cuda_device(1));
  CHECK(operands(g, first->producer) == std::vector<value_ref>{*testing::find_value(g, "x"),
                                                               *testing::find_value(g, "w"),
                                                               *testing::find_value(g, "b")});
  const auto second = testing::find_value(g, "g@dense_gelu");
  REQUIRE(second);
  CHECK(g[second->producer].op == kir::kernel::dense_gelu);
  CHECK(operand(g, second->producer, 0) == first);
}

TEST_CASE("fuse_ops on the model graphs: the fusions counted; verified before and after device propagation") {
  // The transformer's six MLP blocks are gelu(linear(x, w, b)), one device each (per_op: cuda:0;
  // two_gpu: each block on one of the two). The CNNs put a batchnorm between every conv2d and its
  // add or relu, and their fused partitionings have only fused:N kernels: nothing to fuse there.
  struct expected {
    const char* graph;
    std::size_t fusions;
  };
  for (const expected& e :
       {expected{"models/mobilenet_v2.fused.json", 0}, expected{"models/mobilenet_v2.per_op.json", 0},
        expected{"models/mobilenet_v2.two_gpu.json", 0}, expected{"models/resnet18.fused.json", 0},
        expected{"models/resnet18.per_op.json", 0}, expected{"models/resnet18.two_gpu.json", 0},
        expected{"models/transformer_enc.fused.json", 0}, expected{"models/transformer_enc.per_op.json", 6},
        expected{"models/transformer_enc.two_gpu.json", 6}}) {
    CAPTURE(std::string(e.graph));
    graph g = testing_support::read_graph_file(testing_support::graph_path(e.graph));
    const std::size_t nodes = boost::num_vertices(g);
    const rewrite_counters counters = fuse_ops(g);
    CHECK(counters.rewrites == e.fusions);
    CHECK(counters.nodes_added == e.fusions);
    CHECK(boost::num_vertices(g) == nodes - e.fusions);  // two nodes become one
    CHECK(count_kernel(g, "fused.linear_gelu") == e.fusions);
    CHECK(verify_structure(g).ok());
    (void)propagate_device(g);
    CHECK(verify(g).ok());
  }
}
