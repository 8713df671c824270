// Device propagation: ExecuTorch's own test cases (exir/tests/test_propagate_device_pass.py),
// mirrored with their copy counts for the executorch policy, and the devpass policy's
// guarantees on the same graphs.
#include <doctest/doctest.h>

#include <string>
#include <string_view>
#include <vector>

#include "devpass/graph/verify.hpp"
#include "devpass/passes/propagate_device.hpp"
#include "devpass/testing.hpp"
#include "random_graph.hpp"

using namespace devpass;
using devpass::testing::graph_builder;

namespace {

const node& producer_of(const graph& g, const std::string& consumer, std::uint32_t slot) {
  return g[operand(g, *find_node(g, consumer), slot).value().producer];
}

// Propagates, then checks the result is well formed and, when copies are made (not in legacy
// mode), that every value is read on its reader's device. The tests count copies with CHECK_COPIES.
void run(graph& g, const propagate_options& o) {
  propagate_device(g, o);
  const auto report = verify_structure(g);
  CHECK_MESSAGE(report.ok(), report.to_string());
  if (o.enable_non_cpu_memory_planning) {
    const auto dev = verify_devices(g);
    CHECK_MESSAGE(dev.ok(), dev.to_string());
  }
}

propagate_options executorch() { return {.policy = copy_policy::executorch}; }

// Marks where a value lives in its output spec, as a devpass.graph/1 file may ("device": "cuda:0");
// the node's own device stays as built.
void mark(graph& g, std::string_view id, device where) { g[*find_node(g, id)].outputs[0].device = where; }

// a, b -> d0 = add(a, b) on `on` -> out: ExecuTorch's one-add case.
graph one_add(std::string_view on = "cuda:0") {
  return graph_builder{}
      .input("a", {2, 2})
      .input("b", {2, 2})
      .delegate("d0", on, "add", {"a", "b"})
      .output({"d0"})
      .build();
}

// a, b, c -> d0 = add(a, b) on cuda:0 -> d1 = add(d0, c) on `second` -> out.
graph chain(std::string_view second) {
  return graph_builder{}
      .input("a", {2, 2})
      .input("b", {2, 2})
      .input("c", {2, 2})
      .delegate("d0", "cuda:0", "add", {"a", "b"})
      .delegate("d1", second, "add", {"d0", "c"})
      .output({"d1"})
      .build();
}

}  // namespace

TEST_CASE("propagate: the command line's policy keeps its old name, deprecated") {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  static_assert(std::is_same_v<runtime_propagate_policy, policy_from_options>);
#pragma GCC diagnostic pop
  static_assert(knobs_of<policy_from_options>().runtime_selected);
  graph g = one_add();
  const propagate_stats stats = propagate_device_with<policy_from_options>(g, executorch());
  CHECK(stats.after.h2d == 2);
  CHECK(stats.after.d2h == 1);
}

TEST_CASE("propagate/executorch: one cuda:0 add(a, b) -> 2 h2d, 1 d2h") {
  graph g = one_add();
  run(g, executorch());
  CHECK_COPIES(g, 2, 1, 0);
  CHECK(producer_of(g, "d0", 0).op == op_kind::h2d_copy);
  CHECK(producer_of(g, "d0", 1).op == op_kind::h2d_copy);
  CHECK(producer_of(g, "out", 0).op == op_kind::d2h_copy);
  CHECK(producer_of(g, "d0", 0).device == cuda_device(0));
}

TEST_CASE("propagate/executorch: no device -> no copies; legacy mode -> no copies, tags only") {
  SUBCASE("no device") {
    graph g = one_add("cpu");  // a delegate on the host
    run(g, executorch());
    CHECK_COPIES(g, 0, 0, 0);
  }
  SUBCASE("legacy mode") {
    graph g = one_add();
    auto o = executorch();
    o.enable_non_cpu_memory_planning = false;
    run(g, o);
    CHECK_COPIES(g, 0, 0, 0);
    CHECK(g[*find_node(g, "a")].outputs[0].device == cuda_device(0));
    CHECK(g[*find_node(g, "d0")].outputs[0].device == cuda_device(0));
  }
  SUBCASE("either skip flag without non-cpu memory planning is a configuration error") {
    graph g = graph_builder{}.input("a", {2, 2}).delegate("d0", "cuda:0", "add", {"a"}).output({"d0"}).build();
    auto o = executorch();
    o.enable_non_cpu_memory_planning = false;
    o.skip_h2d_for_method_inputs = true;
    CHECK_THROWS_AS(propagate_device(g, o), config_error);
    o.skip_h2d_for_method_inputs = false;
    o.skip_d2h_for_method_outputs = true;
    CHECK_THROWS_AS(propagate_device(g, o), config_error);
  }
}

