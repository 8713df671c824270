// Placement over arrays (interop/array_plan.hpp), what devpass.executorch.plan_memory hands
// over: random values checked pair by pair by brute force (no two values of one arena alive at a
// common step share a byte), the lower bound recomputed independently, a hand-computed best fit,
// sparse step numbers, determinism, and the refusals.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <vector>

#include "devpass/interop/array_plan.hpp"

namespace {

using namespace devpass;

struct values {
  std::vector<std::uint32_t> first, last, arena;
  std::vector<std::uint64_t> size;
  std::uint32_t arena_count = 1;
  [[nodiscard]] interop::interval_arrays arrays() const { return {first, last, size, arena, arena_count}; }
  void add(std::uint32_t f, std::uint32_t l, std::uint64_t s, std::uint32_t a = 0) {
    first.push_back(f);
    last.push_back(l);
    size.push_back(s);
    arena.push_back(a);
  }
};

values random_values(std::uint32_t seed, std::size_t n, std::uint32_t arenas, std::uint32_t step_scale) {
  std::mt19937 rng(seed);
  values v;
  v.arena_count = arenas;
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t f = static_cast<std::uint32_t>(rng() % (2 * n)) * step_scale;
    const std::uint32_t span = static_cast<std::uint32_t>(rng() % 8 == 0 ? rng() % n : rng() % 4) * step_scale;
    const std::uint64_t s = rng() % 10 == 0 ? 0 : 1 + rng() % 5000;
    v.add(f, f + span, s, static_cast<std::uint32_t>(rng() % arenas));
  }
  return v;
}

std::uint64_t aligned(std::uint64_t s, std::uint64_t a) { return (s + a - 1) / a * a; }

// Every law of the header, checked without the planner's own helpers.
void check_plan(const values& v, const interop::placement_arrays& p, std::uint32_t alignment) {
  const std::size_t n = v.first.size();
  REQUIRE(p.offsets.size() == n);
  REQUIRE(p.arena_sizes.size() == v.arena_count);
  for (std::size_t i = 0; i < n; ++i) {
    CHECK(p.offsets[i] % alignment == 0);
    CHECK(p.offsets[i] + aligned(v.size[i], alignment) <= p.arena_sizes[v.arena[i]]);
    for (std::size_t j = i + 1; j < n; ++j) {
      if (v.arena[i] != v.arena[j] || v.last[i] < v.first[j] || v.last[j] < v.first[i]) continue;
      const std::uint64_t si = aligned(v.size[i], alignment), sj = aligned(v.size[j], alignment);
      if (si == 0 || sj == 0) continue;
      const bool apart = p.offsets[i] + si <= p.offsets[j] || p.offsets[j] + sj <= p.offsets[i];
      CHECK_MESSAGE(apart, "values " << i << " and " << j << " share bytes");
    }
  }
  for (std::uint32_t a = 0; a < v.arena_count; ++a) {
    std::uint64_t bound = 0;  // the most bytes alive at one endpoint (peaks sit at first steps)
    for (std::size_t i = 0; i < n; ++i) {
      if (v.arena[i] != a) continue;
      std::uint64_t live = 0;
      for (std::size_t j = 0; j < n; ++j)
        if (v.arena[j] == a && v.first[j] <= v.first[i] && v.first[i] <= v.last[j])
          live += aligned(v.size[j], alignment);
      bound = std::max(bound, live);
    }
    CHECK(p.lower_bounds[a] == bound);
    CHECK(p.arena_sizes[a] >= p.lower_bounds[a]);
  }
}

}  // namespace

TEST_CASE(
    "array plan: random values in several arenas never share a byte while both alive; the bound is the live peak") {
  for (std::uint32_t seed = 1; seed <= 30; ++seed) {
    CAPTURE(seed);
    const values v = random_values(seed, 60 + seed * 5, 1 + seed % 3, 1);
    for (const std::uint32_t alignment : {1u, 16u, 64u})
      check_plan(v, interop::place_intervals(v.arrays(), alignment), alignment);
  }
}

TEST_CASE(
    "array plan: sparse step numbers (ranked) plan validly, with the lower bound of the same values numbered densely") {
  for (std::uint32_t seed = 1; seed <= 10; ++seed) {
    CAPTURE(seed);
    const values dense = random_values(seed, 80, 2, 1);
    const values sparse = random_values(seed, 80, 2, 1000003);
    const auto d = interop::place_intervals(dense.arrays(), 16);
    const auto s = interop::place_intervals(sparse.arrays(), 16);
    check_plan(sparse, s, 16);
    CHECK(s.lower_bounds == d.lower_bounds);  // the same intervals, steps scaled
  }
}

TEST_CASE("array plan: the best-fitting gap is taken, zero-byte values take none, the plan is deterministic") {
  values v;
  v.add(0, 1, 64);  // 0: bottom, dies at 1
  v.add(0, 4, 32);  // 1: above it, lives on
  v.add(2, 3, 48);  // 2: fits in 0's 64-byte hole once 0 is dead
  v.add(2, 3, 0);   // 3: no bytes
  v.add(5, 6, 96);  // 4: after everything: reuses the bottom
  const auto p = interop::place_intervals(v.arrays(), 16);
  CHECK(p.offsets == std::vector<std::uint64_t>{0, 64, 0, 0, 0});
  CHECK(p.arena_sizes == std::vector<std::uint64_t>{96});
  CHECK(p.lower_bounds == std::vector<std::uint64_t>{96});
  CHECK(interop::place_intervals(v.arrays(), 16).offsets == p.offsets);
  values none;
  none.arena_count = 2;
  const auto empty = interop::place_intervals(none.arrays(), 16);
  CHECK(empty.arena_sizes == std::vector<std::uint64_t>{0, 0});
}

TEST_CASE("array plan: malformed arrays and bad alignments are refused, naming the value") {
  values v;
  v.add(0, 1, 8);
  v.add(3, 2, 8);
  CHECK_THROWS_WITH_AS(interop::place_intervals(v.arrays(), 16),
                       doctest::Contains("value 1: last step 2 is before its first 3"), std::invalid_argument);
  values out_of_range;
  out_of_range.add(0, 1, 8, 2);
  out_of_range.arena_count = 2;
  CHECK_THROWS_WITH_AS(interop::place_intervals(out_of_range.arrays(), 16),
                       doctest::Contains("value 0: arena 2 is not below arena_count 2"), std::invalid_argument);
  values ragged;
  ragged.add(0, 1, 8);
  ragged.size.push_back(4);
  CHECK_THROWS_AS(interop::place_intervals(ragged.arrays(), 16), std::invalid_argument);
  values ok;
  ok.add(0, 1, 8);
  CHECK_THROWS_WITH_AS(interop::place_intervals(ok.arrays(), 24),
                       doctest::Contains("alignment must be a power of two, got 24"), config_error);
  values huge;
  huge.add(0, 1, ~std::uint64_t{0} - 3);
  CHECK_THROWS_WITH_AS(interop::place_intervals(huge.arrays(), 16), doctest::Contains("overflows when aligned"),
                       std::invalid_argument);
}
