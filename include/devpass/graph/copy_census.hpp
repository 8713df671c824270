// devpass/graph/copy_census.hpp — how many copies a graph holds per direction and the bytes they
// move on every execution, and apart from them the resident copies, made once when the method is
// loaded (copies of constants), with the bytes they move then.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "devpass/graph/graph.hpp"

namespace devpass {

struct copy_census {
  // Copies made on every execution, per direction, and the bytes each direction moves.
  std::size_t h2d = 0, d2h = 0, d2d = 0;
  std::uint64_t h2d_bytes = 0, d2h_bytes = 0, d2d_bytes = 0;
  // Resident copies (any direction): made once, at load, never again.
  std::size_t resident = 0;
  std::uint64_t resident_bytes = 0;
  // Every copy node, resident ones included.
  [[nodiscard]] std::size_t copies() const { return h2d + d2h + d2d + resident; }
  // The bytes moved on every execution (resident copies move theirs once: resident_bytes).
  [[nodiscard]] std::uint64_t bytes() const { return h2d_bytes + d2h_bytes + d2d_bytes; }

  // Counts a copy of kind `kind` moving `moved` bytes, on every execution or (`once`: a resident
  // copy) at load; any other kind is not a copy.
  void add(op_kind kind, std::uint64_t moved, bool once = false) {
    if (!is_copy(kind)) return;
    if (once)
      ++resident, resident_bytes += moved;
    else if (kind == op_kind::h2d_copy)
      ++h2d, h2d_bytes += moved;
    else if (kind == op_kind::d2h_copy)
      ++d2h, d2h_bytes += moved;
    else
      ++d2d, d2d_bytes += moved;
  }
  // Counts `n` if it is a live copy.
  void add(const node& n) {
    if (n.erased || !is_copy(n.op) || n.outputs.empty()) return;
    add(n.op, n.outputs.front().byte_size(), n.resident);
  }
  // Counts vertex v of any model if it is a live copy.
  template <class G>
  void add(const G& g, vertex v) {
    const op_kind kind = role_of(g, v);
    if (is_erased(g, v) || !is_copy(kind) || output_count(g, v) == 0) return;
    add(kind, value_bytes(g, value_ref{v, 0}), is_resident(g, v));
  }
  copy_census& operator+=(const copy_census& o) {
    h2d += o.h2d, d2h += o.d2h, d2d += o.d2d;
    h2d_bytes += o.h2d_bytes, d2h_bytes += o.d2h_bytes, d2d_bytes += o.d2d_bytes;
    resident += o.resident, resident_bytes += o.resident_bytes;
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

// What the resident copies load onto one device: how many, and their bytes.
struct resident_load {
  devpass::device device;
  std::size_t copies = 0;
  std::uint64_t bytes = 0;
  friend bool operator==(const resident_load&, const resident_load&) = default;
};

// The resident copies per device they write (a d2h's is the host), in device order; none when the
// graph has no resident copy. The census's `resident` split by device, for reports.
template <class G>
[[nodiscard]] std::vector<resident_load> resident_loads(const G& g) {
  std::vector<resident_load> loads;
  for (vertex v = 0, n = boost::num_vertices(g); v < n; ++v) {
    if (is_erased(g, v) || !is_copy(role_of(g, v)) || output_count(g, v) == 0 || !is_resident(g, v)) continue;
    const device at = location_of(g, value_ref{v, 0});
    auto it = std::find_if(loads.begin(), loads.end(), [&](const resident_load& l) { return l.device == at; });
    if (it == loads.end()) it = loads.insert(loads.end(), resident_load{at});
    ++it->copies;
    it->bytes += value_bytes(g, value_ref{v, 0});
  }
  std::sort(loads.begin(), loads.end(),
            [](const resident_load& a, const resident_load& b) { return a.device < b.device; });
  return loads;
}

}  // namespace devpass