TEST_CASE("propagate/executorch: chained delegates on one device read each other directly (3/1)") {
  graph g = chain("cuda:0");
  run(g, executorch());
  CHECK_COPIES(g, 3, 1, 0);
  CHECK(producer_of(g, "d1", 0).id == "d0");
  CHECK(producer_of(g, "d1", 1).op == op_kind::h2d_copy);
}

TEST_CASE("propagate/executorch: chained delegates on two devices keep the round trip (4/2)") {
  graph g = chain("cuda:1");
  run(g, executorch());
  CHECK_COPIES(g, 4, 2, 0);
  const node& h = producer_of(g, "d1", 0);
  CHECK(h.op == op_kind::h2d_copy);
  CHECK(h.device == cuda_device(1));
  CHECK(producer_of(g, h.id, 0).op == op_kind::d2h_copy);
  CHECK(g[*find_node(g, "d1")].outputs[0].device == cuda_device(1));
}

TEST_CASE("propagate/executorch: diamond of four cuda:0 delegates (4/1, every edge direct)") {
  graph g = graph_builder{}
                .input("a", {2, 2})
                .input("b", {2, 2})
                .delegate("d0", "cuda:0", "add", {"a", "b"})
                .delegate("d1", "cuda:0", "add", {"d0", "a"})
                .delegate("d2", "cuda:0", "add", {"d0", "b"})
                .delegate("d3", "cuda:0", "add", {"d1", "d2"})
                .output({"d3"})
                .build();
  run(g, executorch());
  CHECK_COPIES(g, 4, 1, 0);
  CHECK(producer_of(g, "d1", 0).id == "d0");
  CHECK(producer_of(g, "d2", 0).id == "d0");
  CHECK(producer_of(g, "d3", 0).id == "d1");
  CHECK(producer_of(g, "d3", 1).id == "d2");
}

TEST_CASE("propagate/executorch: a d2h with another host consumer stays") {
  graph g = graph_builder{}
                .input("a", {2, 2})
                .input("b", {2, 2})
                .delegate("t", "cuda:0", "add", {"a", "b"})
                .delegate("u", "cuda:0", "add", {"t", "a"})
                .call("w", "relu", {"t"})
                .output({"u", "w"})
                .build();
  run(g, executorch());
  CHECK(producer_of(g, "u", 0).id == "t");
  CHECK(producer_of(g, "w", 0).op == op_kind::d2h_copy);
  CHECK_COPIES(g, 3, 2, 0);
}

TEST_CASE("propagate/executorch: one value to cuda:0 and cuda:1 leaves one round trip, to cuda:1") {
  graph g = graph_builder{}
                .input("a", {2, 2})
                .input("b", {2, 2})
                .delegate("t", "cuda:0", "add", {"a", "b"})
                .delegate("u", "cuda:0", "add", {"t"})
                .delegate("v", "cuda:1", "add", {"t"})
                .output({"u", "v"})
                .build();
  run(g, executorch());
  CHECK(producer_of(g, "u", 0).id == "t");
  const node& h = producer_of(g, "v", 0);
  CHECK(h.op == op_kind::h2d_copy);
  CHECK(h.device == cuda_device(1));
  CHECK(producer_of(g, h.id, 0).op == op_kind::d2h_copy);
}

TEST_CASE("propagate/executorch: a cuda:1 delegate puts its values on cuda:1") {
  graph g = graph_builder{}.input("a", {2, 2}).delegate("d0", "cuda:1", "add", {"a"}).output({"d0"}).build();
  run(g, executorch());
  CHECK(g[*find_node(g, "d0")].outputs[0].device == cuda_device(1));
  CHECK(producer_of(g, "d0", 0).device == cuda_device(1));
}

TEST_CASE("propagate/executorch: method I/O policies") {
  graph g = one_add();
  auto o = executorch();
  SUBCASE("skip_h2d -> 0/1, inputs on cuda:0") {
    o.skip_h2d_for_method_inputs = true;
    run(g, o);
    CHECK_COPIES(g, 0, 1, 0);
    CHECK(g[*find_node(g, "a")].outputs[0].device == cuda_device(0));
    CHECK(g[*find_node(g, "b")].outputs[0].device == cuda_device(0));
  }
  SUBCASE("skip_d2h -> 2/0") {
    o.skip_d2h_for_method_outputs = true;
    run(g, o);
    CHECK_COPIES(g, 2, 0, 0);
    CHECK(producer_of(g, "out", 0).id == "d0");
  }
  SUBCASE("both -> 0/0") {
    o.skip_h2d_for_method_inputs = o.skip_d2h_for_method_outputs = true;
    run(g, o);
    CHECK_COPIES(g, 0, 0, 0);
  }
}

