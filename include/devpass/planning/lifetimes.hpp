// devpass/planning/lifetimes.hpp — when each value exists, in steps of an execution order.
//
// A value is defined at its producer's step and read up to the step of its last consumer; it
// occupies memory over the closed interval [first, last]. A value nobody reads still needs its
// defining step (the kernel writes it): last == first. A node's operands and results share the
// node's step, so they never alias.
//
// Method I/O (io_lifetimes::method_bounds, the default, what the memory planner uses): the caller
// writes method inputs before the first step and reads method outputs after the last one, so a
// method input lives from step 0 and a method output (an operand of the output node) up to the
// final step. io_lifetimes::as_used gives the bare definition/last-use interval.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "devpass/graph/graph.hpp"  // devpass::graph, the model most callers plan
#include "devpass/graph/structure.hpp"
#include "devpass/planning/execution_order.hpp"

namespace devpass {

struct lifetime {
  std::uint32_t first = 0;  // step that defines the value
  std::uint32_t last = 0;   // last step that needs it (>= first)
  friend bool operator==(const lifetime&, const lifetime&) = default;
};

enum class io_lifetimes : std::uint8_t { method_bounds, as_used };

// Lifetimes of every value of the live nodes, indexed densely: the values of vertex v are
// [value_begin[v], value_begin[v + 1]) in output order.
struct lifetime_table {
  std::vector<std::size_t> value_begin;  // num_vertices + 1 entries
  std::vector<lifetime> spans;           // one per value; values of erased nodes stay {0, 0}
  std::vector<std::uint32_t> steps;      // steps_of(g, order)
  std::vector<vertex> output_nodes;      // the output node(s) met in the order (one in a valid graph)

  [[nodiscard]] std::size_t index(value_ref v) const noexcept { return value_begin[v.producer] + v.output; }
  [[nodiscard]] const lifetime& operator[](value_ref v) const noexcept { return spans[index(v)]; }
  [[nodiscard]] std::size_t value_count() const noexcept { return spans.size(); }
};

// Precondition: `order` is a topological order of g's live nodes (execution_order(g)); edges read
// outputs that exist (a structurally verified graph).
template <class G>
[[nodiscard]] lifetime_table compute_lifetimes(const G& g, const std::vector<vertex>& order,
                                               io_lifetimes io = io_lifetimes::method_bounds) {
  lifetime_table t;
  const std::size_t n = boost::num_vertices(g);
  t.value_begin.resize(n + 1);
  std::size_t total = 0;
  for (vertex v = 0; v < n; ++v) {
    t.value_begin[v] = total;
    total += output_count(g, v);
  }
  t.value_begin[n] = total;
  t.spans.assign(total, lifetime{});
  t.steps = steps_of(g, order);
  if (order.empty()) return t;
  const auto final_step = static_cast<std::uint32_t>(order.size() - 1);

  for (const vertex v : order) {
    const std::uint32_t step = t.steps[v];
    const std::size_t begin = t.value_begin[v], end = t.value_begin[v + 1];
    const bool from_start = io == io_lifetimes::method_bounds && role_of(g, v) == op_kind::input;
    for (std::size_t i = begin; i < end; ++i) t.spans[i] = {from_start ? 0 : step, step};
  }
  // Producers come before consumers in the order, so every span is initialised before it grows.
  for (const vertex v : order) {
    const bool is_output = role_of(g, v) == op_kind::output;
    if (is_output) t.output_nodes.push_back(v);
    const std::uint32_t step = io == io_lifetimes::method_bounds && is_output ? final_step : t.steps[v];
    for (const auto e : boost::make_iterator_range(boost::in_edges(v, g))) {
      lifetime& span = t.spans[t.value_begin[boost::source(e, g)] + edge_output(g, e)];
      span.last = std::max(span.last, step);
    }
  }
  return t;
}

}  // namespace devpass
