// Device propagation: ExecuTorch's own test cases (exir/tests/test_propagate_device_pass.py),
// mirrored with their copy counts for the executorch policy, and the devpass policy's
// guarantees on the same graphs.
#include <doctest/doctest.h>

#include <map>
#include <random>

#include "devpass/graph/verify.hpp"
#include "devpass/passes/propagate_device.hpp"
#include "random_graph.hpp"

using namespace devpass;

namespace {

// A tiny graph builder: values by name, float32 2x2 tensors.
struct builder {
  graph g;
  std::map<std::string, vertex> by_id;
  tensor_spec f32() const { return {dtype::float32, {2, 2}}; }
  builder& input(const std::string& id) { return add(id, op_kind::input, cpu_device, {}); }
  builder& constant(const std::string& id) { return add(id, op_kind::constant, cpu_device, {}); }
  builder& delegate(const std::string& id, std::optional<device> dev, std::vector<std::string> inputs) {
    return add(id, op_kind::delegate, dev.value_or(cpu_device), inputs, "add");
  }
  builder& call(const std::string& id, std::vector<std::string> inputs) {
    return add(id, op_kind::call, cpu_device, inputs, "relu");
  }
  builder& output(std::vector<std::string> inputs) {
    node n{.id = "out", .op = op_kind::output};
    const vertex v = add_node(g, n);
    by_id["out"] = v;
    for (std::uint32_t i = 0; i < inputs.size(); ++i) connect(g, {by_id.at(inputs[i]), 0}, v, i);
    return *this;
  }
  builder& add(const std::string& id, op_kind op, device dev, std::vector<std::string> inputs, std::string kernel = "") {
    const vertex v = add_node(g, {.id = id, .op = op, .device = dev, .kernel = kernel, .outputs = {f32()}});
    by_id[id] = v;
    for (std::uint32_t i = 0; i < inputs.size(); ++i) connect(g, {by_id.at(inputs[i]), 0}, v, i);
    return *this;
  }
};

const node& producer_of(const graph& g, const std::string& consumer, std::uint32_t slot) {
  return g[operand(g, *find_node(g, consumer), slot).value().producer];
}

struct counts {
  std::size_t h2d, d2h;
};
counts run(graph& g, propagate_options o) {
  propagate_device(g, o);
  const auto c = count_copies(g);
  const auto report = verify_structure(g);
  CHECK_MESSAGE(report.ok(), report.to_string());
  if (o.enable_non_cpu_memory_planning) {
    const auto dev = verify_devices(g);
    CHECK_MESSAGE(dev.ok(), dev.to_string());
  }
  return {c.h2d, c.d2h};
}

propagate_options executorch() { return {.policy = copy_policy::executorch}; }

}  // namespace

TEST_CASE("propagate/executorch: one cuda:0 add(a, b) -> 2 h2d, 1 d2h") {
  builder b;
  b.input("a").input("b").delegate("d0", cuda_device(0), {"a", "b"}).output({"d0"});
  const auto c = run(b.g, executorch());
  CHECK(c.h2d == 2);
  CHECK(c.d2h == 1);
  CHECK(producer_of(b.g, "d0", 0).op == op_kind::h2d_copy);
  CHECK(producer_of(b.g, "d0", 1).op == op_kind::h2d_copy);
  CHECK(producer_of(b.g, "out", 0).op == op_kind::d2h_copy);
  CHECK(producer_of(b.g, "d0", 0).device == cuda_device(0));
}

