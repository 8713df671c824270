// devpass/driver/opt_report.hpp — what the opt driver prints: --help, verification problems,
// --stats (per phase, copies, the memory plan) and --time-passes, each to the stream it goes to,
// with the tool's name where a message carries it.
#pragma once

#include <cstddef>
#include <cstdio>
#include <iostream>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "devpass/driver/opt_options.hpp"
#include "devpass/graph/copy_census.hpp"
#include "devpass/graph/graph.hpp"
#include "devpass/graph/verify.hpp"
#include "devpass/io/byte_units.hpp"
#include "devpass/passes/propagate_options.hpp"
#include "devpass/pipeline/instrumentation.hpp"
#include "devpass/planning/memory_plan.hpp"
#include "devpass/planning/verify_plan.hpp"

namespace devpass::driver {

inline void print_help(std::string_view program, const std::vector<option_spec>& table, std::ostream& os) {
  os << "OVERVIEW: devpass graph optimizer: reads a devpass.graph/1 file, runs passes, writes the result\n\n"
        "USAGE: "
     << program << " [options] <in.json|->\n\nOPTIONS:\n";
  for (const auto& spec : table) {
    std::string left(spec.metavar);
    if (left.size() < 31)
      left.resize(31, ' ');
    else
      left += ' ';
    os << "  " << left << spec.help << "\n";
  }
  os << "\nEXIT STATUS: 0 ok, 1 invalid input, 2 usage error. On an error no output is written.\n";
}

inline void print_problems(std::string_view program, std::string_view after, const devpass::verify_report& report) {
  std::cerr << program << ": verification failed after " << after << " (" << report.problems.size() << " problem"
            << (report.problems.size() == 1 ? "" : "s") << "):\n";
  for (const auto& problem : report.problems) std::cerr << "  " << problem.what() << "\n";
}

// Prints every problem; true when there were none. With a plan, the plan is checked too.
inline bool verify_ok(std::string_view program, const devpass::graph& g, bool devices, std::string_view after,
                      const devpass::memory_plan* plan = nullptr) {
  devpass::verify_report report = devices ? devpass::verify(g) : devpass::verify_structure(g);
  if (plan && report.ok()) report = devpass::verify_plan(g, *plan);
  if (report.ok()) return true;
  print_problems(program, after, report);
  return false;
}

// The copy ledger: the copies made on every execution and the bytes they move; then, when the
// graph has resident copies (made once, at load), what they load onto each device.
inline void print_copy_lines(const devpass::copy_census& c, const devpass::graph& g) {
  std::cerr << "copies: h2d " << c.h2d << " (" << devpass::format_bytes(c.h2d_bytes) << "), d2h " << c.d2h << " ("
            << devpass::format_bytes(c.d2h_bytes) << "), d2d " << c.d2d << " (" << devpass::format_bytes(c.d2d_bytes)
            << "); " << devpass::format_bytes(c.bytes()) << " moved per execution\n";
  if (c.resident == 0) return;
  std::cerr << "resident: " << c.resident << (c.resident == 1 ? " copy, " : " copies, ")
            << devpass::format_bytes(c.resident_bytes) << " loaded once:";
  const char* separator = " ";
  for (const devpass::resident_load& l : devpass::resident_loads(g)) {
    std::cerr << separator << devpass::to_string(l.device) << " " << l.copies << " (" << devpass::format_bytes(l.bytes)
              << ")";
    separator = ", ";
  }
  std::cerr << "\n";
}

// Every phase's counters, then the copies left. The first `rewrite_phases` phases are the pass
// families' (--fuse, --insert-casts), which make and remove nodes other than copies; the phases of
// propagation and a driver's own add and remove copies only.
inline void print_statistics(std::string_view program, const devpass::pipeline::phase_statistics& statistics,
                             const devpass::propagate_stats& totals, const devpass::graph& g,
                             std::size_t rewrite_phases = 0) {
  std::cerr << "=== " << program << " statistics ===\n";
  for (std::size_t i = 0; i < statistics.phases.size(); ++i) {
    const auto& p = statistics.phases[i];
    const auto& c = p.result.counters;
    std::cerr << p.name << ": ";
    if (i >= rewrite_phases) std::cerr << c.nodes_added << " copies inserted, " << c.nodes_removed << " elided; ";
    std::cerr << c.rewrites << " rewrites, " << c.matches_tried << " matches tried, +" << c.nodes_added << "/-"
              << c.nodes_removed << " nodes\n";
  }
  print_copy_lines(totals.after, g);
}

inline void print_plan(const devpass::memory_plan& plan) {
  std::cerr << "=== memory plan ===\n";
  for (std::size_t id = 1; id < plan.buffers.size(); ++id) {
    const auto& b = plan.buffers[id];
    const double ratio = b.lower_bound ? static_cast<double>(b.size) / static_cast<double>(b.lower_bound) : 1.0;
    char text[32];
    std::snprintf(text, sizeof text, "%.3f", ratio);
    std::cerr << "buffer " << id << ": " << devpass::to_string(b.device) << ", planned " << b.size << " B, lower bound "
              << b.lower_bound << " B, ratio " << text << ", alignment " << b.alignment << "\n";
  }
  // The constants each device holds outside its arena, loaded once.
  for (const devpass::resident_memory& r : plan.resident)
    std::cerr << "resident on " << devpass::to_string(r.device) << ": " << r.bytes << " B in " << r.values
              << (r.values == 1 ? " constant" : " constants") << ", loaded once, outside the arenas\n";
}

inline void print_times(const options& o, const devpass::pipeline::phase_timer& timer) {
  if (o.time_passes == timing::json) {
    std::cerr << "{\"phases\": [";
    for (std::size_t i = 0; i < timer.phases.size(); ++i)
      std::cerr << (i ? ", " : "") << "{\"name\": \"" << timer.phases[i].name
                << "\", \"seconds\": " << timer.phases[i].seconds << "}";
    std::cerr << "], \"total_seconds\": " << timer.total_seconds() << "}\n";
  } else {
    const auto line = [](double seconds, std::string_view name) {
      char text[32];
      std::snprintf(text, sizeof text, "%10.6f s  ", seconds);
      std::cerr << text << name << "\n";
    };
    std::cerr << "=== pass execution timing ===\n";
    for (const auto& p : timer.phases) line(p.seconds, p.name);
    line(timer.total_seconds(), "total");
  }
}

}  // namespace devpass::driver
