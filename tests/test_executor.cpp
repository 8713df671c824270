#include <doctest/doctest.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "devpass/runtime/default_allocators.hpp"
#include "devpass/runtime/executor.hpp"
#include "devpass/runtime/failing_allocator.hpp"
#include "devpass/runtime/host_allocator.hpp"

using namespace devpass;
using namespace devpass::runtime;

namespace {

const tensor_spec f4{dtype::float32, {4}};

tensor_spec on(device d, tensor_spec s = f4) {
  s.device = d;
  return s;
}

vertex add(graph& g, std::string id, op_kind op, device d, std::string kernel, std::vector<value_ref> ins,
           std::vector<tensor_spec> outs) {
  node n;
  n.id = std::move(id);
  n.op = op;
  n.device = d;
  n.kernel = std::move(kernel);
  n.outputs = std::move(outs);
  const vertex v = add_node(g, std::move(n));
  for (std::uint32_t s = 0; s < ins.size(); ++s) connect(g, ins[s], v, s);
  return v;
}

bool same_f4(const node&, std::span<const tensor_spec* const> in) {
  return std::all_of(in.begin(), in.end(), [](const tensor_spec* s) { return s->same_layout(f4); });
}

kernel_registry test_kernels() {
  kernel_registry r;
  r.add("add", {same_f4,
                [](const kernel_call& c) {
                  for (int i = 0; i < 4; ++i)
                    c.outputs[0].as<float>()[i] = c.inputs[0].as<float>()[i] + c.inputs[1].as<float>()[i];
                },
                nullptr});
  r.add("relu", {same_f4,
                 [](const kernel_call& c) {
                   for (int i = 0; i < 4; ++i) c.outputs[0].as<float>()[i] = std::max(0.0f, c.inputs[0].as<float>()[i]);
                 },
                 nullptr});
  return r;
}

// x -> add(x, w) on cuda:0 -> relu on the host; outputs (relu, add).
graph original() {
  graph g;
  const vertex x = add(g, "x", op_kind::input, cpu_device, "", {}, {f4});
  const vertex w = add(g, "w", op_kind::constant, cpu_device, "", {}, {f4});
  const vertex d0 = add(g, "d0", op_kind::delegate, cuda_device(0), "add", {{x, 0}, {w, 0}}, {f4});
  const vertex r = add(g, "r", op_kind::call, cpu_device, "relu", {{d0, 0}}, {f4});
  add(g, "out", op_kind::output, cpu_device, "", {{r, 0}, {d0, 0}}, {});
  return g;
}

// The same after propagation: w placed on cuda:0, x copied in, d0 copied out.
graph placed() {
  graph g;
  const device c0 = cuda_device(0);
  const vertex x = add(g, "x", op_kind::input, cpu_device, "", {}, {f4});
  const vertex w = add(g, "w", op_kind::constant, c0, "", {}, {on(c0)});
  const vertex xc = add(g, "x@h2d", op_kind::h2d_copy, c0, "", {{x, 0}}, {on(c0)});
  const vertex d0 = add(g, "d0", op_kind::delegate, c0, "add", {{xc, 0}, {w, 0}}, {on(c0)});
  const vertex dc = add(g, "d0@d2h", op_kind::d2h_copy, c0, "", {{d0, 0}}, {on(cpu_device)});
  const vertex r = add(g, "r", op_kind::call, cpu_device, "relu", {{dc, 0}}, {on(cpu_device)});
  add(g, "out", op_kind::output, cpu_device, "", {{r, 0}, {dc, 0}}, {});
  return g;
}

// The same with w left on the host and a resident copy of it on cuda:0, as the devpass policy
// leaves a constant: loaded there once, not copied on every execution.
graph placed_resident() {
  graph g;
  const device c0 = cuda_device(0);
  const vertex x = add(g, "x", op_kind::input, cpu_device, "", {}, {f4});
  const vertex w = add(g, "w", op_kind::constant, cpu_device, "", {}, {on(cpu_device)});
  const vertex wc = add(g, "w@h2d[cuda:0]", op_kind::h2d_copy, c0, "", {{w, 0}}, {on(c0)});
  g[wc].resident = true;
  const vertex xc = add(g, "x@h2d", op_kind::h2d_copy, c0, "", {{x, 0}}, {on(c0)});
  const vertex d0 = add(g, "d0", op_kind::delegate, c0, "add", {{xc, 0}, {wc, 0}}, {on(c0)});
  const vertex dc = add(g, "d0@d2h", op_kind::d2h_copy, c0, "", {{d0, 0}}, {on(cpu_device)});
  const vertex r = add(g, "r", op_kind::call, cpu_device, "relu", {{dc, 0}}, {on(cpu_device)});
  add(g, "out", op_kind::output, cpu_device, "", {{r, 0}, {dc, 0}}, {});
  return g;
}

// The copies an emulated device was asked to make for node `id` since it last cleared its log.
std::size_t copies_issued(const emulated_device_allocator& device, std::string_view id) {
  std::size_t n = 0;
  for (const issued_work& w : device.issued())
    if (w.node == id && w.op != "synchronize") ++n;
  return n;
}

void set_slot(graph& g, std::string_view id, std::int32_t mem_id, std::int64_t offset) {
  auto& s = g[*find_node(g, id)].outputs[0];
  s.mem_id = mem_id;
  s.offset = offset;
}

// A hand-made plan for placed(): cpu arena (mem 1) holds x, d0@d2h, r; cuda:0's (mem 2) x@h2d, d0.
memory_plan plan_for(graph& g) {
  set_slot(g, "x", 1, 0);
  set_slot(g, "d0@d2h", 1, 16);
  set_slot(g, "r", 1, 32);
  set_slot(g, "x@h2d", 2, 0);
  set_slot(g, "d0", 2, 256);
  memory_plan plan;
  plan.order = topological_order(g);
  plan.buffers = {planned_buffer{}, planned_buffer{1, cpu_device, 48, 48, 16},
                  planned_buffer{2, cuda_device(0), 272, 32, 256}};
  return plan;
}

std::vector<float> floats(const tensor& t) {
  const auto bytes = read_to_host(t);
  std::vector<float> v(bytes.size() / 4);
  std::memcpy(v.data(), bytes.data(), bytes.size());
  return v;
}

allocator_registry emulated_registry(std::uint64_t fail_cuda_at = 0) {
  allocator_registry r;
  r.add(std::make_unique<host_allocator>());
  r.add(std::make_unique<failing_allocator>(std::make_unique<emulated_device_allocator>(cuda_device(0)), fail_cuda_at));
  r.add(std::make_unique<emulated_device_allocator>(cuda_device(1)));
  return r;
}

// What the graph computes, from the same seeds.
std::vector<std::vector<float>> expected(std::uint64_t seed) {
  std::vector<float> x(4), w(4), s(4), r(4);
  fill_deterministic(x.data(), f4, seed, "x");
  fill_deterministic(w.data(), f4, seed, "w");
  for (std::size_t i = 0; i < 4; ++i) {
    s[i] = x[i] + w[i];
    r[i] = std::max(0.0f, s[i]);
  }
  return {r, s};
}

}  // namespace

