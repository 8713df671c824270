// devpass/driver/opt_main.hpp — an opt-style driver: reads a devpass.graph/1 file, runs the
// passes its options name, writes the result. devpass-opt is opt_main<runtime_propagate_policy>;
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
// Adding an option is one row in make_option_table; the propagation knobs' rows (--policy,
// --skip-*, --no-*) are derived from devpass::propagate_options itself
// (passes/policy_reflection.hpp), so a knob added there is an option here, with its help line.
// Passes run in pipeline order whatever the order of the options. The driver only parses options
// and calls the library (docs/command-line.md).
#pragma once

#include <cstdio>
#include <exception>
#include <functional>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "devpass/graph/verify.hpp"
#include "devpass/io/byte_units.hpp"
#include "devpass/io/dot_writer.hpp"
#include "devpass/io/json_reader.hpp"
#include "devpass/io/json_writer.hpp"
#include "devpass/passes/policy_reflection.hpp"
#include "devpass/passes/propagate_device.hpp"
#include "devpass/pipeline/instrumentation.hpp"
#include "devpass/planning/capturability.hpp"
#include "devpass/planning/memory_planner.hpp"
#include "devpass/planning/verify_plan.hpp"

#ifndef DEVPASS_VERSION
#define DEVPASS_VERSION "unknown"
#endif

