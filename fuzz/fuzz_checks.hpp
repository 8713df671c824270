// fuzz/fuzz_checks.hpp — what the fuzz targets share: the options byte, the invariants they
// check, and how a broken invariant ends the run (a message and abort(), which libFuzzer reports
// as a crash and saves the input for; the replay driver reports it as a failed test).
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <span>
#include <sstream>
#include <string>
#include <string_view>

#include "devpass/graph/verify.hpp"
#include "devpass/io/json_reader.hpp"
#include "devpass/io/json_writer.hpp"
#include "devpass/passes/propagate_device_fwd.hpp"
#include "devpass/planning/memory_planner.hpp"
#include "devpass/planning/verify_plan.hpp"

namespace devpass::fuzz {

[[noreturn]] inline void broken(std::string_view invariant, std::string_view detail = {}) {
  // An empty view's data() may be null, which %.*s must not be given even for no characters.
  std::fprintf(stderr, "devpass fuzz: broken invariant: %.*s\n%.*s\n", static_cast<int>(invariant.size()),
               invariant.empty() ? "" : invariant.data(), static_cast<int>(detail.size()),
               detail.empty() ? "" : detail.data());
  std::abort();
}

inline void require(bool holds, std::string_view invariant, std::string_view detail = {}) {
  if (!holds) broken(invariant, detail);
}

inline std::string_view as_text(std::span<const std::uint8_t> bytes) {
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

// The first byte chooses the propagation options, the rest is the file:
// bit 0 executorch policy, bit 1 skip_h2d, bit 2 skip_d2h, bit 3 no elision, bit 4 legacy mode.
struct options_and_file {
  propagate_options options;
  std::string_view file;
};
inline options_and_file split_options(std::span<const std::uint8_t> bytes) {
  options_and_file r;
  if (bytes.empty()) return r;
  const std::uint8_t b = bytes[0];
  r.options.policy = (b & 1) ? copy_policy::executorch : copy_policy::devpass;
  r.options.skip_h2d_for_method_inputs = (b & 2) != 0;
  r.options.skip_d2h_for_method_outputs = (b & 4) != 0;
  r.options.elide = (b & 8) == 0;
  r.options.enable_non_cpu_memory_planning = (b & 16) == 0;
  r.file = as_text(bytes.subspan(1));
  return r;
}

inline std::string written(const graph& g) {
  std::ostringstream out;
  write_graph(g, out);
  return out.str();
}

// Device propagation's postcondition: with copies enabled the result passes the whole verifier,
// in legacy mode (tags only) its structure.
inline void check_propagated(const graph& g, const propagate_options& o) {
  const verify_report report = o.enable_non_cpu_memory_planning ? verify(g) : verify_structure(g);
  require(report.ok(), "propagation's result passes the verifier", report.to_string());
}

// A memory plan's laws (verify_plan): values inside their buffers, aligned, on their device, and
// no two values alive together sharing a byte.
inline void check_plan(const graph& g, const memory_plan& plan) {
  const verify_report report = verify_plan(g, plan);
  require(report.ok(), "plan_memory's plan passes verify_plan", report.to_string());
}

// The graph in `file`, or nothing when the reader rejects it (a clear rejection is a correct answer).
inline std::optional<graph> read_or_reject(std::string_view file) {
  try {
    return read_graph_string(file);
  } catch (const graph_error&) {
    return std::nullopt;
  }
}

}  // namespace devpass::fuzz