TEST_CASE("executor: the host reference computes the graph with registry kernels and no copies") {
  graph g = original();
  map_to_host(g);
  allocator_registry allocators = emulated_registry();
  const auto inputs = make_method_inputs(g, allocators, 7);
  const auto result = execute(g, memory_plan{}, allocators, test_kernels(), inputs, {7});
  REQUIRE(result.outputs.size() == 2);
  CHECK(floats(result.outputs[0]) == expected(7)[0]);
  CHECK(floats(result.outputs[1]) == expected(7)[1]);
  CHECK(result.outputs[0].device() == cpu_device);
  CHECK(result.copies.h2d.count + result.copies.d2h.count + result.copies.d2d.count == 0);
  CHECK(result.opaque_nodes.empty());
  CHECK(result.nodes_run == 5);
}

TEST_CASE("executor: a placed and planned graph runs its copies on the emulated device and matches the host") {
  graph g = placed();
  const memory_plan plan = plan_for(g);
  allocator_registry allocators = emulated_registry();
  auto& d0 = dynamic_cast<failing_allocator&>(allocators.find(cuda_device(0)));
  {
    const auto inputs = make_method_inputs(g, allocators, 7);
    const auto result = execute(g, plan, allocators, test_kernels(), inputs, {7});
    REQUIRE(result.outputs.size() == 2);
    CHECK(floats(result.outputs[0]) == expected(7)[0]);
    CHECK(floats(result.outputs[1]) == expected(7)[1]);
    CHECK(result.copies.h2d.count == 1);
    CHECK(result.copies.h2d.bytes == 16);
    CHECK(result.copies.d2h.count == 1);
    CHECK(result.copies.d2h.bytes == 16);
    CHECK(result.copies.d2d.count == 0);
    // The arena and the constant are gone; outputs live on the host.
    CHECK(d0.live() == 0);
    CHECK(d0.allocations() == 2);
  }
  CHECK(dynamic_cast<emulated_device_allocator&>(d0.underlying()).live_allocations() == 0);
}