TEST_CASE("propagate/executorch: no device -> no copies; legacy mode -> no copies, tags only") {
  SUBCASE("no device") {
    builder b;
    b.input("a").input("b").delegate("d0", std::nullopt, {"a", "b"}).output({"d0"});
    const auto c = run(b.g, executorch());
    CHECK(c.h2d == 0);
    CHECK(c.d2h == 0);
  }
  SUBCASE("legacy mode") {
    builder b;
    b.input("a").input("b").delegate("d0", cuda_device(0), {"a", "b"}).output({"d0"});
    auto o = executorch();
    o.enable_non_cpu_memory_planning = false;
    const auto c = run(b.g, o);
    CHECK(c.h2d == 0);
    CHECK(c.d2h == 0);
    CHECK(b.g[*find_node(b.g, "a")].outputs[0].device == cuda_device(0));
    CHECK(b.g[*find_node(b.g, "d0")].outputs[0].device == cuda_device(0));
  }
  SUBCASE("either skip flag without non-cpu memory planning is a configuration error") {
    builder b;
    b.input("a").delegate("d0", cuda_device(0), {"a"}).output({"d0"});
    auto o = executorch();
    o.enable_non_cpu_memory_planning = false;
    o.skip_h2d_for_method_inputs = true;
    CHECK_THROWS_AS(propagate_device(b.g, o), config_error);
    o.skip_h2d_for_method_inputs = false;
    o.skip_d2h_for_method_outputs = true;
    CHECK_THROWS_AS(propagate_device(b.g, o), config_error);
  }
}

TEST_CASE("propagate/executorch: chained delegates on one device read each other directly (3/1)") {
  builder b;
  b.input("a").input("b").input("c").delegate("d0", cuda_device(0), {"a", "b"}).delegate("d1", cuda_device(0), {"d0", "c"}).output({"d1"});
  const auto c = run(b.g, executorch());
  CHECK(c.h2d == 3);
  CHECK(c.d2h == 1);
  CHECK(producer_of(b.g, "d1", 0).id == "d0");
  CHECK(producer_of(b.g, "d1", 1).op == op_kind::h2d_copy);
}

TEST_CASE("propagate/executorch: chained delegates on two devices keep the round trip (4/2)") {
  builder b;
  b.input("a").input("b").input("c").delegate("d0", cuda_device(0), {"a", "b"}).delegate("d1", cuda_device(1), {"d0", "c"}).output({"d1"});
  const auto c = run(b.g, executorch());
  CHECK(c.h2d == 4);
  CHECK(c.d2h == 2);
  const node& h = producer_of(b.g, "d1", 0);
  CHECK(h.op == op_kind::h2d_copy);
  CHECK(h.device == cuda_device(1));
  CHECK(producer_of(b.g, h.id, 0).op == op_kind::d2h_copy);
  CHECK(b.g[*find_node(b.g, "d1")].outputs[0].device == cuda_device(1));
}

TEST_CASE("propagate/executorch: diamond of four cuda:0 delegates (4/1, every edge direct)") {
  builder b;
  b.input("a").input("b")
      .delegate("d0", cuda_device(0), {"a", "b"})
      .delegate("d1", cuda_device(0), {"d0", "a"})
      .delegate("d2", cuda_device(0), {"d0", "b"})
      .delegate("d3", cuda_device(0), {"d1", "d2"})
      .output({"d3"});
  const auto c = run(b.g, executorch());
  CHECK(c.h2d == 4);
  CHECK(c.d2h == 1);
  CHECK(producer_of(b.g, "d1", 0).id == "d0");
  CHECK(producer_of(b.g, "d2", 0).id == "d0");
  CHECK(producer_of(b.g, "d3", 0).id == "d1");
  CHECK(producer_of(b.g, "d3", 1).id == "d2");
}

TEST_CASE("propagate/executorch: a d2h with another host consumer stays") {
  builder b;
  b.input("a").input("b").delegate("t", cuda_device(0), {"a", "b"}).delegate("u", cuda_device(0), {"t", "a"})
      .call("w", {"t"}).output({"u", "w"});
  const auto c = run(b.g, executorch());
  CHECK(producer_of(b.g, "u", 0).id == "t");
  CHECK(producer_of(b.g, "w", 0).op == op_kind::d2h_copy);
  CHECK(c.h2d == 3);
  CHECK(c.d2h == 2);
}

TEST_CASE("propagate/executorch: one value to cuda:0 and cuda:1 leaves one round trip, to cuda:1") {
  builder b;
  b.input("a").input("b").delegate("t", cuda_device(0), {"a", "b"}).delegate("u", cuda_device(0), {"t"})
      .delegate("v", cuda_device(1), {"t"}).output({"u", "v"});
  run(b.g, executorch());
  CHECK(producer_of(b.g, "u", 0).id == "t");
  const node& h = producer_of(b.g, "v", 0);
  CHECK(h.op == op_kind::h2d_copy);
  CHECK(h.device == cuda_device(1));
  CHECK(producer_of(b.g, h.id, 0).op == op_kind::d2h_copy);
}