TEST_CASE("propagate/executorch: skip_h2d with one input from a cpu op -> 1/1") {
  graph g = graph_builder{}
                .input("a", {2, 2})
                .input("b", {2, 2})
                .call("r", "relu", {"b"})
                .delegate("d0", "cuda:0", "add", {"a", "r"})
                .output({"d0"})
                .build();
  auto o = executorch();
  o.skip_h2d_for_method_inputs = true;
  run(g, o);
  CHECK_COPIES(g, 1, 1, 0);
  CHECK(producer_of(g, "d0", 0).id == "a");
  CHECK(producer_of(g, "d0", 1).op == op_kind::h2d_copy);
}

TEST_CASE("propagate/executorch: skip_h2d on an input with two consumers is an error naming both") {
  graph g = graph_builder{}
                .input("a", {2, 2})
                .delegate("d0", "cuda:0", "add", {"a"})
                .call("r", "relu", {"a"})
                .output({"d0", "r"})
                .build();
  auto o = executorch();
  o.skip_h2d_for_method_inputs = true;
  try {
    propagate_device(g, o);
    FAIL("expected an error");
  } catch (const graph_error& e) {
    CHECK(e.node() == "a");
    CHECK(e.field() == "consumers");
    CHECK(std::string(e.what()).find("'d0', 'r'") != std::string::npos);
  }
}

// ---------------------------------------------------------------------------------------------
// The devpass policy on the same cases: never more copies, the same placement invariants.

TEST_CASE("propagate/devpass: never more copies than executorch on ExecuTorch's cases") {
  struct named_case {
    const char* name;
    graph g;
  };
  const named_case cases[] = {
      {"one add", one_add()},
      {"chain", chain("cuda:0")},
      {"two devices", chain("cuda:1")},
      {"diamond", graph_builder{}
                      .input("a", {2, 2})
                      .input("b", {2, 2})
                      .delegate("d0", "cuda:0", "add", {"a", "b"})
                      .delegate("d1", "cuda:0", "add", {"d0", "a"})
                      .delegate("d2", "cuda:0", "add", {"d0", "b"})
                      .delegate("d3", "cuda:0", "add", {"d1", "d2"})
                      .output({"d3"})
                      .build()},
      {"extra cpu consumer", graph_builder{}
                                 .input("a", {2, 2})
                                 .input("b", {2, 2})
                                 .delegate("t", "cuda:0", "add", {"a", "b"})
                                 .delegate("u", "cuda:0", "add", {"t", "a"})
                                 .call("w", "relu", {"t"})
                                 .output({"u", "w"})
                                 .build()},
      {"shared constant", graph_builder{}
                              .input("x", {2, 2})
                              .constant("w", {2, 2})
                              .delegate("d0", "cuda:0", "add", {"x", "w"})
                              .delegate("d1", "cuda:0", "add", {"d0", "w"})
                              .call("r", "relu", {"d1"})
                              .output({"r", "d1"})
                              .build()},
  };
  for (const auto& c : cases) {
    CAPTURE(c.name);
    graph e = c.g, d = c.g;
    run(e, executorch());
    run(d, {});
    const auto ce = count_copies(e), cd = count_copies(d);
    CHECK(cd.h2d <= ce.h2d);
    CHECK(cd.d2h <= ce.d2h);
    CHECK(cd.copies() <= ce.h2d + ce.d2h);
  }
}

TEST_CASE("propagate/devpass: one h2d per (host value, device), shared by every consumer") {
  graph g = graph_builder{}
                .input("x", {2, 2})
                .constant("w", {2, 2})
                .delegate("d0", "cuda:0", "add", {"x", "w"})
                .delegate("d1", "cuda:0", "add", {"d0", "w", "w"})
                .output({"d1"})
                .build();
  run(g, {});
  CHECK_COPIES(g, 2, 1, 0);  // h2d: x and w once each; executorch makes 5 and elides 1 (d0 -> d1)
  CHECK(producer_of(g, "d0", 1).id == producer_of(g, "d1", 1).id);
  CHECK(producer_of(g, "d1", 1).id == producer_of(g, "d1", 2).id);
  CHECK(producer_of(g, "d1", 1).id == "w@h2d[cuda:0]");
}

TEST_CASE("propagate/devpass: a cross-device read is one direct d2d copy") {
  graph g = graph_builder{}
                .input("a", {2, 2})
                .delegate("d0", "cuda:0", "add", {"a"})
                .delegate("d1", "cuda:1", "add", {"d0"})
                .output({"d1"})
                .build();
  run(g, {});
  const node& copy = producer_of(g, "d1", 0);
  CHECK(copy.op == op_kind::d2d_copy);
  CHECK(copy.device == cuda_device(1));
  CHECK(producer_of(g, copy.id, 0).id == "d0");
  CHECK_COPIES(g, 1, 1, 1);
}

