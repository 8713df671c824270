// The cast family (passes/casts.hpp): casts inserted where a kernel's signature wants another
// dtype, one per value and dtype, where the value lives; exact round trips elided and lossy ones
// kept; the signatures read from JSON with errors naming the op and slot; the phases in a
// pipeline; the same tables on a compiler's own IR (tests/kernel_ir.hpp); and the model graphs,
// with the casts counted, verified before and after device propagation.
#include "devpass/passes/casts.hpp"

#include <string>
#include <vector>

#include "devpass/graph/verify.hpp"
#include "devpass/io/cast_signatures_json.hpp"
#include "devpass/io/json_reader.hpp"
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
// How many live nodes run op `kernel`.
std::size_t count_kernel(const graph& g, std::string_view kernel) {
  std::size_t count = 0;
  for (const vertex v : boost::make_iterator_range(boost::vertices(g)))
    count += !g[v].erased && g[v].kernel.view() == kernel;
  return count;
}

cast_signatures mm_half() {
  return read_cast_signatures_string(
      R"({"aten.mm.default": ["float16", "float16"], "relu": [null], "aten.add.Tensor": ["float32", "int32"]})",
      "<test>");
}

// x (f32, host) and w (f32, placed on cuda:0) read by three matmuls that want float16, a relu that
// takes anything and an add that wants its slot 1 as int32.
graph matmuls() {
  return graph_builder{}
      .input("x", {4, 4})
      .constant("w", {4, 4}, "cuda:0")
      .delegate("m1", "cuda:0", "aten.mm.default", {"x", "w"})
      .delegate("m2", "cuda:0", "aten.mm.default", {"w", "x"})
      .call("h", "aten.mm.default", {"x", "x"})
      .delegate("r", "cuda:0", "relu", {"m1"})
      .call("s", "aten.add.Tensor", {"x", "x"})
      .output({"r", "m2", "h", "s"})
      .build();
}
}  // namespace

TEST_CASE("insert_casts: one cast per value and dtype, where the value lives, fed to every slot that wants it") {
  graph g = matmuls();
  const cast_signatures signatures = mm_half();
  const rewrite_counters counters = insert_casts(g, signatures);
  CHECK(counters.rewrites == 7);  // m1.0, m1.1, m2.0, m2.1, h.0, h.1, s.1
  CHECK(counters.nodes_added == 3);
  CHECK(count_kernel(g, "aten._to_copy.default") == 3);

  const vertex x16 = *find_node(g, "x@cast");
  CHECK(g[x16].op == op_kind::call);  // x lives on the host: the cast runs there
  CHECK(g[x16].device == cpu_device);
  CHECK(g[x16].outputs[0].type == dtype::float16);
  CHECK(g[x16].outputs[0].shape == tensor_shape{4, 4});
  CHECK(operand(g, x16, 0) == value_of(g, "x"));
  const vertex w16 = *find_node(g, "w@cast");
  CHECK(g[w16].op == op_kind::delegate);  // w lives on cuda:0: so does its cast
  CHECK(g[w16].device == cuda_device(0));
  CHECK(g[w16].outputs[0].type == dtype::float16);
  const vertex x32 = *find_node(g, "x@cast#2");  // the second dtype x is cast to: a cast of its own
  CHECK(g[x32].outputs[0].type == dtype::int32);

  CHECK(operands(g, *find_node(g, "m1")) == std::vector<value_ref>{{x16, 0}, {w16, 0}});
  CHECK(operands(g, *find_node(g, "m2")) == std::vector<value_ref>{{w16, 0}, {x16, 0}});
  CHECK(operands(g, *find_node(g, "h")) == std::vector<value_ref>{{x16, 0}, {x16, 0}});
  CHECK(operands(g, *find_node(g, "r")) == std::vector<value_ref>{value_of(g, "m1")});           // relu: any dtype
  CHECK(operands(g, *find_node(g, "s")) == std::vector<value_ref>{value_of(g, "x"), {x32, 0}});  // slot 0 is f32
  CHECK(verify_structure(g).ok());

  // Nothing left to cast: a second run changes nothing.
  CHECK(insert_casts(g, signatures).rewrites == 0);
  // Device propagation then makes the casts' readers on other devices read copies: consistent.
  (void)propagate_device(g);
  CHECK(verify(g).ok());
}