TEST_CASE("executor: a constant cache fills each constant once and gives the same results") {
  graph g = placed();
  const memory_plan plan = plan_for(g);
  allocator_registry allocators = emulated_registry();
  auto& d0 = dynamic_cast<failing_allocator&>(allocators.find(cuda_device(0)));
  {
    constant_cache constants;
    for (int call = 0; call < 3; ++call) {
      const auto inputs = make_method_inputs(g, allocators, 7);
      const auto result = execute(g, plan, allocators, test_kernels(), inputs, {.seed = 7, .constants = &constants});
      CHECK(floats(result.outputs[0]) == expected(7)[0]);
      CHECK(floats(result.outputs[1]) == expected(7)[1]);
    }
    CHECK(constants.size() == 1);
    // Three arenas and one constant: the weight was allocated (and filled) once for three calls.
    CHECK(d0.allocations() == 4);
    CHECK(d0.live() == 1);  // the cached weight, until the cache goes
  }
  CHECK(d0.live() == 0);
}

TEST_CASE("executor: a resident copy is made once across executions that share a constant cache") {
  graph g = placed_resident();
  const memory_plan plan = plan_for(g);
  allocator_registry allocators = emulated_registry();
  auto& d0 = dynamic_cast<failing_allocator&>(allocators.find(cuda_device(0)));
  auto& device = dynamic_cast<emulated_device_allocator&>(d0.underlying());
  device.record_issues(true);
  {
    constant_cache constants;
    for (int call = 0; call < 3; ++call) {
      CAPTURE(call);
      device.clear_issued();
      const auto inputs = make_method_inputs(g, allocators, 7);
      const auto result = execute(g, plan, allocators, test_kernels(), inputs, {.seed = 7, .constants = &constants});
      // The host reference's results, from the same seeds.
      CHECK(floats(result.outputs[0]) == expected(7)[0]);
      CHECK(floats(result.outputs[1]) == expected(7)[1]);
      // Every execution moves the activations; only the first loads the weight.
      CHECK(result.copies.h2d.count == 1);
      CHECK(result.copies.h2d.bytes == 16);
      CHECK(result.copies.d2h.count == 1);
      CHECK(result.copies.load.count == (call == 0 ? 1u : 0u));
      CHECK(result.copies.load.bytes == (call == 0 ? 16u : 0u));
      CHECK(copies_issued(device, "w@h2d[cuda:0]") == (call == 0 ? 1u : 0u));
      CHECK(copies_issued(device, "x@h2d") == 1);
    }
    CHECK(constants.size() == 2);  // w on the host, and w on cuda:0
    CHECK(d0.live() == 1);         // the weight on cuda:0, until the cache goes
  }
  CHECK(d0.live() == 0);
}

