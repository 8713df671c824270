// devpass/driver/opt_main.hpp — an opt-style driver: reads a devpass.graph/1 file, runs the
// passes its options name, writes the result. devpass-opt is opt_main<policy_from_options>;
// a team builds its own `*-opt` (as MLIR projects build theirs) with its own compile-time policy
// and phases of its own:
//
//   int main(int argc, char** argv) { return devpass::driver::opt_main<my::policy, my::fold_bounces>(argc, argv, "my-opt"); }
//
// (devpass_add_opt in CMake writes that main: docs/command-line.md, "Your own driver"). Every
// devpass-opt option is there; each extra phase adds `--<its name>`, and runs, in the order
// given, after device propagation and before memory planning, when its option is given and the
// policy compiles it in.
//
//   <tool> [options] <in.json|-> [-o <out>]
//
// Conventions of opt/mlir-opt: options before or after the input, "-" is standard input, output
// goes to standard output unless -o says otherwise. Exit codes: 0 ok, 1 invalid input, 2 usage
// error. On any error nothing is written (files are written to a temporary and renamed).
//
// Adding an option is one row in make_option_table (opt_options.hpp); the propagation knobs'
// rows (--policy, --skip-*, --no-*) are derived from devpass::propagate_options itself
// (passes/policy_reflection.hpp), so a knob added there is an option here, with its help line.
// Passes run in pipeline order whatever the order of the options: the pass families (--fuse,
// then --insert-casts: passes/fusion.hpp, passes/casts.hpp), device propagation, the driver's own
// phases, memory planning. The driver only parses options and calls the library
// (docs/command-line.md).
//
// The parts: opt_options.hpp (the option table and the parser), opt_report.hpp (what is printed),
// opt_instrumentation.hpp (what runs around each phase, and the macros that compile a driver's
// propagation in a TU of its own); this header runs the passes the options name.
#pragma once

#include <cstddef>
#include <exception>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "devpass/driver/opt_instrumentation.hpp"
#include "devpass/driver/opt_options.hpp"
#include "devpass/driver/opt_report.hpp"
#include "devpass/graph/verify.hpp"
#include "devpass/io/capture_json.hpp"
#include "devpass/io/cast_signatures_json.hpp"
#include "devpass/io/dot_writer.hpp"
#include "devpass/io/json_reader.hpp"
#include "devpass/io/json_writer.hpp"
#include "devpass/io/policy_json.hpp"
#include "devpass/passes/casts.hpp"
#include "devpass/passes/fusion.hpp"
#include "devpass/passes/policy_reflection.hpp"
#include "devpass/passes/propagate_device.hpp"
#include "devpass/pipeline/instrumentation.hpp"
#include "devpass/planning/capturability.hpp"
#include "devpass/planning/memory_planner.hpp"

#ifndef DEVPASS_VERSION
#define DEVPASS_VERSION "unknown"
#endif