TEST_CASE("propagate/devpass: skip_h2d input with several consumers is placed on its first device consumer") {
  graph g = graph_builder{}
                .input("a", {2, 2})
                .delegate("d0", "cuda:0", "add", {"a"})
                .delegate("d1", "cuda:1", "add", {"a"})
                .call("r", "relu", {"a"})
                .output({"d0", "d1", "r"})
                .build();
  propagate_options o;
  o.skip_h2d_for_method_inputs = true;
  run(g, o);
  CHECK(g[*find_node(g, "a")].outputs[0].device == cuda_device(0));
  CHECK(producer_of(g, "d0", 0).id == "a");
  CHECK(producer_of(g, "d1", 0).op == op_kind::d2d_copy);
  CHECK(producer_of(g, "r", 0).op == op_kind::d2h_copy);
}

TEST_CASE("propagate/devpass: skip_d2h leaves method outputs on the device") {
  graph g = graph_builder{}
                .input("a", {2, 2})
                .delegate("d0", "cuda:0", "add", {"a"})
                .call("r", "relu", {"d0"})
                .output({"d0", "r"})
                .build();
  propagate_options o;
  o.skip_d2h_for_method_outputs = true;
  run(g, o);
  CHECK(producer_of(g, "out", 0).id == "d0");
  CHECK(producer_of(g, "r", 0).op == op_kind::d2h_copy);
}

TEST_CASE("propagate: compile-time policies give the same graphs as run-time selection") {
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    graph a = testing::random_graph(seed), b = a, c = a, d = a;
    propagate_device(a, {});
    propagate_device_with<propagate_policy>(b, {});
    CHECK_SAME_GRAPH(a, b);
    propagate_device(c, executorch());
    propagate_device_with<executorch_propagate_policy>(d, executorch());
    CHECK_SAME_GRAPH(c, d);
  }
}

TEST_CASE("propagate: options that select phases the compile-time policy compiled out are refused, naming both") {
  const auto two_devices = [] {  // ExecuTorch's bounces a -> b through the host, devpass copies it directly
    return graph_builder{}
        .input("x", {2, 2})
        .delegate("a", "cuda:0", "relu", {"x"})
        .delegate("b", "cuda:1", "gelu", {"a"})
        .call("c", "add", {"b", "x"})
        .output({"c"})
        .build();
  };
  graph g = two_devices();
  const graph before = g;
  // The executorch policy compiles in only ExecuTorch's copy phases; the default options ask
  // for the devpass copies: a run that would copy nothing.
  CHECK_THROWS_WITH_AS(propagate_device_with<executorch_propagate_policy>(g, {}),
                       doctest::Contains("options.policy is copy_policy::devpass"), config_error);
  CHECK_SAME_GRAPH(g, before);
  CHECK_THROWS_WITH_AS(propagate_device_with<propagate_policy>(g, executorch()),
                       doctest::Contains("compiles in only the devpass copy phases"), config_error);
  CHECK_SAME_GRAPH(g, before);
  // Without options, each policy runs with its own (options_for<Policy>()).
  propagate_device_with<executorch_propagate_policy>(g);
  CHECK_COPIES(g, 2, 2, 0);
  graph h = two_devices();
  propagate_device_with<propagate_policy>(h);
  CHECK_COPIES(h, 1, 1, 1);
  // Legacy mode makes no copies under either policy: nothing to contradict.
  graph legacy = two_devices();
  CHECK_NOTHROW(propagate_device_with<executorch_propagate_policy>(legacy, {.enable_non_cpu_memory_planning = false}));
  static_assert(options_for<executorch_propagate_policy>().policy == copy_policy::executorch);
  static_assert(options_for<policy_from_options>().policy == copy_policy::devpass);
}

namespace {
// A cuda:0 delegate `a` adding method inputs x and y, made with connect.
graph add_of_two_inputs() {
  return graph_builder{}
      .input("x", {2, 2})
      .input("y", {2, 2})
      .delegate("a", "cuda:0", "add", {"x", "y"})
      .output({"a"})
      .build();
}
// The in-edge that feeds slot `from` of node `consumer` made to feed slot `to`.
void move_slot(graph& g, std::string_view consumer, std::uint32_t from, std::uint32_t to) {
  for (const auto e : boost::make_iterator_range(boost::in_edges(*find_node(g, consumer), g)))
    if (g[e].slot == from) g[e].slot = to;
}
}  // namespace

