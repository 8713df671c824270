// Graph mode (runtime/prepared_method.hpp) on emulated devices: the first run records each
// segment's resolved copies and kernels, later runs replay them. Replay must give exactly the
// bytes, copy counts and opaque nodes of a normal execute() for every repository graph and the
// demo's methods, run after run with new inputs; required mode must refuse a method the verdict
// rejects, in the verdict's words; a caller's stream per device must carry every copy and kernel
// of that device, and a prepared run must not wait for a device the caller gave a stream for.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "../examples/moe_decode/model.hpp"
#include "devpass/passes/propagate_device_fwd.hpp"
#include "devpass/planning/memory_planner.hpp"
#include "devpass/runtime/default_allocators.hpp"
#include "devpass/runtime/failing_allocator.hpp"
#include "devpass/runtime/graph_runner.hpp"
#include "devpass/runtime/host_allocator.hpp"
#include "devpass/runtime/kernels/builtin_fwd.hpp"
#include "devpass/runtime/prepared_method.hpp"
#include "devpass/testing/graph_builder.hpp"
#include "graph_dir.hpp"
#include "read_graph_declared.hpp"

using namespace devpass;
using devpass::testing_support::read_graph_file;
using namespace devpass::runtime;
using devpass::testing::graph_builder;

namespace {

struct named_graph {
  std::string name;
  graph g;
};

// Every graph under tests/data/graphs, and the MoE demo's prefill and decode methods.
std::vector<named_graph> every_graph() {
  std::vector<named_graph> result;
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(devpass::testing_support::graph_dir()))
    if (entry.path().extension() == ".json") files.push_back(entry.path().string());
  std::sort(files.begin(), files.end());
  for (const std::string& file : files) result.push_back({file, read_graph_file(file)});
  moe_decode::model_config demo;
  demo.vocab = 64;
  demo.d_model = 32;
  demo.heads = 2;
  demo.ffn = 48;
  demo.experts = 4;
  demo.top_k = 2;
  demo.layers = 2;
  demo.max_seq = 32;  // start positions from make_method_inputs are < 16, plus 4 prompt rows
  result.push_back({"moe_decode prefill", moe_decode::build_method(demo, "prefill", 4)});
  result.push_back({"moe_decode decode", moe_decode::build_method(demo, "decode", 1)});
  return result;
}

struct variant {
  const char* name;
  propagate_options propagation;
  plan_options planning;
};

std::vector<variant> variants() {
  propagate_options skip;
  skip.skip_h2d_for_method_inputs = skip.skip_d2h_for_method_outputs = true;
  propagate_options executorch;
  executorch.policy = copy_policy::executorch;
  plan_options device_io;
  device_io.plan_device_method_inputs = device_io.plan_device_method_outputs = true;
  return {{"devpass", {}, {}},
          {"executorch", executorch, {}},
          {"devpass, device I/O skipped (not capturable: falls back)", skip, {}},
          {"devpass, device I/O skipped and planned", skip, device_io}};
}

std::vector<std::vector<std::byte>> bytes_of(const execution_result& r) {
  std::vector<std::vector<std::byte>> out;
  for (const tensor& t : r.outputs) out.push_back(read_to_host(t));
  return out;
}

// The nodes a segment's schedule should hold, in order: every kernel, and every copy that moves bytes.
std::vector<const node*> expected_steps(const graph& g, const capture_segment& s) {
  std::vector<const node*> nodes;
  for (const vertex v : s.nodes)
    if (!is_copy(g[v].op) || g[v].outputs[0].byte_size() != 0) nodes.push_back(&g[v]);
  return nodes;
}

}  // namespace

