// devpass/rules/rewrite_driver.hpp — applies a rule table to a graph (any model of graph_model.hpp) until
// nothing matches.
//
// Worklist, deterministic: a sweep over every live node in vertex order. At a node, the rules are
// tried in table order, each at every site of its root form (the node's value 0; each output;
// each input slot, in order); the first rule whose pattern and guard match is applied, and the
// node is tried again at once until no rule applies. The other nodes the actions touched are
// then settled the same way, first touched first, before the sweep moves on (while they are in
// cache) — except nodes the sweep has not reached yet, which wait for it. An on_use rule tests
// the guard conjuncts that read only consumer captures once per node, before it reads the
// operands (guard_split.hpp); the operands are read once per visit for all on_use rules.
// Captures are written to a scratch set and the rule only sees them once its whole pattern
// matched. Each rule is tried by a function of that rule's types alone (detail::try_rule), which
// the optimiser may inline in tables of up to 16 rules and which larger tables call: compile time
// grows linearly with the number of rules (docs/performance.md). The sweep itself is one function
// per graph model (detail::sweep), shared by every table, which hands it its visit. When every
// root of the table tests its node's op, the sweep passes the nodes none of them admits without
// a visit, counting the tries the rules would have made there (root_filter.hpp), and so are the
// touched nodes none admits; a context with a trace set visits every node.
// Termination: a shrinking rule removes a node each time; every other rule may be applied at most
// `bound` times in all (default: 4 * (nodes + edges) + 64 of the input graph). Reaching the bound
// throws rewrite_error naming the rule (by its place in the table; as written from a context
// with tracing::on): never a silent stop. Erased nodes are compacted at the end
// (when the sweep met one or an action removed one through ctx.remove, as erase does).
#pragma once

#include <algorithm>
#include <array>
#include <limits>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "devpass/graph/concat.hpp"
#include "devpass/rules/context.hpp"
#include "devpass/rules/guard_split.hpp"
#include "devpass/rules/root_filter.hpp"
#include "devpass/rules/rule.hpp"
#include "devpass/rules/trace.hpp"

namespace devpass::rules {

class rewrite_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

namespace detail {
// The operands of the node being visited, by slot: read in one pass over its in-edges the first
// time an on_use rule needs them, then shared by every on_use rule of the table until a rule
// fires (the driver clears the cache then: the graph changed).
class operand_cache {
 public:
  static constexpr vertex unconnected = static_cast<vertex>(-1);
  void clear() { filled_ = false; }
  template <class G>
  std::span<const value_ref> of(const G& g, vertex v) {
    if (filled_) return slots_;
    filled_ = true;
    const std::uint32_t arity = arity_of(g, v);
    slots_ = arity <= on_stack_.size() ? std::span<value_ref>(on_stack_).first(arity)
                                       : (on_heap_.resize(arity), std::span<value_ref>(on_heap_));
    std::fill(slots_.begin(), slots_.end(), value_ref{unconnected, 0});
    for (const auto e : boost::make_iterator_range(boost::in_edges(v, g)))
      if (edge_slot(g, e) < arity) slots_[edge_slot(g, e)] = value_ref{boost::source(e, g), edge_output(g, e)};
    return slots_;
  }

