// Placement inside one arena (planning/memory_planner.hpp: place_items, its five orders and the
// bounded repair), through interop/array_plan.hpp as devpass.executorch.plan_memory calls it:
// the intervals ExecuTorch 1.5.1's apply_algo hands the planner for the planning test set's models
// (tests/data/planning/*.intervals, written by bench/dump_planning_intervals.py) and random
// intervals, each plan checked pair by pair by brute force and against the best of the five
// orders alone (the placement before the repair), which it must never exceed.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <numeric>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "devpass/interop/array_plan.hpp"
#include "graph_dir.hpp"

namespace {

using namespace devpass;

struct values {
  std::vector<std::uint32_t> first, last, arena;
  std::vector<std::uint64_t> size;
  std::uint32_t arena_count = 1;
  std::uint32_t alignment = 16;
  std::uint64_t greedy = 0;  // ExecuTorch greedy's bytes for arena 0, where the file says
  [[nodiscard]] interop::interval_arrays arrays() const { return {first, last, size, arena, arena_count}; }
  void add(std::uint32_t f, std::uint32_t l, std::uint64_t s) {
    first.push_back(f);
    last.push_back(l);
    size.push_back(s);
    arena.push_back(0);
  }
};

// bench/dump_planning_intervals.py's format: `alignment A`, `arenas N`, `greedy ARENA BYTES`,
// then `first last size arena` a value; `#` starts a comment.
values read_intervals(const std::string& path) {
  std::ifstream in(path);
  REQUIRE_MESSAGE(in.good(), "cannot read " << path);
  values v;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::string word;
    fields >> word;
    if (word == "alignment") {
      fields >> v.alignment;
    } else if (word == "arenas") {
      fields >> v.arena_count;
    } else if (word == "greedy") {
      std::uint32_t arena = 0;
      fields >> arena >> v.greedy;
    } else {
      std::uint32_t last = 0, arena = 0;
      std::uint64_t size = 0;
      fields >> last >> size >> arena;
      REQUIRE_MESSAGE(!fields.fail(), path << ": bad line '" << line << "'");
      v.add(static_cast<std::uint32_t>(std::stoul(word)), last, size);
      v.arena.back() = arena;
    }
  }
  return v;
}

std::uint64_t aligned(std::uint64_t s, std::uint64_t a) { return (s + a - 1) / a * a; }

// No two values of one arena alive at a common step share a byte; every value inside its arena.
void check_valid(const values& v, const interop::placement_arrays& p) {
  const std::size_t n = v.first.size();
  REQUIRE(p.offsets.size() == n);
  std::size_t shared = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t si = aligned(v.size[i], v.alignment);
    CHECK(p.offsets[i] % v.alignment == 0);
    CHECK(p.offsets[i] + si <= p.arena_sizes[v.arena[i]]);
    for (std::size_t j = i + 1; j < n; ++j) {
      if (v.arena[i] != v.arena[j] || v.last[i] < v.first[j] || v.last[j] < v.first[i]) continue;
      const std::uint64_t sj = aligned(v.size[j], v.alignment);
      if (si == 0 || sj == 0) continue;
      if (p.offsets[i] + si > p.offsets[j] && p.offsets[j] + sj > p.offsets[i]) ++shared;
    }
  }
  CHECK_MESSAGE(shared == 0, shared << " pairs of values alive together share bytes");
}

// The placement before the repair: the best of the five orders alone (ties keep the earlier),
// per arena, on the items place_intervals builds (aligned, sorted by first step, stably).
std::vector<std::uint64_t> best_of_five(const values& v) {
  std::vector<std::uint64_t> out(v.arena_count, 0);
  for (std::uint32_t a = 0; a < v.arena_count; ++a) {
    std::vector<std::size_t> members;
    for (std::size_t i = 0; i < v.first.size(); ++i)
      if (v.arena[i] == a) members.push_back(i);
    std::stable_sort(members.begin(), members.end(),
                     [&](std::size_t x, std::size_t y) { return v.first[x] < v.first[y]; });
    std::vector<detail::plan_item> items;
    for (const std::size_t i : members)
      items.push_back({v.first[i], v.last[i], aligned(v.size[i], v.alignment), 0, {}});
    if (items.empty()) continue;
    std::uint64_t best = ~std::uint64_t{0};
    std::vector<std::uint64_t> offsets;
    for (const auto order :
         {detail::placement_order::size, detail::placement_order::size_then_life, detail::placement_order::area,
          detail::placement_order::life, detail::placement_order::definition})
      best = std::min(best, detail::place_greedy(items, order, offsets));
    out[a] = best;
  }
  return out;
}

