// devpass/rules/single_pass.hpp — the single-pass driver mode: a table whose rules can never
// enable one another runs as one sweep, each rule tried once at each site, with no retry, no
// settling of touched nodes, no bound.
//
//   single_pass(make_table(...))   the table, checked at compile time (independence.hpp); a table
//                                  whose rules may enable one another does not compile, and the
//                                  error names the pair
//   apply_rules(single, ctx)       the sweep: every node there at the start, in vertex order; at a
//                                  node the rules in table order, each at all of its sites
//
// Why the result is the worklist driver's (rewrite_driver.hpp), graph and counters alike but for
// matches_tried: the worklist tries the same (rule, site) pairs in the same order at a node's
// first visit, on the same graph, and what it does besides — trying a node again after a rewrite,
// settling the nodes an action touched, visiting the nodes it made — only finds a match that a
// rewrite enabled. No rewrite of an independent table enables one. The sweep reads the graph
// afresh after every rewrite (operands, the consumer's guard), as the worklist's retry would.
// matches_tried counts the tries it made: fewer, since it makes none of the retries.
#pragma once

#include <cstddef>
#include <type_traits>
#include <utility>

#include "devpass/rules/independence.hpp"
#include "devpass/rules/rewrite_driver.hpp"

namespace devpass::rules {

template <class... Rules>
class single_pass_table;
template <class... Rules>
constexpr single_pass_table<Rules...> single_pass(rule_table<Rules...> table);

// A table single_pass() has checked: only it makes one.
template <class... Rules>
class single_pass_table {
 public:
  static constexpr std::size_t size = sizeof...(Rules);
  [[nodiscard]] constexpr const rule_table<Rules...>& rules() const { return table_; }

 private:
  constexpr explicit single_pass_table(rule_table<Rules...> table) : table_(table) {}
  friend constexpr single_pass_table single_pass<Rules...>(rule_table<Rules...>);
  rule_table<Rules...> table_;
};

namespace detail {
// Instantiated only for a pair that breaks independence: the pair is in its name.
template <std::size_t Enabler, std::size_t Enabled>
struct rule_may_enable_rule {
  static_assert(Enabler == 0,
                "devpass: single_pass: a rule of this table may enable a rule (itself or another) that one sweep "
                "would not try again; rule_may_enable_rule<enabler, enabled> names the pair (from 1, in table order); "
                "keep this table on apply_rules' worklist");
};
}  // namespace detail

template <class... Rules>
constexpr single_pass_table<Rules...> single_pass(rule_table<Rules...> table) {
  constexpr auto pair = independence::first_enabling_pair<Rules...>();
  if constexpr (pair.has_value()) (void)detail::rule_may_enable_rule<pair->enabler, pair->enabled>{};
  return single_pass_table<Rules...>(table);
}

namespace detail {
template <class Root>
struct is_on_use : std::false_type {};
template <class C, class O>
struct is_on_use<pattern::on_use_t<C, O>> : std::true_type {
  using consumer = C;
  using operand = O;
};
template <class Root>
struct is_each_output : std::false_type {};
template <class P>
struct is_each_output<pattern::each_output_t<P>> : std::true_type {
  using pattern = P;
};

// Rule `r` at every site of v, once each, in the worklist's site order; stops when v is erased.
// `dirty` is set when it rewrote: the caller's operand cache and later guards then read afresh.
template <class Rule, class Guard, class Ctx>
void try_rule_at_every_site(const Rule& r, const Guard& guard, Ctx& ctx, vertex v, operand_cache& operands) {
  using caps_t = pattern::capture_set<typename Rule::binds>;
  using root = typename Rule::root_type;
  auto& g = ctx.g;
  const auto fire = [&](const caps_t& caps) {
    if (!guard.later.test(ctx, caps)) return false;
    r.action.apply(ctx, caps);
    ++ctx.counters.rewrites;
    operands.clear();
    ctx.revisit.clear();  // nothing to settle: no rewrite of this table enables a match
    return true;
  };
  if constexpr (is_on_use<root>::value) {
    using consumer_pattern = typename is_on_use<root>::consumer;
    using operand_pattern = typename is_on_use<root>::operand;
    caps_t consumer;
    const auto consumer_matches = [&] {
      consumer = caps_t{};
      return consumer_pattern{}.match(g, value_ref{v, 0}, consumer) && guard.early.test(ctx, consumer);
    };
    if (!consumer_matches()) return;
    for (std::uint32_t slot = 0; slot < arity_of(g, v); ++slot) {
      const value_ref value = operands.of(g, v)[slot];
      if (value.producer == operand_cache::unconnected) continue;
      caps_t caps = consumer;
      ++ctx.counters.matches_tried;
      if (!operand_pattern{}.match(g, value, caps)) continue;
      caps.site = devpass::use{v, slot};
      if (fire(caps) && (is_erased(g, v) || !consumer_matches())) return;
    }
  } else if constexpr (is_each_output<root>::value) {
    using value_pattern = typename is_each_output<root>::pattern;
    for (std::uint32_t k = 0; k < output_count(g, v) && !is_erased(g, v); ++k) {
      caps_t caps;
      ++ctx.counters.matches_tried;
      if (value_pattern{}.match(g, value_ref{v, k}, caps) && guard.early.test(ctx, caps)) fire(caps);
    }
  } else {
    caps_t caps;
    ++ctx.counters.matches_tried;
    if (root{}.match(g, value_ref{v, 0}, caps) && guard.early.test(ctx, caps)) fire(caps);
  }
}
}  // namespace detail

// One sweep of an independent table over ctx.g. Returns the counters of this run (also added to
// ctx.counters). Erased nodes are compacted at the end, as apply_rules does.
template <class... Rules, class Ctx>
rewrite_counters apply_rules(const single_pass_table<Rules...>& single, Ctx& ctx, apply_options options = {}) {
  auto& g = ctx.g;
  static_assert(check_graph_model<std::remove_reference_t<decltype(g)>>());
  const rewrite_counters before = ctx.counters;
  const auto guards = detail::split_guards(single.rules());

  detail::operand_cache operands;
  bool tombstones = false;
  for (vertex v = 0, swept = boost::num_vertices(g); v < swept; ++v) {
    if (is_erased(g, v)) {
      tombstones = true;
      continue;
    }
    operands.clear();
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      using detail::element;
      ((is_erased(g, v)
            ? void()
            : detail::try_rule_at_every_site(element<I, Rules>(single.rules().rules),
                                             element<I, detail::split_guard_of<Rules>>(guards), ctx, v, operands)),
       ...);
    }
    (std::index_sequence_for<Rules...>{});
  }
  if (options.compact_at_end && (tombstones || ctx.counters.nodes_removed != before.nodes_removed)) compact(g);
  return ctx.counters.since(before);
}

}  // namespace devpass::rules
