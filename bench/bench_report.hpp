// bench/bench_report.hpp — what every benchmark shares: one JSON object per line on stdout
// ({"bench", "metric", "value", "unit"}, the format scripts/bench passes on), wall and processor
// timers, peak RSS, runs in a fresh child (in_fresh_process) or of another program
// (run_process), and size tags ("1m", "100k").
#pragma once

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <type_traits>
#include <vector>

namespace devpass::bench {

inline void emit(const char* bench, const std::string& metric, double value, const char* unit) {
  std::printf("{\"bench\":\"%s\",\"metric\":\"%s\",\"value\":%.6g,\"unit\":\"%s\"}\n", bench, metric.c_str(), value,
              unit);
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

// Runs f() in a child forked from this process and returns what it returned (a trivially
// copyable result, through a pipe). Every run then starts from this process's heap as it is now,
// not as earlier runs left it: a run that frees a million small objects leaves holes that scatter
// the next run's allocations, which alone made the next propagation several times slower
// (docs/performance.md#what-each-design-choice-saves). Exits on any failure.
template <class F>
auto in_fresh_process(F&& f) {
  using result = std::invoke_result_t<F&>;
  static_assert(std::is_trivially_copyable_v<result>, "in_fresh_process returns results through a pipe");
  std::fflush(stdout);
  int fds[2];
  if (pipe(fds) != 0) {
    std::perror("bench: pipe");
    std::exit(1);
  }
  const pid_t child = fork();
  if (child < 0) {
    std::perror("bench: fork");
    std::exit(1);
  }
  if (child == 0) {
    close(fds[0]);
    const result r = f();
    const bool written = write(fds[1], &r, sizeof r) == static_cast<ssize_t>(sizeof r);
    _exit(written ? 0 : 1);  // no atexit handlers, no flushing of the parent's buffers
  }
  close(fds[1]);
  result r{};
  const bool complete = read(fds[0], &r, sizeof r) == static_cast<ssize_t>(sizeof r);
  close(fds[0]);
  int status = 0;
  waitpid(child, &status, 0);
  if (!complete || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::fprintf(stderr, "bench: a measured run failed in its child process\n");
    std::exit(1);
  }
  return r;
}

// What one run of another program cost: wall seconds from fork to its exit, and its peak RSS
// (wait4's rusage of that child).
struct process_run {
  double seconds = 0;
  long peak_rss_kib = 0;
};

// Runs `args` (args[0] the program's path) with standard output to /dev/null and waits for it;
// exits on any failure. Call it from a process that never held much memory: Linux counts into a
// child's peak RSS the address space it was forked from (measured here: /bin/true reports 820 MB
// when started from a process holding 800 MB, by fork or by posix_spawn, and 1 MB from a small
// one), so a bench that measures a child keeps its own graphs in other children.
inline process_run run_process(const std::vector<std::string>& args) {
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::fflush(stdout);
  const auto start = std::chrono::steady_clock::now();
  const pid_t child = fork();
  if (child < 0) {
    std::perror("bench: fork");
    std::exit(1);
  }
  if (child == 0) {
    const int null = open("/dev/null", O_WRONLY);
    if (null >= 0) dup2(null, STDOUT_FILENO);
    execv(argv[0], argv.data());
    std::perror(argv[0]);
    _exit(127);
  }
  int status = 0;
  rusage usage{};
  if (wait4(child, &status, 0, &usage) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::fprintf(stderr, "bench: %s failed\n", args[0].c_str());
    std::exit(1);
  }
  return {std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), usage.ru_maxrss};
}

inline std::string size_tag(std::size_t n) {
  if (n % 1000000 == 0) return std::to_string(n / 1000000) + "m";
  if (n % 1000 == 0) return std::to_string(n / 1000) + "k";
  return std::to_string(n);
}

}  // namespace devpass::bench
