// devpass/pipeline/table_phase.hpp — phases declared in one line: a rule table (table_phase) or
// one loop over the graph (loop_phase), with a name, what it expects and provides, and when it
// runs (a `When` type: compiled_in<Policy> and, optionally, active(options); always_runs by
// default):
//
//   struct fold_bounces : pipeline::table_phase<"fold-bounces", fold_table,
//                                               pipeline::type_list<capabilities::copies_explicit>,
//                                               pipeline::type_list<>> {};
//
// The rules see the options the pipeline runs with, as they are: `ctx.options` is the caller's
// own struct (derived from propagate_options or not), so a guard reads the team's own threshold.
// An options wrapper may name the type its rules see instead (`using rule_options = ...`), as
// device propagation's do, so that one rule table is compiled once for all of them.
#pragma once

#include <string_view>
#include <type_traits>

#include "devpass/graph/copy_census.hpp"
#include "devpass/pattern/fixed_string.hpp"
#include "devpass/pipeline/phase.hpp"
#include "devpass/rules/context.hpp"
#include "devpass/rules/rewrite_driver.hpp"

namespace devpass::pipeline {

// A phase that is always compiled in and always runs.
struct always_runs {
  template <class Policy>
  static constexpr bool compiled_in = true;
};

// What every one-line phase declares: its name, what it expects and provides (pipeline.hpp
// checks the order), and `When`: compiled_in<Policy> and active(options).
template <pattern::fixed_string Name, class Expects, class Provides, class When = always_runs>
struct declared_phase : When {
  static constexpr std::string_view name = Name.view();
  using expects = Expects;
  using provides = Provides;
};

// What a rule-table phase reports: the rewrite counters and the copies it made. A phase that
// only rewrites reports zero copies.
struct table_result : phase_result {
  copy_census copies_made;  // the copy nodes the phase made (some may be gone by its end)
  // What the phase did to the graph itself, for a census after a pipeline run without counting
  // the graph again (device propagation adds copies_kept to the census before it unless some
  // phase removed nodes). A rule table's are its copies_made and whether it removed any node.
  copy_census copies_kept;
  bool removed_nodes = false;
  [[nodiscard]] std::size_t copies_inserted() const noexcept { return counters.nodes_added; }
  [[nodiscard]] std::size_t copies_elided() const noexcept { return counters.nodes_removed; }
  // Several phases' results together (a pipeline run's total, pipeline.hpp).
  table_result& operator+=(const table_result& o) {
    phase_result::operator+=(o);
    copies_made += o.copies_made;
    copies_kept += o.copies_kept;
    removed_nodes = removed_nodes || o.removed_nodes;
    return *this;
  }
};

// A rule-table run's result: its counters and what its context made (a table only changes the
// graph through the context, so those are also what it did to the graph).
template <class Context>
table_result table_result_of(const rules::rewrite_counters& counters, const Context& ctx) {
  table_result result;
  result.counters = counters;
  result.copies_made = ctx.copies_made;
  result.copies_kept = ctx.copies_made;
  result.removed_nodes = counters.nodes_removed != 0;
  return result;
}

namespace detail {
template <class Options>
struct rule_options_of {
  using type = Options;
};
template <class Options>
requires requires { typename Options::rule_options; }
struct rule_options_of<Options> {
  using type = typename Options::rule_options;
};
}  // namespace detail
// The options type a rule table's context is typed with: Options, or Options::rule_options.
template <class Options>
using rule_options_t = typename detail::rule_options_of<Options>::type;

// The rewrite state a phase makes nodes with: from a seed the options carry
// (`options.rewrite_seed()`: device propagation's input sweep), else made afresh.
template <class G, class Options>
rewrite_state_t<G> rewrite_state_for(G& g, const Options& options) {
  if constexpr (requires { options.rewrite_seed(); })
    return make_rewrite_state(g, options.rewrite_seed());
  else
    return make_rewrite_state<G>(g, nullptr);
}

// Runs one rule table over g with the options the pipeline runs with, and reports its counters
// and the copies it made. Options that carry `trace` (a rules::rule_trace*) run it traced.
template <class Table, class G, class Options>
table_result run_table(const Table& table, G& g, const Options& options) {
  constexpr bool traced = requires { options.trace; };
  rules::rewrite_context<rule_options_t<Options>, G, traced ? rules::tracing::on : rules::tracing::off> ctx(
      g, options, rewrite_state_for(g, options));
  if constexpr (traced) ctx.trace = options.trace;
  const rules::rewrite_counters counters = rules::apply_rules(table, ctx);
  return table_result_of(counters, ctx);
}

// A phase that runs one rule table, declared in one line: its name, its table, what it expects
// and provides, and when it runs.
template <pattern::fixed_string Name, const auto& Table, class Expects, class Provides, class When = always_runs>
struct table_phase : declared_phase<Name, Expects, Provides, When> {
  template <class G, class Options>
  table_result run(G& g, const Options& o) const {
    return run_table(Table, g, o);
  }
};

// A phase that is one loop over the graph, declared like table_phase: `Loop` is a type whose
// `void operator()(G&) const` does the work, on any graph model. It rewrites nothing the rule
// driver counts, so it reports zero counters and no copies.
template <pattern::fixed_string Name, class Loop, class Expects, class Provides, class When = always_runs>
struct loop_phase : declared_phase<Name, Expects, Provides, When> {
  template <class G, class Options>
  table_result run(G& g, const Options&) const {
    Loop{}(g);
    return {};
  }
};

}  // namespace devpass::pipeline
