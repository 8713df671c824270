// bench_io: devpass.graph/1 read and write throughput on a synthetic graph (default 1,000,000
// nodes, about 150 MB). Prints one JSON object per line:
//   {"bench":"io","metric":"read_1m_seconds","value":0.9,"unit":"s"}
// Usage: bench_io [nodes]
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "devpass/io/json_reader.hpp"
#include "devpass/io/json_writer.hpp"
#include "bench_report.hpp"
#include "synthetic_graph.hpp"

namespace {

void emit(const std::string& metric, double value, const char* unit) { devpass::bench::emit("io", metric, value, unit); }
using devpass::bench::seconds;
using devpass::bench::size_tag;

}  // namespace

int main(int argc, char** argv) {
  const std::size_t nodes = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1000000;
  const std::string tag = size_tag(nodes);
  const auto path = std::filesystem::temp_directory_path() / ("devpass_bench_io_" + std::to_string(::getpid()) + ".json");
  try {
    devpass::graph g;
    emit("generate_" + tag + "_seconds", seconds([&] { g = devpass::make_synthetic_graph(nodes, 42); }), "s");
    emit("write_" + tag + "_seconds", seconds([&] { devpass::write_graph_file(g, path.string()); }), "s");
    const double mb = static_cast<double>(std::filesystem::file_size(path)) / 1e6;
    emit("file_" + tag + "_mb", mb, "MB");
    devpass::graph back;
    const double read = seconds([&] { back = devpass::read_graph_file(path.string()); });
    emit("read_" + tag + "_seconds", read, "s");
    emit("read_" + tag + "_mb_per_s", mb / read, "MB/s");
    std::filesystem::remove(path);
    if (boost::num_vertices(back) != boost::num_vertices(g) || boost::num_edges(back) != boost::num_edges(g)) {
      std::fprintf(stderr, "bench_io: the graph read back differs from the one written\n");
      return 1;
    }
  } catch (const std::exception& e) {
    std::error_code ignored;
    std::filesystem::remove(path, ignored);
    std::fprintf(stderr, "bench_io: %s\n", e.what());
    return 1;
  }
  emit("peak_rss_kib", static_cast<double>(devpass::bench::peak_rss_kib()), "KiB");
  return 0;
}