TEST_CASE("graph replay: on every repository graph and the demo's methods replay gives the bytes of a normal run") {
  kernel_registry kernels;
  register_builtin_kernels(kernels);
  std::size_t graphs = 0, replayed = 0, fell_back = 0;
  for (const named_graph& original : every_graph()) {
    for (const variant& how : variants()) {
      CAPTURE(original.name);
      CAPTURE(how.name);
      graph g = original.g;
      propagate_options propagation = how.propagation;
      // ExecuTorch's skip_h2d accepts only single-consumer inputs; the pass says so, not us.
      if (propagation.policy == copy_policy::executorch && propagation.skip_h2d_for_method_inputs) continue;
      (void)propagate_device(g, propagation);
      const memory_plan plan = plan_memory(g, how.planning);
      default_allocators allocators = make_default_allocators(devices_of(g), false);
      prepared_method method(g, plan, allocators.registry, kernels,
                             {.seed = 42, .graphs = graph_mode::when_capturable});
      const capture_verdict& verdict = method.verdict();
      const bool capturable = verdict.kind == capture_kind::one_graph || verdict.kind == capture_kind::segments;
      CHECK(method.replayed_segments() == (capturable ? verdict.segments.size() : 0));
      CHECK(method.not_replayed().empty() == (verdict.kind != capture_kind::not_capturable));
      std::vector<std::vector<std::byte>> previous;
      for (const std::uint64_t seed : {1u, 2u, 3u}) {
        CAPTURE(seed);
        const std::vector<tensor> inputs = make_method_inputs(g, allocators.registry, seed);
        const execution_result normal = execute(g, plan, allocators.registry, kernels, inputs, {.seed = 42});
        const execution_result replay = method.run(inputs);
        const auto expected = bytes_of(normal);
        CHECK(bytes_of(replay) == expected);
        REQUIRE(replay.outputs.size() == normal.outputs.size());
        for (std::size_t k = 0; k < replay.outputs.size(); ++k)
          CHECK(replay.outputs[k].device() == normal.outputs[k].device());
        CHECK(replay.copies.h2d.count == normal.copies.h2d.count);
        CHECK(replay.copies.h2d.bytes == normal.copies.h2d.bytes);
        CHECK(replay.copies.d2h.count == normal.copies.d2h.count);
        CHECK(replay.copies.d2d.bytes == normal.copies.d2d.bytes);
        CHECK(replay.opaque_nodes == normal.opaque_nodes);
        CHECK(replay.nodes_run == normal.nodes_run);
        // New inputs reach the replayed work: the outputs change with them.
        if (!previous.empty()) CHECK(expected != previous);
        previous = expected;
      }
      if (capturable) {
        ++replayed;
        // The schedule is the resolved sequence of the segment's work: one step per kernel and per
        // copy that moves bytes, in the segment's order.
        for (std::size_t s = 0; s < verdict.segments.size(); ++s) {
          const auto& steps = method.recorded_schedule(s).steps;
          const auto want = expected_steps(g, verdict.segments[s]);
          REQUIRE(steps.size() == want.size());
          for (std::size_t i = 0; i < steps.size(); ++i) CHECK(steps[i].op == want[i]);
        }
      } else {
        ++fell_back;
      }
      ++graphs;
    }
  }
  CHECK(graphs == 23 * 4);  // 21 files and the demo's 2 methods, 4 variants each
  CHECK(replayed >= 30);
  CHECK(fell_back >= 1);
}

