// devpass/pipeline/phase.hpp — what a phase reports, and the instrumentation that does nothing.
// Kept apart from instrumentation.hpp so that running a pipeline does not pull in the verifier,
// iostreams or <chrono> (compile time).
#pragma once

#include <cstddef>
#include <string_view>

#include "devpass/graph/graph.hpp"
#include "devpass/graph/rewrite_counters.hpp"

namespace devpass::pipeline {

// What every phase reports: the rewrite counters (zero for a phase that rewrites nothing). A pass
// may return a type derived from it with figures of its own (device propagation:
// propagation::phase_result); the pipeline hands the phase's own type to the instrumentation.
struct phase_result {
  rewrite_counters counters;
  phase_result& operator+=(const phase_result& o) {
    counters += o.counters;
    return *this;
  }
};

// Adds a phase's result into a pipeline run's total: with the total's own operator+= where it
// takes that result (a pass's result type adding its own figures), else its counters.
template <class Total, class Result>
void add_result(Total& total, const Result& result) {
  if constexpr (requires { total += result; })
    total += result;
  else
    total.counters += result.counters;
}

// How a composite phase's run_reporting reports its constituents: each to the instrumentation
// under its own name (begin, then end with what it reported), and each result added into the
// composite's total. `run` is a constituent run as itself (a composite's literal path).
template <class Total, class G, class Instrumentation>
struct constituent_reporter {
  G& g;
  Instrumentation& instrumentation;
  Total total{};

  void begin(std::string_view name) { instrumentation.before_phase(name, g); }
  template <class Result>
  void end(std::string_view name, const Result& result) {
    instrumentation.after_phase(name, g, result);
    add_result(total, result);
  }
  template <class Phase, class Options>
  void run(const Phase& phase, const Options& o) {
    begin(Phase::name);
    end(Phase::name, phase.run(g, o));
  }
  // A constituent whose work another one did: reported all the same, with nothing done, so that
  // the instrumentation sees the phases of a literal run.
  void done_by_another(std::string_view name) {
    begin(name);
    end(name, Total{});
  }
};

struct no_instrumentation {
  static constexpr bool inspects_graph() { return false; }
  template <class G>
  void before_phase(std::string_view, const G&) {}
  template <class G>
  void after_phase(std::string_view, const G&, const phase_result&) {}
};

// Whether an instrumentation looks at the graph between phases (prints it, verifies it). A
// composite phase that fuses its constituents (propagation::executorch_copies) materialises the
// graph only at its end, so it runs them one by one for an instrumentation that does: one that
// says nothing is taken to look. `bool inspects_graph() const` answers (may be static constexpr).
template <class Instrumentation>
[[nodiscard]] constexpr bool inspects_graph(const Instrumentation& instrumentation) {
  if constexpr (requires { instrumentation.inspects_graph(); })
    return instrumentation.inspects_graph();
  else
    return true;
}

}  // namespace devpass::pipeline