namespace devpass::driver {
namespace detail {

// Runs extra phase `phase` (the driver's own) when its option was given and Policy compiles it in.
template <class Policy, class Phase>
void run_extra_phase(const Phase& phase, bool given, devpass::graph& g, const devpass::propagate_options& propagation,
                     tool_instrumentation& instrumentation) {
  if constexpr (Phase::template compiled_in<Policy>) {
    if (!given || !devpass::pipeline::phase_active(phase, propagation)) return;
    instrumentation.before_phase(Phase::name, g);
    const devpass::pipeline::phase_result result = phase.run(g, propagation);
    instrumentation.after_phase(Phase::name, g, result);
  }
}

// An extra phase that needs what propagation provides cannot run without --propagate-device.
template <class... Extra>
void check_extra_phases(const options& o) {
  std::size_t i = 0;
  [[maybe_unused]] const auto check = [&]<class Phase>(std::type_identity<Phase>) {
    constexpr bool needs_copies =
        devpass::pattern::contains_v<devpass::capabilities::copies_explicit, devpass::pipeline::expects_of<Phase>> ||
        devpass::pattern::contains_v<devpass::capabilities::round_trips_elided, devpass::pipeline::expects_of<Phase>>;
    if (needs_copies && o.extra_phases[i] && !o.propagate)
      throw devpass::config_error("--" + std::string(Phase::name) +
                                  " needs --propagate-device (it requires explicit copies)");
    ++i;
  };
  (check(std::type_identity<Extra>{}), ...);
}

// What the pass families' rules read (--fuse, --insert-casts): the cast signatures, and the trace
// of --debug-rules (their tables then run traced: pipeline/table_phase.hpp).
struct family_options : devpass::cast_options {
  const devpass::rules::rule_trace* trace = nullptr;
};

// The pass families the options name, before device propagation: fusion, then the casts (made
// for the kernels as fused) and the elision of the round trips they close. The name of the last
// phase run.
inline std::string_view run_families(const options& o, const family_options& families, devpass::graph& g,
                                     tool_instrumentation& instrumentation) {
  std::string_view last;
  const auto run_phase = [&]<class Phase>(const Phase& phase) {
    instrumentation.before_phase(Phase::name, g);
    const devpass::pipeline::table_result result = phase.run(g, families);
    instrumentation.after_phase(Phase::name, g, result);
    last = Phase::name;
  };
  if (o.fuse) run_phase(devpass::fusion::fuse<>{});
  if (families.signatures) {
    run_phase(devpass::casts::insert_casts<>{});
    run_phase(devpass::casts::elide_round_trips<>{});
  }
  return last;
}

// The copy policy a policy compiles in, when it compiles one only.
template <class Policy>
constexpr std::optional<devpass::copy_policy> compiled_copy_policy() {
  constexpr devpass::propagate_knobs knobs = devpass::knobs_of<Policy>();
  if constexpr (knobs.runtime_selected)
    return std::nullopt;
  else
    return knobs.share_copies ? devpass::copy_policy::devpass : devpass::copy_policy::executorch;
}

template <class Policy, class... Extra>
int run(const options& o, std::string_view program) {
  if (o.propagation_flag_given && !o.propagate)
    throw devpass::config_error("propagation options need --propagate-device");
  if (const auto only = compiled_copy_policy<Policy>(); only && o.propagation.policy != *only)
    throw devpass::config_error("--policy=" + std::string(devpass::reflection::to_string(o.propagation.policy)) +
                                ": this driver's policy compiles only the " +
                                std::string(devpass::reflection::to_string(*only)) + " copies in");
  check_extra_phases<Extra...>(o);
  if (o.capturability != report_format::off && !o.plan_memory)
    throw devpass::config_error("--capturability needs --plan-memory (it judges the planned buffers)");
  const bool families_given = o.fuse || o.cast_signatures;
  if (o.debug_rules && !o.propagate && !families_given)
    throw devpass::config_error(
        "--debug-rules needs a pass whose rules it traces: --propagate-device, --fuse or "
        "--insert-casts");
  devpass::validate(o.propagation);
  // The signatures first: a bad file is refused before the graph is read.
  std::optional<devpass::cast_signatures> signatures;
  if (o.cast_signatures) signatures = devpass::read_cast_signatures_file(*o.cast_signatures);
  const std::string input_name = *o.input == "-" ? "<stdin>" : *o.input;
  // Initialised from the reader's return value, not emplaced into an optional: adjacency_list
  // has no move constructor, so anything but copy elision copies the whole graph.
  bool unreadable = false;
  devpass::graph g = [&]() -> devpass::graph {
    try {
      return devpass::read_graph_file(*o.input, o.reading);
    } catch (const devpass::structure_error& e) {
      // --verify-each lists every structural problem of the file, as it does after a pass.
      if (!o.verify_each) throw;
      print_problems(program, "reading " + input_name, e.report());
      unreadable = true;
      return devpass::graph();
    }
  }();
  if (unreadable) return 1;

  tool_instrumentation instrumentation{o, {}, {}};
  // --debug-rules: every rule the families' and the propagation's phases try, one line each on stderr.
  devpass::rules::rule_trace trace;
  const devpass::rules::rule_trace* tracing = nullptr;
  const devpass::propagate_options& propagation = o.propagation;
  if (o.debug_rules) {
    trace.report = [](void*, std::string_view rule, std::string_view node, std::string_view site,
                      std::string_view why) {
      std::cerr << "debug-rules: node '" << node << "'" << (site.empty() ? "" : ": ") << site << ": `" << rule
                << "`: " << why << "\n";
    };
    trace.only = o.debug_rules_filter;
    tracing = &trace;
  }
  std::optional<devpass::memory_plan> plan;
  bool extra_ran = false;
  std::string_view last_family;  // the last phase of the families that ran, if any
  try {
    family_options families;
    families.signatures = signatures ? &*signatures : nullptr;
    families.trace = tracing;
    if (families_given) last_family = run_families(o, families, g, instrumentation);
    // The phases of the families, first in the statistics: counted as rewrites, not copies.
    const std::size_t family_phases = instrumentation.statistics.phases.size();
    std::optional<devpass::propagate_stats> totals;
    if (o.propagate) {
      // Traced only for --debug-rules: a traced run always takes the literal rule tables, and
      // under the executorch policy the fused plan is several times faster (docs/performance.md, "Files").
      totals = tracing ? devpass::propagate_device_traced<Policy>(g, propagation, tracing, instrumentation)
                       : devpass::propagate_device_with<Policy>(g, propagation, instrumentation);
      if (o.verify_each && !verify_ok(program, g, o.propagation.enable_non_cpu_memory_planning, "propagate-device"))
        return 1;
    }
    // The driver's own phases, in the order it lists them, after propagation.
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      (run_extra_phase<Policy>(Extra{}, o.extra_phases[I] != 0, g, propagation, instrumentation), ...);
    }
    (std::index_sequence_for<Extra...>{});
    for (const char given : o.extra_phases) extra_ran = extra_ran || given;
    if (extra_ran && o.verify_each &&
        !verify_ok(program, g, o.propagate && o.propagation.enable_non_cpu_memory_planning, "extra phases"))
      return 1;
    if (o.stats && totals) {
      if (extra_ran) totals->after = devpass::count_copies(g);
      print_statistics(program, instrumentation.statistics, *totals, g, family_phases);
    } else if (o.stats && families_given) {
      devpass::propagate_stats copies;
      copies.after = devpass::count_copies(g);
      print_statistics(program, instrumentation.statistics, copies, g, family_phases);
    }
    if (o.plan_memory) {
      instrumentation.before_phase("plan-memory", g);
      plan = devpass::plan_memory(g);
      instrumentation.after_phase("plan-memory", g, {});
      if (o.verify_each && !verify_ok(program, g, false, "plan-memory", &*plan)) return 1;
      if (o.stats) print_plan(*plan);
      if (o.capturability != report_format::off) {
        const devpass::capture_verdict verdict = devpass::capturability(g, *plan);
        if (o.capturability == report_format::json)
          std::cerr << devpass::capture_json(g, verdict) << "\n";
        else
          std::cerr << devpass::capture_text(g, verdict);
      }
    }
  } catch (const devpass::pipeline::verify_failure& e) {
    std::cerr << program << ": " << e.what();
    return 1;
  }
  if (o.time_passes != timing::off) print_times(o, instrumentation.timer);
  // No pass writes a graph that fails verification: the result is verified before it is written
  // (devices too once copies were placed, and the memory plan). --verify-each has done it
  // already; without a pass the graph is what the reader verified.
  const bool passes_ran = o.propagate || o.plan_memory || extra_ran || families_given;
  const std::string_view last_pass = o.plan_memory              ? "plan-memory"
                                     : o.propagate || extra_ran ? "propagate-device"
                                                                : last_family;
  if (o.verify_result && passes_ran && !o.verify_each &&
      !verify_ok(program, g, o.propagate && o.propagation.enable_non_cpu_memory_planning, last_pass,
                 plan ? &*plan : nullptr))
    return 1;

