// bench/flat_graph.hpp — a graph as flat arrays (what flat_propagation.hpp's baselines run on)
// and its file form, which hands the bench's graphs to the peers in bench/peers/ (programs built
// against other compiler frameworks, that cannot include devpass). Plain C++17, no devpass
// header: a peer compiles it with its framework's flags.
//
// The file: the magic "devpass-flat/1\n", then each array in the member order below, as a
// 64-bit element count followed by the elements, native byte order (a file is written and read
// on the same machine, in the same bench run).
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

namespace devpass::bench {

struct flat_graph {
  enum kind : std::uint8_t { input, constant, delegate, call, h2d, d2h, output, d2d };
  std::vector<std::uint8_t> op;
  std::vector<std::int32_t> dev;           // -1 host, else cuda index
  std::vector<std::uint32_t> first_input;  // operands of node i: [first_input[i], first_input[i] + arity[i])
  std::vector<std::uint32_t> arity;
  std::vector<std::uint32_t> src_node;    // per operand: producer
  std::vector<std::uint32_t> src_output;  // per operand: producer output
  std::vector<std::uint32_t> outputs;     // number of outputs per node
};

// (No namespace `detail` here: it would hide devpass::detail from the bench headers.)
inline constexpr char flat_graph_magic[] = "devpass-flat/1\n";

template <class F>
void for_each_flat_column(flat_graph& g, F&& f) {
  f(g.op), f(g.dev), f(g.first_input), f(g.arity), f(g.src_node), f(g.src_output), f(g.outputs);
}

// Writes `g` to `path`; false when the file cannot be written.
inline bool write_flat_graph(const flat_graph& g, const char* path) {
  std::FILE* file = std::fopen(path, "wb");
  if (!file) return false;
  bool ok = std::fwrite(flat_graph_magic, 1, sizeof flat_graph_magic - 1, file) == sizeof flat_graph_magic - 1;
  for_each_flat_column(const_cast<flat_graph&>(g), [&](const auto& column) {
    const std::uint64_t n = column.size();
    ok = ok && std::fwrite(&n, sizeof n, 1, file) == 1;
    ok = ok && (n == 0 || std::fwrite(column.data(), sizeof column[0], n, file) == n);
  });
  return std::fclose(file) == 0 && ok;
}

// Reads a file write_flat_graph wrote into `g`; false when it cannot be read or is not one.
inline bool read_flat_graph(flat_graph& g, const char* path) {
  std::FILE* file = std::fopen(path, "rb");
  if (!file) return false;
  char magic[sizeof flat_graph_magic - 1];
  bool ok = std::fread(magic, 1, sizeof magic, file) == sizeof magic &&
            std::memcmp(magic, flat_graph_magic, sizeof magic) == 0;
  for_each_flat_column(g, [&](auto& column) {
    std::uint64_t n = 0;
    ok = ok && std::fread(&n, sizeof n, 1, file) == 1;
    if (!ok) return;
    column.resize(n);
    ok = n == 0 || std::fread(column.data(), sizeof column[0], n, file) == n;
  });
  std::fclose(file);
  return ok;
}

}  // namespace devpass::bench
