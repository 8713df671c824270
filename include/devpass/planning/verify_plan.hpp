// devpass/planning/verify_plan.hpp — checks a memory plan against the graph it was made for.
//
//   verify_report verify_plan(const graph& g, const memory_plan& plan);
//
// What plan_memory promises (docs/memory-planning.md), checked from the plan and the specs alone:
//   buffers    buffers[i].mem_id == i; a power-of-two alignment; size >= lower_bound
//   order      every live node exactly once, producers before consumers (field "plan.order")
//   specs      mem_id and offset set together; mem_id names a buffer on the value's device
//              (location_of); offset >= 0, a multiple of the buffer's alignment, and the value
//              fits: offset + bytes <= size (fields "outputs[k].mem_id" / "outputs[k].offset")
//   overlap    two values of one buffer alive at the same step (lifetimes over plan.order, as
//              compute_lifetimes gives them) share no byte
// Laws, as verify.hpp's: never throws for a bad plan, reports every violation naming node and
// field, in a deterministic order (buffers, order, then values in plan order, overlaps last).
// Cost: O(V log V): the overlap check sweeps each buffer's values by first step, keeping the
// live ones in an offset-ordered map; a new value can only collide with its two neighbours there.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <queue>
#include <string>
#include <vector>

#include "devpass/graph/verify_structure.hpp"
#include "devpass/planning/lifetimes.hpp"
#include "devpass/planning/memory_plan.hpp"

