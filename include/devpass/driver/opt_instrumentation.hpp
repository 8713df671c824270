// devpass/driver/opt_instrumentation.hpp — what an opt-style driver (opt_main.hpp) runs around
// each phase: timing, statistics, printing and verifying the graph, as its options ask; and the
// macros that compile the driver's device propagation, which takes this instrumentation, in a TU
// of its own.
#pragma once

#include <iostream>
#include <string>
#include <string_view>

#include "devpass/driver/opt_options.hpp"
#include "devpass/graph/graph.hpp"
#include "devpass/graph/verify_structure.hpp"
#include "devpass/io/json_writer.hpp"
#include "devpass/passes/propagate_device_fwd.hpp"
#include "devpass/pipeline/instrumentation.hpp"

namespace devpass::driver::detail {

// The instrumentation the options ask for, around each phase.
struct tool_instrumentation {
  const options& o;
  devpass::pipeline::phase_timer timer;
  devpass::pipeline::phase_statistics statistics;
  // Printing or verifying the graph after each phase needs the phases run one by one.
  [[nodiscard]] bool inspects_graph() const { return o.print_after_each || o.verify_each; }
  void before_phase(std::string_view name, const devpass::graph& g) {
    if (o.time_passes != timing::off) timer.before_phase(name, g);
  }
  void after_phase(std::string_view name, const devpass::graph& g, const devpass::pipeline::phase_result& r) {
    if (o.time_passes != timing::off) timer.after_phase(name, g, r);
    if (o.stats) statistics.after_phase(name, g, r);
    if (o.print_after_each) {
      std::cerr << "// after " << name << "\n";
      devpass::write_graph(g, std::cerr);
    }
    // Inside a pass only the structure must hold; devices are consistent once the pass is done.
    if (o.verify_each) {
      const devpass::verify_report report = devpass::verify_structure(g);
      if (!report.ok()) throw devpass::pipeline::verify_failure(std::string(name), report);
    }
  }
};

}  // namespace devpass::driver::detail

// A driver in two TUs (devpass-opt is one): the TU with main declares the device propagation its
// policy runs, and one other TU, which includes this header and passes/propagate_device.hpp,
// compiles it; main's TU then compiles the options, reports, reader and writer, not the pass
// (docs/command-line.md, "Your own driver"). At namespace scope; the policy as opt_main's first
// argument (a template-id with commas in it is fine).
//
//   DEVPASS_DECLARE_OPT_PROPAGATION(my::policy)       // main's TU, before main
//   DEVPASS_INSTANTIATE_OPT_PROPAGATION(my::policy)   // exactly one other TU
//
// Without the second the program does not link (an undefined propagate_device_with), never a
// silent difference.
#define DEVPASS_OPT_PROPAGATION_(KIND, ...)                                                                          \
  KIND template ::devpass::propagate_stats                                                                           \
  devpass::propagate_device_with<__VA_ARGS__, ::devpass::graph, ::devpass::driver::detail::tool_instrumentation&>(   \
      ::devpass::graph&, const ::devpass::propagate_options&, ::devpass::driver::detail::tool_instrumentation&);     \
  KIND template ::devpass::propagate_stats                                                                           \
  devpass::propagate_device_traced<__VA_ARGS__, ::devpass::graph, ::devpass::driver::detail::tool_instrumentation&>( \
      ::devpass::graph&, const ::devpass::propagate_options&, const ::devpass::rules::rule_trace*,                   \
      ::devpass::driver::detail::tool_instrumentation&);
#define DEVPASS_DECLARE_OPT_PROPAGATION(...) DEVPASS_OPT_PROPAGATION_(extern, __VA_ARGS__)
#define DEVPASS_INSTANTIATE_OPT_PROPAGATION(...) DEVPASS_OPT_PROPAGATION_(, __VA_ARGS__)
