// bench/bench_report.hpp — what every benchmark shares: one JSON object per line on stdout
// ({"bench", "metric", "value", "unit"}, the format scripts/bench passes on), wall and processor
// timers, peak RSS, and size tags ("1m", "100k").
#pragma once

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <string>

namespace devpass::bench {

inline void emit(const char* bench, const std::string& metric, double value, const char* unit) {
  std::printf("{\"bench\":\"%s\",\"metric\":\"%s\",\"value\":%.6g,\"unit\":\"%s\"}\n", bench, metric.c_str(), value, unit);
  std::fflush(stdout);
}

// Wall seconds of one call of f.
template <class F>
double seconds(F&& f) {
  const auto start = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The fastest of `repeats` calls: on a shared machine the minimum is the least disturbed.
template <class F>
double best_seconds(int repeats, F&& f) {
  double best = 1e300;
  for (int i = 0; i < repeats; ++i) best = std::min(best, seconds(f));
  return best;
}

// Processor seconds of this process spent in one call of f (the wall clock also counts waiting
// for a core).
template <class F>
double cpu_seconds(F&& f) {
  const std::clock_t start = std::clock();
  f();
  return static_cast<double>(std::clock() - start) / CLOCKS_PER_SEC;
}

inline long peak_rss_kib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

inline std::string size_tag(std::size_t n) {
  if (n % 1000000 == 0) return std::to_string(n / 1000000) + "m";
  if (n % 1000 == 0) return std::to_string(n / 1000) + "k";
  return std::to_string(n);
}

}  // namespace devpass::bench
