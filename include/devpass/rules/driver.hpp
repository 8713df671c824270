// devpass/rules/driver.hpp — applies a rule table to a graph until nothing matches.
//
// Worklist, deterministic: every live node in vertex order, then the nodes actions asked to
// revisit, first in first out. At a node, the rules are tried in table order, each at every site
// of its root form (the node's value 0; each output; each input slot, in order); the first rule
// whose pattern and guard match is applied, and the node is tried again at once until no rule
// applies; the other nodes the action touched go on the worklist. Captures are
// written to a scratch set and the rule only sees them once its whole pattern matched.
// Termination: a shrinking rule removes a node each time; every other rule may be applied at most
// `bound` times in all (default: 4 * (nodes + edges) + 64 of the input graph). Reaching the bound
// throws rewrite_error naming the rule: never a silent stop. Erased nodes are compacted at the end.
#pragma once

#include <algorithm>
#include <array>
#include <span>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "devpass/rules/context.hpp"
#include "devpass/rules/rule.hpp"

namespace devpass::rules {

class rewrite_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

namespace detail {
template <class Root>
struct sites {
  // A plain pattern: one site, value 0 of the node.
  template <class Caps, class Fire>
  static bool each(const graph& g, vertex v, std::size_t& tried, Fire&& fire) {
    Caps caps;
    ++tried;
    return Root{}.match(g, value_ref{v, 0}, caps) && fire(caps);
  }
};
template <class P>
struct sites<pattern::each_output_t<P>> {
  template <class Caps, class Fire>
  static bool each(const graph& g, vertex v, std::size_t& tried, Fire&& fire) {
    const auto outputs = static_cast<std::uint32_t>(g[v].outputs.size());
    for (std::uint32_t k = 0; k < outputs; ++k) {
      Caps caps;
      ++tried;
      if (P{}.match(g, value_ref{v, k}, caps) && fire(caps)) return true;
    }
    return false;
  }
};
template <class C, class O>
struct sites<pattern::on_use_t<C, O>> {
  template <class Caps, class Fire>
  static bool each(const graph& g, vertex v, std::size_t& tried, Fire&& fire) {
    {
      Caps probe;
      if (!C{}.match(g, value_ref{v, 0}, probe)) return false;  // the consumer does not match
    }
    // The operands by slot, read in one pass over the in-edges (on the stack for most nodes).
    constexpr vertex unconnected = static_cast<vertex>(-1);
    const std::uint32_t arity = g[v].arity;
    std::array<value_ref, 8> on_stack;
    std::vector<value_ref> on_heap;
    const std::span<value_ref> slot_values =
        arity <= on_stack.size() ? std::span<value_ref>(on_stack).first(arity) : (on_heap.resize(arity), std::span<value_ref>(on_heap));
    std::fill(slot_values.begin(), slot_values.end(), value_ref{unconnected, 0});
    for (const auto e : boost::make_iterator_range(boost::in_edges(v, g)))
      if (g[e].slot < arity) slot_values[g[e].slot] = value_ref{boost::source(e, g), g[e].output};
    for (std::uint32_t slot = 0; slot < arity; ++slot) {
      if (slot_values[slot].producer == unconnected) continue;
      Caps caps;
      ++tried;
      if (!C{}.match(g, value_ref{v, 0}, caps) || !O{}.match(g, slot_values[slot], caps)) continue;
      caps.site = devpass::use{v, slot};
      if (fire(caps)) return true;  // the graph changed: the caller looks at v afresh
    }
    return false;
  }
};
}  // namespace detail

struct apply_options {
  std::size_t bound = 0;  // 0: 4 * (nodes + edges) + 64 of the input graph
  bool compact_at_end = true;
};

// Applies `table` to ctx.g until no rule matches. Returns the counters of this run (also added
// to ctx.counters).
template <class... Rules, class Ctx>
rewrite_counters apply_rules(const rule_table<Rules...>& table, Ctx& ctx, apply_options options = {}) {
  graph& g = ctx.g;
  const rewrite_counters before = ctx.counters;
  const std::size_t bound = options.bound ? options.bound : 4 * (boost::num_vertices(g) + boost::num_edges(g)) + 64;
  std::array<std::size_t, sizeof...(Rules)> applied{};

  std::vector<vertex> queue;
  std::vector<char> queued;
  queue.reserve(boost::num_vertices(g) * 2);
  queued.assign(boost::num_vertices(g), 0);
  for (const auto v : boost::make_iterator_range(boost::vertices(g)))
    if (!g[v].erased) queue.push_back(v), queued[v] = 1;

  // Tries the table at v once; true when a rule was applied.
  const auto visit = [&](vertex v) {
    bool done = false;
    std::size_t index = 0;
    std::apply(
        [&](const auto&... rule) {
          (void)((done = [&](const auto& r, std::size_t i) {
                    using rule_t = std::decay_t<decltype(r)>;
                    using caps_t = pattern::capture_set<typename rule_t::binds>;
                    const bool fired = detail::sites<typename rule_t::root_type>::template each<caps_t>(
                        g, v, ctx.counters.matches_tried, [&](const caps_t& caps) {
                          if (!r.guard.test(ctx, caps)) return false;
                          r.action.apply(ctx, caps);
                          return true;
                        });
                    if (fired) {
                      ++ctx.counters.rewrites;
                      if (!rule_t::shrinks && ++applied[i] > bound)
                        throw rewrite_error("rule `" + r.describe() + "` was applied " + std::to_string(applied[i]) +
                                            " times without reaching a fixed point (bound " + std::to_string(bound) + ")");
                    }
                    return fired;
                  }(rule, index++)) ||
                 ...);
        },
        table.rules);
    return done;
  };

  for (std::size_t head = 0; head < queue.size(); ++head) {
    const vertex v = queue[head];
    queued[v] = 0;
    // After a rewrite the node is looked at again at once, while its edges are in cache, until
    // no rule applies (the bound above still caps a rule that never stops).
    while (!g[v].erased && visit(v)) {
      for (const vertex touched : ctx.revisit) {
        if (touched == v) continue;
        if (touched >= queued.size()) queued.resize(boost::num_vertices(g), 0);
        if (!queued[touched] && !g[touched].erased) queue.push_back(touched), queued[touched] = 1;
      }
      ctx.revisit.clear();
    }
    ctx.revisit.clear();
  }
  if (options.compact_at_end) compact(g);
  rewrite_counters delta = ctx.counters;
  delta.matches_tried -= before.matches_tried;
  delta.rewrites -= before.rewrites;
  delta.nodes_added -= before.nodes_added;
  delta.nodes_removed -= before.nodes_removed;
  return delta;
}

}  // namespace devpass::rules