namespace {

// x -> a = add(x, x) on cuda:0 -> b = relu(a) on cuda:1 -> out; after propagation: x@h2d, a
// moved to cuda:1 by a d2d copy, b back to the host. The kernels record the stream they got and
// count the registry's lookups (fits), which a replay does not repeat.
struct recording_kernels {
  std::map<std::string, std::vector<void*>> streams;  // by node id, one per call
  int lookups = 0;
  kernel_registry registry;
  recording_kernels() {
    const auto fits = [this](const node&, std::span<const tensor_spec* const>) {
      ++lookups;
      return true;
    };
    registry.add("add", {fits,
                         [this](const kernel_call& c) {
                           streams[c.op.id].push_back(c.stream);
                           for (int i = 0; i < 4; ++i)
                             c.outputs[0].as<float>()[i] = c.inputs[0].as<float>()[i] + c.inputs[1].as<float>()[i];
                         },
                         nullptr});
    registry.add("relu", {fits,
                          [this](const kernel_call& c) {
                            streams[c.op.id].push_back(c.stream);
                            for (int i = 0; i < 4; ++i)
                              c.outputs[0].as<float>()[i] = std::max(0.0f, c.inputs[0].as<float>()[i]);
                          },
                          nullptr});
  }
};

graph two_device_chain() {
  graph g = graph_builder{}
                .input("x", {4})
                .delegate("a", "cuda:0", "add", {"x", "x"})
                .delegate("b", "cuda:1", "relu", {"a"})
                .output({"b"})
                .build();
  (void)propagate_device(g);
  return g;
}

struct emulated_two_devices {
  allocator_registry registry;
  emulated_device_allocator* d0;
  emulated_device_allocator* d1;
  emulated_two_devices() {
    registry.add(std::make_unique<host_allocator>());
    d0 = &dynamic_cast<emulated_device_allocator&>(
        registry.add(std::make_unique<emulated_device_allocator>(cuda_device(0))));
    d1 = &dynamic_cast<emulated_device_allocator&>(
        registry.add(std::make_unique<emulated_device_allocator>(cuda_device(1))));
    d0->record_issues(true);
    d1->record_issues(true);
  }
  void clear() {
    d0->clear_issued();
    d1->clear_issued();
  }
};

std::vector<float> floats(const tensor& t) {
  const auto bytes = read_to_host(t);
  std::vector<float> v(bytes.size() / 4);
  std::memcpy(v.data(), bytes.data(), bytes.size());
  return v;
}

std::vector<float> expected_chain(const tensor& x) {
  std::vector<float> v = floats(x);
  for (float& f : v) f = std::max(0.0f, f + f);
  return v;
}

}  // namespace

TEST_CASE("graph replay: a replay issues the recorded kernels without the executor's per-node lookups") {
  graph g = two_device_chain();
  const memory_plan plan = plan_memory(g);
  emulated_two_devices devices;
  recording_kernels kernels;
  prepared_method method(g, plan, devices.registry, kernels.registry, {.graphs = graph_mode::required});
  CHECK(method.verdict().kind == capture_kind::one_graph);
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    const auto inputs = make_method_inputs(g, devices.registry, seed);
    const execution_result r = method.run(inputs);
    CHECK(floats(r.outputs.at(0)) == expected_chain(inputs[0]));
    CHECK(r.copies.h2d.count == 1);
    CHECK(r.copies.d2d.count == 1);
    CHECK(r.copies.d2h.count == 1);
  }
  CHECK(kernels.lookups == 2);  // the first run looked up a and b; the replays did not
  CHECK(kernels.streams["a"].size() == 3);
  CHECK(kernels.streams["b"].size() == 3);
  CHECK(method.runs() == 3);
}