TEST_CASE("propagate/preconditions: edges that do not fill the slots (boost::add_edge) are refused, naming node") {
  for (const auto policy : {copy_policy::executorch, copy_policy::devpass}) {
    CAPTURE(policy == copy_policy::devpass);
    // What a front end that makes its edges with boost::add_edge leaves: slot 0, arity 0.
    graph g = graph_builder{}.input("x", {2, 2}).delegate("a", "cuda:0", "relu", {}, {{2, 2}}).output({"a"}).build();
    boost::add_edge(*find_node(g, "x"), *find_node(g, "a"), g);
    const graph before = g;
    try {
      propagate_device(g, {.policy = policy});
      FAIL("expected a graph_error");
    } catch (const graph_error& e) {
      CHECK(e.node() == "a");
      CHECK(e.field() == "inputs");
      CHECK(e.problem() ==
            "has 1 in-edge but arity 0; make edges with devpass::connect(g, value, consumer, slot), which sets the "
            "slot and the arity (boost::add_edge sets neither)");
    }
    CHECK_SAME_GRAPH(g, before);
  }
  // Arity right, slots wrong: two edges into slot 0 of a binary delegate.
  graph g = graph_builder{}
                .input("x", {2, 2})
                .input("y", {2, 2})
                .delegate("a", "cuda:0", "add", {}, {{2, 2}})
                .output({"a"})
                .build();
  const vertex a = *find_node(g, "a");
  boost::add_edge(*find_node(g, "x"), a, g);
  boost::add_edge(*find_node(g, "y"), a, g);
  graph_model<graph>::set_arity(g, a, 2);
  CHECK_THROWS_WITH_AS(propagate_device(g, {}), doctest::Contains("node 'a': inputs: two in-edges feed slot 0"),
                       graph_error);
  // Made with connect, the same graph propagates.
  graph ok = add_of_two_inputs();
  CHECK(verify_propagation_input(ok).ok());
  propagate_device(ok, {});
  CHECK_COPIES(ok, 2, 1, 0);
}

TEST_CASE("propagate/preconditions: a node of more than 64 slots is checked slot by slot, naming node and slot") {
  // A concatenation of 70 inputs: each slot fed once passes; a slot fed twice or beyond the arity is refused.
  const auto concat_of_70 = [] {
    graph_builder b;
    std::vector<std::string> parts;
    for (int i = 0; i < 70; ++i) {
      parts.push_back("x" + std::to_string(i));
      b.input(parts.back(), {2});
    }
    return b.delegate("cat", "cuda:0", "cat", parts, {{140}}).output({"cat"}).build();
  };
  graph ok = concat_of_70();
  CHECK(verify_propagation_input(ok).ok());
  const auto moved_slot = [&](std::uint32_t from, std::uint32_t to) {
    graph g = concat_of_70();
    move_slot(g, "cat", from, to);
    return g;
  };
  const graph twice = moved_slot(3, 66);
  const verify_report twice_report = verify_propagation_input(twice);
  REQUIRE_FALSE(twice_report.ok());
  CHECK(twice_report.problems.front().node() == "cat");
  CHECK(twice_report.problems.front().field() == "inputs");
  CHECK(twice_report.problems.front().problem().starts_with("two in-edges feed slot 66;"));
  const graph beyond = moved_slot(69, 70);
  const verify_report beyond_report = verify_propagation_input(beyond);
  REQUIRE_FALSE(beyond_report.ok());
  CHECK(beyond_report.problems.front().problem().starts_with("an in-edge feeds slot 70, beyond the arity 70;"));
  graph refused = moved_slot(3, 66);
  CHECK_THROWS_WITH_AS(propagate_device(refused, {}),
                       doctest::Contains("node 'cat': inputs: two in-edges feed slot 66"), graph_error);
  CHECK_SAME_GRAPH(refused, twice);
  // The same check under 64 slots: a binary delegate's second edge given slot 5.
  graph binary = add_of_two_inputs();
  move_slot(binary, "a", 1, 5);
  const verify_report binary_report = verify_propagation_input(binary);
  REQUIRE_FALSE(binary_report.ok());
  CHECK(binary_report.problems.front().problem().starts_with("an in-edge feeds slot 5, beyond the arity 2;"));
}

TEST_CASE("propagate: a constant that already lives on the device is read directly, both policies") {
  for (const auto policy : {copy_policy::executorch, copy_policy::devpass}) {
    graph g = graph_builder{}
                  .input("x", {2, 2})
                  .constant("w", {2, 2})
                  .delegate("d0", "cuda:0", "add", {"x", "w"})
                  .output({"d0"})
                  .build();
    mark(g, "w", cuda_device(0));
    run(g, {.policy = policy});
    CHECK_COPIES(g, 1, 1, 0);
    CHECK(producer_of(g, "d0", 1).id == "w");
  }
}

