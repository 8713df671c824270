// The capturability verdict (planning/capturability.hpp): segments split at host work, with the
// host node that splits them; blockers for values without a planned buffer; and on every
// repository graph, segments that cover the device work exactly once, in execution order.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>

#include "devpass/io/capture_json.hpp"
#include "devpass/passes/propagate_device_fwd.hpp"
#include "devpass/planning/capturability.hpp"
#include "devpass/planning/memory_planner.hpp"
#include "devpass/testing/graph_builder.hpp"
#include "graph_dir.hpp"
#include "read_graph_declared.hpp"

using namespace devpass;
using devpass::testing::graph_builder;
using devpass::testing_support::read_graph_file;

namespace {

// Propagated with `options`, planned with `plan_options`, judged.
capture_verdict judge(graph& g, const propagate_options& options = {}, const plan_options& planning = {}) {
  propagate_device(g, options);
  const memory_plan plan = plan_memory(g, planning);
  return capturability(g, plan);
}

std::vector<std::string> ids(const graph& g, const capture_segment& s) {
  std::vector<std::string> out;
  for (const vertex v : s.nodes) out.push_back(g[v].id);
  return out;
}

}  // namespace

TEST_CASE("capturability: a chain of device work between host input and output is one graph") {
  graph g = graph_builder{}
                .input("x", {2, 2})
                .delegate("a", "cuda:0", "relu", {"x"})
                .delegate("b", "cuda:0", "gelu", {"a"})
                .output({"b"})
                .build();
  const capture_verdict v = judge(g);
  CHECK(v.kind == capture_kind::one_graph);
  REQUIRE(v.segments.size() == 1);
  CHECK(ids(g, v.segments[0]) == std::vector<std::string>{"x@h2d[cuda:0]", "a", "b", "b@d2h"});
  CHECK(v.reasons.empty());
  CHECK(capture_text(g, v) == "capturability: one graph\n  segment 1: 4 nodes, 'x@h2d[cuda:0]' .. 'b@d2h'\n");
}

TEST_CASE("capturability: a resident copy runs at load, in no segment, and blocks nothing") {
  graph g = graph_builder{}
                .input("x", {2, 2})
                .constant("w", {2, 2})
                .delegate("a", "cuda:0", "add", {"x", "w"})
                .output({"a"})
                .build();
  const capture_verdict v = judge(g);
  CHECK(v.kind == capture_kind::one_graph);
  REQUIRE(v.segments.size() == 1);
  CHECK(ids(g, v.segments[0]) == std::vector<std::string>{"x@h2d[cuda:0]", "a", "a@d2h"});
  CHECK(v.reasons.empty());
  graph per_execution = graph_builder{}
                            .input("x", {2, 2})
                            .constant("w", {2, 2})
                            .delegate("a", "cuda:0", "add", {"x", "w"})
                            .output({"a"})
                            .build();
  const capture_verdict copied = judge(per_execution, {.resident_constants = false});
  REQUIRE(copied.segments.size() == 1);
  CHECK(ids(per_execution, copied.segments[0]) ==
        std::vector<std::string>{"x@h2d[cuda:0]", "w@h2d[cuda:0]", "a", "a@d2h"});
}

TEST_CASE("capturability: host work between device work splits the method, naming the host node and why") {
  // s reads a's value through a d2h (the host waits); t does host work of its own; then device work again.
  graph g = graph_builder{}
                .input("x", {2, 2})
                .delegate("a", "cuda:0", "relu", {"x"})
                .call("s", "sample", {"a"})
                .call("t", "relu", {"x"})
                .delegate("b", "cuda:0", "gelu", {"s"})
                .call("u", "add", {"b", "t"})
                .output({"u"})
                .build();
  const capture_verdict v = judge(g);
  CHECK(v.kind == capture_kind::segments);
  REQUIRE(v.segments.size() == 2);
  CHECK(ids(g, v.segments[0]) == std::vector<std::string>{"x@h2d[cuda:0]", "a", "a@d2h"});
  CHECK(ids(g, v.segments[1]) == std::vector<std::string>{"s@h2d[cuda:0]", "b", "b@d2h"});
  REQUIRE(v.reasons.size() == 2);  // u runs after the last device work: no split
  CHECK(v.reasons[0].node == "s");
  CHECK(v.reasons[0].cause == capture_cause::host_reads_device_value);
  CHECK(v.reasons[0].detail ==
        "reads 'a@d2h', which a d2h_copy of the device work before it produced: the host waits for the device");
  CHECK(v.reasons[1].node == "t");
  CHECK(v.reasons[1].cause == capture_cause::host_work);
  CHECK(v.reasons[1].detail == "a call on the host between device work");
  CHECK(
      capture_json(g, v) ==
      "{\"verdict\": \"segments\", \"segments\": [{\"nodes\": 3, \"first\": \"x@h2d[cuda:0]\", \"last\": \"a@d2h\"}, "
      "{\"nodes\": 3, \"first\": \"s@h2d[cuda:0]\", \"last\": \"b@d2h\"}], \"reasons\": [{\"node\": \"s\", \"cause\": "
      "\"host_reads_device_value\", \"detail\": \"reads 'a@d2h', which a d2h_copy of the device work before it "
      "produced: "
      "the host waits for the device\"}, {\"node\": \"t\", \"cause\": \"host_work\", \"detail\": \"a call on the host "
      "between device work\"}]}");
}