TEST_CASE("executor: without a constant cache every execution is a load of its own") {
  graph g = placed_resident();
  const memory_plan plan = plan_for(g);
  allocator_registry allocators = emulated_registry();
  auto& d0 = dynamic_cast<failing_allocator&>(allocators.find(cuda_device(0)));
  for (int call = 0; call < 2; ++call) {
    const auto inputs = make_method_inputs(g, allocators, 7);
    const auto result = execute(g, plan, allocators, test_kernels(), inputs, {7});
    CHECK(floats(result.outputs[1]) == expected(7)[1]);
    CHECK(result.copies.h2d.count == 1);
    CHECK(result.copies.load.count == 1);
    CHECK(result.copies.load.bytes == 16);
  }
  CHECK(d0.live() == 0);
}

TEST_CASE("executor: a resident copy of what is not a constant is refused, naming the node") {
  graph g = placed_resident();
  g[*find_node(g, "x@h2d")].resident = true;
  const memory_plan plan = plan_for(g);
  allocator_registry allocators = emulated_registry();
  const auto inputs = make_method_inputs(g, allocators, 7);
  constant_cache constants;
  CHECK_THROWS_WITH(
      (void)execute(g, plan, allocators, test_kernels(), inputs, {.seed = 7, .constants = &constants}),
      "node 'x@h2d': resident: a resident copy is made once, at load: it must copy a constant, not the input 'x'");
}

TEST_CASE("executor: a profile records every node once, in run order, with its kernel or op and a time") {
  graph g = placed();
  const memory_plan plan = plan_for(g);
  allocator_registry allocators = emulated_registry();
  const auto inputs = make_method_inputs(g, allocators, 7);
  std::vector<node_time> profile;
  const auto result = execute(g, plan, allocators, test_kernels(), inputs, {.seed = 7, .profile = &profile});
  CHECK(floats(result.outputs[0]) == expected(7)[0]);  // profiling does not change results
  REQUIRE(profile.size() == result.nodes_run);
  REQUIRE(profile.size() == plan.order.size());
  for (std::size_t i = 0; i < profile.size(); ++i) {
    const node& n = g[plan.order[i]];
    CAPTURE(n.id);
    CHECK(profile[i].id == n.id);
    CHECK(profile[i].what ==
          (n.op == op_kind::delegate || n.op == op_kind::call ? n.kernel : std::string(to_string(n.op))));
    CHECK(profile[i].seconds >= 0);
  }
  CHECK(std::count_if(profile.begin(), profile.end(), [](const node_time& t) { return t.what == "h2d_copy"; }) == 1);
}

TEST_CASE("executor: an unplanned placed graph gives each value its own allocation and the same results") {
  graph g = placed();
  allocator_registry allocators = emulated_registry();
  const auto inputs = make_method_inputs(g, allocators, 3);
  const auto result = execute(g, memory_plan{}, allocators, test_kernels(), inputs, {3});
  CHECK(floats(result.outputs[0]) == expected(3)[0]);
  CHECK(floats(result.outputs[1]) == expected(3)[1]);
  CHECK(dynamic_cast<failing_allocator&>(allocators.find(cuda_device(0))).allocations() == 3);  // w, x@h2d, d0
}

TEST_CASE("executor: a missing copy is an error naming the node and slot") {
  graph g = original();  // d0 on cuda:0 reads x, which lives on the host
  allocator_registry allocators = emulated_registry();
  const auto inputs = make_method_inputs(g, allocators, 1);
  CHECK_THROWS_WITH_AS((void)execute(g, memory_plan{}, allocators, test_kernels(), inputs),
                       "node 'd0': inputs[0]: 'x' lives on cpu, the node runs on cuda:0 (a copy is missing)",
                       graph_error);
  CHECK(dynamic_cast<failing_allocator&>(allocators.find(cuda_device(0))).live() == 0);
}