// Constants where they are read (propagate_options::resident_constants, on by default): under
// the devpass policy a constant's copy to each device that reads it is resident, made once at load.
namespace {
// x, w -> d0 = add(x, w) on cuda:0 -> d1 = add(d0, w) on cuda:1 -> r = add(d1, w) on the host -> out.
graph weight_on_two_devices_and_the_host() {
  return graph_builder{}
      .input("x", {2, 2})
      .constant("w", {2, 2})
      .delegate("d0", "cuda:0", "add", {"x", "w"})
      .delegate("d1", "cuda:1", "add", {"d0", "w"})
      .call("r", "add", {"d1", "w"})
      .output({"r"})
      .build();
}
}  // namespace

TEST_CASE("propagate/resident constants: a constant read by two devices and the host is loaded onto each device once") {
  graph g = weight_on_two_devices_and_the_host();
  const propagate_stats stats = propagate_device(g);
  CHECK(verify(g).ok());
  const node &on0 = producer_of(g, "d0", 1), &on1 = producer_of(g, "d1", 1);
  CHECK(on0.id == "w@h2d[cuda:0]");
  CHECK(on0.resident);
  CHECK(on1.id == "w@h2d[cuda:1]");
  CHECK(on1.resident);
  CHECK(producer_of(g, "r", 1).id == "w");  // the host keeps reading the constant itself
  // What moves on every execution is the activations: x in, d0 across, d1 out.
  CHECK_FALSE(producer_of(g, "d0", 0).resident);
  CHECK_FALSE(producer_of(g, "d1", 0).resident);
  CHECK_FALSE(producer_of(g, "r", 0).resident);
  const copy_census c = count_copies(g);
  CHECK(stats.after == c);
  CHECK(c.h2d == 1);
  CHECK(c.d2d == 1);
  CHECK(c.d2h == 1);
  CHECK(c.bytes() == 3 * 16);
  CHECK(c.resident == 2);
  CHECK(c.resident_bytes == 2 * 16);
  CHECK(c.copies() == 5);
  CHECK_COPIES(g, 3, 1, 1);  // copy nodes of each kind, resident ones included
  CHECK(resident_loads(g) == std::vector<resident_load>{{cuda_device(0), 1, 16}, {cuda_device(1), 1, 16}});
  // Propagating the result again changes nothing.
  graph again = g;
  propagate_device(again);
  CHECK_SAME_GRAPH(again, g);
}

TEST_CASE("propagate/resident constants: off, the same copies, none resident: each made on every execution") {
  graph on = weight_on_two_devices_and_the_host(), off = on;
  propagate_device(on);
  const propagate_stats stats = propagate_device(off, {.resident_constants = false});
  CHECK(stats.after.resident == 0);
  CHECK(stats.after.h2d == 3);
  CHECK(stats.after.bytes() == 5 * 16);
  // The same copies, read by the same slots: only the marks differ.
  for (const auto v : boost::make_iterator_range(boost::vertices(on))) on[v].resident = false;
  CHECK_SAME_GRAPH(on, off);
}

TEST_CASE(
    "propagate/resident constants: the executorch policy copies constants per delegate slot, on every execution") {
  graph on = weight_on_two_devices_and_the_host(), off = on;
  propagate_device(on, executorch());
  propagate_device(off, {.policy = copy_policy::executorch, .resident_constants = false});
  CHECK_SAME_GRAPH(on, off);
  CHECK(count_copies(on).resident == 0);
  CHECK(count_copies(on).h2d == 4);  // x, w for d0; w for d1; d0 through the host to cuda:1
}

TEST_CASE("propagate/resident constants: a constant the file places on cuda:0 is loaded once where else it is read") {
  graph g = weight_on_two_devices_and_the_host();
  mark(g, "w", cuda_device(0));
  g[*find_node(g, "w")].device = cuda_device(0);
  run(g, {});
  CHECK(producer_of(g, "d0", 1).id == "w");  // on its own device it is read directly
  const node& peer = producer_of(g, "d1", 1);
  CHECK(peer.op == op_kind::d2d_copy);
  CHECK(peer.resident);
  const node& back = producer_of(g, "r", 1);
  CHECK(back.op == op_kind::d2h_copy);
  CHECK(back.resident);
  CHECK(count_copies(g).resident == 2);
  CHECK(resident_loads(g) == std::vector<resident_load>{{cpu_device, 1, 16}, {cuda_device(1), 1, 16}});
}

TEST_CASE("propagate/resident constants: a copy the file holds stays as the file says") {
  // The file copies w to cuda:0 on every execution already; the pass reuses that copy as it is.
  graph g = graph_builder{}
                .input("x", {2, 2})
                .constant("w", {2, 2})
                .h2d_copy("w_up", "cuda:0", "w")
                .delegate("d0", "cuda:0", "add", {"x", "w_up"})
                .delegate("d1", "cuda:0", "add", {"d0", "w"})
                .output({"d1"})
                .build();
  run(g, {});
  CHECK(producer_of(g, "d1", 1).id == "w_up");
  CHECK_FALSE(producer_of(g, "d1", 1).resident);
  CHECK(count_copies(g).resident == 0);
}