TEST_CASE("graph replay: required mode refuses a method the verdict rejects, naming the node and cause") {
  graph g = graph_builder{}.input("x", {4}).delegate("a", "cuda:0", "add", {"x", "x"}).output({"a"}).build();
  propagate_options skip;
  skip.skip_h2d_for_method_inputs = skip.skip_d2h_for_method_outputs = true;
  (void)propagate_device(g, skip);
  const memory_plan plan = plan_memory(g);
  emulated_two_devices devices;
  recording_kernels kernels;
  CHECK_THROWS_WITH_AS(prepared_method(g, plan, devices.registry, kernels.registry, {.graphs = graph_mode::required}),
                       "node 'x': graph_mode: graph_mode::required, but the method is not capturable: caller_buffer: "
                       "method input 'x' on cuda:0 has no planned buffer: its address changes with every call",
                       graph_error);

  SUBCASE("when_capturable runs it node by node and says why") {
    prepared_method method(g, plan, devices.registry, kernels.registry, {.graphs = graph_mode::when_capturable});
    CHECK(method.replayed_segments() == 0);
    CHECK(method.not_replayed() ==
          std::vector<std::string>{
              "node 'x': the method is not capturable: caller_buffer: method input 'x' on cuda:0 has no "
              "planned buffer: its address changes with every call"});
    for (std::uint64_t seed = 1; seed <= 2; ++seed) {
      const auto inputs = make_method_inputs(g, devices.registry, seed);
      std::vector<float> want = floats(inputs[0]);
      for (float& f : want) f += f;
      CHECK(floats(method.run(inputs).outputs.at(0)) == want);
    }
    CHECK(kernels.lookups == 2);  // looked up on every run: nothing was replayed
  }
  SUBCASE("a host value without a planned buffer stops a segment too") {
    graph host_in = graph_builder{}.input("x", {4}).delegate("a", "cuda:0", "add", {"x", "x"}).output({"a"}).build();
    (void)propagate_device(host_in);
    memory_plan p = plan_memory(host_in);
    host_in[*find_node(host_in, "x")].outputs[0].mem_id.reset();  // as if the planner had left the host input alone
    host_in[*find_node(host_in, "x")].outputs[0].offset.reset();
    CHECK_THROWS_WITH_AS(
        prepared_method(host_in, p, devices.registry, kernels.registry, {.graphs = graph_mode::required}),
        "node 'x': graph_mode: graph_mode::required, but segment 1 cannot be replayed: 'x' on cpu has no planned "
        "buffer: its address changes with every call",
        graph_error);
  }
}

TEST_CASE("graph replay: a caller's stream per device carries every copy and kernel of that device") {
  graph g = two_device_chain();
  const memory_plan plan = plan_memory(g);
  emulated_two_devices devices;
  recording_kernels kernels;
  int tokens[4];  // opaque handles: only their addresses matter
  const auto check_issued = [&](const emulated_device_allocator& d, void* stream, std::size_t copies, bool waits) {
    std::size_t seen = 0;
    for (const issued_work& w : d.issued()) {
      CAPTURE(w.op);
      CAPTURE(w.node);
      CHECK(w.stream == stream);
      if (w.op == "synchronize")
        CHECK(waits);
      else
        ++seen;
    }
    CHECK(seen == copies);
  };

  SUBCASE("prepared, graph mode: the record run and the replays, each on the streams it is given") {
    prepared_method method(g, plan, devices.registry, kernels.registry, {.graphs = graph_mode::required});
    for (int run = 0; run < 2; ++run) {
      const auto inputs = make_method_inputs(g, devices.registry, 5);
      devices.clear();
      kernels.streams.clear();
      const device_stream streams[] = {{cuda_device(0), &tokens[2 * run]}, {cuda_device(1), &tokens[2 * run + 1]}};
      const execution_result r = method.run(inputs, {.streams = streams});
      CHECK(floats(r.outputs.at(0)) == expected_chain(inputs[0]));
      // cuda:0 issues x@h2d; cuda:1 the d2d copy that brings a over and the d2h of b. No waits.
      check_issued(*devices.d0, &tokens[2 * run], 1, false);
      check_issued(*devices.d1, &tokens[2 * run + 1], 2, false);
      CHECK(kernels.streams["a"] == std::vector<void*>{&tokens[2 * run]});
      CHECK(kernels.streams["b"] == std::vector<void*>{&tokens[2 * run + 1]});
      CHECK(devices.d0->native_stream() == nullptr);  // the binding ends with the run
    }
  }
  SUBCASE("execute(): the same streams, and it waits on them (not on the devices' own) before freeing its arenas") {
    const auto inputs = make_method_inputs(g, devices.registry, 5);
    devices.clear();
    const device_stream streams[] = {{cuda_device(0), &tokens[0]}, {cuda_device(1), &tokens[1]}};
    const execution_result r = execute(g, plan, devices.registry, kernels.registry, inputs, {.streams = streams});
    CHECK(floats(r.outputs.at(0)) == expected_chain(inputs[0]));
    check_issued(*devices.d0, &tokens[0], 1, true);
    check_issued(*devices.d1, &tokens[1], 2, true);
  }
  SUBCASE("without streams the devices' own are used and waited for") {
    prepared_method method(g, plan, devices.registry, kernels.registry, {.graphs = graph_mode::required});
    const auto inputs = make_method_inputs(g, devices.registry, 5);
    devices.clear();
    (void)method.run(inputs);
    check_issued(*devices.d0, nullptr, 1, true);
    CHECK(std::count_if(devices.d1->issued().begin(), devices.d1->issued().end(),
                        [](const issued_work& w) { return w.op == "synchronize"; }) == 1);
  }
  SUBCASE("a stream for the host, a null stream or two for one device are refused") {
    const auto inputs = make_method_inputs(g, devices.registry, 5);
    const device_stream host[] = {{cpu_device, &tokens[0]}};
    CHECK_THROWS_WITH_AS((void)execute(g, plan, devices.registry, kernels.registry, inputs, {.streams = host}),
                         "bind_stream on cpu: the host runs on no stream", device_error);
    const device_stream null[] = {{cuda_device(1), nullptr}};
    CHECK_THROWS_WITH_AS((void)execute(g, plan, devices.registry, kernels.registry, inputs, {.streams = null}),
                         "bind_stream on cuda:1: the caller's stream is null", device_error);
    const device_stream twice[] = {{cuda_device(0), &tokens[0]}, {cuda_device(0), &tokens[1]}};
    CHECK_THROWS_WITH_AS((void)execute(g, plan, devices.registry, kernels.registry, inputs, {.streams = twice}),
                         "bind_stream on cuda:0: two streams for one device", device_error);
    CHECK(devices.d0->native_stream() == nullptr);  // the first binding was undone
  }
}

