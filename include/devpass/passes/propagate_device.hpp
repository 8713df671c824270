// devpass/passes/propagate_device.hpp — device propagation: makes device boundaries explicit
// and cheap, with ExecuTorch's PropagateDevicePass semantics under the `executorch` policy and
// fewer copies under the default `devpass` policy (docs/device-propagation.md). The phases are
// propagation_phases.hpp's; under the executorch policy the stock pipeline plans its three copy
// phases as one (fused_executorch_copies.hpp), under the devpass policy it inserts the copies in
// one sweep that also annotates the values (fused_shared_copies.hpp). With
// enable_non_cpu_memory_planning off (ExecuTorch's legacy mode) only tag_delegate_devices runs.
#pragma once

#include <cassert>
#include <tuple>

#include "devpass/graph/copy_census.hpp"
#include "devpass/graph/error.hpp"
#include "devpass/graph/graph.hpp"
#include "devpass/passes/fused_executorch_copies.hpp"
#include "devpass/passes/fused_shared_copies.hpp"
#include "devpass/passes/input_sweep.hpp"
#include "devpass/passes/propagate_device_fwd.hpp"
#include "devpass/passes/propagate_options.hpp"
#include "devpass/passes/propagation_phases.hpp"
#include "devpass/pipeline/pipeline.hpp"
#include "devpass/rules/trace.hpp"

namespace devpass {

namespace propagation {

// The stock pipeline. Each run takes one copy policy's phases: executorch_copies (ExecuTorch's
// insert-input-copies, insert-output-copies and elide-round-trips, then annotate-devices) or
// shared_copies (insert-shared-copies, elide-round-trips and annotate-devices).
inline constexpr auto phases =
    pipeline::make_pipeline(tag_delegate_devices{}, place_method_inputs{}, executorch_copies{}, shared_copies{});

// Whether the first phase these options run takes the input sweep (input_sweep.hpp): it reads
// every node before it changes any, visits each for the sweep and finishes it first.
template <class Policy>
bool first_phase_takes_input_sweep(const propagate_options& o) {
  bool found = false, takes = false;
  std::apply(
      [&](const auto&... phase) {
        const auto look = [&]<class Phase>(const Phase& p) {
          if constexpr (Phase::template compiled_in<Policy>) {
            if (found || !pipeline::phase_active(p, o)) return;
            found = true;
            takes = requires { Phase::takes_input_sweep; };
          }
        };
        (look(phase), ...);
      },
      phases.phases);
  return takes;
}

// Device propagation with a compile-time Policy; Options is propagate_options or traced_options.
template <class Policy, class G, class Options, class Instrumentation>
propagate_stats run(G& g, const Options& options, Instrumentation& instrumentation) {
  static_assert(check_graph_model<G>());
  [[maybe_unused]] constexpr propagate_knobs knobs = knobs_of<Policy>();  // a malformed policy fails here, first
  validate(options);
  check_options_agree<Policy>(options);
  // Its result always passes the device verifier, given what verify_propagation_input checks: a
  // mark that contradicts its producer (e.g. left by a legacy-mode run) would send copies the wrong
  // way or never converge, and a copy the file holds that reads from the wrong device stays wrong.
  // Refused, naming node and field, before anything changes. The same sweep counts the copies
  // before the pass (a second sweep would read every vertex again) and gathers the seed of the
  // rewrite states the phases make nodes with (devpass::graph: its ids' suffixes, which its id
  // allocator would otherwise read every node again for;
  // docs/performance.md#what-each-design-choice-saves). The first phase makes it as it reads the
  // graph when it takes it (the fused executorch plan), else it is made here.
  propagate_stats stats;
  input_sweep<G> input(options.enable_non_cpu_memory_planning);
  if (!first_phase_takes_input_sweep<Policy>(options)) input.finish(g);
  const seeded_options<Options, G> effective{options, &input};
  // What the phases report added up: the copies they made and the nodes they removed.
  const phase_result done = phases.template run<Policy, phase_result>(g, effective, instrumentation);
  assert(input.finished());  // here or by the first phase, before any change
  stats.before = input.before;
  // A pass that removed no node holds what it had plus the copies it made, counted as they were
  // made: no second sweep over the graph (tested against count_copies on every property run).
  // The fused executorch path removes none: its elided copies are never made.
  if (!done.removed_nodes) {
    stats.after = stats.before;
    stats.after += done.copies_kept;
  } else {
    stats.after = count_copies(g);
  }
  return stats;
}
}  // namespace propagation

// The entry points, declared with their defaults in propagate_device_fwd.hpp.
template <class Policy, class G, class Instrumentation>
propagate_stats propagate_device_with(G& g, const propagate_options& options, Instrumentation&& instrumentation) {
  return propagation::run<Policy>(g, options, instrumentation);
}

template <class Policy, class G, class Instrumentation>
propagate_stats propagate_device_traced(G& g, const propagate_options& options, const rules::rule_trace* trace,
                                        Instrumentation&& instrumentation) {
  propagation::traced_options traced{options};
  traced.trace = trace;
  return propagation::run<Policy>(g, traced, instrumentation);
}

template <class G>
propagate_stats propagate_device(G& g, const propagate_options& options) {
  return propagate_device_with<policy_from_options>(g, options);
}

}  // namespace devpass
