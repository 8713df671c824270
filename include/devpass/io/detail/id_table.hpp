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
  // The vertex already holding `id`, or nullopt after recording `v` for it.
  std::optional<vertex> insert(const graph& g, std::string_view id, vertex v) {
    const std::uint64_t h = std::hash<std::string_view>{}(id);
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
    const std::uint64_t h = std::hash<std::string_view>{}(id);
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
