// bench_io: devpass.graph/1 read and write throughput on a synthetic graph (default 1,000,000
// nodes, about 130 MB), then devpass-opt as a whole process on that file. Prints one JSON object
// per line:
//   {"bench":"io","metric":"read_1m_seconds","value":0.9,"unit":"s"}
// Usage: bench_io [nodes] [process runs]
//
// The file's lines (generate, write: best of 5, read, peak_rss_kib) come from one child process
// that makes the graph, writes it and reads it back. The process lines compare
// `devpass-opt --propagate-device --policy=executorch <file> -o <out>` with dom_flat_process
// (bench/dom_flat_process.cpp: simdjson's DOM into flat arrays, the flat insert-then-elide job,
// its result written as JSON), each run a process of its own, interleaved, best of [process runs]
// (default 3) for the time and the largest peak RSS (wait4's, of the child):
//   opt_process_over_dom_flat_process      devpass-opt's seconds over dom_flat_process's (goal <= 1.5)
//   opt_process_peak_rss_over_file_size    devpass-opt's peak RSS in bytes over the file's size (goal <= 4)
// with the raw figures as opt_process_<n>_seconds, dom_flat_process_<n>_seconds,
// opt_process_peak_rss_<n>_kib and dom_flat_process_peak_rss_<n>_kib. (The two ratios' names are
// the 1M figures; other sizes add "_<n>".) This process holds no graph itself: a child's peak RSS
// would count it (bench_report.hpp, run_process). Its files are made with mkstemp in /tmp and
// removed at the end.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "bench_report.hpp"
#include "devpass/io/json_reader.hpp"
#include "devpass/io/json_writer.hpp"
#include "synthetic_graph.hpp"

namespace {

void emit(const std::string& metric, double value, const char* unit) {
  devpass::bench::emit("io", metric, value, unit);
}
using devpass::bench::size_tag;

// A file name made by mkstemp in /tmp, removed (with what a writer left beside it) when this goes.
struct temp_file {
  explicit temp_file(const char* role) {
    std::string name = std::string("/tmp/devpass-bench-io-") + role + "-XXXXXX";
    const int fd = mkstemp(name.data());
    if (fd < 0 || close(fd) != 0) {
      std::perror("bench_io: mkstemp");
      std::exit(1);
    }
    path = name;
  }
  ~temp_file() {
    std::error_code ignored;
    std::filesystem::remove(path, ignored);
  }
  temp_file(const temp_file&) = delete;
  temp_file& operator=(const temp_file&) = delete;
  std::string path;
};

// What the child that makes, writes and reads the file reports.
struct file_figures {
  double generate = 0, write = 0, read = 0;
  long peak_rss_kib = 0;
  bool same = false;  // the graph read back has the nodes and edges written
};

template <class F>
double seconds_since(F start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

file_figures make_write_and_read(std::size_t nodes, const std::string& path) {
  file_figures r;
  // Timed by hand, not in a lambda: the graph is initialised from the call's result (copy
  // elision); assigning it would copy it (adjacency_list has no move assignment) and hold two.
  auto start = std::chrono::steady_clock::now();
  const devpass::graph g = devpass::make_synthetic_graph(nodes, 42);
  r.generate = seconds_since(start);
  r.write = devpass::bench::best_seconds(5, [&] { devpass::write_graph_file(g, path); });
  start = std::chrono::steady_clock::now();
  const devpass::graph back = devpass::read_graph_file(path);
  r.read = seconds_since(start);
  r.same = boost::num_vertices(back) == boost::num_vertices(g) && boost::num_edges(back) == boost::num_edges(g);
  r.peak_rss_kib = devpass::bench::peak_rss_kib();
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  const std::size_t nodes = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1000000;
  const int runs = argc > 2 ? std::atoi(argv[2]) : 3;
  const std::string tag = size_tag(nodes);
  const temp_file file("graph");
  const file_figures f = devpass::bench::in_fresh_process([&] {
    try {
      return make_write_and_read(nodes, file.path);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "bench_io: %s\n", e.what());
      std::exit(1);
    }
  });
  if (!f.same) {
    std::fprintf(stderr, "bench_io: the graph read back differs from the one written\n");
    return 1;
  }
  const auto bytes = std::filesystem::file_size(file.path);
  const double mb = static_cast<double>(bytes) / 1e6;
  emit("generate_" + tag + "_seconds", f.generate, "s");
  emit("write_" + tag + "_seconds", f.write, "s");
  emit("file_" + tag + "_mb", mb, "MB");
  emit("read_" + tag + "_seconds", f.read, "s");
  emit("read_" + tag + "_mb_per_s", mb / f.read, "MB/s");
  emit("peak_rss_kib", static_cast<double>(f.peak_rss_kib), "KiB");

#if defined(DEVPASS_OPT) && defined(DEVPASS_DOM_FLAT_PROCESS)
  const temp_file opt_out("opt-out"), flat_out("flat-out");
  const std::vector<std::string> opt{DEVPASS_OPT, "--propagate-device", "--policy=executorch", file.path,
                                     "-o",        opt_out.path};
  const std::vector<std::string> flat{DEVPASS_DOM_FLAT_PROCESS, file.path, "-o", flat_out.path};
  devpass::bench::process_run opt_best{1e300, 0}, flat_best{1e300, 0};
  const auto keep = [](devpass::bench::process_run& best, const devpass::bench::process_run& r) {
    best.seconds = std::min(best.seconds, r.seconds);
    best.peak_rss_kib = std::max(best.peak_rss_kib, r.peak_rss_kib);
  };
  for (int i = 0; i < runs; ++i) {  // interleaved: a slow spell of the machine hits both alike
    keep(opt_best, devpass::bench::run_process(opt));
    keep(flat_best, devpass::bench::run_process(flat));
  }
  const std::string suffix = nodes == 1000000 ? "" : "_" + tag;
  emit("opt_process_" + tag + "_seconds", opt_best.seconds, "s");
  emit("dom_flat_process_" + tag + "_seconds", flat_best.seconds, "s");
  emit("opt_process_over_dom_flat_process" + suffix, opt_best.seconds / flat_best.seconds, "ratio");
  emit("opt_process_peak_rss_" + tag + "_kib", static_cast<double>(opt_best.peak_rss_kib), "KiB");
  emit("dom_flat_process_peak_rss_" + tag + "_kib", static_cast<double>(flat_best.peak_rss_kib), "KiB");
  emit("opt_process_peak_rss_over_file_size" + suffix,
       static_cast<double>(opt_best.peak_rss_kib) * 1024.0 / static_cast<double>(bytes), "ratio");
#else
  std::fprintf(stderr, "bench_io: the process lines are skipped: devpass-opt is not built (DEVPASS_BUILD_TOOLS=OFF)\n");
#endif
  return 0;
}
