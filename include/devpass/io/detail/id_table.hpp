// devpass/io/detail/id_table.hpp — the reader's map from node ids to vertices.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>
#include <vector>

#include "devpass/graph/graph.hpp"

namespace devpass::detail {

// Node ids to vertices: open addressing over (hash, vertex), keys compared through the graph.
// A std::unordered_map<string_view, vertex> spent most of its time allocating and chasing bucket
// chains on million-node files.
class id_table {
 public:
  explicit id_table(std::size_t count) {
    std::size_t capacity = 16;
    while (capacity < 2 * count) capacity *= 2;
    slots_.assign(capacity, slot{});
    mask_ = capacity - 1;
  }
  [[nodiscard]] static std::uint64_t hash(std::string_view id) { return std::hash<std::string_view>{}(id); }
  // Starts loading the slot an id of hash `h` probes first. The table is far larger than the
  // caches, so each insert's first probe is a miss: asked for a few nodes early, the misses
  // overlap (a miss a node was three fifths of reading a node on a 1M-node file).
  void prefetch(std::uint64_t h) const { __builtin_prefetch(&slots_[h & mask_]); }
  // The vertex already holding `id`, or nullopt after recording `v` for it.
  std::optional<vertex> insert(const graph& g, std::string_view id, vertex v) { return insert(g, id, v, hash(id)); }
  // The same with hash(id) already computed.
  std::optional<vertex> insert(const graph& g, std::string_view id, vertex v, std::uint64_t h) {
    for (std::size_t i = h & mask_;; i = (i + 1) & mask_) {
      slot& s = slots_[i];
      if (s.vertex_plus_one == 0) {
        s = {h, v + 1};
        return std::nullopt;
      }
      if (s.hash == h && g[s.vertex_plus_one - 1].id == id) return s.vertex_plus_one - 1;
    }
  }
  [[nodiscard]] std::optional<vertex> find(const graph& g, std::string_view id) const {
    const std::uint64_t h = hash(id);
    for (std::size_t i = h & mask_;; i = (i + 1) & mask_) {
      const slot& s = slots_[i];
      if (s.vertex_plus_one == 0) return std::nullopt;
      if (s.hash == h && g[s.vertex_plus_one - 1].id == id) return s.vertex_plus_one - 1;
    }
  }

 private:
  struct slot {
    std::uint64_t hash = 0;
    std::uint64_t vertex_plus_one = 0;  // 0: empty
  };
  std::vector<slot> slots_;
  std::size_t mask_ = 0;
};

}  // namespace devpass::detail