// Values a file places on a device (outside ExecuTorch's graphs; docs/device-propagation.md,
// "Values placed by the file"). The first three are cases fuzzing found
// (fuzz/regressions/propagate/).

TEST_CASE("propagate/placed values: a constant on cuda:0 read by a delegate on cuda:1 travels d2h, h2d (executorch)") {
  const auto build = [] {
    graph g = graph_builder{}
                  .input("x", {2, 2})
                  .constant("w", {2, 2})
                  .delegate("d0", "cuda:1", "add", {"x", "w"})
                  .output({"d0"})
                  .build();
    mark(g, "w", cuda_device(0));
    return g;
  };
  graph g = build();
  run(g, executorch());
  CHECK_COPIES(g, 2, 2, 0);  // h2d: x and w; d2h: w to the host, d0 for the output
  const node& h = producer_of(g, "d0", 1);
  CHECK(h.op == op_kind::h2d_copy);
  CHECK(h.device == cuda_device(1));
  CHECK(producer_of(g, h.id, 0).op == op_kind::d2h_copy);
  SUBCASE("the devpass policy copies it directly") {
    graph p = build();
    propagate_device(p, {});
    CHECK(producer_of(p, "d0", 1).op == op_kind::d2d_copy);
    CHECK(verify(p).ok());
  }
}

TEST_CASE("propagate/placed values: an input on cuda:2 read on cuda:8 and cuda:2 (executorch, every flag)") {
  for (const bool skip_d2h : {false, true})
    for (const bool elide : {false, true}) {
      CAPTURE(skip_d2h);
      CAPTURE(elide);
      graph g = graph_builder{}
                    .input("x", {2, 2})
                    .delegate("d0", "cuda:8", "add", {"x"})
                    .delegate("d1", "cuda:2", "add", {"x"})
                    .output({"d0", "d1"})
                    .build();
      mark(g, "x", cuda_device(2));
      run(g, {.policy = copy_policy::executorch, .skip_d2h_for_method_outputs = skip_d2h, .elide = elide});
      // cuda:2 reads x where it lives; cuda:8 gets it through the host.
      CHECK(producer_of(g, "d1", 0).id == "x");
      CHECK(producer_of(g, "d0", 0).op == op_kind::h2d_copy);
      CHECK(producer_of(g, "d0", 0).device == cuda_device(8));
    }
}

TEST_CASE("propagate/placed values: a used and a dead cuda:0 output are marked cuda:0 (executorch, both skips)") {
  graph g = graph_builder{}
                .input("x", {2, 2})
                .delegate("g0", "cuda:0", "add", {"x"})
                .delegate("g1", "cuda:0", "add", {"g0"})
                .output({"g0"})
                .build();
  run(g, {.policy = copy_policy::executorch, .skip_h2d_for_method_inputs = true, .skip_d2h_for_method_outputs = true});
  CHECK(g[*find_node(g, "g1")].outputs[0].device == cuda_device(0));
  CHECK(g[*find_node(g, "g0")].outputs[0].device == cuda_device(0));
  CHECK(g[*find_node(g, "x")].outputs[0].device == cuda_device(0));
}

TEST_CASE("propagate/placed values: copies the file holds are read like other placed values (executorch, every flag)") {
  // x -> g0 (cuda:5) -> d1, a d2d_copy to cuda:0 in the file, read by a host call, by a delegate
  // on cuda:1, by one on cuda:0 and by the output. Found by fuzzing: the call once read d1 on cuda:0
  // (fuzz/regressions/propagate/executorch-file-d2d-copy-read-by-a-host-call).
  for (const bool skip_d2h : {false, true})
    for (const bool elide : {false, true}) {
      CAPTURE(skip_d2h);
      CAPTURE(elide);
      graph g = graph_builder{}
                    .input("x", {2})
                    .delegate("g0", "cuda:5", "relu", {"x"})
                    .d2d_copy("d1", "cuda:0", "g0")
                    .call("r", "relu", {"d1"})
                    .delegate("on1", "cuda:1", "relu", {"d1"})
                    .delegate("on0", "cuda:0", "relu", {"d1"})
                    .output({"r", "on1", "on0", "d1"})
                    .build();
      propagate_device(g, {.policy = copy_policy::executorch, .skip_d2h_for_method_outputs = skip_d2h, .elide = elide});
      const verify_report report = verify(g);
      CHECK_MESSAGE(report.ok(), report.to_string());
      CHECK(producer_of(g, "on0", 0).id == "d1");               // on d1's device: read directly
      CHECK(producer_of(g, "on1", 0).op == op_kind::h2d_copy);  // elsewhere: through the host
      CHECK(producer_of(g, "r", 0).op == op_kind::d2h_copy);
    }
}