TEST_CASE("insert_casts: null slots, slots past an op's list and ops without an entry take any dtype") {
  graph g = graph_builder{}
                .input("x", {4})
                .input("i", {{4}, dtype::int64})
                .call("a", "aten.mm.default", {"x", "i", "x"})  // two slots listed, three read
                .call("b", "relu", {"i"})
                .call("c", "unlisted", {"i"})
                .output({"a", "b", "c"})
                .build();
  cast_signatures signatures;
  signatures.set("aten.mm.default", {std::nullopt, dtype::float32});
  signatures.set("relu", {std::nullopt});
  const rewrite_counters counters = insert_casts(g, signatures);
  CHECK(counters.nodes_added == 1);
  CHECK(operand(g, *find_node(g, "a"), 0) == value_of(g, "x"));
  CHECK(operand(g, *find_node(g, "a"), 1) == value_of(g, "i@cast"));
  CHECK(g[value_of(g, "i@cast").producer].outputs[0].type == dtype::float32);
  CHECK(operand(g, *find_node(g, "a"), 2) == value_of(g, "x"));
  CHECK(operand(g, *find_node(g, "b"), 0) == value_of(g, "i"));
  CHECK(operand(g, *find_node(g, "c"), 0) == value_of(g, "i"));
}

TEST_CASE("insert_casts: a cast's own operand is never cast, whatever the signatures say of the cast") {
  graph g = graph_builder{}
                .input("x", {4})
                .call("k", "aten.mm.default", {"x"})
                .call("y", "aten._to_copy.default", {"x"}, {{{4}, dtype::bfloat16}})
                .output({"k", "y"})
                .build();
  cast_signatures signatures;
  signatures.set("aten.mm.default", {dtype::float16});
  signatures.set("aten._to_copy.default", {dtype::float16});
  CHECK(insert_casts(g, signatures).nodes_added == 1);
  CHECK(operand(g, *find_node(g, "y"), 0) == value_of(g, "x"));
  CHECK(operand(g, *find_node(g, "k"), 0) == value_of(g, "x@cast"));
  CHECK(verify_structure(g).ok());
}

TEST_CASE("insert_casts: a copy's operand is never cast, whatever kernel name the file gives the copy") {
  // A copy keeps its input's layout; on devpass::graph a copy has no op name, so neither a
  // signature nor an op pattern reads the kernel a file may write on it.
  graph g = read_graph_string(R"({"format": "devpass.graph/1", "name": "copies", "nodes": [
    {"id": "a", "op": "input", "outputs": [{"dtype": "float16", "shape": [2, 2]}]},
    {"id": "c0", "op": "h2d_copy", "device": "cuda:0", "kernel": "relu", "inputs": ["a"],
     "outputs": [{"dtype": "float16", "shape": [2, 2]}]},
    {"id": "c1", "op": "d2d_copy", "device": "cuda:1", "kernel": "relu", "inputs": ["c0"],
     "outputs": [{"dtype": "float16", "shape": [2, 2]}]},
    {"id": "k", "op": "delegate", "device": "cuda:1", "kernel": "relu", "inputs": ["c1"],
     "outputs": [{"dtype": "float32", "shape": [2, 2]}]},
    {"id": "out", "op": "output", "inputs": ["k"]}]})",
                              "<copies>");
  cast_signatures signatures;
  signatures.set("relu", {dtype::float32});
  CHECK(graph_model<graph>::op(g, *find_node(g, "c0")).empty());
  CHECK(graph_model<graph>::traits(g, *find_node(g, "c0")).empty());
  CHECK(graph_model<graph>::op(g, *find_node(g, "k")) == op_name::of("relu"));
  const rewrite_counters counters = insert_casts(g, signatures);
  CHECK(counters.nodes_added == 1);  // k's operand only, on cuda:1
  CHECK(operand(g, *find_node(g, "c0"), 0) == value_of(g, "a"));
  CHECK(operand(g, *find_node(g, "c1"), 0) == value_of(g, "c0"));
  CHECK(operand(g, *find_node(g, "k"), 0) == value_of(g, "c1@cast"));
  CHECK(verify_structure(g).ok());
}