TEST_CASE("graph replay: a segment between host work is replayed alone and the host work runs every time") {
  // s is host work between two runs of device work: two segments.
  graph g = graph_builder{}
                .input("x", {4})
                .delegate("a", "cuda:0", "add", {"x", "x"})
                .call("s", "relu", {"a"})
                .delegate("b", "cuda:0", "add", {"s", "s"})
                .output({"b"})
                .build();
  (void)propagate_device(g);
  const memory_plan plan = plan_memory(g);
  emulated_two_devices devices;
  recording_kernels kernels;
  prepared_method method(g, plan, devices.registry, kernels.registry, {.graphs = graph_mode::required});
  REQUIRE(method.verdict().kind == capture_kind::segments);
  CHECK(method.replayed_segments() == 2);
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    const auto inputs = make_method_inputs(g, devices.registry, seed);
    std::vector<float> want = floats(inputs[0]);
    for (float& f : want) f = 2 * std::max(0.0f, f + f);
    std::vector<node_time> profile;
    CHECK(floats(method.run(inputs, {.profile = &profile}).outputs.at(0)) == want);
    if (seed > 1) {
      // inputs, the host call and the output node one by one; each segment one entry
      std::vector<std::string> what;
      for (const node_time& t : profile) what.push_back(t.what);
      CHECK(what == std::vector<std::string>{"input", "graph_replay", "relu", "graph_replay", "output"});
    }
  }
  CHECK(kernels.lookups == 5);  // a, s, b on the first run; s again on each of the two later runs
  CHECK(kernels.streams["s"].size() == 3);
}

