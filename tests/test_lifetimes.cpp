#include <doctest/doctest.h>

#include <vector>

#include "devpass/planning/execution_order.hpp"
#include "devpass/planning/lifetimes.hpp"

using namespace devpass;

namespace {
tensor_spec f32(std::int64_t n) { return {dtype::float32, {n}}; }

// Vertex order deliberately not topological: `late` (vertex 0) reads `a`.
//   late(call) <- a(delegate cuda:0) <- x(input);  a -> out;  w(constant) -> a;  y(input) -> out
struct shuffled_graph {
  graph g;
  vertex late, out, a, x, w, y;
  shuffled_graph() {
    late = add_node(g, {.id = "late", .op = op_kind::call, .kernel = "k", .outputs = {f32(1), f32(2)}});
    out = add_node(g, {.id = "out", .op = op_kind::output});
    a = add_node(g,
                 {.id = "a", .op = op_kind::delegate, .device = cuda_device(0), .kernel = "add", .outputs = {f32(4)}});
    x = add_node(g, {.id = "x", .op = op_kind::input, .outputs = {f32(4)}});
    w = add_node(g, {.id = "w", .op = op_kind::constant, .outputs = {f32(4)}});
    y = add_node(g, {.id = "y", .op = op_kind::input, .outputs = {f32(4)}});
    connect(g, {x, 0}, a, 0);
    connect(g, {w, 0}, a, 1);
    connect(g, {a, 0}, late, 0);
    connect(g, {a, 0}, out, 0);
    connect(g, {y, 0}, out, 1);
  }
};
}  // namespace

TEST_CASE("execution_order: topological, smallest ready vertex first") {
  shuffled_graph s;
  const auto order = execution_order(s.g);
  // Ready at start: x(3), w(4), y(5). x, w -> a(2) ready; a < y, so a runs before y.
  CHECK(order == std::vector<vertex>{s.x, s.w, s.a, s.late, s.y, s.out});
  const auto steps = steps_of(s.g, order);
  CHECK(steps == std::vector<std::uint32_t>{3, 5, 2, 0, 1, 4});
}

TEST_CASE("execution_order: erased nodes have no step") {
  shuffled_graph s;
  erase_node(s.g, s.late);
  const auto order = execution_order(s.g);
  CHECK(order == std::vector<vertex>{s.x, s.w, s.a, s.y, s.out});
  CHECK(steps_of(s.g, order)[s.late] == no_step);
}

TEST_CASE("lifetimes: definition step to last use, as used") {
  shuffled_graph s;
  const auto order = execution_order(s.g);
  const auto t = compute_lifetimes(s.g, order, io_lifetimes::as_used);
  CHECK(t.value_count() == 6);
  CHECK(t[{s.x, 0}] == lifetime{0, 2});
  CHECK(t[{s.w, 0}] == lifetime{1, 2});
  CHECK(t[{s.a, 0}] == lifetime{2, 5});     // read by late (3) and out (5)
  CHECK(t[{s.late, 0}] == lifetime{3, 3});  // never read: lives at its definition only
  CHECK(t[{s.late, 1}] == lifetime{3, 3});
  CHECK(t[{s.y, 0}] == lifetime{4, 5});
  CHECK(t.index({s.late, 1}) == 1);
  CHECK(t.index({s.a, 0}) == 2);
}

TEST_CASE("lifetimes: method inputs live from step 0, method outputs to the last step") {
  shuffled_graph s;
  // A node after the output node in the order: out is no longer the last step.
  const vertex tail = add_node(s.g, {.id = "tail", .op = op_kind::call, .kernel = "k", .outputs = {f32(1)}});
  connect(s.g, {s.x, 0}, tail, 0);
  const auto order = execution_order(s.g);
  REQUIRE(order == std::vector<vertex>{s.x, s.w, s.a, s.late, s.y, s.out, tail});
  const auto t = compute_lifetimes(s.g, order);
  CHECK(t[{s.x, 0}] == lifetime{0, 6});  // read by tail at step 6
  CHECK(t[{s.y, 0}] == lifetime{0, 6});  // an input from 0, an output up to the end
  CHECK(t[{s.a, 0}] == lifetime{2, 6});
  CHECK(t[{s.w, 0}] == lifetime{1, 2});  // constants are not method inputs
  CHECK(t[{tail, 0}] == lifetime{6, 6});
}
