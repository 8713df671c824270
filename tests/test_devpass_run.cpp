// devpass-run's library path (propagate, plan, execute) against the host reference on every
// shared graph, for both copy policies: the checksums must be equal, output for output.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "devpass/passes/propagate_device_fwd.hpp"
#include "devpass/planning/memory_planner.hpp"
#include "devpass/runtime/graph_runner.hpp"
#include "devpass/runtime/kernels/builtin_fwd.hpp"
#include "graph_dir.hpp"
#include "read_graph_declared.hpp"

using namespace devpass;
using devpass::testing_support::read_graph_file;
using namespace devpass::runtime;

namespace {

std::vector<std::string> graphs_in(const std::string& folder) {
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(devpass::testing_support::graph_path(folder)))
    if (entry.path().extension() == ".json") files.push_back(entry.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

std::vector<std::uint64_t> checksums(const run_report& r) {
  std::vector<std::uint64_t> sums;
  for (const output_summary& o : r.outputs) sums.push_back(o.checksum);
  return sums;
}

// Every graph of the folder, both policies, with and without the I/O skips: equal to the host.
void check_folder(const std::string& folder, std::size_t expected_graphs) {
  kernel_registry kernels;
  register_builtin_kernels(kernels);
  const run_options options{42, false};
  const auto files = graphs_in(folder);
  CHECK(files.size() == expected_graphs);
  for (const std::string& file : files) {
    const graph original = read_graph_file(file);
    const run_report reference = run_host_reference(original, kernels, options);
    CHECK(reference.copies.h2d.count + reference.copies.d2h.count + reference.copies.d2d.count == 0);
    for (const copy_policy policy : {copy_policy::executorch, copy_policy::devpass}) {
      for (const bool skip : {false, true}) {
        // ExecuTorch's skip_h2d accepts only single-consumer inputs; the pass says so, not us.
        if (skip && policy == copy_policy::executorch) continue;
        CAPTURE(file);
        CAPTURE(policy == copy_policy::devpass);
        CAPTURE(skip);
        graph g = original;
        propagate_options propagate;
        propagate.policy = policy;
        propagate.skip_h2d_for_method_inputs = propagate.skip_d2h_for_method_outputs = skip;
        (void)propagate_device(g, propagate);
        const memory_plan plan = plan_memory(g);
        const run_report placed = run_graph(g, plan, kernels, options);
        CHECK(placed.emulated);
        CHECK(checksums(placed) == checksums(reference));
        const copy_census census = count_copies(g);
        CHECK(placed.copies.h2d.count == census.h2d);
        CHECK(placed.copies.d2h.count == census.d2h);
        CHECK(placed.copies.d2d.count == census.d2d);
        CHECK(placed.copies.h2d.bytes == census.h2d_bytes);
        // The resident copies: made once, at load, which a run without a constant cache is.
        CHECK(placed.copies.load.count == census.resident);
        CHECK(placed.copies.load.bytes == census.resident_bytes);
        CHECK(placed.opaque_nodes.size() == reference.opaque_nodes.size());
        // In graph mode the method loads them when prepared, and the reported run copies none.
        if (policy == copy_policy::devpass && !skip) {
          const run_report replayed = run_graph(g, plan, kernels, {42, false, true, graph_mode::when_capturable});
          CHECK(checksums(replayed) == checksums(reference));
          CHECK(replayed.copies.load.count == census.resident);
          CHECK(replayed.copies.load.bytes == census.resident_bytes);
          CHECK(replayed.copies.h2d.bytes == census.h2d_bytes);
        }
      }
    }
  }
}

}  // namespace

TEST_CASE("devpass-run: pipeline checksums equal the host reference on the small cases") { check_folder("cases", 4); }

TEST_CASE("devpass-run: pipeline checksums equal the host reference on the model graphs") { check_folder("models", 9); }

TEST_CASE("devpass-run: the report is one JSON object with outputs, copies, bytes, load, device and seconds") {
  run_report r;
  r.outputs.push_back({0, tensor_spec{dtype::float16, {2, 3}}, 0x00ab});
  r.copies.h2d = {2, 32};
  r.copies.d2d = {1, 8};
  r.copies.load = {3, 96};
  r.seconds = 0.5;
  CHECK(
      to_json(r) ==
      "{\"outputs\": [{\"index\": 0, \"dtype\": \"float16\", \"shape\": [2, 3], \"checksum\": \"00000000000000ab\"}], "
      "\"copies\": {\"h2d\": 2, \"d2h\": 0, \"d2d\": 1}, \"bytes\": {\"h2d\": 32, \"d2h\": 0, \"d2d\": 8}, "
      "\"load\": {\"copies\": 3, \"bytes\": 96}, \"device\": \"emulated\", \"seconds\": 0.500000}");
}

TEST_CASE("devpass-run: inputs and constants depend on the seed") {
  kernel_registry kernels;
  register_builtin_kernels(kernels);
  const graph g = read_graph_file(devpass::testing_support::graph_path("cases/two_adds.json"));
  const auto a = checksums(run_host_reference(g, kernels, {1, false}));
  const auto b = checksums(run_host_reference(g, kernels, {2, false}));
  REQUIRE(a.size() == 2);
  CHECK(a != b);
  CHECK(a == checksums(run_host_reference(g, kernels, {1, false})));
}