TEST_CASE("graph replay: a prepared method loads each resident constant once, and no run or replay copies a weight") {
  // w is read on cuda:0 and cuda:1: the devpass policy loads it onto each, once.
  const graph original = graph_builder{}
                             .input("x", {4})
                             .constant("w", {4})
                             .delegate("a", "cuda:0", "add", {"x", "w"})
                             .delegate("b", "cuda:1", "add", {"a", "w"})
                             .output({"b"})
                             .build();
  graph g = original;
  (void)propagate_device(g);
  REQUIRE(count_copies(g).resident == 2);
  const memory_plan plan = plan_memory(g);
  emulated_two_devices devices;
  kernel_registry kernels;
  register_builtin_kernels(kernels);
  graph host = original;
  map_to_host(host);
  const auto weight_copies = [&] {
    std::size_t n = 0;
    for (const auto* d : {devices.d0, devices.d1})
      for (const issued_work& w : d->issued())
        if (w.node.starts_with("w@") && w.op != "synchronize") ++n;
    return n;
  };
  for (const graph_mode mode : {graph_mode::off, graph_mode::required}) {
    CAPTURE(to_string(mode));
    devices.clear();
    constant_cache weights;
    prepared_method method(g, plan, devices.registry, kernels, {.seed = 5, .constants = &weights, .graphs = mode});
    // Loaded when prepared: one copy of w onto each device.
    CHECK(method.load_copies().load.count == 2);
    CHECK(method.load_copies().load.bytes == 32);
    CHECK(weight_copies() == 2);
    if (mode == graph_mode::required) {
      CHECK(method.replayed_segments() == 1);
      for (const vertex v : method.verdict().segments.at(0).nodes) CHECK_FALSE(g[v].resident);
    }
    for (std::uint64_t seed = 1; seed <= 3; ++seed) {
      CAPTURE(seed);
      devices.clear();
      const auto inputs = make_method_inputs(g, devices.registry, seed);
      const execution_result run = method.run(inputs);
      CHECK(weight_copies() == 0);
      CHECK(run.copies.load.count == 0);
      CHECK(run.copies.h2d.count == 1);  // x
      CHECK(run.copies.d2d.count == 1);  // a, to cuda:1
      const execution_result reference = execute(host, memory_plan{}, devices.registry, kernels,
                                                 make_method_inputs(host, devices.registry, seed), {.seed = 5});
      CHECK(bytes_of(run) == bytes_of(reference));
    }
    if (mode == graph_mode::required)
      for (const schedule_step& step : method.recorded_schedule(0).steps)
        CHECK((step.op == nullptr || !step.op->resident));
    // Another method given the same cache finds the weights there and loads nothing.
    prepared_method again(g, plan, devices.registry, kernels, {.seed = 5, .constants = &weights, .graphs = mode});
    CHECK(again.load_copies().load.count == 0);
  }
}

TEST_CASE("graph replay: run_graph in graph mode reports the replayed run, with the checksums of a normal one") {
  kernel_registry kernels;
  register_builtin_kernels(kernels);
  for (const char* file : {"cases/two_adds.json", "models/transformer_enc.two_gpu.json"}) {
    CAPTURE(file);
    graph g = read_graph_file(devpass::testing_support::graph_path(file));
    (void)propagate_device(g);
    const memory_plan plan = plan_memory(g);
    const run_report normal = run_graph(g, plan, kernels, {.seed = 5, .allow_cuda = false});
    const run_report replayed =
        run_graph(g, plan, kernels, {.seed = 5, .allow_cuda = false, .graphs = graph_mode::required});
    CHECK(normal.replayed_segments == 0);
    CHECK(replayed.replayed_segments == capturability(g, plan).segments.size());
    CHECK(replayed.replayed_segments >= 1);
    CHECK(to_json(replayed).substr(0, to_json(replayed).find("\"seconds\"")) ==
          to_json(normal).substr(0, to_json(normal).find("\"seconds\"")));
  }
}