TEST_CASE("executor: kernels without a fitting registry entry run the opaque kernel, the same on every placement") {
  graph host_graph = original(), device_graph = placed();
  for (graph* g : {&host_graph, &device_graph}) (*g)[*find_node(*g, "d0")].kernel = "mystery";
  map_to_host(host_graph);
  allocator_registry allocators = emulated_registry();
  const kernel_registry kernels = test_kernels();
  const auto host_inputs = make_method_inputs(host_graph, allocators, 11);
  const auto device_inputs = make_method_inputs(device_graph, allocators, 11);
  const auto reference = execute(host_graph, memory_plan{}, allocators, kernels, host_inputs, {11});
  const memory_plan plan = plan_for(device_graph);
  const auto result = execute(device_graph, plan, allocators, kernels, device_inputs, {11});
  CHECK(result.opaque_nodes == std::vector<std::string>{"d0"});
  CHECK(reference.opaque_nodes == std::vector<std::string>{"d0"});
  CHECK(read_to_host(result.outputs[0]) == read_to_host(reference.outputs[0]));
  CHECK(read_to_host(result.outputs[1]) == read_to_host(reference.outputs[1]));
  CHECK(floats(result.outputs[1]) != expected(11)[1]);  // really not an add

  SUBCASE("a registered kernel that does not fit the shapes falls back too") {
    graph g = original();
    g[*find_node(g, "r")].outputs[0].shape = {2, 2};
    g[*find_node(g, "out")].id = "out";
    map_to_host(g);
    const auto inputs = make_method_inputs(g, allocators, 11);
    kernel_registry strict;
    strict.add("relu",
               {[](const node& n, std::span<const tensor_spec* const>) { return n.outputs[0].shape == f4.shape; },
                [](const kernel_call&) {}, nullptr});
    const auto r = execute(g, memory_plan{}, allocators, strict, inputs, {11});
    CHECK(r.opaque_nodes == std::vector<std::string>{"d0", "r"});
  }
}

TEST_CASE("executor: every injected allocation failure throws and frees everything") {
  graph g = placed();
  const memory_plan plan = plan_for(g);
  std::uint64_t failures = 0;
  for (std::uint64_t k = 1;; ++k) {
    allocator_registry allocators = emulated_registry(k);
    auto& d0 = dynamic_cast<failing_allocator&>(allocators.find(cuda_device(0)));
    const auto inputs = make_method_inputs(g, allocators, 7);
    try {
      const auto result = execute(g, plan, allocators, test_kernels(), inputs, {7});
      CHECK(floats(result.outputs[0]) == expected(7)[0]);
      break;
    } catch (const device_error& e) {
      ++failures;
      CHECK(e.op() == "allocate");
      CHECK(e.device() == cuda_device(0));
      CHECK(std::string(e.what()).find("injected failure of allocation " + std::to_string(k)) != std::string::npos);
      CHECK(d0.live() == 0);
    }
  }
  CHECK(failures == 2);  // the cuda:0 arena and the constant w
}

TEST_CASE("executor: device inputs and device outputs stay on the device (skip_h2d / skip_d2h)") {
  const device c0 = cuda_device(0);
  graph g;
  const vertex x = add(g, "x", op_kind::input, c0, "", {}, {on(c0)});
  const vertex w = add(g, "w", op_kind::constant, c0, "", {}, {on(c0)});
  const vertex d0 = add(g, "d0", op_kind::delegate, c0, "add", {{x, 0}, {w, 0}}, {on(c0)});
  add(g, "out", op_kind::output, cpu_device, "", {{d0, 0}, {x, 0}}, {});
  allocator_registry allocators = emulated_registry();
  auto inputs = make_method_inputs(g, allocators, 7);
  REQUIRE(inputs.size() == 1);
  CHECK(inputs[0].device() == c0);
  const void* caller_memory = inputs[0].buffer.data();
  {
    const auto result = execute(g, memory_plan{}, allocators, test_kernels(), inputs, {7});
    CHECK(result.outputs[0].device() == c0);
    CHECK(result.outputs[1].device() == c0);
    CHECK(result.outputs[1].buffer.data() != caller_memory);  // the caller keeps its input
    CHECK(floats(result.outputs[0]) == expected(7)[1]);
    CHECK(read_to_host(result.outputs[1]) == read_to_host(inputs[0]));
    CHECK(result.copies.h2d.count + result.copies.d2h.count == 0);
  }
  SUBCASE("a host tensor for a device input is refused") {
    std::vector<tensor> host_inputs;
    host_inputs.push_back(make_deterministic_tensor(allocators, f4, cpu_device, 7, "x"));
    CHECK_THROWS_WITH_AS((void)execute(g, memory_plan{}, allocators, test_kernels(), host_inputs),
                         "node 'x': device: the input is expected on cuda:0, the given tensor is on cpu", graph_error);
  }
  SUBCASE("the wrong number of inputs is refused") {
    CHECK_THROWS_WITH_AS((void)execute(g, memory_plan{}, allocators, test_kernels(), std::span<const tensor>{}),
                         "inputs: the method has 1 inputs, 0 given", graph_error);
  }
}

