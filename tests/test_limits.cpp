// Resource abuse: inputs built to exhaust memory or stack get a clear error or a correct result,
// never a crash. A graph whose shapes need more memory than the machine has; a million-way
// fan-out; a 100k-deep chain through the reader, propagation (both policies), the verifier,
// planning, the writers and the executor (no recursion anywhere along the way).
#include <doctest/doctest.h>

#include <sstream>
#include <string>

#include "devpass/graph/verify.hpp"
#include "devpass/io/dot_writer.hpp"
#include "devpass/io/json_writer.hpp"
#include "devpass/passes/propagate_device_fwd.hpp"
#include "devpass/planning/memory_planner.hpp"
#include "devpass/runtime/graph_runner.hpp"
#include "devpass/runtime/kernels/builtin_fwd.hpp"
#include "read_graph_declared.hpp"

using namespace devpass;
using devpass::testing_support::read_graph_string;

namespace {

std::string node_json(const std::string& id, const std::string& op, const std::string& device,
                      const std::string& kernel, const std::string& input, const std::string& shape) {
  std::string j = "{\"id\":\"" + id + "\",\"op\":\"" + op + "\"";
  if (!device.empty()) j += ",\"device\":\"" + device + "\"";
  if (!kernel.empty()) j += ",\"kernel\":\"" + kernel + "\"";
  if (!input.empty()) j += ",\"inputs\":[" + input + "]";
  if (op != "output") j += ",\"outputs\":[{\"dtype\":\"float32\",\"shape\":" + shape + "}]";
  return j + "}";
}

std::string file_of(const std::string& name, const std::string& nodes) {
  return "{\"format\":\"devpass.graph/1\",\"name\":\"" + name + "\",\"nodes\":[" + nodes + "]}";
}

runtime::kernel_registry builtin_kernels() {
  runtime::kernel_registry k;
  runtime::register_builtin_kernels(k);
  return k;
}

// Propagates under both policies, verifies, plans, writes; returns the devpass policy's graph.
void place_both_ways(const graph& original, std::size_t expected_nodes) {
  for (const auto policy : {copy_policy::executorch, copy_policy::devpass}) {
    CAPTURE(policy == copy_policy::devpass);
    graph g = original;
    propagate_device(g, {.policy = policy});
    const verify_report report = verify(g);
    REQUIRE_MESSAGE(report.ok(), report.to_string().substr(0, 500));
    CHECK(boost::num_vertices(g) >= expected_nodes);
    const memory_plan plan = plan_memory(g);
    CHECK(plan.order.size() == boost::num_vertices(g));
    std::ostringstream json, dot;
    write_graph(g, json, &plan.order);
    write_dot(g, dot);
    CHECK(json.str().size() > expected_nodes * 20);
    CHECK(dot.str().size() > expected_nodes * 10);
  }
}

}  // namespace

TEST_CASE("limits: shapes that need more memory than the machine has are a clear error, not a crash") {
  // 2^21 x 2^20 float32 values: 8 TiB. The file is valid (the byte size fits in 64 bits), the
  // passes only compute with sizes, and the executor refuses the allocation naming what asked.
  const std::string big = "[2097152,1048576]";
  const std::string text = file_of("huge", node_json("x", "input", "", "", "", big) + "," +
                                               node_json("d0", "delegate", "cuda:0", "silu", "\"x\"", big) + "," +
                                               node_json("out", "output", "", "", "\"d0\"", ""));
  graph g = read_graph_string(text);
  propagate_device(g, {});
  REQUIRE(verify(g).ok());
  const memory_plan plan = plan_memory(g);
  CHECK(plan.buffers.at(1).size >= (std::uint64_t{1} << 43));
  const auto kernels = builtin_kernels();
  try {
    (void)runtime::run_graph(g, plan, kernels, {.allow_cuda = false});
    FAIL("expected the allocation to be refused");
  } catch (const runtime::device_error& e) {
    const std::string what = e.what();
    CAPTURE(what);
    CHECK(e.op() == "allocate");
    CHECK(what.find("more than the host's memory") != std::string::npos);
  }
  // The host reference asks for the same memory on the host, naming the method input.
  try {
    (void)runtime::run_host_reference(read_graph_string(text), kernels, {.allow_cuda = false});
    FAIL("expected the allocation to be refused");
  } catch (const runtime::device_error& e) {
    CHECK(e.node() == "x");
  }
}

TEST_CASE("limits: a million-way fan-out reads, places, verifies, plans and writes") {
  // One method input read by a million delegates, alternating between two GPUs and the host.
  constexpr std::size_t fan_out = 1'000'000;
  std::string nodes = node_json("x", "input", "", "", "", "[1]");
  nodes.reserve(fan_out * 90);
  for (std::size_t i = 0; i < fan_out; ++i)
    nodes += "," + node_json("d" + std::to_string(i), "delegate", i % 3 == 2 ? "" : "cuda:" + std::to_string(i % 2),
                             "silu", "\"x\"", "[1]");
  nodes += "," + node_json("out", "output", "", "", "\"d0\",\"d1\",\"d2\"", "");
  const graph g = read_graph_string(file_of("fan_out", nodes));
  REQUIRE(boost::num_vertices(g) == fan_out + 2);
  place_both_ways(g, fan_out + 2);
}

TEST_CASE("limits: a 100k-deep chain reads, places, verifies, plans, writes and runs") {
  // x -> c0 -> c1 -> ... each link on cuda:0, cuda:1 or the host in turn: a copy at every link.
  constexpr std::size_t depth = 100'000;
  std::string nodes = node_json("x", "input", "", "", "", "[4]");
  std::string previous = "x";
  for (std::size_t i = 0; i < depth; ++i) {
    const std::string id = "c" + std::to_string(i);
    nodes += "," + (i % 3 == 2 ? node_json(id, "call", "", "silu", "\"" + previous + "\"", "[4]")
                               : node_json(id, "delegate", "cuda:" + std::to_string(i % 2), "silu",
                                           "\"" + previous + "\"", "[4]"));
    previous = id;
  }
  nodes += "," + node_json("out", "output", "", "", "\"" + previous + "\"", "");
  const std::string text = file_of("chain", nodes);
  const graph g = read_graph_string(text);
  REQUIRE(boost::num_vertices(g) == depth + 2);
  place_both_ways(g, depth + 2);

  // And it runs on emulated devices, computing what the host program computes.
  const auto kernels = builtin_kernels();
  graph placed = g;
  propagate_device(placed, {});
  const runtime::run_report run = runtime::run_graph(placed, plan_memory(placed), kernels, {.allow_cuda = false});
  const runtime::run_report reference = runtime::run_host_reference(g, kernels, {.allow_cuda = false});
  REQUIRE(run.outputs.size() == 1);
  CHECK(run.outputs[0].checksum == reference.outputs[0].checksum);
  CHECK(run.copies.h2d.count + run.copies.d2h.count + run.copies.d2d.count >= depth / 2);
}
