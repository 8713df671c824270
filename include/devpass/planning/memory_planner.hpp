// devpass/planning/memory_planner.hpp — device-aware memory planning: one arena per device in use,
// and an offset inside it for every planned value.
//
//   memory_plan plan_memory(graph& g, const plan_options& = {});
//
// What it does (docs/memory-planning.md has the details and the figures):
//  - order: execution_order(g); lifetimes: compute_lifetimes(g, order) (method inputs live from
//    step 0, method outputs up to the last step).
//  - a value lives in the arena of location_of(value). Not planned: constants and resident copies
//    (loaded once and kept: accounted per device in memory_plan::resident); method inputs that
//    live on a device (the caller hands them over, skip_h2d) and method outputs left on a device
//    (skip_d2h) unless plan_options says otherwise. Host method inputs and outputs are planned.
//  - buffers: mem_id 0 reserved, the cpu arena first when used, then devices in device order.
//  - offsets: greedy by size into the best-fitting gap among the values whose lifetimes overlap
//    (TFLite's and ExecuTorch's heuristic). The overlap query is a max-segment-tree over values in
//    definition order, so a value costs O((k + 1) log n) for k overlapping placed values, not O(n).
//    Above the lower bound, four more orders, then a bounded repair of them (place_items).
//  - every planned spec gets mem_id and offset; every other spec loses them.
// Laws: two values of one arena whose lifetimes intersect never overlap in bytes; every offset is
// a multiple of the arena's alignment; size >= lower_bound; the same graph gives the same plan.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "devpass/graph/error.hpp"
#include "devpass/graph/graph.hpp"  // devpass::graph, the model most callers plan
#include "devpass/graph/structure.hpp"
#include "devpass/planning/execution_order.hpp"
#include "devpass/planning/lifetimes.hpp"
#include "devpass/planning/memory_plan.hpp"

namespace devpass {

struct plan_options {
  std::uint32_t host_alignment = 16;     // cpu arena; a power of two
  std::uint32_t device_alignment = 256;  // CUDA arenas (cudaMalloc's own alignment); a power of two
  // nullopt derives the rule from where the value lives: a method input or output on a device is
  // owned by the caller and not planned. true plans it into its device's arena anyway, false
  // states the default explicitly. Host method inputs and outputs are always planned.
  std::optional<bool> plan_device_method_inputs{};
  std::optional<bool> plan_device_method_outputs{};
};

namespace detail {

// One value to place in one arena.
struct plan_item {
  std::uint32_t first = 0, last = 0;  // lifetime in steps
  std::uint64_t size = 0;             // aligned bytes
  std::uint64_t offset = 0;
  value_ref value;
};

// The placed items of one arena, indexed by their position in definition order (items sorted by
// `first`). Each tree node holds the largest `last` of the placed items below it, so "placed items
// among [0, end) alive at step a" prunes every subtree with nothing alive at a.
class placed_index {
 public:
  explicit placed_index(std::size_t count) {
    while (leaves_ < count) leaves_ *= 2;
    reach_.assign(2 * leaves_, 0);
  }
  void place(std::size_t item, std::uint32_t last) {
    const std::uint32_t reach = last + 1;  // 0 means "nothing placed below"
    for (std::size_t node = leaves_ + item; node >= 1 && reach_[node] < reach; node /= 2) reach_[node] = reach;
  }
  // Calls f(item) for each placed item with index < end and last >= step, from the highest
  // index down. Each step climbs from the last item found to the nearest subtree holding one
  // alive at `step`, so a query costs O(log distance) per item found: candidates of a value sit
  // close before it in definition order unless they live long.
  template <class F>
  void for_each_alive(std::size_t end, std::uint32_t step, F&& f) const {
    for (std::size_t j = end; (j = previous_alive(j, step)) != npos;) f(j);
  }

 private:
  static constexpr std::size_t npos = ~std::size_t{0};
  // The largest placed item index < p with last >= step, or npos.
  [[nodiscard]] std::size_t previous_alive(std::size_t p, std::uint32_t step) const {
    if (p == 0) return npos;
    std::size_t node = leaves_ + p - 1;
    if (reach_[node] > step) return p - 1;
    for (; node > 1; node /= 2) {
      if ((node & 1) != 0 && reach_[node - 1] > step) {  // the left sibling has one: descend, rightmost first
        node -= 1;
        while (node < leaves_) node = reach_[2 * node + 1] > step ? 2 * node + 1 : 2 * node;
        return node - leaves_;
      }
    }
    return npos;
  }