TEST_CASE("executor: d2d copies between two devices are counted and carry the bytes") {
  const device c0 = cuda_device(0), c1 = cuda_device(1);
  graph g;
  const vertex x = add(g, "x", op_kind::input, cpu_device, "", {}, {f4});
  const vertex xc = add(g, "x@h2d", op_kind::h2d_copy, c0, "", {{x, 0}}, {on(c0)});
  const vertex m = add(g, "m", op_kind::d2d_copy, c1, "", {{xc, 0}}, {on(c1)});
  const vertex back = add(g, "m@d2h", op_kind::d2h_copy, c1, "", {{m, 0}}, {on(cpu_device)});
  add(g, "out", op_kind::output, cpu_device, "", {{back, 0}}, {});
  allocator_registry allocators = emulated_registry();
  const auto inputs = make_method_inputs(g, allocators, 5);
  const auto result = execute(g, memory_plan{}, allocators, test_kernels(), inputs, {5});
  CHECK(result.copies.h2d.count == 1);
  CHECK(result.copies.d2d.count == 1);
  CHECK(result.copies.d2d.bytes == 16);
  CHECK(result.copies.d2h.count == 1);
  CHECK(read_to_host(result.outputs[0]) == read_to_host(inputs[0]));
}

TEST_CASE("executor: a plan that does not fit the graph names the node and field") {
  graph g = placed();
  memory_plan plan = plan_for(g);
  allocator_registry allocators = emulated_registry();
  const auto inputs = make_method_inputs(g, allocators, 7);
  SUBCASE("unknown buffer") {
    set_slot(g, "r", 9, 0);
    CHECK_THROWS_WITH_AS((void)execute(g, plan, allocators, test_kernels(), inputs),
                         "node 'r': outputs[0].mem_id: no planned buffer 9", graph_error);
  }
  SUBCASE("buffer on another device") {
    set_slot(g, "r", 2, 0);
    CHECK_THROWS_WITH_AS((void)execute(g, plan, allocators, test_kernels(), inputs),
                         "node 'r': outputs[0].mem_id: buffer 2 is on cuda:0, the value lives on cpu", graph_error);
  }
  SUBCASE("offset past the end") {
    set_slot(g, "r", 1, 40);
    CHECK_THROWS_WITH_AS((void)execute(g, plan, allocators, test_kernels(), inputs),
                         "node 'r': outputs[0].offset: offset 40 + 16 bytes does not fit buffer 1 of 48 bytes",
                         graph_error);
  }
  CHECK(dynamic_cast<failing_allocator&>(allocators.find(cuda_device(0))).live() == 0);
}

TEST_CASE("executor: default allocators run a placed graph and say which devices they used") {
  graph g = placed();
  const auto devices = devices_of(g);
  CHECK(devices == std::vector<device>{cpu_device, cuda_device(0)});
  default_allocators defaults = make_default_allocators(devices, false);
  const auto inputs = make_method_inputs(g, defaults.registry, 7);
  const auto result = execute(g, plan_for(g), defaults.registry, test_kernels(), inputs, {7});
  CHECK(floats(result.outputs[0]) == expected(7)[0]);
  CHECK(defaults.describe() == "devices: emulated (emulation requested)");
}
