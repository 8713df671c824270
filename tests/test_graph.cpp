#include <doctest/doctest.h>

#include "devpass/graph/graph.hpp"
#include "devpass/graph/id_allocator.hpp"

using namespace devpass;

namespace {
tensor_spec f32(std::int64_t n) { return {dtype::float32, {n, n}}; }

// x -> d0(cuda:0) -> r(call) -> out, d0 also feeds out directly.
struct small_graph {
  graph g;
  vertex x, d0, r, out;
  small_graph() {
    x = add_node(g, {.id = "x", .op = op_kind::input, .outputs = {f32(2)}});
    d0 = add_node(
        g,
        {.id = "d0", .op = op_kind::delegate, .device = cuda_device(0), .kernel = "add", .outputs = {f32(2), f32(2)}});
    r = add_node(g, {.id = "r", .op = op_kind::call, .kernel = "relu", .outputs = {f32(2)}});
    out = add_node(g, {.id = "out", .op = op_kind::output});
    connect(g, {x, 0}, d0, 0);
    connect(g, {x, 0}, d0, 1);
    connect(g, {d0, 1}, r, 0);
    connect(g, {r, 0}, out, 0);
    connect(g, {d0, 0}, out, 1);
  }
};
}  // namespace

TEST_CASE("device: parses case-insensitively and formats in lower case") {
  CHECK(parse_device("cuda") == cuda_device(0));
  CHECK(parse_device("CUDA:0") == cuda_device(0));
  CHECK(parse_device("Cuda:2") == cuda_device(2));
  CHECK(parse_device("cpu") == cpu_device);
  CHECK(parse_device("CPU") == cpu_device);
  CHECK_FALSE(parse_device("tpu:0"));
  CHECK_FALSE(parse_device("cuda:"));
  CHECK_FALSE(parse_device("cuda:-1"));
  CHECK_FALSE(parse_device("cuda:1x"));
  CHECK_FALSE(parse_device("cuda:99999999999"));
  CHECK_FALSE(parse_device("cpu:3"));
  CHECK(to_string(cuda_device(3)) == "cuda:3");
  CHECK(to_string(cpu_device) == "cpu");
  CHECK(cpu_device < cuda_device(0));
  CHECK(cuda_device(0) < cuda_device(1));
}

TEST_CASE("dtype: names and sizes round-trip") {
  for (auto t : {dtype::float32, dtype::float16, dtype::bfloat16, dtype::float64, dtype::int64, dtype::int32,
                 dtype::int16, dtype::int8, dtype::uint8, dtype::bool_})
    CHECK(parse_dtype(to_string(t)) == t);
  CHECK(element_size(dtype::bfloat16) == 2);
  CHECK(element_size(dtype::int64) == 8);
  CHECK(to_string(dtype::bool_) == "bool");
  CHECK_FALSE(parse_dtype("float128"));
}

TEST_CASE("tensor_spec: byte size is derived and overflow is reported") {
  CHECK(checked_byte_size(dtype::float32, {2, 3}) == 24);
  CHECK(checked_byte_size(dtype::float32, {}) == 4);
  CHECK(checked_byte_size(dtype::float32, {0, 1ll << 62}) == 0);
  CHECK_FALSE(checked_byte_size(dtype::float32, {1ll << 31, 1ll << 31}));
  CHECK_FALSE(checked_byte_size(dtype::int8, {-1}));
  CHECK(tensor_spec{dtype::float16, {4, 4}}.byte_size() == 32);
}

TEST_CASE("graph: operands, uses and method outputs") {
  small_graph s;
  const auto ops = operands(s.g, s.d0);
  REQUIRE(ops.size() == 2);
  CHECK(ops[0] == value_ref{s.x, 0});
  CHECK(ops[1] == value_ref{s.x, 0});
  CHECK(uses(s.g, {s.x, 0}) == std::vector<use>{{s.d0, 0}, {s.d0, 1}});
  CHECK(use_count(s.g, {s.d0, 1}) == 1);
  CHECK(use_count(s.g, {s.d0, 0}) == 1);
  CHECK(use_count(s.g, {s.x, 0}) == 2);  // one output: counted from the out-degree
  CHECK(use_count(s.g, {s.r, 0}) == 1);
  CHECK(use_count(s.g, {s.out, 0}) == 0);
  CHECK(method_inputs(s.g) == std::vector<vertex>{s.x});
  CHECK(method_outputs(s.g) == std::vector<value_ref>{{s.r, 0}, {s.d0, 0}});
  CHECK(value_name(s.g, {s.d0, 1}) == "d0:1");
  CHECK(location_of(s.g, {s.d0, 0}) == cuda_device(0));
  CHECK(location_of(s.g, {s.r, 0}) == cpu_device);
}

