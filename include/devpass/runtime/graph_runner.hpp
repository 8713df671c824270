// devpass/runtime/graph_runner.hpp — what devpass-run does after the passes: picks the
// allocators, makes deterministic inputs, executes, and summarises the outputs by checksum.
//
// run_graph(g, plan, ...) runs a propagated and planned graph; run_host_reference(g, ...) runs a
// copy of g with every node and value on the host and no plan. Both draw inputs and constants from
// the same seed by node id, so their checksums are equal exactly when the placed program computes
// what the host program computes. to_json() is the one-object report devpass-run prints.
// With run_options::graphs (graph mode, runtime/prepared_method.hpp) run_graph prepares the method,
// runs it once to record its segments and reports a second, replayed run (its seconds too).
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "devpass/graph/graph.hpp"
#include "devpass/planning/memory_plan.hpp"
#include "devpass/runtime/default_allocators.hpp"
#include "devpass/runtime/deterministic.hpp"
#include "devpass/runtime/executor.hpp"
#include "devpass/runtime/kernel.hpp"
#include "devpass/runtime/prepared_method.hpp"

namespace devpass::runtime {

struct output_summary {
  std::size_t index = 0;
  tensor_spec spec;  // dtype and shape; device where the output was left
  std::uint64_t checksum = 0;
};

struct run_report {
  std::vector<output_summary> outputs;
  copy_stats copies;  // per execution by kind; `load`: the resident copies, made once
  bool emulated = true;
  std::string devices_line;               // "devices: cuda" / "devices: emulated (reason)"
  std::vector<std::string> opaque_nodes;  // nodes that fell back to the opaque kernel
  double seconds = 0;                     // execute() alone, allocation of arenas included
  std::size_t replayed_segments = 0;      // graph mode: segments the reported run replayed
};

struct run_options {
  std::uint64_t seed = 0;
  bool allow_cuda = true;               // false: emulate CUDA devices even where a GPU is usable
  bool cache_allocations = true;        // false: real devices without the caching_allocator
  graph_mode graphs = graph_mode::off;  // else: record on a first run, report the replayed second
};

[[nodiscard]] inline run_report run_graph(const graph& g, const memory_plan& plan, const kernel_registry& kernels,
                                          const run_options& options = {}) {
  default_allocators allocators = make_default_allocators(devices_of(g), options.allow_cuda, options.cache_allocations);
  run_report report;
  report.emulated = allocators.emulated;
  report.devices_line = allocators.describe();
  const std::vector<tensor> inputs = make_method_inputs(g, allocators.registry, options.seed);
  execution_result result;
  copy_stats load;  // the resident copies: made by execute() itself, or by the method when prepared
  if (options.graphs == graph_mode::off) {
    const auto start = std::chrono::steady_clock::now();
    result = execute(g, plan, allocators.registry, kernels, inputs, {options.seed});
    report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    load = result.copies;
  } else {
    prepared_method method(g, plan, allocators.registry, kernels, {.seed = options.seed, .graphs = options.graphs});
    load = method.load_copies();
    (void)method.run(inputs);  // records
    const auto start = std::chrono::steady_clock::now();
    result = method.run(inputs);
    report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    report.replayed_segments = method.replayed_segments();
  }
  for (std::size_t i = 0; i < result.outputs.size(); ++i)
    report.outputs.push_back({i, result.outputs[i].spec, checksum(read_to_host(result.outputs[i]))});
  report.copies = result.copies;
  report.copies.load = load.load;
  report.opaque_nodes = std::move(result.opaque_nodes);
  return report;
}

[[nodiscard]] inline run_report run_host_reference(graph g, const kernel_registry& kernels,
                                                   const run_options& options = {}) {
  map_to_host(g);
  return run_graph(g, memory_plan{}, kernels, options);
}

[[nodiscard]] inline std::string checksum_text(std::uint64_t sum) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(sum));
  return text;
}

// {"outputs": [{"index","dtype","shape","checksum"}], "copies": {...}, "bytes": {...}, "load": {"copies",
// "bytes"}, "device", "seconds"}: copies and bytes per execution, by kind; load, the resident copies
// made once when the method was loaded.
[[nodiscard]] inline std::string to_json(const run_report& r) {
  std::string j = "{\"outputs\": [";
  for (const output_summary& o : r.outputs) {
    if (o.index != 0) j += ", ";
    j += "{\"index\": " + std::to_string(o.index) + ", \"dtype\": \"" + std::string(to_string(o.spec.type)) +
         "\", \"shape\": [";
    for (std::size_t d = 0; d < o.spec.shape.size(); ++d) j += (d ? ", " : "") + std::to_string(o.spec.shape[d]);
    j += "], \"checksum\": \"" + checksum_text(o.checksum) + "\"}";
  }
  const copy_stats& c = r.copies;
  j += "], \"copies\": {\"h2d\": " + std::to_string(c.h2d.count) + ", \"d2h\": " + std::to_string(c.d2h.count) +
       ", \"d2d\": " + std::to_string(c.d2d.count) + "}, \"bytes\": {\"h2d\": " + std::to_string(c.h2d.bytes) +
       ", \"d2h\": " + std::to_string(c.d2h.bytes) + ", \"d2d\": " + std::to_string(c.d2d.bytes) +
       "}, \"load\": {\"copies\": " + std::to_string(c.load.count) + ", \"bytes\": " + std::to_string(c.load.bytes) +
       "}, \"device\": \"" + (r.emulated ? "emulated" : "cuda") + "\", \"seconds\": ";
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%.6f", r.seconds);
  return j + seconds + "}";
}

}  // namespace devpass::runtime