namespace {
// One chain from -> via -> back: a value of dtype `from` cast to `via` and back (or to `back`).
graph round_trip(dtype from, dtype via, dtype back, bool inner_read_elsewhere = false) {
  graph_builder gb;
  gb.input("x", {{2, 3}, from})
      .delegate("up", "cuda:0", "aten._to_copy.default", {"x"}, {{{2, 3}, via}})
      .delegate("down", "cuda:0", "aten._to_copy.default", {"up"}, {{{2, 3}, back}})
      .delegate("use", "cuda:0", "relu", {"down"});
  if (inner_read_elsewhere) gb.call("other", "relu", {"up"});
  return inner_read_elsewhere ? gb.output({"use", "other"}).build() : gb.output({"use"}).build();
}
}  // namespace

TEST_CASE("elide_cast_round_trips: exact round trips go, lossy ones stay") {
  SUBCASE("f16 -> f32 -> f16 and int8 -> int32 -> int8: the reader reads x, both casts go") {
    for (const auto& [from, via] : {std::pair{dtype::float16, dtype::float32}, std::pair{dtype::int8, dtype::int32}}) {
      graph g = round_trip(from, via, from);
      const rewrite_counters counters = elide_cast_round_trips(g);
      CHECK(counters.rewrites == 1);
      CHECK(counters.nodes_removed == 2);
      CHECK_FALSE(find_node(g, "up"));
      CHECK_FALSE(find_node(g, "down"));
      CHECK(operand(g, *find_node(g, "use"), 0) == value_of(g, "x"));
      CHECK(verify_structure(g).ok());
    }
  }
  SUBCASE("f32 -> f16 -> f32 and int32 -> float32 -> int32: lossy, kept") {
    for (const auto& [from, via] :
         {std::pair{dtype::float32, dtype::float16}, std::pair{dtype::int32, dtype::float32}}) {
      graph g = round_trip(from, via, from);
      CHECK(elide_cast_round_trips(g).rewrites == 0);
      CHECK(operand(g, *find_node(g, "use"), 0) == value_of(g, "down"));
      CHECK(boost::num_vertices(g) == 5);
    }
  }
  SUBCASE("f16 -> f32 -> bf16: not back to x's dtype, kept") {
    graph g = round_trip(dtype::float16, dtype::float32, dtype::bfloat16);
    CHECK(elide_cast_round_trips(g).rewrites == 0);
  }
  SUBCASE("the widening cast has another reader: only the narrowing cast goes") {
    graph g = round_trip(dtype::float16, dtype::float32, dtype::float16, true);
    const rewrite_counters counters = elide_cast_round_trips(g);
    CHECK(counters.nodes_removed == 1);
    CHECK(find_node(g, "up"));
    CHECK_FALSE(find_node(g, "down"));
    CHECK(operand(g, *find_node(g, "use"), 0) == value_of(g, "x"));
    CHECK(operand(g, *find_node(g, "other"), 0) == value_of(g, "up"));
    CHECK(verify_structure(g).ok());
  }
}