  std::size_t leaves_ = 1;
  std::vector<std::uint32_t> reach_;  // per tree node: 1 + the largest `last` placed below it
};

// The order values are placed in. Greedy by size (TFLite, ExecuTorch) places the largest first;
// the others break its ties or weigh lifetimes, and win on some graphs where it leaves holes.
enum class placement_order : std::uint8_t {
  size,            // size desc, then definition order
  size_then_life,  // size desc, then longer lifetime first
  area,            // size * lifetime desc (bytes x steps), then size desc
  life,            // longer lifetime first, then size desc (long-lived values at the bottom)
  definition,      // definition order (what an online allocator would do)
};

// The sequence `items` (sorted by `first`) are placed in under `order`: item indices.
inline std::vector<std::uint32_t> placement_sequence(const std::vector<plan_item>& items, placement_order order) {
  const std::size_t m = items.size();
  struct key {
    std::uint64_t primary, secondary;
    std::uint32_t index;
  };
  const auto saturating_mul = [](std::uint64_t a, std::uint64_t b) {
    return b != 0 && a > ~std::uint64_t{0} / b ? ~std::uint64_t{0} : a * b;
  };
  std::vector<key> keys(m);
  for (std::size_t i = 0; i < m; ++i) {
    const plan_item& item = items[i];
    const std::uint64_t length = std::uint64_t{item.last} - item.first + 1;
    switch (order) {
      case placement_order::size: keys[i] = {item.size, 0, static_cast<std::uint32_t>(i)}; break;
      case placement_order::size_then_life: keys[i] = {item.size, length, static_cast<std::uint32_t>(i)}; break;
      case placement_order::area:
        keys[i] = {saturating_mul(item.size, length), item.size, static_cast<std::uint32_t>(i)};
        break;
      case placement_order::life: keys[i] = {length, item.size, static_cast<std::uint32_t>(i)}; break;
      case placement_order::definition: keys[i] = {0, 0, static_cast<std::uint32_t>(i)}; break;
    }
  }
  const auto before = [](const key& a, const key& b) {
    if (a.primary != b.primary) return a.primary > b.primary;
    if (a.secondary != b.secondary) return a.secondary > b.secondary;
    return a.index < b.index;  // items are in definition order: earlier first
  };
  if (!std::is_sorted(keys.begin(), keys.end(), before))
    std::sort(keys.begin(), keys.end(), before);  // equal sizes: already
  std::vector<std::uint32_t> sequence(m);
  for (std::size_t i = 0; i < m; ++i) sequence[i] = keys[i].index;
  return sequence;
}

// Places `items` (sorted by `first`) one after the other as `sequence` lists them (each index
// once): each into the smallest gap that fits between the placed items alive at the same time,
// else on top of them. Writes offsets[i] for items[i] and returns the arena size.
inline std::uint64_t place_in_sequence(const std::vector<plan_item>& items, const std::vector<std::uint32_t>& sequence,
                                       std::vector<std::uint64_t>& offsets) {
  const std::size_t m = items.size();
  offsets.assign(m, 0);
  if (m == 0) return 0;
  // defined_by[s]: how many items are defined at steps <= s.
  std::vector<std::uint32_t> defined_by(items.back().first + 1, 0);
  for (const auto& item : items) ++defined_by[item.first];
  for (std::size_t s = 1; s < defined_by.size(); ++s) defined_by[s] += defined_by[s - 1];

  placed_index placed(m);
  std::vector<std::pair<std::uint64_t, std::uint64_t>> busy;  // (offset, end) of overlapping items
  std::uint64_t arena = 0;
  for (const std::uint32_t i : sequence) {
    const plan_item& item = items[i];
    if (item.size == 0) continue;  // needs no bytes; offset 0 is valid in every arena
    // Items defined after item.last cannot overlap: they are past `end` in definition order.
    const std::size_t end = item.last < defined_by.size() ? defined_by[item.last] : m;
    busy.clear();
    placed.for_each_alive(end, item.first,
                          [&](std::size_t j) { busy.emplace_back(offsets[j], offsets[j] + items[j].size); });
    std::sort(busy.begin(), busy.end());
    std::uint64_t cursor = 0, best_gap = ~std::uint64_t{0}, best_offset = 0;
    bool found = false;
    for (const auto& [offset, stop] : busy) {
      if (offset > cursor) {
        const std::uint64_t gap = offset - cursor;
        if (gap >= item.size && gap < best_gap) {
          best_gap = gap;
          best_offset = cursor;
          found = true;
        }
      }
      cursor = std::max(cursor, stop);
    }
    offsets[i] = found ? best_offset : cursor;
    arena = std::max(arena, offsets[i] + item.size);
    placed.place(i, item.last);
  }
  return arena;
}

// Places `items` (sorted by `first`) in `order` (place_in_sequence of placement_sequence).
inline std::uint64_t place_greedy(const std::vector<plan_item>& items, placement_order order,
                                  std::vector<std::uint64_t>& offsets) {
  return place_in_sequence(items, placement_sequence(items, order), offsets);
}

// One repair step: the items that `offsets` (a placement of `sequence`) puts above `target`
// move to the front of the sequence, each group keeping its order. Placed earlier, they take
// the low offsets and the items that fitted under the target before fill in around them.
// Returns whether the sequence changed (a fixed point ends the repair).
inline bool promote_above(const std::vector<plan_item>& items, std::vector<std::uint32_t>& sequence,
                          const std::vector<std::uint64_t>& offsets, std::uint64_t target) {
  const auto above = [&](std::uint32_t i) { return offsets[i] + items[i].size > target; };
  const auto first_below = std::find_if_not(sequence.begin(), sequence.end(), above);
  if (std::find_if(first_below, sequence.end(), above) == sequence.end()) return false;  // already in front
  std::stable_partition(first_below, sequence.end(), above);
  return true;
}

// The most aligned bytes alive at any one step: no placement can use less.
inline std::uint64_t live_bytes_peak(const std::vector<plan_item>& items, std::size_t steps) {
  std::vector<std::int64_t> delta(steps + 1, 0);
  for (const auto& item : items) {
    delta[item.first] += static_cast<std::int64_t>(item.size);
    delta[item.last + 1] -= static_cast<std::int64_t>(item.size);
  }
  std::int64_t live = 0, peak = 0;
  for (const std::int64_t d : delta) peak = std::max(peak, live += d);
  return static_cast<std::uint64_t>(peak);
}

// The repair's budget, in item placements (passes times items): 24 passes of a few hundred
// values (ExecuTorch's methods), fewer as arenas grow, none from 2^19 values on (a 1M-node
// graph's arenas), so planning stays O(n log n) in the graph and deterministic in its effort.
inline constexpr std::size_t repair_passes_max = 24;
inline constexpr std::size_t repair_work_max = std::size_t{1} << 19;
inline constexpr std::size_t repair_passes_per_order = 7;

// Places `items` with the best of the placement orders: greedy by size first, the others only
// when it misses the lower bound (on most graphs it does not, and then planning costs one pass).
// When all five miss it, a bounded repair (squeaky wheel): per order, in the order that measured
// best (area, life, definition, size, size then life; docs/memory-planning.md), the items the
// last pass put above the lower bound move to the front of its sequence (promote_above) and the
// sequence is placed again, up to repair_passes_per_order times or a fixed point, until the bound
// is reached or the budget is spent. Every pass is a candidate and only a strictly smaller arena
// replaces the best, so the result is never larger than the five orders' and is deterministic.
// Writes item.offset; returns the arena size.
inline std::uint64_t place_items(std::vector<plan_item>& items, std::uint64_t lower_bound) {
  constexpr placement_order orders[] = {placement_order::size, placement_order::size_then_life, placement_order::area,
                                        placement_order::life, placement_order::definition};
  constexpr std::size_t order_count = std::size(orders);
  const std::size_t m = items.size();
  std::size_t repair_budget = m == 0 ? 0 : std::min(repair_passes_max, repair_work_max / m);
  std::vector<std::vector<std::uint32_t>> sequences(order_count);
  std::vector<std::vector<std::uint64_t>> placed(order_count);  // each sequence's last placement
  std::vector<std::uint64_t> best, trial;
  std::uint64_t best_size = ~std::uint64_t{0};
  for (std::size_t k = 0; k < order_count && best_size > lower_bound; ++k) {
    std::vector<std::uint32_t> sequence = placement_sequence(items, orders[k]);
    const std::uint64_t size = place_in_sequence(items, sequence, trial);
    if (size < best_size) {
      best_size = size;
      best = trial;
    }
    if (repair_budget > 0) {
      sequences[k] = std::move(sequence);
      placed[k] = std::move(trial);
    }
  }
  // The orders' indices in the repair's order: area, life, definition, size, size then life.
  constexpr std::size_t repair_sequence[] = {2, 3, 4, 0, 1};
  for (const std::size_t k : repair_sequence) {
    if (best_size <= lower_bound || repair_budget == 0) break;
    for (std::size_t pass = 0; pass < repair_passes_per_order && repair_budget > 0 && best_size > lower_bound; ++pass) {
      if (!promote_above(items, sequences[k], placed[k], lower_bound)) break;
      --repair_budget;
      const std::uint64_t size = place_in_sequence(items, sequences[k], placed[k]);
      if (size < best_size) {
        best_size = size;
        best = placed[k];
      }
    }
  }
  for (std::size_t i = 0; i < m; ++i) items[i].offset = best[i];
  return best_size;
}

// One more constant value of `bytes` on `at` (devices are few: a scan; sorted at the end).
inline void add_resident(std::vector<resident_memory>& resident, device at, std::uint64_t bytes) {
  auto it = std::find_if(resident.begin(), resident.end(), [&](const resident_memory& r) { return r.device == at; });
  if (it == resident.end()) it = resident.insert(resident.end(), resident_memory{at});
  it->bytes += bytes;
  ++it->values;
}

inline void check_alignment(const char* name, std::uint32_t alignment) {
  if (alignment == 0 || (alignment & (alignment - 1)) != 0)
    throw config_error(std::string("plan_options: ") + name + " must be a power of two, got " +
                       std::to_string(alignment));
}

}  // namespace detail

// Any graph model with set_buffer (graph_model.hpp). Precondition: g is structurally valid
// (verify_structure); throws graph_error on a cycle and config_error on a bad alignment. Erased
// nodes are ignored.
template <class G>
[[nodiscard]] memory_plan plan_memory(G& g, const plan_options& options = {}) {
  static_assert(check_graph_model<G>() && check_plannable_graph_model<G>());
  detail::check_alignment("host_alignment", options.host_alignment);
  detail::check_alignment("device_alignment", options.device_alignment);

  memory_plan plan;
  plan.order = execution_order(g);
  const lifetime_table life = compute_lifetimes(g, plan.order);

  std::vector<char> is_method_output(life.value_count(), 0);
  for (const vertex v : life.output_nodes)
    for (const auto e : boost::make_iterator_range(boost::in_edges(v, g)))
      is_method_output[life.index({boost::source(e, g), edge_output(g, e)})] = 1;

  // One pass over the values: which are planned, on which device (devices are few: a small
  // vector in order of appearance, sorted afterwards), with their lifetime and size.
  const bool device_inputs = options.plan_device_method_inputs.value_or(false);
  const bool device_outputs = options.plan_device_method_outputs.value_or(false);
  // Items per device slot (devices in order of appearance); method inputs start at step 0, so
  // they go before the others to keep each arena in definition order.
  std::vector<device> devices;
  std::vector<std::vector<detail::plan_item>> inputs, others;
  for (const vertex v : plan.order) {
    const op_kind op = role_of(g, v);
    for (std::uint32_t k = 0, outputs = output_count(g, v); k < outputs; ++k) {
      const value_ref value{v, k};
      graph_model<G>::set_buffer(g, value, std::nullopt);
      const device at = location_of(g, value);
      if (op == op_kind::constant || is_resident(g, v)) {
        detail::add_resident(plan.resident, at, value_bytes(g, value));
        continue;
      }
      const std::size_t index = life.index(value);
      if (!at.is_host()) {
        if (op == op_kind::input && !device_inputs) continue;
        if (is_method_output[index] && !device_outputs) continue;
      }
      auto slot = static_cast<std::size_t>(std::find(devices.begin(), devices.end(), at) - devices.begin());
      if (slot == devices.size()) {
        devices.push_back(at);
        inputs.emplace_back();
        others.emplace_back();
      }
      const std::uint64_t align = at.is_host() ? options.host_alignment : options.device_alignment;
      const lifetime span = life.spans[index];
      (op == op_kind::input ? inputs : others)[slot].push_back(
          {span.first, span.last, (value_bytes(g, value) + align - 1) / align * align, 0, value});
    }
  }
  // Arena order: cpu first, then cuda:0, cuda:1, ...
  std::vector<std::size_t> slots(devices.size());
  std::iota(slots.begin(), slots.end(), std::size_t{0});
  std::sort(slots.begin(), slots.end(), [&](std::size_t a, std::size_t b) { return devices[a] < devices[b]; });
  std::vector<std::vector<detail::plan_item>> arenas;
  std::vector<device> sorted_devices;
  for (const std::size_t slot : slots) {
    sorted_devices.push_back(devices[slot]);
    auto& items = arenas.emplace_back(std::move(inputs[slot]));
    items.insert(items.end(), others[slot].begin(), others[slot].end());
    others[slot] = {};
  }
  devices = std::move(sorted_devices);
  std::sort(plan.resident.begin(), plan.resident.end(),
            [](const resident_memory& a, const resident_memory& b) { return a.device < b.device; });

  plan.buffers.resize(devices.size() + 1);  // buffers[0]: reserved, mem_id 0
  for (std::size_t b = 0; b < devices.size(); ++b) {
    auto& items = arenas[b];
    planned_buffer& buffer = plan.buffers[b + 1];
    buffer.mem_id = static_cast<std::int32_t>(b + 1);
    buffer.device = devices[b];
    buffer.alignment = devices[b].is_host() ? options.host_alignment : options.device_alignment;
    buffer.lower_bound = detail::live_bytes_peak(items, plan.order.size());
    buffer.size = detail::place_items(items, buffer.lower_bound);
    for (const auto& item : items)
      graph_model<G>::set_buffer(g, item.value, buffer_slot{buffer.mem_id, static_cast<std::int64_t>(item.offset)});
  }
  return plan;
}

}  // namespace devpass