namespace devpass {

namespace detail {

struct planned_value {
  value_ref value;
  lifetime span;
  std::uint64_t offset = 0, bytes = 0;
};

inline std::string output_field(value_ref v, const char* what) {
  return "outputs[" + std::to_string(v.output) + "]." + what;
}

// Reports every value of one buffer that shares a byte with a value alive at the same time.
inline void check_no_overlap(verify_report& r, const graph& g, std::int32_t mem_id, std::vector<planned_value> values) {
  std::stable_sort(values.begin(), values.end(),
                   [](const planned_value& a, const planned_value& b) { return a.span.first < b.span.first; });
  std::map<std::uint64_t, std::size_t> live;               // offset -> index into values; disjoint byte ranges
  using ending = std::pair<std::uint32_t, std::uint64_t>;  // (last step, offset)
  std::priority_queue<ending, std::vector<ending>, std::greater<>> by_last;
  for (std::size_t i = 0; i < values.size(); ++i) {
    const planned_value& v = values[i];
    if (v.bytes == 0) continue;
    while (!by_last.empty() && by_last.top().first < v.span.first) {
      live.erase(by_last.top().second);
      by_last.pop();
    }
    const planned_value* clash = nullptr;
    const auto next = live.lower_bound(v.offset);
    if (next != live.end() && next->first < v.offset + v.bytes) clash = &values[next->second];
    if (next != live.begin()) {
      const planned_value& before = values[std::prev(next)->second];
      if (before.offset + before.bytes > v.offset) clash = &before;
    }
    if (clash) {
      r.add(g[v.value.producer].id, output_field(v.value, "offset"),
            "bytes [" + std::to_string(v.offset) + ", " + std::to_string(v.offset + v.bytes) + ") of buffer " +
                std::to_string(mem_id) + " overlap '" + value_name(g, clash->value) + "' at [" +
                std::to_string(clash->offset) + ", " + std::to_string(clash->offset + clash->bytes) +
                ") while both are alive");
      continue;
    }
    live.emplace(v.offset, i);
    by_last.emplace(v.span.last, v.offset);
  }
}

// The plan's order holds every live node once, producers first; false (after reporting) if not,
// so that lifetimes are not computed over a broken order.
inline bool check_order(verify_report& r, const graph& g, const std::vector<vertex>& order) {
  const std::size_t n = boost::num_vertices(g);
  constexpr std::uint32_t unseen = ~std::uint32_t{0};
  std::vector<std::uint32_t> step(n, unseen);
  bool ok = true;
  for (std::size_t i = 0; i < order.size(); ++i) {
    const vertex v = order[i];
    if (v >= n || g[v].erased) {
      r.add("", "plan.order", "step " + std::to_string(i) + " is vertex " + std::to_string(v) + ", not a live node");
      ok = false;
    } else if (step[v] != unseen) {
      r.add(g[v].id, "plan.order", "runs twice (steps " + std::to_string(step[v]) + " and " + std::to_string(i) + ")");
      ok = false;
    } else {
      step[v] = static_cast<std::uint32_t>(i);
    }
  }
  for (vertex v = 0; v < n; ++v) {
    if (g[v].erased) continue;
    if (step[v] == unseen) {
      r.add(g[v].id, "plan.order", "never runs");
      ok = false;
      continue;
    }
    for (const auto e : boost::make_iterator_range(boost::in_edges(v, g))) {
      const vertex p = boost::source(e, g);
      if (step[p] != unseen && step[p] > step[v]) {
        r.add(g[v].id, "plan.order", "runs before '" + g[p].id + "', whose value it reads");
        ok = false;
      }
    }
  }
  return ok;
}

}  // namespace detail

// Precondition: g passes verify_structure (plan_memory's own precondition).
[[nodiscard]] inline verify_report verify_plan(const graph& g, const memory_plan& plan) {
  verify_report r;
  for (std::size_t i = 1; i < plan.buffers.size(); ++i) {
    const planned_buffer& b = plan.buffers[i];
    const std::string field = "plan.buffers[" + std::to_string(i) + "]";
    if (b.mem_id != static_cast<std::int32_t>(i)) r.add("", field, "has mem_id " + std::to_string(b.mem_id));
    if (b.alignment == 0 || (b.alignment & (b.alignment - 1)) != 0)
      r.add("", field, "alignment " + std::to_string(b.alignment) + " is not a power of two");
    if (b.size < b.lower_bound)
      r.add("", field, "size " + std::to_string(b.size) + " is below its lower bound " + std::to_string(b.lower_bound));
  }
  if (!detail::check_order(r, g, plan.order)) return r;

  const lifetime_table life = compute_lifetimes(g, plan.order);
  std::vector<std::vector<detail::planned_value>> per_buffer(plan.buffers.size());
  for (const vertex v : plan.order) {
    const node& nd = g[v];
    for (std::uint32_t k = 0; k < nd.outputs.size(); ++k) {
      const tensor_spec& s = nd.outputs[k];
      const value_ref value{v, k};
      if (s.mem_id.has_value() != s.offset.has_value()) {
        r.add(nd.id, detail::output_field(value, s.mem_id ? "offset" : "mem_id"),
              "missing: mem_id and offset are set together");
        continue;
      }
      if (!s.mem_id) continue;
      if (*s.mem_id < 1 || static_cast<std::size_t>(*s.mem_id) >= plan.buffers.size()) {
        r.add(nd.id, detail::output_field(value, "mem_id"), "no planned buffer " + std::to_string(*s.mem_id));
        continue;
      }
      const planned_buffer& b = plan.buffers[static_cast<std::size_t>(*s.mem_id)];
      const device at = location_of(g, value);
      if (b.device != at) {
        r.add(nd.id, detail::output_field(value, "mem_id"),
              "buffer " + std::to_string(*s.mem_id) + " is on " + to_string(b.device) + " but the value lives on " +
                  to_string(at));
        continue;
      }
      const std::uint64_t bytes = s.byte_size();
      const std::string offset_field = detail::output_field(value, "offset");
      if (*s.offset < 0) {
        r.add(nd.id, offset_field, "negative offset " + std::to_string(*s.offset));
        continue;
      }
      const auto offset = static_cast<std::uint64_t>(*s.offset);
      if (b.alignment != 0 && offset % b.alignment != 0)
        r.add(nd.id, offset_field,
              std::to_string(offset) + " is not a multiple of the buffer's alignment " + std::to_string(b.alignment));
      if (offset > b.size || bytes > b.size - offset) {
        r.add(nd.id, offset_field,
              std::to_string(bytes) + " bytes at " + std::to_string(offset) + " do not fit in buffer " +
                  std::to_string(*s.mem_id) + " of " + std::to_string(b.size) + " bytes");
        continue;
      }
      per_buffer[static_cast<std::size_t>(*s.mem_id)].push_back({value, life[value], offset, bytes});
    }
  }
  for (std::size_t i = 1; i < per_buffer.size(); ++i)
    detail::check_no_overlap(r, g, static_cast<std::int32_t>(i), std::move(per_buffer[i]));
  return r;
}

}  // namespace devpass
