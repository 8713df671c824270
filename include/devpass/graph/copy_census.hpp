// devpass/graph/copy_census.hpp — how many copies a graph holds per direction, and the bytes
// they move per execution.
#pragma once

#include <cstddef>
#include <cstdint>

#include "devpass/graph/graph.hpp"

namespace devpass {

struct copy_census {
  std::size_t h2d = 0, d2h = 0, d2d = 0;
  std::uint64_t h2d_bytes = 0, d2h_bytes = 0, d2d_bytes = 0;
  [[nodiscard]] std::size_t copies() const { return h2d + d2h + d2d; }
  [[nodiscard]] std::uint64_t bytes() const { return h2d_bytes + d2h_bytes + d2d_bytes; }

  // Counts `n` if it is a live copy.
  void add(const node& n) {
    if (n.erased || !is_copy(n.op) || n.outputs.empty()) return;
    const std::uint64_t moved = n.outputs.front().byte_size();
    if (n.op == op_kind::h2d_copy) ++h2d, h2d_bytes += moved;
    else if (n.op == op_kind::d2h_copy) ++d2h, d2h_bytes += moved;
    else ++d2d, d2d_bytes += moved;
  }
  copy_census& operator+=(const copy_census& o) {
    h2d += o.h2d, d2h += o.d2h, d2d += o.d2d;
    h2d_bytes += o.h2d_bytes, d2h_bytes += o.d2h_bytes, d2d_bytes += o.d2d_bytes;
    return *this;
  }
  friend bool operator==(const copy_census&, const copy_census&) = default;
};

[[nodiscard]] inline copy_census count_copies(const graph& g) {
  copy_census c;
  for (const auto v : boost::make_iterator_range(boost::vertices(g))) c.add(g[v]);
  return c;
}

}  // namespace devpass