TEST_CASE("insert then elide: a value widened on its way is read in its own dtype again") {
  // x (f16) is widened for a float32 kernel; a float16 kernel reads the widened value: its cast
  // back is inserted and the round trip elided, so it reads x itself.
  graph g = graph_builder{}
                .input("x", {{8}, dtype::float16})
                .call("widen", "aten._to_copy.default", {"x"}, {{{8}, dtype::float32}})
                .call("f32", "aten.exp.default", {"widen"})
                .call("f16", "aten.mm.default", {"widen"})
                .output({"f32", "f16"})
                .build();
  cast_signatures signatures;
  signatures.set("aten.mm.default", {dtype::float16});
  CHECK(insert_casts(g, signatures).nodes_added == 1);
  CHECK(find_node(g, "widen@cast"));
  const rewrite_counters elided = elide_cast_round_trips(g);
  CHECK(elided.nodes_removed == 1);  // widen@cast; widen itself is still read by f32
  CHECK(operand(g, *find_node(g, "f16"), 0) == value_of(g, "x"));
  CHECK(operand(g, *find_node(g, "f32"), 0) == value_of(g, "widen"));
  CHECK(verify_structure(g).ok());
}

TEST_CASE("the cast phases in a pipeline: insertion runs when the options hold signatures") {
  const auto casts = pipeline::make_pipeline(casts::insert_casts<>{}, casts::elide_round_trips<>{});
  const cast_signatures signatures = mm_half();
  SUBCASE("with signatures") {
    graph g = matmuls();
    pipeline::phase_statistics statistics;
    const pipeline::phase_result total = casts.run<propagate_policy>(g, cast_options{&signatures}, statistics);
    REQUIRE(statistics.phases.size() == 2);
    CHECK(statistics.phases[0].name == "insert-casts");
    CHECK(statistics.phases[0].result.counters.nodes_added == 3);
    CHECK(statistics.phases[1].name == "elide-cast-round-trips");
    CHECK(total.counters.nodes_added == 3);
  }
  SUBCASE("without: only the elision runs") {
    graph g = matmuls();
    pipeline::phase_statistics statistics;
    (void)casts.run<propagate_policy>(g, cast_options{}, statistics);
    REQUIRE(statistics.phases.size() == 1);
    CHECK(statistics.phases[0].name == "elide-cast-round-trips");
  }
}

TEST_CASE("the cast family on a compiler's own IR: its enum vocabulary, its own cast") {
  kir::graph g = graph_builder{}
                     .input("x", {4, 4})
                     .input("h", {{4, 4}, dtype::float16})
                     .delegate("m", "cuda:0", "mm", {"x", "h"})
                     .delegate("up", "cuda:0", "cast", {"h"}, {{{4, 4}, dtype::float32}})
                     .delegate("down", "cuda:0", "cast", {"up"}, {{{4, 4}, dtype::float16}})
                     .delegate("r", "cuda:0", "relu", {"down"})
                     .output({"m", "r"})
                     .build_as<kir::graph>();
  cast_signatures signatures;
  signatures.set("mm", {dtype::float16, dtype::float16});
  const rewrite_counters inserted = insert_casts<"cast">(g, signatures);
  CHECK(inserted.nodes_added == 1);
  const auto cast = testing::find_value(g, "x@cast");
  REQUIRE(cast);
  CHECK(g[cast->producer].op == kir::kernel::cast);
  CHECK(g[cast->producer].role == op_kind::call);  // x lives on the host
  CHECK(value_dtype(g, *cast) == dtype::float16);
  CHECK(operand(g, testing::find_value(g, "m")->producer, 0) == cast);
  CHECK(operand(g, testing::find_value(g, "m")->producer, 1) == testing::find_value(g, "h"));

  const rewrite_counters elided = elide_cast_round_trips<"cast">(g);
  CHECK(elided.nodes_removed == 2);
  CHECK_FALSE(testing::find_value(g, "up"));
  CHECK(operand(g, testing::find_value(g, "r")->producer, 0) == testing::find_value(g, "h"));
}