namespace {

// A device whose copies run when its stream is waited for, as a GPU's DMA does: a host-to-device
// copy reads its source only then. Each stream (the bound handle, null for its own) is a queue.
class deferred_device_allocator final : public device_allocator {
 public:
  [[nodiscard]] devpass::device device() const noexcept override { return cuda_device(0); }
  [[nodiscard]] bool emulated() const noexcept override { return false; }
  [[nodiscard]] bool owns(const void* p, std::uint64_t bytes) const noexcept override {
    return devpass::runtime::detail::within_blocks(blocks_, p, bytes);
  }
  [[nodiscard]] void* native_stream() const noexcept override { return bound_; }
  // What the caller does with its own stream: waits for it.
  void wait(void* stream) { run(stream); }
  ~deferred_device_allocator() override {
    for (const auto& [address, size] : blocks_) std::free(reinterpret_cast<void*>(address));
  }

 protected:
  void* do_allocate(std::uint64_t bytes, std::uint32_t alignment, std::string_view node) override {
    void* p = devpass::runtime::detail::aligned_host_alloc(*this, bytes, alignment, node);
    blocks_.emplace(reinterpret_cast<std::uintptr_t>(p), bytes);
    return p;
  }
  void do_deallocate(void* p) noexcept override {
    if (blocks_.erase(reinterpret_cast<std::uintptr_t>(p)) != 0) std::free(p);
  }
  void do_copy_host_to_device(void* dst, const void* src, std::uint64_t bytes, std::string_view) override {
    queues_[bound_].push_back([=] { std::memcpy(dst, src, bytes); });
  }
  void do_copy_device_to_host(void* dst, const void* src, std::uint64_t bytes, std::string_view) override {
    run(bound_);  // finished on return, after everything queued before it
    std::memcpy(dst, src, bytes);
  }
  void do_copy_device_to_device(void* dst, device_allocator&, const void* src, std::uint64_t bytes,
                                std::string_view) override {
    queues_[bound_].push_back([=] { std::memcpy(dst, src, bytes); });
  }
  void do_synchronize() override { run(bound_); }
  void* do_bind_stream(void* stream) override { return std::exchange(bound_, stream); }

 private:
  void run(void* stream) {
    for (auto& copy : queues_[stream]) copy();
    queues_[stream].clear();
  }
  void* bound_ = nullptr;
  std::map<void*, std::vector<std::function<void()>>> queues_;
  std::map<std::uintptr_t, std::uint64_t> blocks_;
};

}  // namespace

TEST_CASE("graph replay: a prepared run on a caller's stream fences the next run's host writes behind its copies") {
  // x (host, planned in the cpu arena) -> x@h2d -> a method output left on cuda:0: the last copy
  // of a run reads the cpu arena, asynchronously, and nobody waits for it before the run returns.
  graph g =
      graph_builder{}.input("x", {4}).h2d_copy("x@h2d", "cuda:0", "x").output({"x@h2d"}).annotate_devices().build();
  const memory_plan plan = plan_memory(g, {.plan_device_method_outputs = true});
  allocator_registry registry;
  registry.add(std::make_unique<host_allocator>());
  auto& device = dynamic_cast<deferred_device_allocator&>(registry.add(std::make_unique<deferred_device_allocator>()));
  const kernel_registry no_kernels;
  prepared_method method(g, plan, registry, no_kernels);
  int stream = 0;
  const device_stream streams[] = {{cuda_device(0), &stream}};
  const auto first_inputs = make_method_inputs(g, registry, 1), second_inputs = make_method_inputs(g, registry, 2);
  REQUIRE(read_to_host(first_inputs[0]) != read_to_host(second_inputs[0]));
  const execution_result first = method.run(first_inputs, {.streams = streams});
  // The second run copies its input into the same cpu arena slot the first run's h2d reads.
  const execution_result second = method.run(second_inputs, {.streams = streams});
  device.wait(&stream);
  CHECK(read_to_host(first.outputs.at(0)) == read_to_host(first_inputs[0]));
  CHECK(read_to_host(second.outputs.at(0)) == read_to_host(second_inputs[0]));
}

