// bench_planning: memory planning time on the synthetic graph (default 1,000,000 nodes), with
// every value's spec device set from location_of first (the placement the propagation pass would
// leave). Prints one JSON object per line:
//   {"bench":"planning","metric":"plan_1m_seconds","value":0.2,"unit":"s"}
// plus the execution-order and lifetime phases alone, verify_structure, peak RSS, and per buffer its planned bytes,
// lower bound and their ratio. The best of `repeats` runs is reported (planning rewrites the same
// specs each time, so the runs are identical), in wall time and in processor time.
// Usage: bench_planning [nodes] [repeats]
//        bench_planning --files a.json b.json ...   (per file and buffer: bytes, lower bound, ratio)
#include <sys/resource.h>

#include <chrono>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "devpass/graph/verify.hpp"
#include "devpass/io/json_reader.hpp"
#include "devpass/planning/memory_planner.hpp"
#include "bench_report.hpp"
#include "synthetic_graph.hpp"

namespace {

void emit(const std::string& metric, double value, const char* unit) { devpass::bench::emit("planning", metric, value, unit); }
using devpass::bench::cpu_seconds;
using devpass::bench::seconds;
using devpass::bench::size_tag;

// Every value's spec device from location_of: what a placement pass leaves behind, before copies.
void place_from_location(devpass::graph& g) {
  for (const auto v : boost::make_iterator_range(boost::vertices(g)))
    for (std::uint32_t k = 0; k < g[v].outputs.size(); ++k) g[v].outputs[k].device = devpass::location_of(g, {v, k});
}

void emit_buffers(const devpass::memory_plan& plan, const std::string& prefix) {
  for (std::size_t i = 1; i < plan.buffers.size(); ++i) {
    const auto& b = plan.buffers[i];
    const std::string name = prefix + "buffer" + std::to_string(b.mem_id) + "_" + devpass::to_string(b.device);
    emit(name + "_bytes", static_cast<double>(b.size), "B");
    emit(name + "_lower_bound", static_cast<double>(b.lower_bound), "B");
    emit(name + "_ratio", b.lower_bound ? static_cast<double>(b.size) / static_cast<double>(b.lower_bound) : 1.0, "x");
  }
}

int plan_files(int count, char** paths) {
  for (int i = 0; i < count; ++i) {
    devpass::graph g = devpass::read_graph_file(paths[i]);
    place_from_location(g);
    emit_buffers(devpass::plan_memory(g), std::filesystem::path(paths[i]).filename().string() + ":");
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "--files") return plan_files(argc - 2, argv + 2);
  const std::size_t nodes = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1000000;
  const int repeats = argc > 2 ? std::atoi(argv[2]) : 3;
  const std::string tag = size_tag(nodes);

  devpass::graph g = devpass::make_synthetic_graph(nodes, 42);
  place_from_location(g);

  double order_s = 1e300, lifetimes_s = 1e300, plan_s = 1e300, plan_cpu_s = 1e300, verify_s = 1e300;
  devpass::memory_plan plan;
  for (int r = 0; r < std::max(repeats, 1); ++r) {
    std::vector<devpass::vertex> order;
    order_s = std::min(order_s, seconds([&] { order = devpass::execution_order(g); }));
    lifetimes_s = std::min(lifetimes_s, seconds([&] { (void)devpass::compute_lifetimes(g, order); }));
    plan_s = std::min(plan_s, seconds([&] { plan = devpass::plan_memory(g); }));
    plan_cpu_s = std::min(plan_cpu_s, cpu_seconds([&] { plan = devpass::plan_memory(g); }));
    verify_s = std::min(verify_s, seconds([&] {
      if (!devpass::verify_structure(g).ok()) std::abort();
    }));
  }
  emit("plan_" + tag + "_seconds", plan_s, "s");
  emit("plan_" + tag + "_cpu_seconds", plan_cpu_s, "s");
  emit("execution_order_" + tag + "_seconds", order_s, "s");
  emit("lifetimes_" + tag + "_seconds", lifetimes_s, "s");
  emit("verify_structure_" + tag + "_seconds", verify_s, "s");  // what the reader runs on every file
  emit_buffers(plan, "");
  emit("peak_rss", static_cast<double>(devpass::bench::peak_rss_kib()), "KiB");
  return 0;
}
