// bench_planning: memory planning time on the synthetic graph (default 1,000,000 nodes), with
// every value's spec device set from location_of first (the placement the propagation pass would
// leave). Prints one JSON object per line:
//   {"bench":"planning","metric":"plan_1m_seconds","value":0.2,"unit":"s"}
// plus the execution-order and lifetime phases alone, verify_structure, peak RSS, and per buffer its planned bytes,
// lower bound and their ratio. The best of `repeats` runs is reported (planning rewrites the same
// specs each time, so the runs are identical), in wall time and in processor time.
// Usage: bench_planning [nodes] [repeats]
//        bench_planning --files a.json b.json ...   (per file and buffer: bytes, lower bound, ratio)
//        bench_planning --intervals tests/data/planning/*.intervals
//            (per file, ExecuTorch's planning intervals: bytes, those of the five orders alone,
//            lower bound, ratio, and place_intervals' time, best of 200)
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include "bench_report.hpp"
#include "devpass/graph/verify.hpp"
#include "devpass/interop/array_plan.hpp"
#include "devpass/io/json_reader.hpp"
#include "devpass/planning/memory_planner.hpp"
#include "synthetic_graph.hpp"

namespace {

void emit(const std::string& metric, double value, const char* unit) {
  devpass::bench::emit("planning", metric, value, unit);
}
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

// One file of bench/dump_planning_intervals.py's format: `alignment A`, `arenas N`, `greedy A B`,
// then `first last size arena` a value (`#` comments). Arena 0 only is reported (the files have one).
int plan_intervals(int count, char** paths) {
  for (int f = 0; f < count; ++f) {
    std::ifstream in(paths[f]);
    if (!in) {
      std::fprintf(stderr, "bench_planning: cannot read %s\n", paths[f]);
      return 1;
    }
    std::vector<std::uint32_t> first, last, arena;
    std::vector<std::uint64_t> size;
    std::uint32_t alignment = 16, arenas = 1;
    std::string line;
    while (std::getline(in, line)) {
      if (line.empty() || line[0] == '#') continue;
      std::istringstream fields(line);
      std::string word;
      fields >> word;
      if (word == "alignment")
        fields >> alignment;
      else if (word == "arenas")
        fields >> arenas;
      else if (word != "greedy") {
        std::uint32_t l = 0, a = 0;
        std::uint64_t s = 0;
        fields >> l >> s >> a;
        first.push_back(static_cast<std::uint32_t>(std::stoul(word)));
        last.push_back(l);
        size.push_back(s);
        arena.push_back(a);
      }
    }
    const devpass::interop::interval_arrays values{first, last, size, arena, arenas};
    devpass::interop::placement_arrays plan;
    const double s =
        devpass::bench::best_seconds(200, [&] { plan = devpass::interop::place_intervals(values, alignment); });
    // The five orders alone (before the repair): the same items place_intervals builds.
    std::vector<std::size_t> members(first.size());
    std::iota(members.begin(), members.end(), std::size_t{0});
    std::stable_sort(members.begin(), members.end(), [&](std::size_t x, std::size_t y) { return first[x] < first[y]; });
    std::vector<devpass::detail::plan_item> items;
    for (const std::size_t i : members)
      if (arena[i] == 0) items.push_back({first[i], last[i], (size[i] + alignment - 1) / alignment * alignment, 0, {}});
    std::uint64_t five = ~std::uint64_t{0};
    std::vector<std::uint64_t> offsets;
    for (const auto order : {devpass::detail::placement_order::size, devpass::detail::placement_order::size_then_life,
                             devpass::detail::placement_order::area, devpass::detail::placement_order::life,
                             devpass::detail::placement_order::definition})
      five = std::min(five, devpass::detail::place_greedy(items, order, offsets));
    const std::string name = std::filesystem::path(paths[f]).stem().string() + ":";
    const auto bound = static_cast<double>(plan.lower_bounds[0]);
    emit(name + "bytes", static_cast<double>(plan.arena_sizes[0]), "B");
    emit(name + "five_orders_bytes", static_cast<double>(five), "B");
    emit(name + "lower_bound", bound, "B");
    emit(name + "ratio", bound > 0 ? static_cast<double>(plan.arena_sizes[0]) / bound : 1.0, "x");
    emit(name + "place_intervals_seconds", s, "s");
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "--files") return plan_files(argc - 2, argv + 2);
  if (argc > 1 && std::string(argv[1]) == "--intervals") return plan_intervals(argc - 2, argv + 2);
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