TEST_CASE("propagate: a delegate without outputs is placed like any other, both policies, every flag") {
  // A rule's consumer capture is value 0 of its node; a delegate that declares no outputs has
  // none, and a guard reading where it runs once threw std::out_of_range (found by fuzzing,
  // fuzz/regressions/propagate/devpass-guard-reads-a-delegate-without-outputs).
  for (const auto policy : {copy_policy::executorch, copy_policy::devpass})
    for (const bool skip : {false, true}) {
      CAPTURE(policy == copy_policy::devpass);
      CAPTURE(skip);
      graph g = graph_builder{}
                    .input("x", {2})
                    .delegate("g0", "cuda:0", "relu", {"x"})
                    // add() takes the outputs as given: none.
                    .add({.id = "g1", .op = op_kind::delegate, .device = cuda_device(1), .kernel = "relu"}, {"g0"})
                    .output({"g0"})
                    .build();
      propagate_device(g, {.policy = policy, .skip_h2d_for_method_inputs = skip, .skip_d2h_for_method_outputs = skip});
      const verify_report report = verify(g);
      CHECK_MESSAGE(report.ok(), report.to_string());
      CHECK(location_of(g, *operand(g, *find_node(g, "g1"), 0)) == cuda_device(1));
    }
}

TEST_CASE("propagate/preconditions: a produced value marked on another device is refused, naming node and output") {
  // Such a mark (a delegate's output marked cpu, as a legacy-mode run leaves a host call's input
  // tagged) once made the executorch policy write an inconsistent graph and the devpass policy
  // insert d2d copies until the driver's bound.
  for (const auto policy : {copy_policy::executorch, copy_policy::devpass}) {
    graph g = graph_builder{}
                  .input("x", {2, 2})
                  .delegate("g0", "cuda:0", "add", {"x"})
                  .delegate("g1", "cuda:0", "add", {"g0"})
                  .output({"g0"})
                  .build();
    mark(g, "g1", cpu_device);
    const graph before = g;
    const std::size_t nodes = boost::num_vertices(g);
    try {
      propagate_device(g, {.policy = policy});
      FAIL("expected a graph_error");
    } catch (const graph_error& e) {
      CHECK(e.node() == "g1");
      CHECK(e.field() == "outputs[0]");
      CHECK(e.problem() == "a delegate produces on cuda:0 but the value is marked on cpu");
    }
    CHECK(boost::num_vertices(g) == nodes);  // nothing changed
    CHECK_SAME_GRAPH(g, before);
  }
  SUBCASE("legacy mode only tags, so it accepts the marks it would write itself") {
    graph g = graph_builder{}
                  .input("x", {2, 2})
                  .call("c", "relu", {"x"})
                  .delegate("g0", "cuda:0", "add", {"c"})
                  .output({"g0"})
                  .build();
    propagate_device(g, {.enable_non_cpu_memory_planning = false});
    CHECK(g[*find_node(g, "c")].outputs[0].device == cuda_device(0));
    CHECK_NOTHROW(propagate_device(g, {.enable_non_cpu_memory_planning = false}));
    CHECK_THROWS_AS(propagate_device(g, {}), graph_error);
  }
}

TEST_CASE("propagate: a copy whose id a node already has is renumbered, both policies") {
  // propagate_device's input check gathers the suffixes of the ids the graph holds for the id
  // allocator (its seed), which then reads no node again: a node named like a copy is still found.
  const auto build = [] {
    return graph_builder{}
        .input("x", {2, 2})
        .call("d0@d2h", "relu", {"x"})
        .call("d0@h2d.0", "relu", {"x"})
        .delegate("d0", "cuda:0", "add", {"x", "d0@h2d.0"})
        .call("c", "relu", {"d0"})
        .output({"c", "d0@d2h"})
        .build();
  };
  SUBCASE("devpass") {
    graph g = build();
    run(g, {});
    CHECK(producer_of(g, "c", 0).id == "d0@d2h#2");
    CHECK(producer_of(g, "d0", 0).id == "x@h2d[cuda:0]");
  }
  SUBCASE("executorch") {
    graph g = build();
    run(g, executorch());
    CHECK(producer_of(g, "c", 0).id == "d0@d2h#2");
    CHECK(producer_of(g, "d0", 0).id == "d0@h2d.0#2");
    CHECK(producer_of(g, "d0", 1).id == "d0@h2d.1");
  }
}
