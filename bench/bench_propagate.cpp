// scripts/bench propagate — device propagation on synthetic graphs of 10k, 100k and 1M nodes:
// pass time without file I/O for both policies, peak RSS, and the ratio to a hand-written
// flat-array program doing the executorch job (flat_propagation.hpp), measured in the same run.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "devpass/passes/propagate_device.hpp"
#include "bench_report.hpp"
#include "flat_propagation.hpp"
#include "synthetic_graph.hpp"

namespace {

void emit(const std::string& metric, double value, const char* unit) { devpass::bench::emit("propagate", metric, value, unit); }
using devpass::bench::best_seconds;
using devpass::bench::peak_rss_kib;

}  // namespace

int main(int argc, char** argv) {
  const std::size_t largest = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1'000'000;
  for (std::size_t nodes = 10'000; nodes <= largest; nodes *= 10) {
    const std::string n = std::to_string(nodes / 1000) + "k";
    const int repeats = nodes >= 1'000'000 ? 3 : 5;
    const devpass::graph source = devpass::make_synthetic_graph(nodes, 42);
    const devpass::bench::flat_graph flat = devpass::bench::to_flat(source);

    devpass::bench::flat_result flat_counts;
    const double flat_s = best_seconds(repeats, [&] { flat_counts = devpass::bench::flat_propagate(flat); });

    devpass::propagate_stats et_stats, dp_stats;
    double et_s = 1e30, dp_s = 1e30;
    for (int i = 0; i < repeats; ++i) {
      devpass::graph g = source;  // the copy is not timed
      et_s = std::min(et_s, best_seconds(1, [&] {
                        et_stats = devpass::propagate_device(g, {.policy = devpass::copy_policy::executorch});
                      }));
      devpass::graph h = source;
      dp_s = std::min(dp_s, best_seconds(1, [&] { dp_stats = devpass::propagate_device(h, {}); }));
    }
    if (et_stats.after.h2d != flat_counts.h2d || et_stats.after.d2h != flat_counts.d2h) {
      std::fprintf(stderr, "bench propagate: executorch policy and flat baseline disagree on %zu nodes\n", nodes);
      return 1;
    }
    emit("flat_baseline_" + n + "_seconds", flat_s, "s");
    emit("executorch_policy_" + n + "_seconds", et_s, "s");
    emit("devpass_policy_" + n + "_seconds", dp_s, "s");
    emit("executorch_policy_vs_flat_" + n, et_s / flat_s, "ratio");
    emit("devpass_policy_vs_flat_" + n, dp_s / flat_s, "ratio");
    emit("copies_executorch_" + n, static_cast<double>(et_stats.after.copies()), "count");
    emit("copies_devpass_" + n, static_cast<double>(dp_stats.after.copies()), "count");
  }
  emit("peak_rss", static_cast<double>(peak_rss_kib()), "KiB");
}
