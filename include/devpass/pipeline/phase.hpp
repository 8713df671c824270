// devpass/pipeline/phase.hpp — what a phase reports, and the instrumentation that does nothing.
// Kept apart from instrumentation.hpp so that running a pipeline does not pull in the verifier,
// iostreams or <chrono> (compile time).
#pragma once

#include <cstddef>
#include <string_view>

#include "devpass/graph/copy_census.hpp"
#include "devpass/graph/graph.hpp"
#include "devpass/rules/context.hpp"

namespace devpass::pipeline {

// What a phase reports: the rewrite counters and, for passes that count copies, their figures.
struct phase_result {
  rules::rewrite_counters counters;
  std::size_t copies_inserted = 0;
  std::size_t copies_elided = 0;
  copy_census copies_made;  // the copy nodes the phase made (some may be gone by its end)
};

struct no_instrumentation {
  template <class G>
  void before_phase(std::string_view, const G&) {}
  template <class G>
  void after_phase(std::string_view, const G&, const phase_result&) {}
};

}  // namespace devpass::pipeline