TEST_CASE("propagate/executorch: a cuda:1 delegate puts its values on cuda:1") {
  builder b;
  b.input("a").delegate("d0", cuda_device(1), {"a"}).output({"d0"});
  run(b.g, executorch());
  CHECK(b.g[*find_node(b.g, "d0")].outputs[0].device == cuda_device(1));
  CHECK(producer_of(b.g, "d0", 0).device == cuda_device(1));
}

TEST_CASE("propagate/executorch: method I/O policies") {
  builder b;
  b.input("a").input("b").delegate("d0", cuda_device(0), {"a", "b"}).output({"d0"});
  auto o = executorch();
  SUBCASE("skip_h2d -> 0/1, inputs on cuda:0") {
    o.skip_h2d_for_method_inputs = true;
    const auto c = run(b.g, o);
    CHECK(c.h2d == 0);
    CHECK(c.d2h == 1);
    CHECK(b.g[*find_node(b.g, "a")].outputs[0].device == cuda_device(0));
    CHECK(b.g[*find_node(b.g, "b")].outputs[0].device == cuda_device(0));
  }
  SUBCASE("skip_d2h -> 2/0") {
    o.skip_d2h_for_method_outputs = true;
    const auto c = run(b.g, o);
    CHECK(c.h2d == 2);
    CHECK(c.d2h == 0);
    CHECK(producer_of(b.g, "out", 0).id == "d0");
  }
  SUBCASE("both -> 0/0") {
    o.skip_h2d_for_method_inputs = o.skip_d2h_for_method_outputs = true;
    const auto c = run(b.g, o);
    CHECK(c.h2d == 0);
    CHECK(c.d2h == 0);
  }
}

TEST_CASE("propagate/executorch: skip_h2d with one input from a cpu op -> 1/1") {
  builder b;
  b.input("a").input("b").call("r", {"b"}).delegate("d0", cuda_device(0), {"a", "r"}).output({"d0"});
  auto o = executorch();
  o.skip_h2d_for_method_inputs = true;
  const auto c = run(b.g, o);
  CHECK(c.h2d == 1);
  CHECK(c.d2h == 1);
  CHECK(producer_of(b.g, "d0", 0).id == "a");
  CHECK(producer_of(b.g, "d0", 1).op == op_kind::h2d_copy);
}

TEST_CASE("propagate/executorch: skip_h2d on an input with two consumers is an error naming both") {
  builder b;
  b.input("a").delegate("d0", cuda_device(0), {"a"}).call("r", {"a"}).output({"d0", "r"});
  auto o = executorch();
  o.skip_h2d_for_method_inputs = true;
  try {
    propagate_device(b.g, o);
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
    void (*build)(builder&);
  };
  const named_case cases[] = {
      {"one add", [](builder& b) { b.input("a").input("b").delegate("d0", cuda_device(0), {"a", "b"}).output({"d0"}); }},
      {"chain", [](builder& b) {
         b.input("a").input("b").input("c").delegate("d0", cuda_device(0), {"a", "b"}).delegate("d1", cuda_device(0), {"d0", "c"}).output({"d1"});
       }},
      {"two devices", [](builder& b) {
         b.input("a").input("b").input("c").delegate("d0", cuda_device(0), {"a", "b"}).delegate("d1", cuda_device(1), {"d0", "c"}).output({"d1"});
       }},
      {"diamond", [](builder& b) {
         b.input("a").input("b").delegate("d0", cuda_device(0), {"a", "b"}).delegate("d1", cuda_device(0), {"d0", "a"})
             .delegate("d2", cuda_device(0), {"d0", "b"}).delegate("d3", cuda_device(0), {"d1", "d2"}).output({"d3"});
       }},
      {"extra cpu consumer", [](builder& b) {
         b.input("a").input("b").delegate("t", cuda_device(0), {"a", "b"}).delegate("u", cuda_device(0), {"t", "a"})
             .call("w", {"t"}).output({"u", "w"});
       }},
      {"shared constant", [](builder& b) {
         b.input("x").constant("w").delegate("d0", cuda_device(0), {"x", "w"}).delegate("d1", cuda_device(0), {"d0", "w"})
             .call("r", {"d1"}).output({"r", "d1"});
       }},
  };
  for (const auto& c : cases) {
    CAPTURE(c.name);
    builder e, d;
    c.build(e);
    c.build(d);
    const auto ce = run(e.g, executorch());
    const auto cd = run(d.g, {});
    CHECK(cd.h2d <= ce.h2d);
    CHECK(cd.d2h <= ce.d2h);
    const auto full = count_copies(d.g);
    CHECK(full.copies() <= ce.h2d + ce.d2h);
  }
}

