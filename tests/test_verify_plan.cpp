// verify_plan: accepts what plan_memory makes, and names node and field for every way a plan can
// be wrong (each corruption below is one the executor would otherwise run into at run time).
#include <doctest/doctest.h>

#include "devpass/passes/propagate_device_fwd.hpp"
#include "devpass/planning/memory_planner.hpp"
#include "devpass/planning/verify_plan.hpp"
#include "graph_dir.hpp"
#include "read_graph_declared.hpp"

using namespace devpass;
using devpass::testing_support::read_graph_file;

namespace {

// x -> a -> b -> c -> out on the host, 32-byte values: a and c never meet, so they share bytes.
struct chain {
  graph g;
  vertex x, a, b, c;
  memory_plan plan;
  chain() {
    const tensor_spec f32{dtype::float32, {8}};
    x = add_node(g, {.id = "x", .op = op_kind::input, .outputs = {f32}});
    a = add_node(g, {.id = "a", .op = op_kind::call, .kernel = "k", .outputs = {f32}});
    b = add_node(g, {.id = "b", .op = op_kind::call, .kernel = "k", .outputs = {f32}});
    c = add_node(g, {.id = "c", .op = op_kind::call, .kernel = "k", .outputs = {f32}});
    const vertex out = add_node(g, {.id = "out", .op = op_kind::output});
    connect(g, {x, 0}, a, 0);
    connect(g, {a, 0}, b, 0);
    connect(g, {b, 0}, c, 0);
    connect(g, {c, 0}, out, 0);
    plan = plan_memory(g);
  }
  tensor_spec& spec(vertex v) { return g[v].outputs[0]; }
};

void check_single_problem(const verify_report& r, const std::string& node, const std::string& field,
                          const std::string& text) {
  REQUIRE_MESSAGE(r.problems.size() == 1, r.to_string());
  CHECK(r.problems[0].node() == node);
  CHECK(r.problems[0].field() == field);
  CHECK(r.problems[0].problem().find(text) != std::string::npos);
}

}  // namespace

TEST_CASE("verify_plan: every plan of the sample graphs passes, both policies") {
  std::size_t plans = 0;
  for (const char* file : {"cases/two_adds.json", "cases/cross_device.json", "models/resnet18.two_gpu.json",
                           "models/transformer_enc.per_op.json"})
    for (const auto policy : {copy_policy::executorch, copy_policy::devpass}) {
      CAPTURE(file);
      graph g = read_graph_file(devpass::testing_support::graph_path(file));
      propagate_device(g, {.policy = policy});
      const memory_plan plan = plan_memory(g);
      const verify_report r = verify_plan(g, plan);
      CHECK_MESSAGE(r.ok(), r.to_string());
      ++plans;
    }
  CHECK(plans == 8);
}

TEST_CASE("verify_plan: a value moved onto a live neighbour's bytes is an overlap") {
  chain t;
  REQUIRE(verify_plan(t.g, t.plan).ok());
  REQUIRE(t.spec(t.a).offset == t.spec(t.c).offset);  // apart in time: sharing is fine
  t.spec(t.b).offset = t.spec(t.a).offset;            // b is alive with a (a's last read)
  const verify_report r = verify_plan(t.g, t.plan);
  REQUIRE(!r.ok());
  CHECK(r.problems[0].field() == "outputs[0].offset");
  CHECK(r.problems[0].problem().find("overlap") != std::string::npos);
}

TEST_CASE("verify_plan: misaligned, out of bounds, negative offsets") {
  SUBCASE("misaligned") {
    chain t;
    t.spec(t.b).offset = *t.spec(t.b).offset + 4;
    const verify_report r = verify_plan(t.g, t.plan);
    REQUIRE(!r.ok());
    CHECK(r.problems[0].node() == "b");
    CHECK(r.problems[0].problem().find("not a multiple of the buffer's alignment 16") != std::string::npos);
  }
  SUBCASE("out of bounds") {
    chain t;
    t.spec(t.c).offset = static_cast<std::int64_t>(t.plan.buffers[1].size);
    check_single_problem(verify_plan(t.g, t.plan), "c", "outputs[0].offset", "do not fit in buffer 1");
  }
  SUBCASE("negative") {
    chain t;
    t.spec(t.c).offset = -16;
    check_single_problem(verify_plan(t.g, t.plan), "c", "outputs[0].offset", "negative offset -16");
  }
}

TEST_CASE("verify_plan: mem_id problems name the value") {
  SUBCASE("no such buffer") {
    chain t;
    t.spec(t.a).mem_id = 7;
    check_single_problem(verify_plan(t.g, t.plan), "a", "outputs[0].mem_id", "no planned buffer 7");
  }
  SUBCASE("offset without mem_id") {
    chain t;
    t.spec(t.a).mem_id.reset();
    check_single_problem(verify_plan(t.g, t.plan), "a", "outputs[0].mem_id", "set together");
  }
  SUBCASE("a buffer on another device") {
    chain t;
    t.spec(t.b).device = cuda_device(0);  // b now lives on cuda:0, its buffer is the host's
    check_single_problem(verify_plan(t.g, t.plan), "b", "outputs[0].mem_id",
                         "buffer 1 is on cpu but the value lives on cuda:0");
  }
}

TEST_CASE("verify_plan: buffers and order") {
  SUBCASE("size below the lower bound") {
    chain t;
    t.plan.buffers[1].size = t.plan.buffers[1].lower_bound - 1;
    const verify_report r = verify_plan(t.g, t.plan);
    REQUIRE(!r.ok());
    CHECK(r.problems[0].field() == "plan.buffers[1]");
    CHECK(r.problems[0].problem().find("below its lower bound") != std::string::npos);
  }
  SUBCASE("alignment not a power of two") {
    chain t;
    t.plan.buffers[1].alignment = 24;
    const verify_report r = verify_plan(t.g, t.plan);
    REQUIRE(!r.ok());
    CHECK(r.problems[0].problem() == "alignment 24 is not a power of two");
  }
  SUBCASE("a consumer before its producer") {
    chain t;
    std::swap(t.plan.order[1], t.plan.order[2]);  // b before a
    check_single_problem(verify_plan(t.g, t.plan), "b", "plan.order", "runs before 'a'");
  }
  SUBCASE("a node missing, a node twice") {
    chain t;
    t.plan.order[2] = t.plan.order[1];
    const verify_report r = verify_plan(t.g, t.plan);
    REQUIRE(r.problems.size() == 2);
    CHECK(r.problems[0].problem().find("runs twice") != std::string::npos);
    CHECK(r.problems[1].problem() == "never runs");
  }
}