TEST_CASE("graph: rewiring and erasing keep slots and order") {
  small_graph s;
  SUBCASE("set_operand replaces exactly one slot") {
    set_operand(s.g, s.d0, 1, {s.r, 0});
    CHECK(operands(s.g, s.d0) == std::vector<value_ref>{{s.x, 0}, {s.r, 0}});
  }
  SUBCASE("replace_uses_if keeps what the predicate keeps") {
    const auto moved = replace_uses_if(s.g, {s.x, 0}, {s.r, 0}, [](use u) { return u.slot == 0; });
    CHECK(moved == 1);
    CHECK(operands(s.g, s.d0) == std::vector<value_ref>{{s.x, 0}, {s.r, 0}});
  }
  SUBCASE("erase then compact renumbers and keeps order") {
    replace_uses(s.g, {s.r, 0}, {s.d0, 1});
    erase_node(s.g, s.r);
    CHECK(has_erased_nodes(s.g));
    compact(s.g);
    CHECK(boost::num_vertices(s.g) == 3);
    const auto out = output_node(s.g);
    REQUIRE(out);
    CHECK(s.g[*out].id == "out");
    const auto outs = method_outputs(s.g);
    REQUIRE(outs.size() == 2);
    CHECK(s.g[outs[0].producer].id == "d0");
    CHECK(outs[0].output == 1);
    CHECK(outs[1].output == 0);
  }
}

TEST_CASE("graph: topological order is deterministic and names a node on a cycle") {
  small_graph s;
  const auto order = topological_order(s.g);
  CHECK(order == std::vector<vertex>{s.x, s.d0, s.r, s.out});
  // Make r read out's... no outputs; build a real cycle d0 <- r.
  set_operand(s.g, s.d0, 1, {s.r, 0});
  try {
    (void)topological_order(s.g);
    FAIL("a cycle must be rejected");
  } catch (const graph_error& e) {
    const std::string node = e.node();
    CHECK((node == "d0" || node == "r"));
    CHECK(e.field() == "inputs");
  }
}

TEST_CASE("graph: a copy is named after the value it copies, its device or the use it feeds") {
  small_graph s;
  id_allocator ids(s.g);
  const auto copy = [&](op_kind kind, device side, value_ref source, copy_naming naming, use site = {}) {
    return s.g[graph_model<graph>::add_copy(s.g, ids, {kind, side, source, naming, site})].id;
  };
  CHECK(copy(op_kind::d2h_copy, cuda_device(0), {s.d0, 0}, copy_naming::after_value) == "d0@d2h");
  CHECK(copy(op_kind::d2h_copy, cuda_device(0), {s.d0, 1}, copy_naming::after_value) == "d0:1@d2h");
  CHECK(copy(op_kind::h2d_copy, cuda_device(3), {s.x, 0}, copy_naming::after_value_and_device) == "x@h2d[cuda:3]");
  CHECK(copy(op_kind::h2d_copy, cuda_device(0), {s.x, 0}, copy_naming::after_use, {s.d0, 1}) == "d0@h2d.1");
  // The same name again is renumbered, not reused.
  CHECK(copy(op_kind::h2d_copy, cuda_device(0), {s.x, 0}, copy_naming::after_use, {s.d0, 1}) == "d0@h2d.1#2");
  const vertex made = boost::num_vertices(s.g) - 1;
  CHECK(s.g[made].op == op_kind::h2d_copy);
  CHECK(s.g[made].outputs.size() == 1);
  CHECK(s.g[made].outputs[0].device == cuda_device(0));
  CHECK(s.g[made].outputs[0].shape == s.g[s.x].outputs[0].shape);

  // The longest output index, slot and device fill the name's buffers exactly.
  constexpr std::uint32_t most = 4294967295u;
  CHECK(detail::copy_id("v",
                        {op_kind::d2d_copy, cuda_device(65535), {0, most}, copy_naming::after_value_and_device, {}}) ==
        "v:4294967295@d2d[cuda:65535]");
  CHECK(detail::copy_id("k", {op_kind::h2d_copy, cuda_device(0), {}, copy_naming::after_use, {0, most}}) ==
        "k@h2d.4294967295");
  CHECK(detail::copy_id("", {op_kind::d2h_copy, cuda_device(1), {}, copy_naming::after_value, {}}) == "@d2h");
}