TEST_CASE("cast signatures from JSON: each slot a dtype or null; errors name the op and the slot") {
  const cast_signatures s = read_cast_signatures_string(
      R"({"aten.mm.default": ["float16", "float16"], "relu": [null], "none": []})", "sigs.json");
  CHECK(s.size() == 3);
  CHECK(s.wanted("aten.mm.default", 1) == dtype::float16);
  CHECK(s.wanted(op_name::of("aten.mm.default"), 0) == dtype::float16);  // by interned name too
  CHECK(s.wanted("relu", 0) == std::nullopt);
  CHECK(s.wanted("aten.mm.default", 2) == std::nullopt);
  CHECK(s.find("none") != nullptr);
  CHECK(s.find("gelu") == nullptr);
  std::vector<std::string> ops;
  s.for_each([&](std::string_view op, const cast_signatures::slots&) { ops.emplace_back(op); });
  CHECK(ops == std::vector<std::string>{"aten.mm.default", "none", "relu"});  // name order

  const auto error_of = [](std::string_view json) -> std::string {
    try {
      (void)read_cast_signatures_string(json, "sigs.json");
    } catch (const graph_error& e) {
      return e.what();
    }
    return "no error";
  };
  CHECK(error_of(R"({"aten.mm.default": ["float16", "float17"]})") ==
        "sigs.json: op 'aten.mm.default': slot 1: 'float17' is not a dtype (float32, float16, bfloat16, float64, "
        "int64, int32, int16, int8, uint8, bool)");
  CHECK(error_of(R"({"relu": [null, 3]})") ==
        "sigs.json: op 'relu': slot 1: expected a dtype name or null, found a number");
  CHECK(error_of(R"({"relu": "float16"})") ==
        "sigs.json: op 'relu': expected an array with one dtype name or null per operand slot, found a string");
  CHECK(error_of(R"({"relu": [null], "relu": []})") == "sigs.json: op 'relu': listed twice");
  CHECK(error_of(R"({"": []})") == "sigs.json: op '': an op name is not empty");
  CHECK(error_of(R"(["relu"])") == "sigs.json: expected an object mapping op names to slot lists, found an array");
  CHECK(error_of(R"({"relu": [)").starts_with("sigs.json: invalid JSON: "));
  CHECK(std::string(error_of("")).starts_with("sigs.json: invalid JSON: "));
  try {
    (void)read_cast_signatures_file("/nonexistent/sigs.json");
    FAIL("no error");
  } catch (const graph_error& e) {
    CHECK(std::string(e.what()) == "/nonexistent/sigs.json: cannot open the file");
  }
}

TEST_CASE("insert_casts on the model graphs: the casts counted; verified before and after device propagation") {
  const cast_signatures signatures =
      read_cast_signatures_file(testing_support::graph_path("../casts/half_kernels.json"));
  struct expected {
    const char* graph;
    std::size_t casts;  // nodes added
    std::size_t rewrites;
  };
  for (const expected& e :
       {expected{"models/mobilenet_v2.fused.json", 15, 15}, expected{"models/mobilenet_v2.per_op.json", 107, 107},
        expected{"models/mobilenet_v2.two_gpu.json", 107, 107}, expected{"models/resnet18.fused.json", 2, 2},
        expected{"models/resnet18.per_op.json", 40, 43}, expected{"models/resnet18.two_gpu.json", 40, 43},
        expected{"models/transformer_enc.fused.json", 2, 2}, expected{"models/transformer_enc.per_op.json", 96, 96},
        expected{"models/transformer_enc.two_gpu.json", 96, 96}}) {
    CAPTURE(std::string(e.graph));
    graph g = testing_support::read_graph_file(testing_support::graph_path(e.graph));
    const rewrite_counters counters = insert_casts(g, signatures);
    CHECK(counters.nodes_added == e.casts);
    CHECK(counters.rewrites == e.rewrites);
    CHECK(count_kernel(g, "aten._to_copy.default") == e.casts);
    CHECK(verify_structure(g).ok());
    CHECK(elide_cast_round_trips(g).rewrites == 0);  // nothing widened and narrowed back
    CHECK(insert_casts(g, signatures).rewrites == 0);
    (void)propagate_device(g);
    CHECK(verify(g).ok());
  }
}