TEST_CASE("propagate/devpass: one h2d per (host value, device), shared by every consumer") {
  builder b;
  b.input("x").constant("w").delegate("d0", cuda_device(0), {"x", "w"}).delegate("d1", cuda_device(0), {"d0", "w", "w"}).output({"d1"});
  const auto c = run(b.g, {});
  CHECK(c.h2d == 2);  // x and w once each; executorch makes 5 and elides 1 (d0 -> d1)
  CHECK(c.d2h == 1);
  CHECK(producer_of(b.g, "d0", 1).id == producer_of(b.g, "d1", 1).id);
  CHECK(producer_of(b.g, "d1", 1).id == producer_of(b.g, "d1", 2).id);
  CHECK(producer_of(b.g, "d1", 1).id == "w@h2d[cuda:0]");
}

TEST_CASE("propagate/devpass: a cross-device read is one direct d2d copy") {
  builder b;
  b.input("a").delegate("d0", cuda_device(0), {"a"}).delegate("d1", cuda_device(1), {"d0"}).output({"d1"});
  run(b.g, {});
  const node& copy = producer_of(b.g, "d1", 0);
  CHECK(copy.op == op_kind::d2d_copy);
  CHECK(copy.device == cuda_device(1));
  CHECK(producer_of(b.g, copy.id, 0).id == "d0");
  const auto c = count_copies(b.g);
  CHECK(c.d2d == 1);
  CHECK(c.h2d == 1);
  CHECK(c.d2h == 1);
}

TEST_CASE("propagate/devpass: skip_h2d input with several consumers is placed on its first device consumer") {
  builder b;
  b.input("a").delegate("d0", cuda_device(0), {"a"}).delegate("d1", cuda_device(1), {"a"}).call("r", {"a"}).output({"d0", "d1", "r"});
  propagate_options o;
  o.skip_h2d_for_method_inputs = true;
  run(b.g, o);
  CHECK(b.g[*find_node(b.g, "a")].outputs[0].device == cuda_device(0));
  CHECK(producer_of(b.g, "d0", 0).id == "a");
  CHECK(producer_of(b.g, "d1", 0).op == op_kind::d2d_copy);
  CHECK(producer_of(b.g, "r", 0).op == op_kind::d2h_copy);
}

TEST_CASE("propagate/devpass: skip_d2h leaves method outputs on the device") {
  builder b;
  b.input("a").delegate("d0", cuda_device(0), {"a"}).call("r", {"d0"}).output({"d0", "r"});
  propagate_options o;
  o.skip_d2h_for_method_outputs = true;
  run(b.g, o);
  CHECK(producer_of(b.g, "out", 0).id == "d0");
  CHECK(producer_of(b.g, "r", 0).op == op_kind::d2h_copy);
}

TEST_CASE("propagate: compile-time policies give the same graphs as run-time selection") {
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    builder unused;
    graph a = testing::random_graph(seed), b = a, c = a, d = a;
    propagate_device(a, {});
    propagate_device_with<propagate_policy>(b, {});
    CHECK(count_copies(a).copies() == count_copies(b).copies());
    propagate_device(c, executorch());
    propagate_device_with<executorch_propagate_policy>(d, executorch());
    CHECK(count_copies(c).copies() == count_copies(d).copies());
  }
}