// Random intervals of three kinds, all dense steps: scattered (array plan's test), a chain with
// residuals and the size classes of a transformer, and long-lived values over short activations
// of power-of-two sizes (a network with its inputs and mutable buffers).
values random_intervals(std::uint32_t seed, int kind) {
  std::mt19937 rng(seed);
  values v;
  const std::size_t n = 40 + rng() % 260;
  for (std::size_t i = 0; i < n; ++i) {
    const auto pick = [&](std::uint32_t bound) { return static_cast<std::uint32_t>(rng() % bound); };
    if (kind == 0) {
      const std::uint32_t f = pick(static_cast<std::uint32_t>(2 * n));
      v.add(f, f + (pick(8) == 0 ? pick(static_cast<std::uint32_t>(n)) : pick(4)), 16 * (1 + rng() % 300));
    } else if (kind == 1) {
      static constexpr std::uint64_t classes[] = {512, 4096, 131072, 262144, 393216, 524288, 1048576};
      const auto f = static_cast<std::uint32_t>(i);
      v.add(f, std::min(f + 1 + (pick(5) == 0 ? pick(20) : pick(3)), static_cast<std::uint32_t>(n - 1)),
            classes[pick(7)]);
    } else {
      const bool long_lived = pick(20) == 0;
      const auto f = long_lived ? 0u : static_cast<std::uint32_t>(i);
      v.add(f, long_lived ? static_cast<std::uint32_t>(n) : f + 1 + pick(4), std::uint64_t{4096} << pick(6));
    }
  }
  return v;
}

}  // namespace

TEST_CASE(
    "placement: ExecuTorch's intervals of the planning models plan at the lower bound, validly, never above the five "
    "orders or greedy") {
  // Every CPU-only model of python/tests/planning_cases.py; without the repair, transformer and
  // decoder_lm plan above their bounds (docs/performance.md#memory-planning).
  for (const char* model : {"resnet18", "mobilenet_v2", "efficientnet_b0", "vit_b_16", "transformer", "decoder_lm"}) {
    CAPTURE(model);
    const values v = read_intervals(testing_support::planning_path(std::string(model) + ".intervals"));
    REQUIRE(v.first.size() > 100);
    REQUIRE(v.arena_count == 1);
    const auto p = interop::place_intervals(v.arrays(), v.alignment);
    check_valid(v, p);
    const std::uint64_t bound = p.lower_bounds[0];
    CHECK(p.arena_sizes[0] <= best_of_five(v)[0]);
    CHECK(p.arena_sizes[0] <= v.greedy);
    CHECK(p.arena_sizes[0] * 100 <= bound * 101);  // the planning goal: within 1.01x of the bound
    CHECK(p.arena_sizes[0] == bound);              // what the placement reaches on all six
    CHECK(interop::place_intervals(v.arrays(), v.alignment).offsets == p.offsets);
  }
}

TEST_CASE("placement: random intervals plan validly and deterministically, never above the best of the five orders") {
  std::size_t above_before = 0, improved = 0, reached = 0;
  for (int kind = 0; kind < 3; ++kind) {
    for (std::uint32_t seed = 1; seed <= 60; ++seed) {
      CAPTURE(kind);
      CAPTURE(seed);
      values v = random_intervals(seed, kind);
      v.alignment = kind == 0 ? 16 : 64;
      const auto p = interop::place_intervals(v.arrays(), v.alignment);
      check_valid(v, p);
      const std::uint64_t before = best_of_five(v)[0];
      CHECK(p.arena_sizes[0] <= before);
      CHECK(p.arena_sizes[0] >= p.lower_bounds[0]);
      CHECK(interop::place_intervals(v.arrays(), v.alignment).offsets == p.offsets);
      above_before += before > p.lower_bounds[0];
      improved += p.arena_sizes[0] < before;
      reached += before > p.lower_bounds[0] && p.arena_sizes[0] == p.lower_bounds[0];
    }
  }
  MESSAGE(above_before << " of 180 above the bound with the five orders; the repair made " << improved << " smaller, "
                       << reached << " of them down to the bound");
  // The repair does its job on these: most of the instances the five orders leave above the
  // bound get smaller (a regression in the repair shows up here).
  CHECK(above_before > 20);
  CHECK(improved * 2 > above_before);
}

TEST_CASE("placement: promote_above moves the values above the target to the front, keeping both groups' order") {
  std::vector<detail::plan_item> items(5);
  for (std::size_t i = 0; i < items.size(); ++i) items[i].size = 16;
  std::vector<std::uint64_t> offsets{0, 32, 16, 48, 0};  // above a target of 40: items 1 (48) and 3 (64)
  std::vector<std::uint32_t> sequence{0, 1, 2, 3, 4};
  CHECK(detail::promote_above(items, sequence, offsets, 40));
  CHECK(sequence == std::vector<std::uint32_t>{1, 3, 0, 2, 4});
  CHECK_FALSE(detail::promote_above(items, sequence, offsets, 40));  // a fixed point: nothing moves
  CHECK(sequence == std::vector<std::uint32_t>{1, 3, 0, 2, 4});
  CHECK_FALSE(detail::promote_above(items, sequence, offsets, 64));  // nothing above
}