namespace devpass::driver {
namespace detail {

// The tool's name in messages (opt_main sets it).
inline std::string program = "devpass-opt";

// A command line that cannot be run: exit 2.
struct usage_error {
  std::string message;
};

enum class emit_kind { json, dot };
enum class timing { off, text, json };
enum class report_format { off, text, json };

struct options {
  std::optional<std::string> input;
  std::optional<std::string> output;
  emit_kind emit = emit_kind::json;
  bool verify_each = false;
  bool verify_result = true;  // --no-verify turns it off
  bool help = false;
  bool version = false;
  bool print_policy = false;
  bool propagate = false;
  bool plan_memory = false;
  std::vector<char> extra_phases;  // extra_phases[i]: the option of the driver's phase i was given
  bool stats = false;
  bool print_after_each = false;
  bool debug_rules = false;
  report_format capturability = report_format::off;  // --capturability[=json]
  std::string debug_rules_filter;
  timing time_passes = timing::off;
  devpass::propagate_options propagation;
  bool propagation_flag_given = false;  // a propagation option without --propagate-device
};

enum class takes { nothing, value, optional_value };  // optional: only as --name=value

struct option_spec {
  std::string name;     // with the dashes: "--emit"
  takes argument;
  std::string metavar;  // for --help: "--emit=<json|dot>"
  std::string_view help;
  std::function<void(options&, std::string_view value)> apply;
};

// The rows of the propagation knobs, one per member of propagate_options that
// policy_reflection.hpp adapts, in its order: a bool knob is a flag that turns it from its
// default (flag_of), the copy policy a value among its names.
inline std::vector<option_spec> propagation_option_rows() {
  std::vector<option_spec> rows;
  const devpass::propagate_options defaults;
  boost::hana::for_each(boost::hana::accessors<devpass::propagate_options>(), [&](auto pair) {
    const std::string_view knob = boost::hana::to<const char*>(boost::hana::first(pair));
    const auto member = boost::hana::second(pair);
    const std::string_view help = devpass::reflection::help_of(devpass::reflection::propagate_option_help, knob);
    using value_type = std::remove_cvref_t<decltype(member(defaults))>;
    if constexpr (std::is_same_v<value_type, bool>) {
      const bool from = member(defaults);
      const std::string flag = devpass::reflection::flag_of(knob, from);
      rows.push_back({flag, takes::nothing, flag, help, [member, from](options& o, std::string_view) {
                        member(o.propagation) = !from;
                        o.propagation_flag_given = true;
                      }});
    } else {
      static_assert(std::is_same_v<value_type, devpass::copy_policy>, "devpass-opt: a propagation knob of a type it cannot parse");
      std::string names, name = "--" + std::string(knob);
      for (const auto& [value, text] : devpass::reflection::copy_policy_names) names += (names.empty() ? "" : "|") + std::string(text);
      rows.push_back({name, takes::value, name + "=<" + names + ">", help, [member, name, names](options& o, std::string_view v) {
                        bool known = false;
                        for (const auto& [value, text] : devpass::reflection::copy_policy_names)
                          if (v == text) member(o.propagation) = value, known = true;
                        if (!known) {
                          std::string expected = names;
                          if (const auto bar = expected.rfind('|'); bar != std::string::npos) expected.replace(bar, 1, " or ");
                          throw usage_error{name + ": expected " + expected + ", got '" + std::string(v) + "'"};
                        }
                        o.propagation_flag_given = true;
                      }});
    }
  });
  return rows;
}

// The rows of a driver's own phases, `--<name>` each, for those its policy compiles in; the help
// line is the phase's `description` when it has one.
template <class Policy, class... Extra>
std::vector<option_spec> extra_phase_rows() {
  std::vector<option_spec> rows;
  std::size_t index = 0;
  const auto add = [&]<class Phase>(std::type_identity<Phase>) {
    const std::size_t i = index++;
    if constexpr (Phase::template compiled_in<Policy>) {
      std::string_view help = "run this phase (after --propagate-device when it needs the copies explicit)";
      if constexpr (requires { Phase::description; }) help = Phase::description;
      const std::string name = "--" + std::string(Phase::name);
      rows.push_back({name, takes::nothing, name, help, [i](options& o, std::string_view) { o.extra_phases[i] = 1; }});
    }
  };
  (add(std::type_identity<Extra>{}), ...);
  return rows;
}

// One row per option. --name=value and --name value are both accepted for options with a value.
template <class Policy, class... Extra>
std::vector<option_spec> make_option_table() {
  std::vector<option_spec> table = {
    {"-o", takes::value, "-o <file>", "write the result to <file> (default: standard output)",
     [](options& o, std::string_view v) {
       if (o.output) throw usage_error{"-o given twice"};
       o.output = std::string(v);
     }},
    {"--emit", takes::value, "--emit=<json|dot>", "output format: devpass.graph/1 JSON (default) or Graphviz DOT",
     [](options& o, std::string_view v) {
       if (v == "json") o.emit = emit_kind::json;
       else if (v == "dot") o.emit = emit_kind::dot;
       else throw usage_error{"--emit: expected json or dot, got '" + std::string(v) + "'"};
     }},
    {"--propagate-device", takes::nothing, "--propagate-device",
     "insert and elide host/device copies (docs/device-propagation.md)",
     [](options& o, std::string_view) { o.propagate = true; }},
  };
  for (auto& row : propagation_option_rows()) table.push_back(std::move(row));
  for (auto& row : extra_phase_rows<Policy, Extra...>()) table.push_back(std::move(row));
  std::vector<option_spec> rest = {
    {"--plan-memory", takes::nothing, "--plan-memory",
     "plan one arena per device; specs get mem_id and offset (after --propagate-device)",
     [](options& o, std::string_view) { o.plan_memory = true; }},
    {"--stats", takes::nothing, "--stats", "print per-phase statistics and copy bytes (and buffers) to stderr",
     [](options& o, std::string_view) { o.stats = true; }},
    {"--time-passes", takes::optional_value, "--time-passes[=json]", "print the wall time of each phase to stderr",
     [](options& o, std::string_view v) {
       if (v.empty()) o.time_passes = timing::text;
       else if (v == "json") o.time_passes = timing::json;
       else throw usage_error{"--time-passes: expected json, got '" + std::string(v) + "'"};
     }},
    {"--print-after-each", takes::nothing, "--print-after-each", "print the graph (JSON) to stderr after every phase",
     [](options& o, std::string_view) { o.print_after_each = true; }},
    {"--debug-rules", takes::optional_value, "--debug-rules[=RULE]",
     "print each rule tried at each node and why it did not apply (RULE: only rules whose text contains it)",
     [](options& o, std::string_view v) {
       o.debug_rules = true;
       o.debug_rules_filter = std::string(v);
       o.propagation_flag_given = true;
     }},
    {"--capturability", takes::optional_value, "--capturability[=json]",
     "after --plan-memory: whether the method can be captured as a CUDA graph, and every reason it cannot, to stderr",
     [](options& o, std::string_view v) {
       if (v.empty()) o.capturability = report_format::text;
       else if (v == "json") o.capturability = report_format::json;
       else throw usage_error{"--capturability: expected no value or =json, got '" + std::string(v) + "'"};
     }},
    {"--verify-each", takes::nothing, "--verify-each",
     "verify the graph after reading it and after every pass; report every violation",
     [](options& o, std::string_view) { o.verify_each = true; }},
    {"--no-verify", takes::nothing, "--no-verify",
     "do not verify the result before writing it (by default an inconsistent result is an error, exit 1)",
     [](options& o, std::string_view) { o.verify_result = false; }},
    {"--print-policy", takes::nothing, "--print-policy",
     "print the compiled-in policy and the propagation options as JSON on stdout and exit",
     [](options& o, std::string_view) { o.print_policy = true; }},
    {"--help", takes::nothing, "--help", "print this help and exit", [](options& o, std::string_view) { o.help = true; }},
    {"--version", takes::nothing, "--version", "print the version and exit",
     [](options& o, std::string_view) { o.version = true; }},
  };
  for (auto& row : rest) table.push_back(std::move(row));
  return table;
}

template <class Policy, class... Extra>
const std::vector<option_spec>& option_table() {
  static const std::vector<option_spec> table = make_option_table<Policy, Extra...>();
  return table;
}

inline const option_spec* find_option(const std::vector<option_spec>& table, std::string_view name) {
  for (const auto& spec : table)
    if (spec.name == name) return &spec;
  return nullptr;
}

inline void set_input(options& o, std::string_view arg) {
  if (o.input) throw usage_error{"more than one input file ('" + *o.input + "' and '" + std::string(arg) + "')"};
  o.input = std::string(arg);
}

inline options parse_command_line(const std::vector<option_spec>& table, std::size_t extra_phases,
                                  const devpass::propagate_options& defaults, int argc, char** argv) {
  options o;
  o.propagation = defaults;
  o.extra_phases.assign(extra_phases, 0);
  bool only_files = false;
  // A word right after an option with an optional value, and what to say if it is a second file.
  std::string_view word_after_optional;
  std::string optional_value_hint;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (only_files || arg == "-" || arg.empty() || arg.front() != '-') {
      try {
        set_input(o, arg);
      } catch (usage_error& e) {
        if (!word_after_optional.empty() && (arg == word_after_optional || *o.input == word_after_optional))
          e.message += optional_value_hint;
        throw;
      }
      continue;
    }
    if (arg == "--") {
      only_files = true;
      continue;
    }
    // -o<file>, --name=value, or the name alone (value, if any, in the next argument).
    std::string_view name = arg;
    std::optional<std::string_view> value;
    if (arg.starts_with("-o") && arg.size() > 2 && !arg.starts_with("--")) {
      name = "-o";
      value = arg.substr(2);
    } else if (const auto eq = arg.find('='); arg.starts_with("--") && eq != std::string_view::npos) {
      name = arg.substr(0, eq);
      value = arg.substr(eq + 1);
    }
    const option_spec* spec = find_option(table, name);
    if (!spec) throw usage_error{"unknown option '" + std::string(arg) + "'"};
    // An optional value (--time-passes[=json]) comes only after '=', as with getopt: the next
    // argument is never its value, so `--time-passes json` reads `json` as a file; say so if
    // that makes a second input file.
    if (spec->argument == takes::optional_value && !value && i + 1 < argc && argv[i + 1][0] != '-') {
      word_after_optional = argv[i + 1];
      optional_value_hint = "; a value of " + std::string(arg) + " goes after '=': " + std::string(arg) + "=" + argv[i + 1];
    }
    if (spec->argument == takes::nothing && value)
      throw usage_error{"option '" + std::string(name) + "' takes no value"};
    if (spec->argument == takes::value && !value) {
      if (i + 1 >= argc) throw usage_error{"option '" + std::string(name) + "' needs a value"};
      value = argv[++i];
    }
    spec->apply(o, value.value_or(std::string_view{}));
  }
  return o;
}

inline void print_help(const std::vector<option_spec>& table, std::ostream& os) {
  os << "OVERVIEW: devpass graph optimizer: reads a devpass.graph/1 file, runs passes, writes the result\n\n"
        "USAGE: " << program << " [options] <in.json|->\n\nOPTIONS:\n";
  for (const auto& spec : table) {
    std::string left(spec.metavar);
    if (left.size() < 31) left.resize(31, ' ');
    else left += ' ';
    os << "  " << left << spec.help << "\n";
  }
  os << "\nEXIT STATUS: 0 ok, 1 invalid input, 2 usage error. On an error no output is written.\n";
}

inline void print_problems(std::string_view after, const devpass::verify_report& report) {
  std::cerr << program << ": verification failed after " << after << " (" << report.problems.size()
            << " problem" << (report.problems.size() == 1 ? "" : "s") << "):\n";
  for (const auto& problem : report.problems) std::cerr << "  " << problem.what() << "\n";
}

// Prints every problem; true when there were none. With a plan, the plan is checked too.
inline bool verify_ok(const devpass::graph& g, bool devices, std::string_view after, const devpass::memory_plan* plan = nullptr) {
  devpass::verify_report report = devices ? devpass::verify(g) : devpass::verify_structure(g);
  if (plan && report.ok()) report = devpass::verify_plan(g, *plan);
  if (report.ok()) return true;
  print_problems(after, report);
  return false;
}

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

inline void print_copy_line(const devpass::copy_census& c) {
  std::cerr << "copies: h2d " << c.h2d << " (" << devpass::format_bytes(c.h2d_bytes) << "), d2h " << c.d2h << " ("
            << devpass::format_bytes(c.d2h_bytes) << "), d2d " << c.d2d << " (" << devpass::format_bytes(c.d2d_bytes)
            << "); " << devpass::format_bytes(c.bytes()) << " moved per execution\n";
}

inline void print_statistics(const tool_instrumentation& in, const devpass::propagate_stats& totals) {
  std::cerr << "=== " << program << " statistics ===\n";
  for (const auto& p : in.statistics.phases) {
    const auto& c = p.result.counters;
    // The phases of propagation and a driver's own add and remove copies only.
    std::cerr << p.name << ": " << c.nodes_added << " copies inserted, " << c.nodes_removed
              << " elided; " << c.rewrites << " rewrites, " << c.matches_tried << " matches tried, +" << c.nodes_added
              << "/-" << c.nodes_removed << " nodes\n";
  }
  print_copy_line(totals.after);
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
}

inline void print_times(const options& o, const devpass::pipeline::phase_timer& timer) {
  if (o.time_passes == timing::json) {
    std::cerr << "{\"phases\": [";
    for (std::size_t i = 0; i < timer.phases.size(); ++i)
      std::cerr << (i ? ", " : "") << "{\"name\": \"" << timer.phases[i].name << "\", \"seconds\": " << timer.phases[i].seconds
                << "}";
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
  const auto check = [&]<class Phase>(std::type_identity<Phase>) {
    constexpr bool needs_copies = devpass::pattern::contains_v<devpass::capabilities::copies_explicit, devpass::pipeline::expects_of<Phase>> ||
                                  devpass::pattern::contains_v<devpass::capabilities::round_trips_elided, devpass::pipeline::expects_of<Phase>>;
    if (needs_copies && o.extra_phases[i] && !o.propagate)
      throw devpass::config_error("--" + std::string(Phase::name) + " needs --propagate-device (it requires explicit copies)");
    ++i;
  };
  (check(std::type_identity<Extra>{}), ...);
}

// The copy policy a policy compiles in, when it compiles one only.
template <class Policy>
constexpr std::optional<devpass::copy_policy> compiled_copy_policy() {
  constexpr devpass::propagate_knobs knobs = devpass::knobs_of<Policy>();
  if constexpr (knobs.runtime_selected) return std::nullopt;
  else return knobs.share_copies ? devpass::copy_policy::devpass : devpass::copy_policy::executorch;
}

template <class Policy, class... Extra>
int run(const options& o) {
  if (o.propagation_flag_given && !o.propagate)
    throw devpass::config_error("propagation options need --propagate-device");
  if (const auto only = compiled_copy_policy<Policy>(); only && o.propagation.policy != *only)
    throw devpass::config_error("--policy=" + std::string(devpass::reflection::to_string(o.propagation.policy)) +
                                ": this driver's policy compiles only the " +
                                std::string(devpass::reflection::to_string(*only)) + " copies in");
  check_extra_phases<Extra...>(o);
  if (o.capturability != report_format::off && !o.plan_memory)
    throw devpass::config_error("--capturability needs --plan-memory (it judges the planned buffers)");
  devpass::validate(o.propagation);
  const std::string input_name = *o.input == "-" ? "<stdin>" : *o.input;
  // Initialised from the reader's return value, not emplaced into an optional: adjacency_list
  // has no move constructor, so anything but copy elision copies the whole graph.
  bool unreadable = false;
  devpass::graph g = [&]() -> devpass::graph {
    try {
      return devpass::read_graph_file(*o.input);
    } catch (const devpass::structure_error& e) {
      // --verify-each lists every structural problem of the file, as it does after a pass.
      if (!o.verify_each) throw;
      print_problems("reading " + input_name, e.report());
      unreadable = true;
      return devpass::graph();
    }
  }();
  if (unreadable) return 1;

  tool_instrumentation instrumentation{o, {}, {}};
  // --debug-rules: every rule the propagation phases try, one line each on stderr.
  devpass::rules::rule_trace trace;
  const devpass::rules::rule_trace* tracing = nullptr;
  const devpass::propagate_options& propagation = o.propagation;
  if (o.debug_rules) {
    trace.report = [](void*, std::string_view rule, std::string_view node, std::string_view site, std::string_view why) {
      std::cerr << "debug-rules: node '" << node << "'" << (site.empty() ? "" : ": ") << site << ": `" << rule << "`: " << why
                << "\n";
    };
    trace.only = o.debug_rules_filter;
    tracing = &trace;
  }
  std::optional<devpass::memory_plan> plan;
  bool extra_ran = false;
  try {
    std::optional<devpass::propagate_stats> totals;
    if (o.propagate) {
      // Traced only for --debug-rules: a traced run always takes the literal rule tables, and
      // under the executorch policy the fused plan is 4x faster (docs/performance.md, "Files").
      totals = tracing ? devpass::propagate_device_traced<Policy>(g, propagation, tracing, instrumentation)
                       : devpass::propagate_device_with<Policy>(g, propagation, instrumentation);
      if (o.verify_each && !verify_ok(g, o.propagation.enable_non_cpu_memory_planning, "propagate-device")) return 1;
    }
    // The driver's own phases, in the order it lists them, after propagation.
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      (run_extra_phase<Policy>(Extra{}, o.extra_phases[I] != 0, g, propagation, instrumentation), ...);
    }(std::index_sequence_for<Extra...>{});
    for (const char given : o.extra_phases) extra_ran = extra_ran || given;
    if (extra_ran && o.verify_each && !verify_ok(g, o.propagate && o.propagation.enable_non_cpu_memory_planning, "extra phases"))
      return 1;
    if (o.stats && totals) {
      if (extra_ran) totals->after = devpass::count_copies(g);
      print_statistics(instrumentation, *totals);
    }
    if (o.plan_memory) {
      instrumentation.before_phase("plan-memory", g);
      plan = devpass::plan_memory(g);
      instrumentation.after_phase("plan-memory", g, {});
      if (o.verify_each && !verify_ok(g, false, "plan-memory", &*plan)) return 1;
      if (o.stats) print_plan(*plan);
      if (o.capturability != report_format::off) {
        const devpass::capture_verdict verdict = devpass::capturability(g, *plan);
        if (o.capturability == report_format::json) std::cerr << devpass::capture_json(g, verdict) << "\n";
        else std::cerr << devpass::capture_text(g, verdict);
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
  const bool passes_ran = o.propagate || o.plan_memory || extra_ran;
  if (o.verify_result && passes_ran && !o.verify_each &&
      !verify_ok(g, o.propagate && o.propagation.enable_non_cpu_memory_planning, o.plan_memory ? "plan-memory" : "propagate-device",
                 plan ? &*plan : nullptr))
    return 1;

  const std::string out = o.output.value_or("-");
  if (o.emit == emit_kind::dot) devpass::write_dot_file(g, out);
  else devpass::write_graph_file(g, out, plan ? &plan->order : nullptr);
  return 0;
}

}  // namespace detail

// The driver's main: Policy is the compile-time policy the propagation runs with, Extra the
// driver's own phases (each a phase type, pipeline.hpp; default-constructible). `program` names
// the tool in messages and --help.
template <class Policy = runtime_propagate_policy, class... Extra>
int opt_main(int argc, char** argv, std::string_view program_name = "devpass-opt") {
  using namespace detail;
  program = std::string(program_name);
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
    print_help(table, std::cout);
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
    return run<Policy, Extra...>(o);
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