TEST_CASE("propagate: a constant that already lives on the device is read directly, both policies") {
  for (const auto policy : {copy_policy::executorch, copy_policy::devpass}) {
    builder b;
    b.input("x").constant("w").delegate("d0", cuda_device(0), {"x", "w"}).output({"d0"});
    b.g[b.by_id.at("w")].outputs[0].device = cuda_device(0);
    const auto c = run(b.g, {.policy = policy});
    CHECK(c.h2d == 1);
    CHECK(producer_of(b.g, "d0", 1).id == "w");
  }
}

// Values a file places on a device (outside ExecuTorch's graphs; docs/device-propagation.md,
// "Values placed by the file"). The first three are the fuzz-found cases of issue #12.
namespace {
builder& place(builder& b, const std::string& id, device where) {
  b.g[b.by_id.at(id)].outputs[0].device = where;
  return b;
}
}  // namespace

TEST_CASE("propagate/placed values: a constant on cuda:0 read by a delegate on cuda:1 travels d2h, h2d (executorch)") {
  builder b;
  b.input("x").constant("w");
  place(b, "w", cuda_device(0)).delegate("d0", cuda_device(1), {"x", "w"}).output({"d0"});
  const auto c = run(b.g, executorch());
  CHECK(c.h2d == 2);  // x and w
  CHECK(c.d2h == 2);  // w to the host, d0 for the output
  const node& h = producer_of(b.g, "d0", 1);
  CHECK(h.op == op_kind::h2d_copy);
  CHECK(h.device == cuda_device(1));
  CHECK(b.g[operand(b.g, *find_node(b.g, h.id), 0).value().producer].op == op_kind::d2h_copy);
  SUBCASE("the devpass policy copies it directly") {
    builder p;
    p.input("x").constant("w");
    place(p, "w", cuda_device(0)).delegate("d0", cuda_device(1), {"x", "w"}).output({"d0"});
    propagate_device(p.g, {});
    CHECK(producer_of(p.g, "d0", 1).op == op_kind::d2d_copy);
    CHECK(verify(p.g).ok());
  }
}

TEST_CASE("propagate/placed values: an input on cuda:2 read on cuda:8 and cuda:2 (executorch, every flag)") {
  for (const bool skip_d2h : {false, true})
    for (const bool elide : {false, true}) {
      CAPTURE(skip_d2h);
      CAPTURE(elide);
      builder b;
      b.input("x");
      place(b, "x", cuda_device(2)).delegate("d0", cuda_device(8), {"x"}).delegate("d1", cuda_device(2), {"x"});
      b.output({"d0", "d1"});
      run(b.g, {.policy = copy_policy::executorch, .skip_d2h_for_method_outputs = skip_d2h, .elide = elide});
      // cuda:2 reads x where it lives; cuda:8 gets it through the host.
      CHECK(producer_of(b.g, "d1", 0).id == "x");
      CHECK(producer_of(b.g, "d0", 0).op == op_kind::h2d_copy);
      CHECK(producer_of(b.g, "d0", 0).device == cuda_device(8));
    }
}

TEST_CASE("propagate/placed values: a used and a dead cuda:0 output are marked cuda:0 (executorch, both skips)") {
  builder b;
  b.input("x").delegate("g0", cuda_device(0), {"x"}).delegate("g1", cuda_device(0), {"g0"}).output({"g0"});
  run(b.g, {.policy = copy_policy::executorch, .skip_h2d_for_method_inputs = true, .skip_d2h_for_method_outputs = true});
  CHECK(b.g[*find_node(b.g, "g1")].outputs[0].device == cuda_device(0));
  CHECK(b.g[*find_node(b.g, "g0")].outputs[0].device == cuda_device(0));
  CHECK(b.g[*find_node(b.g, "x")].outputs[0].device == cuda_device(0));
}

