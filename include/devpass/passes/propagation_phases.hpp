// devpass/passes/propagation_phases.hpp — the phases of device propagation, each a rule table of
// typed patterns run by the rewrite driver (docs/device-propagation.md), and what a phase reports.
// propagate_device.hpp composes them into the stock pipeline.
//
//   place_method_inputs   skip_h2d: a method input feeding a device delegate lives on its device
//   insert_input_copies   executorch: an h2d_copy per (device delegate, input slot)
//   insert_output_copies  executorch: a d2h_copy per used device-delegate output
//   insert_shared_copies  devpass: one h2d per (host value, device), one d2h per device value,
//                         one d2d per (device value, other device); same-device reads stay direct
//   elide_round_trips     h2d_copy(d2h_copy(x)) with x on the h2d's device: read x, drop dead d2h
//   annotate_devices      every output spec carries the device its value lives on
//   tag_delegate_devices  legacy mode (enable_non_cpu_memory_planning off): no copies, delegate
//                         inputs and outputs tagged with the delegate's device
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "devpass/graph/copy_census.hpp"
#include "devpass/graph/error.hpp"
#include "devpass/graph/graph.hpp"
#include "devpass/passes/capabilities.hpp"
#include "devpass/passes/input_sweep.hpp"
#include "devpass/passes/propagate_options.hpp"
#include "devpass/pipeline/pipeline.hpp"
#include "devpass/pipeline/table_phase.hpp"
#include "devpass/rules.hpp"
#include "devpass/rules/trace.hpp"