TEST_CASE("graph replay: a prepared method allocates its arenas once; every injected failure frees everything") {
  graph g = two_device_chain();
  const memory_plan plan = plan_memory(g);
  recording_kernels kernels;
  const auto registry_failing_at = [](std::uint64_t k) {
    allocator_registry r;
    r.add(std::make_unique<host_allocator>());
    r.add(std::make_unique<failing_allocator>(std::make_unique<emulated_device_allocator>(cuda_device(0)), k));
    r.add(std::make_unique<failing_allocator>(std::make_unique<emulated_device_allocator>(cuda_device(1)), 0));
    return r;
  };
  SUBCASE("cuda:0's one arena, at construction, for every run") {
    allocator_registry registry = registry_failing_at(0);
    auto& d0 = dynamic_cast<failing_allocator&>(registry.find(cuda_device(0)));
    for (const graph_mode mode : {graph_mode::off, graph_mode::required}) {
      prepared_method method(g, plan, registry, kernels.registry, {.graphs = mode});
      const std::uint64_t after_construction = d0.allocations();
      for (std::uint64_t seed = 1; seed <= 3; ++seed) {
        const auto inputs = make_method_inputs(g, registry, seed);
        CHECK(floats(method.run(inputs).outputs.at(0)) == expected_chain(inputs[0]));
      }
      CHECK(d0.allocations() == after_construction);  // the outputs live on the host
      CHECK(d0.live() == 1);
    }
    CHECK(d0.live() == 0);
  }
  SUBCASE("a failure at construction or in any run throws device_error and leaks nothing") {
    std::uint64_t failures = 0;
    for (std::uint64_t k = 1;; ++k) {
      allocator_registry registry = registry_failing_at(k);
      auto& d0 = dynamic_cast<failing_allocator&>(registry.find(cuda_device(0)));
      const auto inputs = make_method_inputs(g, registry, 1);
      try {
        prepared_method method(g, plan, registry, kernels.registry, {.graphs = graph_mode::required});
        for (int run = 0; run < 3; ++run) CHECK(floats(method.run(inputs).outputs.at(0)) == expected_chain(inputs[0]));
        break;
      } catch (const device_error& e) {
        ++failures;
        CHECK(e.device() == cuda_device(0));
        CHECK(d0.live() == 0);
      }
    }
    CHECK(failures == 1);  // the arena: nothing else of cuda:0 is allocated, in any run
  }
}

TEST_CASE("graph replay: a recording run that fails records nothing; the next run records again") {
  graph g = two_device_chain();
  const memory_plan plan = plan_memory(g);
  emulated_two_devices devices;
  recording_kernels kernels;
  bool fail = true;
  kernels.registry.add("relu", {nullptr,
                                [&](const kernel_call& c) {
                                  if (std::exchange(fail, false)) throw std::runtime_error("relu failed once");
                                  for (int i = 0; i < 4; ++i)
                                    c.outputs[0].as<float>()[i] = std::max(0.0f, c.inputs[0].as<float>()[i]);
                                },
                                nullptr});
  prepared_method method(g, plan, devices.registry, kernels.registry, {.graphs = graph_mode::required});
  const auto first = make_method_inputs(g, devices.registry, 1);
  CHECK_THROWS_WITH_AS((void)method.run(first), "relu failed once", std::runtime_error);
  CHECK(method.recorded_schedule(0).steps.empty());
  for (std::uint64_t seed = 2; seed <= 4; ++seed) {
    const auto inputs = make_method_inputs(g, devices.registry, seed);
    CHECK(floats(method.run(inputs).outputs.at(0)) == expected_chain(inputs[0]));
  }
  CHECK(method.recorded_schedule(0).steps.size() == 5);  // x@h2d, a, the d2d to cuda:1, b, b@d2h
  CHECK(method.runs() == 3);
}
