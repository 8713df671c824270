// devpass/pipeline/instrumentation.hpp — callbacks around each phase, in the manner of LLVM's
// pass instrumentation: timing, statistics, print-after-each, verify-each. None of them lives
// inside a pass; a pipeline run with no_instrumentation calls empty inline functions only.
//
// An instrumentation is any type with (phase_result and no_instrumentation: phase.hpp)
//   void before_phase(std::string_view name, const G&);
//   void after_phase(std::string_view name, const G&, const phase_result&);
// for the graph type G the pipeline runs on (templates here, but for the two that need
// devpass::graph: print_after_each and verify_each), and optionally `bool inspects_graph() const`
// (phase.hpp): false lets a composite phase fuse its constituents.
#pragma once

#include <chrono>
#include <ostream>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "devpass/graph/graph.hpp"
#include "devpass/graph/verify.hpp"
#include "devpass/pipeline/phase.hpp"

namespace devpass::pipeline {

// Wall time per phase (-time-passes).
struct phase_timer {
  struct entry {
    std::string name;
    double seconds = 0;
  };
  std::vector<entry> phases;
  static constexpr bool inspects_graph() { return false; }
  template <class G>
  void before_phase(std::string_view, const G&) {
    start_ = std::chrono::steady_clock::now();
  }
  template <class G>
  void after_phase(std::string_view name, const G&, const phase_result&) {
    const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start_;
    phases.push_back({std::string(name), elapsed.count()});
  }
  [[nodiscard]] double total_seconds() const {
    double total = 0;
    for (const auto& p : phases) total += p.seconds;
    return total;
  }

 private:
  std::chrono::steady_clock::time_point start_;
};

// Statistics counters per phase (-stats).
struct phase_statistics {
  struct entry {
    std::string name;
    phase_result result;
  };
  std::vector<entry> phases;
  static constexpr bool inspects_graph() { return false; }
  template <class G>
  void before_phase(std::string_view, const G&) {}
  template <class G>
  void after_phase(std::string_view name, const G&, const phase_result& r) {
    phases.push_back({std::string(name), r});
  }
};

// Prints a one-line summary of the graph after each phase (print-after-all). The printer is a
// callable (std::ostream&, const graph&) so callers choose the format (JSON, DOT).
template <class Printer>
struct print_after_each {
  std::ostream* out;
  Printer printer;
  static constexpr bool inspects_graph() { return true; }
  void before_phase(std::string_view, const graph&) {}
  void after_phase(std::string_view name, const graph& g, const phase_result&) {
    *out << "// after " << name << "\n";
    printer(*out, g);
  }
};

// Runs the verifier after each phase and throws verify_failure with every violation.
class verify_failure : public std::runtime_error {
 public:
  verify_failure(std::string phase, const verify_report& report)
      : std::runtime_error("verification failed after " + phase + ":\n" + report.to_string()),
        phase_(std::move(phase)) {}
  [[nodiscard]] const std::string& phase() const noexcept { return phase_; }

 private:
  std::string phase_;
};

struct verify_each {
  bool devices = true;  // also check device consistency (only meaningful once copies are explicit)
  static constexpr bool inspects_graph() { return true; }
  void before_phase(std::string_view, const graph&) {}
  void after_phase(std::string_view name, const graph& g, const phase_result&) {
    const verify_report report = devices ? verify(g) : verify_structure(g);
    if (!report.ok()) throw verify_failure(std::string(name), report);
  }
};

// Several instrumentations at once, called in order.
template <class... Is>
struct instrumentations {
  std::tuple<Is&...> parts;
  explicit instrumentations(Is&... is) : parts(is...) {}
  [[nodiscard]] bool inspects_graph() const {
    return std::apply([](const auto&... p) { return (pipeline::inspects_graph(p) || ...); }, parts);
  }
  template <class G>
  void before_phase(std::string_view name, const G& g) {
    std::apply([&](auto&... p) { (p.before_phase(name, g), ...); }, parts);
  }
  template <class G, class Result>
  void after_phase(std::string_view name, const G& g, const Result& r) {  // the phase's own result type, passed on
    std::apply([&](auto&... p) { (p.after_phase(name, g, r), ...); }, parts);
  }
};

}  // namespace devpass::pipeline