TEST_CASE("propagate/placed values: copies the file holds are read like other placed values (executorch, every flag)") {
  // x -> g0 (cuda:5) -> d1, a d2d_copy to cuda:0 in the file, read by a host call, by a delegate
  // on cuda:1, by one on cuda:0 and by the output. Found by fuzzing: the call once read d1 on cuda:0
  // (fuzz/regressions/propagate/executorch-file-d2d-copy-read-by-a-host-call).
  for (const bool skip_d2h : {false, true})
    for (const bool elide : {false, true}) {
      CAPTURE(skip_d2h);
      CAPTURE(elide);
      graph g;
      const tensor_spec spec{dtype::float32, {2}};
      const auto add = [&](node n) { n.outputs = {spec}; return add_node(g, std::move(n)); };
      const vertex x = add({.id = "x", .op = op_kind::input});
      const vertex g0 = add({.id = "g0", .op = op_kind::delegate, .device = cuda_device(5), .kernel = "relu"});
      const vertex d1 = add({.id = "d1", .op = op_kind::d2d_copy, .device = cuda_device(0)});
      const vertex r = add({.id = "r", .op = op_kind::call, .kernel = "relu"});
      const vertex on1 = add({.id = "on1", .op = op_kind::delegate, .device = cuda_device(1), .kernel = "relu"});
      const vertex on0 = add({.id = "on0", .op = op_kind::delegate, .device = cuda_device(0), .kernel = "relu"});
      const vertex out = add_node(g, {.id = "out", .op = op_kind::output});
      connect(g, {x, 0}, g0, 0);
      connect(g, {g0, 0}, d1, 0);
      connect(g, {d1, 0}, r, 0);
      connect(g, {d1, 0}, on1, 0);
      connect(g, {d1, 0}, on0, 0);
      connect(g, {r, 0}, out, 0);
      connect(g, {on1, 0}, out, 1);
      connect(g, {on0, 0}, out, 2);
      connect(g, {d1, 0}, out, 3);
      propagate_device(g, {.policy = copy_policy::executorch, .skip_d2h_for_method_outputs = skip_d2h, .elide = elide});
      const verify_report report = verify(g);
      CHECK_MESSAGE(report.ok(), report.to_string());
      CHECK(producer_of(g, "on0", 0).id == "d1");             // on d1's device: read directly
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
      graph g;
      const tensor_spec spec{dtype::float32, {2}};
      const vertex x = add_node(g, {.id = "x", .op = op_kind::input, .outputs = {spec}});
      const vertex g0 = add_node(g, {.id = "g0", .op = op_kind::delegate, .device = cuda_device(0), .kernel = "relu", .outputs = {spec}});
      const vertex g1 = add_node(g, {.id = "g1", .op = op_kind::delegate, .device = cuda_device(1), .kernel = "relu"});
      const vertex out = add_node(g, {.id = "out", .op = op_kind::output});
      connect(g, {x, 0}, g0, 0);
      connect(g, {g0, 0}, g1, 0);
      connect(g, {g0, 0}, out, 0);
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
    builder b;
    b.input("x").delegate("g0", cuda_device(0), {"x"}).delegate("g1", cuda_device(0), {"g0"}).output({"g0"});
    b.g[b.by_id.at("g1")].outputs[0].device = cpu_device;
    const std::size_t nodes = boost::num_vertices(b.g);
    try {
      propagate_device(b.g, {.policy = policy});
      FAIL("expected a graph_error");
    } catch (const graph_error& e) {
      CHECK(e.node() == "g1");
      CHECK(e.field() == "outputs[0]");
      CHECK(e.problem() == "a delegate produces on cuda:0 but the value is marked on cpu");
    }
    CHECK(boost::num_vertices(b.g) == nodes);  // nothing changed
  }
  SUBCASE("legacy mode only tags, so it accepts the marks it would write itself") {
    builder b;
    b.input("x").call("c", {"x"}).delegate("g0", cuda_device(0), {"c"}).output({"g0"});
    propagate_device(b.g, {.enable_non_cpu_memory_planning = false});
    CHECK(b.g[b.by_id.at("c")].outputs[0].device == cuda_device(0));
    CHECK_NOTHROW(propagate_device(b.g, {.enable_non_cpu_memory_planning = false}));
    CHECK_THROWS_AS(propagate_device(b.g, {}), graph_error);
  }
}