namespace devpass {

namespace propagation {

// Does this use read its operand on the host? Host calls, host delegates, h2d copies, and the
// output node unless the method output may stay on the device.
template <class G>
bool reads_on_host(const G& g, use u) {
  switch (role_of(g, u.consumer)) {
    case op_kind::call:
    case op_kind::h2d_copy: return true;
    case op_kind::delegate: return node_device(g, u.consumer).is_host();
    default: return false;
  }
}

// ExecuTorch's skip_d2h: the output node may read a device value only when it is its sole consumer.
template <class G>
bool output_reads_on_host_executorch(const G& g, value_ref value, bool skip_d2h) {
  if (!skip_d2h) return true;
  bool only_output = true;
  for_each_use(g, value, [&](use u) { only_output = only_output && role_of(g, u.consumer) == op_kind::output; });
  return !only_output;
}

using namespace devpass::dsl;
inline constexpr auto x = "x"_c;
inline constexpr auto d = "d"_c;
inline constexpr auto h = "h"_c;
inline constexpr auto c = "c"_c;

inline constexpr auto skip_h2d = when([](const auto& ctx) { return ctx.options.skip_h2d_for_method_inputs; });

// What ExecuTorch's phase 1 copies to a device delegate's slot: every value but one already on
// that delegate's device by placement. Host values, and the outputs of device delegates: phase 2
// puts a d2h under those copies, phase 3 removes same-device pairs. A value the file (or
// skip_h2d) already places on a device, a method input, a constant, or a copy the file holds, is
// outside ExecuTorch's graphs: a delegate on that device reads it directly, a delegate elsewhere
// gets it as it would get a device delegate's output (d2h, then h2d: ExecuTorch has no
// device-to-device copy). The h2d copies this phase makes are on their delegate's device, so
// they are never copied again. docs/device-propagation.md, "Values placed by the file".
constexpr bool placed_by_file(op_kind op) {
  return op == op_kind::input || op == op_kind::constant || op == op_kind::h2d_copy || op == op_kind::d2d_copy;
}

// The decision itself, over what it reads: whether the file places the value, where it lives,
// and the delegate's device (the fused path, fused_executorch_copies.hpp, decides it on its plan).
constexpr bool copies_into_delegate(bool placed, device at, device delegate_device) {
  return !placed || at.is_host() || at != delegate_device;
}

inline constexpr auto executorch_copies_in = satisfies(
    [](const auto& ctx, value_ref v, value_ref consumer) {
      return copies_into_delegate(placed_by_file(role_of(ctx.g, v.producer)), location_of(ctx.g, v),
                                  node_device(ctx.g, consumer.producer));
    },
    x, d);

// ExecuTorch refuses skip_h2d for a method input that more than one node reads. The message
// names its readers in file order, each once per slot that reads it. Out of line: the message is
// built once, not in every rule.
template <class G>
[[noreturn, gnu::cold, gnu::noinline]] void refuse_shared_method_input(const G& g, value_ref input) {
  std::vector<std::uint32_t> reads(boost::num_vertices(g));  // per node: how many of its slots read the input
  for_each_use(g, input, [&](use u) { ++reads[u.consumer]; });
  std::string problem = "skip_h2d_for_method_inputs needs a method input with one consumer (ExecuTorch), this one has ";
  bool first = true;
  for (vertex v = 0; v < reads.size(); ++v)
    for (std::uint32_t k = 0; k < reads[v]; ++k, first = false)
      problem.append(first ? "'" : ", '").append(display_name(g, v)).append("'");
  throw graph_error("", display_name(g, input.producer), "consumers", std::move(problem));
}

inline void place_input(const auto& ctx, value_ref input, value_ref consumer) {
  if (ctx.options.policy == copy_policy::executorch) {
    // Whether another node reads it too: one loop over its uses, not uses()'s sorted list, whose
    // sort every TU that runs the pass would compile for a yes-or-no answer
    // (docs/performance.md#compile-time).
    bool shared = false;
    for_each_use(ctx.g, input, [&](use u) { shared = shared || u.consumer != consumer.producer; });
    if (shared) refuse_shared_method_input(ctx.g, input);
  }
  const device where = device_of(ctx.g, consumer);
  mark_device(ctx.g, input, where);
  set_source_device(ctx.g, input.producer, where);  // the format: an input's device is where the caller provides it
}

inline constexpr auto place_inputs_table =
    make_table(on_use(delegate.as(d), input.as(x))[device_delegate(d) && skip_h2d && on_host(x)] /
               apply(
                   [](auto& ctx, value_ref input, value_ref consumer) {
                     place_input(ctx, input, consumer);
                     ctx.touch_uses(input);
                   },
                   x, d));

inline constexpr auto executorch_input_table =
    make_table(on_use(delegate.as(d), any.as(x))[device_delegate(d) && executorch_copies_in] /
               copy_into_use<op_kind::h2d_copy>(x, d));

inline constexpr auto needs_host_copy_executorch = satisfies(
    [](const auto& ctx, value_ref v) {
      bool needed = false;
      const bool output_on_host = output_reads_on_host_executorch(ctx.g, v, ctx.options.skip_d2h_for_method_outputs);
      for_each_use(ctx.g, v, [&](use u) {
        needed = needed || reads_on_host(ctx.g, u) || (role_of(ctx.g, u.consumer) == op_kind::output && output_on_host);
      });
      return needed;
    },
    d);

struct executorch_moves {
  template <class Ctx>
  bool operator()(const Ctx& ctx, use u) const {
    if (role_of(ctx.g, u.consumer) != op_kind::output) return reads_on_host(ctx.g, u);
    const value_ref v = operand(ctx.g, u.consumer, u.slot).value();
    return output_reads_on_host_executorch(ctx.g, v, ctx.options.skip_d2h_for_method_outputs);
  }
};

// Phase 2: a d2h for every device value with host readers: device delegates' outputs, and values
// the file already places on a device (method inputs, constants, and copies the file holds),
// which ExecuTorch's phases treat alike. The h2d copies phase 1 made are read by their delegate
// alone, so on ExecuTorch's own graphs this is exactly its phase 2. One rule at every output: a
// rule per producer kind cost more matching (docs/performance.md#tried-propagation).
inline constexpr auto executorch_output_table =
    make_table(each_output(any.as(d))[on_device(d) && needs_host_copy_executorch] /
               copy_after<op_kind::d2h_copy>(d, executorch_moves{}));

// Does node v read its operands on the host? Calls, h2d copies, host delegates, and the output
// node unless the method's outputs may stay on their devices.
template <class G>
bool reads_operands_on_host(const G& g, vertex v, bool skip_d2h_for_method_outputs) {
  const op_kind op = role_of(g, v);
  if (op == op_kind::output) return !skip_d2h_for_method_outputs;
  return op == op_kind::call || op == op_kind::h2d_copy || (op == op_kind::delegate && node_device(g, v).is_host());
}

// devpass: one copy per (value, device), shared by every consumer.
inline constexpr auto consumer_reads_host = satisfies(
    [](const auto& ctx, value_ref consumer) {
      return reads_operands_on_host(ctx.g, consumer.producer, ctx.options.skip_d2h_for_method_outputs);
    },
    c);

inline constexpr auto devpass_copy_table = make_table(
    on_use(delegate.as(d), any.as(x))[device_delegate(d) && on_host(x)] / share_copy_into_use<op_kind::h2d_copy>(x, d),
    on_use(delegate.as(d), any.as(x))[device_delegate(d) && on_device(x) && !same_device(d, x)] /
        share_copy_into_use<op_kind::d2d_copy>(x, d),
    on_use(any.as(c), any.as(x))[consumer_reads_host && on_device(x)] / share_copy_into_use<op_kind::d2h_copy>(x, x));

inline constexpr auto elide_table = make_table(
    h2d_copy(d2h_copy(any.as(x)).as(d)).as(h)[same_device(h, x)] / (rewire(h, x), erase(h), erase_if_dead(d)),
    d2h_copy.as(d)[unused(d)] / erase(d));

// What a propagation phase reports: the rewrite counters and the copies it made (every node the
// propagation tables add or remove is a copy, so the node counters are the copy counts).
using phase_result = pipeline::table_result;
// What a rule-table run reports (pipeline/table_phase.hpp).
template <class Context>
phase_result table_result(const rules::rewrite_counters& counters, const Context& ctx) {
  return pipeline::table_result_of(counters, ctx);
}

// The options the phases see in a run that reports every rule it tries (propagate_device_traced).
// A separate type, so that only such a run compiles the rules' explanations (rules::tracing).
struct traced_options : propagate_options {
  using rule_options = propagate_options;  // the tables compile once for both (table_phase.hpp)
  const rules::rule_trace* trace = nullptr;
};

// The options the stock pipeline's phases see in propagate_device's run: the caller's, and the
// run's input sweep (input_sweep.hpp), whose seed the phases make their rewrite states from
// (rewrite_seed_t: for devpass::graph, its ids' suffixes), so that the phases that make nodes do
// not read every node again. Only that run makes them: between its sweep and its phases no node
// is renumbered. A sweep not finished yet was left to the first phase, which finishes it before
// it changes anything (a seed of the nodes seen so far is still a true one: the allocator reads
// the rest itself).
template <class Options, class G>
struct seeded_options : Options {
  using rule_options = pipeline::rule_options_t<Options>;  // the caller's: the tables compile once
  input_sweep<G>* input = nullptr;
  // The seed the phases make their rewrite states from (pipeline::rewrite_state_for).
  [[nodiscard]] const rewrite_seed_t<G>* rewrite_seed() const { return input ? &input->seed : nullptr; }
};

using pipeline::rewrite_state_for;
using pipeline::run_table;

inline bool copies_enabled(const propagate_options& o) { return o.enable_non_cpu_memory_planning; }

// When the insertion phases of one copy policy run: compiled in for that policy (or when the
// policy is chosen at run time), active when it is the chosen one and copies are enabled.
template <copy_policy Which>
struct for_copy_policy {
  using options_type = propagate_options;
  template <class Policy>
  static constexpr bool compiled_in = knobs_of<Policy>().runtime_selected
                                      || knobs_of<Policy>().share_copies == (Which == copy_policy::devpass);
  bool active(const propagate_options& o) const { return copies_enabled(o) && o.policy == Which; }
};

// When a phase that only needs copies enabled and an option runs: compiled in always (or as the
// policy's knob says), active when copies are enabled and the option is set.
struct when_skipping_h2d_for_inputs {
  using options_type = propagate_options;
  template <class Policy>
  static constexpr bool compiled_in = true;
  bool active(const propagate_options& o) const { return copies_enabled(o) && o.skip_h2d_for_method_inputs; }
};
struct when_eliding {
  using options_type = propagate_options;
  template <class Policy>
  static constexpr bool compiled_in = knobs_of<Policy>().elide_round_trips;
  bool active(const propagate_options& o) const { return copies_enabled(o) && o.elide; }
};

// The one-line phase templates are the pipeline's (pipeline/table_phase.hpp); their names here
// are the old ones.
template <pattern::fixed_string Name, class Expects, class Provides, class When>
using declared_phase [[deprecated("devpass: propagation::declared_phase is pipeline::declared_phase")]] =
    pipeline::declared_phase<Name, Expects, Provides, When>;
template <pattern::fixed_string Name, const auto& Table, class Expects, class Provides, class When>
using table_phase [[deprecated("devpass: propagation::table_phase is pipeline::table_phase")]] =
    pipeline::table_phase<Name, Table, Expects, Provides, When>;
template <pattern::fixed_string Name, class Loop, class Expects, class Provides, class When>
using loop_phase [[deprecated("devpass: propagation::loop_phase is pipeline::loop_phase")]] =
    pipeline::loop_phase<Name, Loop, Expects, Provides, When>;

// The phases, one line each: name, table, requires, provides, when.
using capabilities::copies_explicit;
using capabilities::devices_assigned;
using capabilities::round_trips_elided;
struct place_method_inputs
    : pipeline::table_phase<"place-method-inputs", place_inputs_table, type_list<devices_assigned>, type_list<>,
                            when_skipping_h2d_for_inputs> {};
struct insert_input_copies
    : pipeline::table_phase<"insert-input-copies", executorch_input_table, type_list<devices_assigned>, type_list<>,
                            for_copy_policy<copy_policy::executorch>> {};
struct insert_output_copies
    : pipeline::table_phase<"insert-output-copies", executorch_output_table, type_list<devices_assigned>,
                            type_list<copies_explicit>, for_copy_policy<copy_policy::executorch>> {};
struct insert_shared_copies
    : pipeline::table_phase<"insert-shared-copies", devpass_copy_table, type_list<devices_assigned>,
                            type_list<copies_explicit>, for_copy_policy<copy_policy::devpass>> {};
struct elide_round_trips : pipeline::table_phase<"elide-round-trips", elide_table, type_list<copies_explicit>,
                                                 type_list<round_trips_elided>, when_eliding> {};

// When a loop phase runs: compiled in always, active when copies are enabled (Enabled = true) or
// when they are not (ExecuTorch's legacy mode).
template <bool Enabled>
struct when_copies {
  using options_type = propagate_options;
  template <class Policy>
  static constexpr bool compiled_in = true;
  bool active(const propagate_options& o) const { return copies_enabled(o) == Enabled; }
};

// Marks each value of node v with where it lives (mark_every_value's work at one node; the
// fused sweeps do it as they pass each node).
template <class G>
void mark_values_of(G& g, vertex v) {
  for (std::uint32_t k = 0, outputs = output_count(g, v); k < outputs; ++k)
    mark_device(g, {v, k}, location_of(g, {v, k}));
}
// Writes the device every value lives on into its spec (the format's spec `device`).
struct mark_every_value {
  template <class G>
  void operator()(G& g) const {
    for (vertex v = 0, n = boost::num_vertices(g); v < n; ++v) mark_values_of(g, v);
  }
};

// ExecuTorch's legacy mode: no copies, only device tags on delegate inputs and outputs.
struct tag_delegate_values {
  template <class G>
  void operator()(G& g) const {
    for (vertex v = 0, n = boost::num_vertices(g); v < n; ++v) {
      const device at = node_device(g, v);
      if (role_of(g, v) != op_kind::delegate || at.is_host()) continue;
      for (std::uint32_t k = 0, outputs = output_count(g, v); k < outputs; ++k) mark_device(g, {v, k}, at);
      for (const value_ref in : operands(g, v)) mark_device(g, in, at);
    }
  }
};

struct annotate_devices : pipeline::loop_phase<"annotate-devices", mark_every_value, type_list<copies_explicit>,
                                               type_list<>, when_copies<true>> {};
struct tag_delegate_devices : pipeline::loop_phase<"tag-delegate-devices", tag_delegate_values,
                                                   type_list<devices_assigned>, type_list<>, when_copies<false>> {};

}  // namespace propagation

}  // namespace devpass