  const std::string out = o.output.value_or("-");
  if (o.emit == emit_kind::dot)
    devpass::write_dot_file(g, out);
  else
    devpass::write_graph_file(g, out, plan ? &plan->order : nullptr);
  return 0;
}

}  // namespace detail

// The driver's main: Policy is the compile-time policy the propagation runs with, Extra the
// driver's own phases (each a phase type, pipeline.hpp; default-constructible). `program` names
// the tool in messages and --help.
template <class Policy = policy_from_options, class... Extra>
int opt_main(int argc, char** argv, std::string_view program = "devpass-opt") {
  using namespace detail;
  const std::vector<option_spec>& table = option_table<Policy, Extra...>();
  options o;
  try {
    // A driver whose policy compiles one copy policy in defaults to it.
    devpass::propagate_options defaults;
    if (const auto only = compiled_copy_policy<Policy>()) defaults.policy = *only;
    o = parse_command_line(table, sizeof...(Extra), defaults, argc, argv);
  } catch (const usage_error& e) {
    std::cerr << program << ": error: " << e.message << "\nTry '" << program << " --help'.\n";
    return 2;
  }
  if (o.help) {
    print_help(program, table, std::cout);
    return 0;
  }
  if (o.version) {
    std::cout << program << " version " << DEVPASS_VERSION << "\n";
    return 0;
  }
  if (o.print_policy) {
    std::cout << devpass::reflection::policy_json<Policy>(o.propagation) << "\n";
    return 0;
  }
  if (!o.input) {
    std::cerr << program << ": error: no input file (use '-' for standard input)\nTry '" << program << " --help'.\n";
    return 2;
  }
  try {
    return run<Policy, Extra...>(o, program);
  } catch (const devpass::graph_error& e) {
    std::cerr << program << ": " << e.what() << "\n";
    return 1;
  } catch (const devpass::config_error& e) {
    std::cerr << program << ": error: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << program << ": " << e.what() << "\n";
    return 1;
  }
}

}  // namespace devpass::driver
