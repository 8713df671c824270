// devpass-opt — reads a devpass.graph/1 file, runs the passes its options name, writes the result.
//
//   devpass-opt [options] <in.json|-> [-o <out>]
//
// Conventions of opt/mlir-opt: options before or after the input, "-" is standard input, output
// goes to standard output unless -o says otherwise. Exit codes: 0 ok, 1 invalid input, 2 usage
// error. On any error nothing is written (files are written to a temporary and renamed).
//
// Adding an option is one row in option_table. Passes run in pipeline order whatever the order
// of the options: --propagate-device, then --plan-memory. The tool only parses options and
// calls the library (docs/command-line.md).
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
#include "devpass/passes/propagate_device.hpp"
#include "devpass/pipeline/instrumentation.hpp"
#include "devpass/planning/memory_planner.hpp"
#include "devpass/planning/verify_plan.hpp"

#ifndef DEVPASS_VERSION
#define DEVPASS_VERSION "unknown"
#endif

namespace {

constexpr std::string_view program = "devpass-opt";

// A command line that cannot be run: exit 2.
struct usage_error {
  std::string message;
};

enum class emit_kind { json, dot };
enum class timing { off, text, json };

struct options {
  std::optional<std::string> input;
  std::optional<std::string> output;
  emit_kind emit = emit_kind::json;
  bool verify_each = false;
  bool verify_result = true;  // --no-verify turns it off
  bool help = false;
  bool version = false;
  bool propagate = false;
  bool plan_memory = false;
  bool stats = false;
  bool print_after_each = false;
  bool debug_rules = false;
  std::string debug_rules_filter;
  timing time_passes = timing::off;
  devpass::propagate_options propagation;
  bool propagation_flag_given = false;  // a propagation option without --propagate-device
};

enum class takes { nothing, value, optional_value };  // optional: only as --name=value

struct option_spec {
  std::string_view name;     // with the dashes: "--emit"
  takes argument;
  std::string_view metavar;  // for --help: "--emit=<json|dot>"
  std::string_view help;
  void (*apply)(options&, std::string_view value);
};

// One row per option. --name=value and --name value are both accepted for options with a value.
const option_spec option_table[] = {
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
    {"--policy", takes::value, "--policy=<executorch|devpass>",
     "copy policy: ExecuTorch's exact semantics, or devpass's shared copies (default)",
     [](options& o, std::string_view v) {
       if (v == "executorch") o.propagation.policy = devpass::copy_policy::executorch;
       else if (v == "devpass") o.propagation.policy = devpass::copy_policy::devpass;
       else throw usage_error{"--policy: expected executorch or devpass, got '" + std::string(v) + "'"};
       o.propagation_flag_given = true;
     }},
    {"--skip-h2d-for-method-inputs", takes::nothing, "--skip-h2d-for-method-inputs",
     "method inputs feeding a device delegate are handed in on its device (no h2d)",
     [](options& o, std::string_view) { o.propagation.skip_h2d_for_method_inputs = o.propagation_flag_given = true; }},
    {"--skip-d2h-for-method-outputs", takes::nothing, "--skip-d2h-for-method-outputs",
     "method outputs stay on their device (no d2h)",
     [](options& o, std::string_view) { o.propagation.skip_d2h_for_method_outputs = o.propagation_flag_given = true; }},
    {"--no-non-cpu-memory-planning", takes::nothing, "--no-non-cpu-memory-planning",
     "ExecuTorch's legacy mode: no copies, device tags only",
     [](options& o, std::string_view) {
       o.propagation.enable_non_cpu_memory_planning = false;
       o.propagation_flag_given = true;
     }},
    {"--no-elide", takes::nothing, "--no-elide", "keep h2d_copy(d2h_copy(x)) round trips",
     [](options& o, std::string_view) {
       o.propagation.elide = false;
       o.propagation_flag_given = true;
     }},
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
    {"--verify-each", takes::nothing, "--verify-each",
     "verify the graph after reading it and after every pass; report every violation",
     [](options& o, std::string_view) { o.verify_each = true; }},
    {"--no-verify", takes::nothing, "--no-verify",
     "do not verify the result before writing it (by default an inconsistent result is an error, exit 1)",
     [](options& o, std::string_view) { o.verify_result = false; }},
    {"--help", takes::nothing, "--help", "print this help and exit", [](options& o, std::string_view) { o.help = true; }},
    {"--version", takes::nothing, "--version", "print the version and exit",
     [](options& o, std::string_view) { o.version = true; }},
};

const option_spec* find_option(std::string_view name) {
  for (const auto& spec : option_table)
    if (spec.name == name) return &spec;
  return nullptr;
}

void set_input(options& o, std::string_view arg) {
  if (o.input) throw usage_error{"more than one input file ('" + *o.input + "' and '" + std::string(arg) + "')"};
  o.input = std::string(arg);
}

options parse_command_line(int argc, char** argv) {
  options o;
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
    const option_spec* spec = find_option(name);
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

void print_help(std::ostream& os) {
  os << "OVERVIEW: devpass graph optimizer: reads a devpass.graph/1 file, runs passes, writes the result\n\n"
        "USAGE: devpass-opt [options] <in.json|->\n\nOPTIONS:\n";
  for (const auto& spec : option_table) {
    std::string left(spec.metavar);
    if (left.size() < 31) left.resize(31, ' ');
    else left += ' ';
    os << "  " << left << spec.help << "\n";
  }
  os << "\nEXIT STATUS: 0 ok, 1 invalid input, 2 usage error. On an error no output is written.\n";
}

void print_problems(std::string_view after, const devpass::verify_report& report) {
  std::cerr << program << ": verification failed after " << after << " (" << report.problems.size()
            << " problem" << (report.problems.size() == 1 ? "" : "s") << "):\n";
  for (const auto& problem : report.problems) std::cerr << "  " << problem.what() << "\n";
}

// Prints every problem; true when there were none. With a plan, the plan is checked too.
bool verify_ok(const devpass::graph& g, bool devices, std::string_view after, const devpass::memory_plan* plan = nullptr) {
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

void print_copy_line(const devpass::copy_census& c) {
  std::cerr << "copies: h2d " << c.h2d << " (" << devpass::format_bytes(c.h2d_bytes) << "), d2h " << c.d2h << " ("
            << devpass::format_bytes(c.d2h_bytes) << "), d2d " << c.d2d << " (" << devpass::format_bytes(c.d2d_bytes)
            << "); " << devpass::format_bytes(c.bytes()) << " moved per execution\n";
}

void print_statistics(const tool_instrumentation& in, const devpass::propagate_stats& totals) {
  std::cerr << "=== devpass-opt statistics ===\n";
  for (const auto& p : in.statistics.phases) {
    const auto& c = p.result.counters;
    std::cerr << p.name << ": " << p.result.copies_inserted << " copies inserted, " << p.result.copies_elided
              << " elided; " << c.rewrites << " rewrites, " << c.matches_tried << " matches tried, +" << c.nodes_added
              << "/-" << c.nodes_removed << " nodes\n";
  }
  print_copy_line(totals.after);
}

void print_plan(const devpass::memory_plan& plan) {
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

void print_times(const options& o, const devpass::pipeline::phase_timer& timer) {
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

int run(const options& o) {
  if (o.propagation_flag_given && !o.propagate)
    throw devpass::config_error("propagation options need --propagate-device");
  devpass::validate(o.propagation);
  const std::string input_name = *o.input == "-" ? "<stdin>" : *o.input;
  std::optional<devpass::graph> read;
  try {
    read.emplace(devpass::read_graph_file(*o.input));
  } catch (const devpass::structure_error& e) {
    // --verify-each lists every structural problem of the file, as it does after a pass.
    if (!o.verify_each) throw;
    print_problems("reading " + input_name, e.report());
    return 1;
  }
  devpass::graph& g = *read;

  tool_instrumentation instrumentation{o, {}, {}};
  // --debug-rules: every rule the propagation phases try, one line each on stderr.
  devpass::rules::rule_trace trace;
  devpass::propagate_options propagation = o.propagation;
  if (o.debug_rules) {
    trace.report = [](void*, std::string_view rule, std::string_view node, std::string_view site, std::string_view why) {
      std::cerr << "debug-rules: node '" << node << "'" << (site.empty() ? "" : ": ") << site << ": `" << rule << "`: " << why
                << "\n";
    };
    trace.only = o.debug_rules_filter;
    propagation.trace = &trace;
  }
  std::optional<devpass::memory_plan> plan;
  try {
    if (o.propagate) {
      const auto totals = devpass::propagate_device_with<devpass::runtime_propagate_policy>(g, propagation, instrumentation);
      if (o.verify_each && !verify_ok(g, o.propagation.enable_non_cpu_memory_planning, "propagate-device")) return 1;
      if (o.stats) print_statistics(instrumentation, totals);
    }
    if (o.plan_memory) {
      instrumentation.before_phase("plan-memory", g);
      plan = devpass::plan_memory(g);
      instrumentation.after_phase("plan-memory", g, {});
      if (o.verify_each && !verify_ok(g, false, "plan-memory", &*plan)) return 1;
      if (o.stats) print_plan(*plan);
    }
  } catch (const devpass::pipeline::verify_failure& e) {
    std::cerr << program << ": " << e.what();
    return 1;
  }
  if (o.time_passes != timing::off) print_times(o, instrumentation.timer);
  // No pass writes a graph that fails verification: the result is verified before it is written
  // (devices too once copies were placed, and the memory plan). --verify-each has done it
  // already; without a pass the graph is what the reader verified.
  const bool passes_ran = o.propagate || o.plan_memory;
  if (o.verify_result && passes_ran && !o.verify_each &&
      !verify_ok(g, o.propagate && o.propagation.enable_non_cpu_memory_planning, o.plan_memory ? "plan-memory" : "propagate-device",
                 plan ? &*plan : nullptr))
    return 1;

  const std::string out = o.output.value_or("-");
  if (o.emit == emit_kind::dot) devpass::write_dot_file(g, out);
  else devpass::write_graph_file(g, out, plan ? &plan->order : nullptr);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  options o;
  try {
    o = parse_command_line(argc, argv);
  } catch (const usage_error& e) {
    std::cerr << program << ": error: " << e.message << "\nTry '" << program << " --help'.\n";
    return 2;
  }
  if (o.help) {
    print_help(std::cout);
    return 0;
  }
  if (o.version) {
    std::cout << program << " version " << DEVPASS_VERSION << "\n";
    return 0;
  }
  if (!o.input) {
    std::cerr << program << ": error: no input file (use '-' for standard input)\nTry '" << program << " --help'.\n";
    return 2;
  }
  try {
    return run(o);
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
