// devpass/pipeline/phase.hpp — what a phase reports, and the instrumentation that does nothing.
// Kept apart from instrumentation.hpp so that running a pipeline does not pull in the verifier,
// iostreams or <chrono> (compile time).
#pragma once

#include <cstddef>
#include <string_view>

#include "devpass/graph/graph.hpp"
#include "devpass/rules/context.hpp"

namespace devpass::pipeline {

// What every phase reports: the rewrite counters (zero for a phase that rewrites nothing). A pass
// may return a type derived from it with figures of its own (device propagation:
// propagation::phase_result); the pipeline hands the phase's own type to the instrumentation.
struct phase_result {
  rules::rewrite_counters counters;
};

struct no_instrumentation {
  template <class G>
  void before_phase(std::string_view, const G&) {}
  template <class G>
  void after_phase(std::string_view, const G&, const phase_result&) {}
};

}  // namespace devpass::pipeline