TEST_CASE("capturability: device method inputs and outputs the caller owns block a capture until they are planned") {
  const auto build = [] {
    return graph_builder{}.input("x", {2, 2}).delegate("a", "cuda:0", "relu", {"x"}).output({"a"}).build();
  };
  graph skipped = build();
  const capture_verdict blocked =
      judge(skipped, {.skip_h2d_for_method_inputs = true, .skip_d2h_for_method_outputs = true});
  CHECK(blocked.kind == capture_kind::not_capturable);
  REQUIRE(blocked.reasons.size() == 2);
  CHECK(blocked.reasons[0].node == "x");
  CHECK(blocked.reasons[0].cause == capture_cause::caller_buffer);
  CHECK(blocked.reasons[0].detail ==
        "method input 'x' on cuda:0 has no planned buffer: its address changes with every call");
  CHECK(blocked.reasons[1].node == "a");
  CHECK(blocked.reasons[1].cause == capture_cause::caller_buffer);
  CHECK(blocked.reasons[1].blocks());

  graph planned = build();
  const capture_verdict ok = judge(planned, {.skip_h2d_for_method_inputs = true, .skip_d2h_for_method_outputs = true},
                                   {.plan_device_method_inputs = true, .plan_device_method_outputs = true});
  CHECK(ok.kind == capture_kind::one_graph);
  CHECK(ok.reasons.empty());
}

TEST_CASE("capturability: an unplanned device value is a run-time allocation; host-only graphs have no device work") {
  graph g = graph_builder{}.input("x", {2, 2}).delegate("a", "cuda:0", "relu", {"x"}).output({"a"}).build();
  propagate_device(g);
  memory_plan plan = plan_memory(g);
  g[*find_node(g, "a")].outputs[0].mem_id.reset();  // as if the planner had skipped it
  const capture_verdict v = capturability(g, plan);
  CHECK(v.kind == capture_kind::not_capturable);
  REQUIRE(v.reasons.size() == 1);
  CHECK(v.reasons[0].cause == capture_cause::runtime_allocation);
  CHECK(v.reasons[0].detail == "'a' on cuda:0 has no planned buffer: it is allocated at every run");

  graph host = graph_builder{}.input("x", {2, 2}).call("a", "relu", {"x"}).output({"a"}).build();
  CHECK(judge(host).kind == capture_kind::no_device_work);
}

TEST_CASE("capturability: on every repository graph, both policies, segments cover the device work once, in order") {
  std::size_t graphs = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(devpass::testing_support::graph_dir())) {
    if (entry.path().extension() != ".json") continue;
    for (const auto policy : {copy_policy::devpass, copy_policy::executorch}) {
      CAPTURE(entry.path().string());
      graph g = read_graph_file(entry.path().string());
      propagate_device(g, {.policy = policy});
      const memory_plan plan = plan_memory(g);
      const capture_verdict v = capturability(g, plan);
      std::vector<vertex> device_work, covered;
      for (const vertex n : plan.order)
        if ((is_copy(g[n].op) && !g[n].resident) || (g[n].op == op_kind::delegate && !g[n].device.is_host()))
          device_work.push_back(n);
      for (const auto& s : v.segments) covered.insert(covered.end(), s.nodes.begin(), s.nodes.end());
      CHECK(covered == device_work);
      const std::size_t splits = static_cast<std::size_t>(
          std::count_if(v.reasons.begin(), v.reasons.end(), [](const capture_reason& r) { return !r.blocks(); }));
      CHECK(splits >= (v.segments.empty() ? 0 : v.segments.size() - 1));
      CHECK(v.kind != capture_kind::not_capturable);  // default flags: every device value is planned
      ++graphs;
    }
  }
  CHECK(graphs >= 26);
}