 private:
  bool filled_ = false;
  std::array<value_ref, 8> on_stack_;  // most nodes have few operands: no allocation
  std::vector<value_ref> on_heap_;
  std::span<value_ref> slots_;
};

// One site for the trace: why the pattern does not match, else why the guard is false, else
// "applies". True when the rule would apply there.
template <class P, class Caps, class Guard, class Ctx, class Report>
bool explain_site(const Guard& guard, const Ctx& ctx, value_ref value, Caps caps, std::string_view site,
                  Report& report) {
  pattern::reason why;
  if (!P{}.match(ctx.g, value, caps, why)) {
    report(site, why.text.value_or("no match"));
    return false;
  }
  if (auto no = pattern::explain_guard(guard, ctx, caps)) {
    report(site, *no);
    return false;
  }
  report(site, "applies");
  return true;
}

// Where a root form is tried at node v. `early(caps)` tests the guard conjuncts that read only the
// captures in early_caps (see guard_split.hpp); `fire(caps)` tests the rest and applies the rule.
template <class Root>
struct sites {
  using early_caps = pattern::type_list<>;
  // A plain pattern: one site, value 0 of the node.
  template <class Caps, class G, class Early, class Fire>
  static bool each(const G& g, vertex v, std::size_t& tried, operand_cache&, Early&& early, Fire&& fire) {
    Caps caps;
    ++tried;
    return Root{}.match(g, value_ref{v, 0}, caps) && early(caps) && fire(caps);
  }
  // The same sites, for the trace: report(site, why) for each until one would apply.
  template <class Caps, class Guard, class Ctx, class Report>
  static void explain(const Guard& guard, const Ctx& ctx, vertex v, Report&& report) {
    explain_site<Root, Caps>(guard, ctx, value_ref{v, 0}, Caps{}, "value 0", report);
  }
};

template <class P>
struct sites<pattern::each_output_t<P>> {
  using early_caps = pattern::type_list<>;
  template <class Caps, class G, class Early, class Fire>
  static bool each(const G& g, vertex v, std::size_t& tried, operand_cache&, Early&& early, Fire&& fire) {
    const std::uint32_t outputs = output_count(g, v);
    for (std::uint32_t k = 0; k < outputs; ++k) {
      Caps caps;
      ++tried;
      if (P{}.match(g, value_ref{v, k}, caps) && early(caps) && fire(caps)) return true;
    }
    return false;
  }
  template <class Caps, class Guard, class Ctx, class Report>
  static void explain(const Guard& guard, const Ctx& ctx, vertex v, Report&& report) {
    const std::uint32_t outputs = output_count(ctx.g, v);
    for (std::uint32_t k = 0; k < outputs; ++k)
      if (explain_site<P, Caps>(guard, ctx, value_ref{v, k}, Caps{}, "output " + std::to_string(k), report)) return;
  }
};
template <class C, class O>
struct sites<pattern::on_use_t<C, O>> {
  using early_caps = typename C::binds;  // what the consumer binds is the same at every slot
  template <class Caps, class G, class Early, class Fire>
  static bool each(const G& g, vertex v, std::size_t& tried, operand_cache& operands, Early&& early, Fire&& fire) {
    Caps consumer;
    if (!C{}.match(g, value_ref{v, 0}, consumer) || !early(consumer)) return false;
    const std::span<const value_ref> slot_values = operands.of(g, v);
    for (std::uint32_t slot = 0; slot < slot_values.size(); ++slot) {
      if (slot_values[slot].producer == operand_cache::unconnected) continue;
      Caps caps = consumer;
      ++tried;
      if (!O{}.match(g, slot_values[slot], caps)) continue;
      caps.site = devpass::use{v, slot};
      if (fire(caps)) return true;  // the graph changed: the caller looks at v afresh
    }
    return false;
  }
  template <class Caps, class Guard, class Ctx, class Report>
  static void explain(const Guard& guard, const Ctx& ctx, vertex v, Report&& report) {
    Caps consumer;
    pattern::reason why;
    if (!C{}.match(ctx.g, value_ref{v, 0}, consumer, why)) {
      report("node", why.text.value_or("no match"));
      return;
    }
    const std::vector<value_ref> slot_values = operands(ctx.g, v);
    for (std::uint32_t slot = 0; slot < slot_values.size(); ++slot) {
      Caps caps = consumer;
      caps.site = devpass::use{v, slot};
      if (explain_site<O, Caps>(guard, ctx, slot_values[slot], caps, "input " + std::to_string(slot), report)) return;
    }
  }
};

// A rule's guard split into what its root form can test early and the rest (guard_split.hpp).
template <class Rule>
constexpr auto split_rule_guard(const Rule& r) {
  return split<typename sites<typename Rule::root_type>::early_caps>(r.guard);
}
template <class Rule>
using split_guard_of = decltype(split_rule_guard(std::declval<const Rule&>()));

// Every rule's guard split once for a whole run: element I is rule I's split guard. Rule I and
// its split guard are element I of a flat tuple (rule.hpp): O(1) per rule to instantiate. The
// table is taken whole because clang cannot deduce Rules through the flat_tuple alias.
template <class... Rules>
auto split_guards(const rule_table<Rules...>& table) {  // (a decltype return type would not mangle)
  const auto& rules = table.rules;
  return [&]<std::size_t... I>(std::index_sequence<I...>) {
    return flat_tuple<split_guard_of<Rules>...>{{split_rule_guard(element<I, Rules>(rules))}...};
  }
  (std::index_sequence_for<Rules...>{});
}

// The bound error, whatever names the rule: "rule <rule> was applied N times ...<hint>".
[[noreturn, gnu::cold]] inline void throw_bound_reached(std::string_view rule, std::size_t applied, std::size_t bound,
                                                        std::string_view hint) {
  throw rewrite_error(
      devpass::concat({"rule ", rule, " was applied ", std::to_string(applied),
                       " times without reaching a fixed point (bound ", std::to_string(bound), ")", hint}));
}
[[noreturn, gnu::cold]] inline void throw_no_fixed_point(const std::string& rule, std::size_t applied,
                                                         std::size_t bound) {
  throw_bound_reached(devpass::concat({"`", rule, "`"}), applied, bound, "");
}
// The same from a context with tracing::off, which compiles no description of its rules (their
// descriptions were much of the code of a TU running device propagation:
// docs/performance.md#compile-time): the rule is named by its place in the table.
[[noreturn, gnu::cold]] inline void throw_no_fixed_point_untraced(std::size_t index, std::size_t rules,
                                                                  std::size_t applied, std::size_t bound) {
  throw_bound_reached(devpass::concat({std::to_string(index + 1), " (of ", std::to_string(rules), " in its table)"}),
                      applied, bound, "; a context with rules::tracing::on names it as written");
}

// Reports rule `r` at node v to ctx.trace (trace.hpp), after the driver tried it. A rule that
// applied was reported at its sites before the rewrite changed them, so this walks the sites of a
// rule that did not fire, and names the one that did.
template <class Rule, class Ctx>
[[gnu::cold, gnu::noinline]] void trace_rule(const Rule& r, const Ctx& ctx, vertex v, bool fired) {
  const rule_trace& trace = *ctx.trace;
  const std::string text = r.describe();
  if (!trace.only.empty() && text.find(trace.only) == std::string::npos) return;
  const std::string node = v < boost::num_vertices(ctx.g) ? display_name(ctx.g, v) : std::string();
  if (fired) {
    trace.report(trace.user, text, node, "", "applied");
    return;
  }
  using caps_t = pattern::capture_set<typename Rule::binds>;
  sites<typename Rule::root_type>::template explain<caps_t>(
      r.guard, ctx, v,
      [&](std::string_view site, std::string_view why) { trace.report(trace.user, text, node, site, why); });
}

// Tries rule `r` (rule `index` of a table of `rules`), its guard split into `guard`, at every site
// of v; true when it was applied.
// A function of this rule's types only, not a lambda in apply_rules: a lambda there is named
// after the whole table, so N rules made N functions whose names are O(N) long, O(N^2) to
// mangle, emit and link (docs/performance.md, "Compile time").
template <class Rule, class Guard, class Ctx>
bool try_rule(const Rule& r, const Guard& guard, Ctx& ctx, vertex v, operand_cache& operands, std::size_t& applied,
              std::size_t bound, std::size_t index, std::size_t rules) {
  using caps_t = pattern::capture_set<typename Rule::binds>;
  const bool fired = sites<typename Rule::root_type>::template each<caps_t>(
      ctx.g, v, ctx.counters.matches_tried, operands, [&](const caps_t& caps) { return guard.early.test(ctx, caps); },
      [&](const caps_t& caps) {
        if (!guard.later.test(ctx, caps)) return false;
        r.action.apply(ctx, caps);
        operands.clear();
        return true;
      });
  constexpr bool traced = requires { requires Ctx::traced; };  // tracing::off: no explanations compiled
  if constexpr (traced)
    if (ctx.trace) [[unlikely]]
      trace_rule(r, ctx, v, fired);
  if (fired) {
    ++ctx.counters.rewrites;
    if (!Rule::shrinks && ++applied > bound) {
      if constexpr (traced)
        throw_no_fixed_point(r.describe(), applied, bound);
      else
        throw_no_fixed_point_untraced(index, rules, applied, bound);
    }
  }
  return fired;
}
// The same, never inlined: for tables of more than inline_rules_max rules.
template <class Rule, class Guard, class Ctx>
[[gnu::noinline]] bool try_rule_out_of_line(const Rule& r, const Guard& guard, Ctx& ctx, vertex v,
                                            operand_cache& operands, std::size_t& applied, std::size_t bound,
                                            std::size_t index, std::size_t rules) {
  return try_rule(r, guard, ctx, v, operands, applied, bound, index, rules);
}
// Up to this many rules, a table's rules may be inlined into the driver loop (the propagation
// tables have 1 to 3). A larger table calls one function per rule: inlined, its N rules make one
// function of size O(N), and an optimiser's cost grows faster than the size of the function
// (measured in docs/performance.md, "Compile time").
inline constexpr std::size_t inline_rules_max = 16;
}  // namespace detail

struct apply_options {
  std::size_t bound = 0;  // 0: 4 * (nodes + edges) + 64 of the input graph
  bool compact_at_end = true;
  // Where a fused path hands a graph over mid-sweep: the sweep visits the nodes from `resume_at`
  // up to `sweep_end` (the nodes the fused sweep started with), the nodes outside that range
  // counting as settled, with nothing left to visit. By default every node there at the start.
  vertex resume_at = 0;
  vertex sweep_end = std::numeric_limits<vertex>::max();
};

namespace detail {
// The sweep every table runs, apart from how a node is tried: `visit(v)` tries the table at v
// once and is true when a rule was applied; the rule's action left the nodes it touched in
// `revisit`. A function of the graph model alone, so a program's tables share one instantiation
// of it (a copy per table was a fifth of what apply_rules compiled into: docs/performance.md); a
// table calls into it with its own visit, one indirect call per node visited.
// The sweep covers the nodes there at the start in vertex order, those in [first, end) when a
// fused path hands the graph over (apply_options). The nodes the table's root filter does not
// admit (root_filter.hpp) it passes in a loop of its own, with no visit, adding their tries to
// `tries`; a touched node it does not admit is passed the same way. Returns true when it met an erased node.
template <class G>
bool sweep(G& g, std::vector<vertex>& revisit, bool (*visit)(void*, vertex), void* table_state,
           const root_filter<G>& filter, std::size_t& tries, vertex first, vertex end) {
  const std::size_t swept = std::min<std::size_t>(end, boost::num_vertices(g));
  // The nodes after the sweep's place `at`, up to `swept`, wait for it; on_soon[v]: v waits on
  // `soon`. Whatever else a rewrite touches was passed (or is new) and goes on `soon`.
  vertex at = first;
  std::vector<char> on_soon(swept, 0);
  bool tombstones = false;
  std::vector<vertex> soon;
  // Tries v until no rule applies, queuing the nodes its rewrites touched.
  const auto settle = [&](vertex v) {
    on_soon[v] = 0;
    // After a rewrite the node is looked at again at once, while its edges are in cache, until
    // no rule applies (the bound still caps a rule that never stops).
    while (!is_erased(g, v) && visit(table_state, v)) {
      for (const vertex touched : revisit) {
        if (touched == v || (touched > at && touched < swept)) continue;
        if (touched >= on_soon.size()) on_soon.resize(boost::num_vertices(g), 0);
        if (!on_soon[touched] && !is_erased(g, touched)) soon.push_back(touched), on_soon[touched] = 1;
      }
      revisit.clear();
    }
    revisit.clear();
  };
  for (; at < swept; ++at) {
    // Before the call into the table: most nodes are no rule's root.
    if (filter.active() && (at = filter.skip(g, at, swept, tries)) == swept) break;
    if (is_erased(g, at)) {
      tombstones = true;
      continue;
    }
    settle(at);
    // The touched nodes are visited now, while they are in cache, not after the whole sweep;
    // those no root admits are passed as the sweep passes them.
    for (std::size_t next = 0; next < soon.size(); ++next) {
      const vertex touched = soon[next];
      if (filter.active() && !is_erased(g, touched) && filter.passes(g, touched, tries)) {
        on_soon[touched] = 0;
        continue;
      }
      settle(touched);
    }
    soon.clear();
  }
  return tombstones;
}
}  // namespace detail

// Applies `table` to ctx.g until no rule matches. Returns the counters of this run (also added
// to ctx.counters).
template <class... Rules, class Ctx>
rewrite_counters apply_rules(const rule_table<Rules...>& table, Ctx& ctx, apply_options options = {}) {
  auto& g = ctx.g;
  static_assert(check_graph_model<std::remove_reference_t<decltype(g)>>());
  const rewrite_counters before = ctx.counters;
  const std::size_t bound = options.bound ? options.bound : 4 * (boost::num_vertices(g) + boost::num_edges(g)) + 64;
  std::array<std::size_t, sizeof...(Rules)> applied{};

  const auto guards = detail::split_guards(table);  // once for the whole run (guard_split.hpp)

  detail::operand_cache operands;
  // Tries the table at v once, rules in order; true when a rule was applied.
  auto visit = [&](vertex v) {
    operands.clear();
    return [&]<std::size_t... I>(std::index_sequence<I...>) {
      using detail::element;
      if constexpr (sizeof...(Rules) <= detail::inline_rules_max)
        return (detail::try_rule(element<I, Rules>(table.rules), element<I, detail::split_guard_of<Rules>>(guards), ctx,
                                 v, operands, applied[I], bound, I, sizeof...(Rules)) ||
                ...);
      else
        return (detail::try_rule_out_of_line(element<I, Rules>(table.rules),
                                             element<I, detail::split_guard_of<Rules>>(guards), ctx, v, operands,
                                             applied[I], bound, I, sizeof...(Rules)) ||
                ...);
    }
    (std::index_sequence_for<Rules...>{});
  };
  using visit_t = decltype(visit);
  using graph_t = std::remove_reference_t<decltype(g)>;
  auto filter = detail::root_filter<graph_t>::template of<typename Rules::root_type...>();
  if constexpr (requires { requires Ctx::traced; })
    if (ctx.trace) filter = {};  // the trace reports every rule at every node
  const bool tombstones = detail::sweep(
      g, ctx.revisit, [](void* state, vertex v) { return (*static_cast<visit_t*>(state))(v); }, &visit, filter,
      ctx.counters.matches_tried, options.resume_at, options.sweep_end);
  if (options.compact_at_end && (tombstones || ctx.counters.nodes_removed != before.nodes_removed)) compact(g);
  return ctx.counters.since(before);
}

}  // namespace devpass::rules
