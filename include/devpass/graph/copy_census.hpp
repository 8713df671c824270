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

  // Counts a copy of kind `kind` moving `moved` bytes; any other kind is not a copy.
  void add(op_kind kind, std::uint64_t moved) {
    if (kind == op_kind::h2d_copy)
      ++h2d, h2d_bytes += moved;
    else if (kind == op_kind::d2h_copy)
      ++d2h, d2h_bytes += moved;
    else if (kind == op_kind::d2d_copy)
      ++d2d, d2d_bytes += moved;
  }
  // Counts `n` if it is a live copy.
  void add(const node& n) {
    if (n.erased || !is_copy(n.op) || n.outputs.empty()) return;
    add(n.op, n.outputs.front().byte_size());
  }
  // Counts vertex v of any model if it is a live copy.
  template <class G>
  void add(const G& g, vertex v) {
    const op_kind kind = role_of(g, v);
    if (is_erased(g, v) || !is_copy(kind) || output_count(g, v) == 0) return;
    add(kind, value_bytes(g, value_ref{v, 0}));
  }
  copy_census& operator+=(const copy_census& o) {
    h2d += o.h2d, d2h += o.d2h, d2d += o.d2d;
    h2d_bytes += o.h2d_bytes, d2h_bytes += o.d2h_bytes, d2d_bytes += o.d2d_bytes;
    return *this;
  }
  friend bool operator==(const copy_census&, const copy_census&) = default;
};

template <class G>
[[nodiscard]] copy_census count_copies(const G& g) {
  copy_census c;
  for (vertex v = 0, n = boost::num_vertices(g); v < n; ++v) c.add(g, v);
  return c;
}

}  // namespace devpass
