// devpass/interop/array_plan.hpp — memory placement over flat arrays: values given by their
// lifetime and size, each in an arena, placed by plan_memory's placement (memory_planner.hpp),
// for a caller that computes lifetimes itself (ExecuTorch's TensorSpecs, from Python).
//
//   placement_arrays place_intervals(const interval_arrays& values, std::uint32_t alignment);
//
// Value i lives over the closed interval [first[i], last[i]] of the caller's steps, needs
// size[i] bytes (rounded up to `alignment` here, so every offset is a multiple of it) and goes
// into arena arena[i] < arena_count. Arenas are planned independently, each from offset 0.
// Laws (those of plan_memory): two values of one arena whose intervals intersect never share a
// byte; zero-byte values get offset 0 and take no space; arena_sizes[a] >= lower_bounds[a], the
// most aligned bytes alive at any one step of arena a; the same arrays give the same offsets.
#pragma once

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "devpass/planning/memory_planner.hpp"

namespace devpass::interop {

struct interval_arrays {
  std::span<const std::uint32_t> first{};  // per value: the step it is defined at
  std::span<const std::uint32_t> last{};   // per value: the last step it is alive at (>= first)
  std::span<const std::uint64_t> size{};   // per value: bytes
  std::span<const std::uint32_t> arena{};  // per value: its arena, < arena_count
  std::uint32_t arena_count = 1;
};

struct placement_arrays {
  std::vector<std::uint64_t> offsets;       // per value, inside its arena
  std::vector<std::uint64_t> arena_sizes;   // per arena: bytes it needs
  std::vector<std::uint64_t> lower_bounds;  // per arena: the most bytes alive at one step
};

// Throws std::invalid_argument for arrays of different lengths, an arena out of range or a
// value that ends before it starts (naming the value), config_error for a bad alignment.
inline placement_arrays place_intervals(const interval_arrays& values, std::uint32_t alignment) {
  devpass::detail::check_alignment("alignment", alignment);
  const std::size_t n = values.first.size();
  if (values.last.size() != n || values.size.size() != n || values.arena.size() != n)
    throw std::invalid_argument("interval arrays: first, last, size and arena need one entry per value (" +
                                std::to_string(n) + ", " + std::to_string(values.last.size()) + ", " +
                                std::to_string(values.size.size()) + ", " + std::to_string(values.arena.size()) + ")");
  const std::uint64_t align = alignment;
  std::vector<std::vector<devpass::detail::plan_item>> arenas(values.arena_count);
  std::vector<std::vector<std::size_t>> members(values.arena_count);  // arenas[a][j] is value members[a][j]
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t a = values.arena[i];
    if (a >= values.arena_count)
      throw std::invalid_argument("interval arrays: value " + std::to_string(i) + ": arena " + std::to_string(a) +
                                  " is not below arena_count " + std::to_string(values.arena_count));
    if (values.last[i] < values.first[i])
      throw std::invalid_argument("interval arrays: value " + std::to_string(i) + ": last step " +
                                  std::to_string(values.last[i]) + " is before its first " +
                                  std::to_string(values.first[i]));
    if (values.size[i] > ~std::uint64_t{0} - align)
      throw std::invalid_argument("interval arrays: value " + std::to_string(i) + ": size " +
                                  std::to_string(values.size[i]) + " overflows when aligned");
    arenas[a].push_back({values.first[i], values.last[i], (values.size[i] + align - 1) / align * align, 0, {}});
    members[a].push_back(i);
  }
  placement_arrays out;
  out.offsets.assign(n, 0);
  out.arena_sizes.assign(values.arena_count, 0);
  out.lower_bounds.assign(values.arena_count, 0);
  for (std::uint32_t a = 0; a < values.arena_count; ++a) {
    auto& items = arenas[a];
    if (items.empty()) continue;
    // The placement's per-step tables have one entry a step. Steps numbered sparsely (more
    // than a few per value) are ranked among the arena's own endpoints instead: intersection
    // depends only on their order. Dense numbering (ExecuTorch's node indices) is kept as it
    // is, since the placement orders that weigh lifetimes read their lengths in steps.
    std::uint32_t top = 0;
    for (const auto& item : items) top = std::max(top, item.last);
    if (top >= 4 * items.size() + 1024) {
      std::vector<std::uint32_t> ends;
      ends.reserve(2 * items.size());
      for (const auto& item : items) {
        ends.push_back(item.first);
        ends.push_back(item.last);
      }
      std::sort(ends.begin(), ends.end());
      ends.erase(std::unique(ends.begin(), ends.end()), ends.end());
      const auto rank = [&](std::uint32_t step) {
        return static_cast<std::uint32_t>(std::lower_bound(ends.begin(), ends.end(), step) - ends.begin());
      };
      for (auto& item : items) {
        item.first = rank(item.first);
        item.last = rank(item.last);
      }
      top = static_cast<std::uint32_t>(ends.size() - 1);
    }
    // The placement wants definition order (sorted by first step); a stable sort keeps the
    // caller's order among values defined at one step, so ties break the same way every run.
    std::vector<std::size_t> order(items.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t x, std::size_t y) { return items[x].first < items[y].first; });
    std::vector<devpass::detail::plan_item> sorted;
    sorted.reserve(items.size());
    for (const std::size_t j : order) sorted.push_back(items[j]);
    const std::size_t steps = std::size_t{top} + 1;
    out.lower_bounds[a] = devpass::detail::live_bytes_peak(sorted, steps);
    out.arena_sizes[a] = devpass::detail::place_items(sorted, out.lower_bounds[a]);
    for (std::size_t k = 0; k < order.size(); ++k) out.offsets[members[a][order[k]]] = sorted[k].offset;
  }
  return out;
}

}  // namespace devpass::interop
