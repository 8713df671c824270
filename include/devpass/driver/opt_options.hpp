// devpass/driver/opt_options.hpp — the opt driver's command line: the options it parses into, the
// option table (one row per option: name, argument, help line, what it sets) and the parser.
// The propagation knobs' rows are derived from devpass::propagate_options itself
// (passes/policy_reflection.hpp), and each of a driver's own phases adds a row.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "devpass/io/read_options.hpp"
#include "devpass/passes/policy_reflection.hpp"
#include "devpass/passes/propagate_options.hpp"

namespace devpass::driver {

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
  bool fuse = false;                           // --fuse
  std::optional<std::string> cast_signatures;  // --insert-casts=<signatures.json>
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
  devpass::read_options reading;        // --huge-pages
};

enum class takes { nothing, value, optional_value };  // optional: only as --name=value

struct option_spec {
  std::string name;  // with the dashes: "--emit"
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
      static_assert(std::is_same_v<value_type, devpass::copy_policy>,
                    "devpass-opt: a propagation knob of a type it cannot parse");
      std::string names, name = "--" + std::string(knob);
      for (const auto& [value, text] : devpass::reflection::copy_policy_names)
        names += (names.empty() ? "" : "|") + std::string(text);
      rows.push_back(
          {name, takes::value, name + "=<" + names + ">", help, [member, name, names](options& o, std::string_view v) {
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
  [[maybe_unused]] const auto add = [&]<class Phase>(std::type_identity<Phase>) {
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
         if (v == "json")
           o.emit = emit_kind::json;
         else if (v == "dot")
           o.emit = emit_kind::dot;
         else
           throw usage_error{"--emit: expected json or dot, got '" + std::string(v) + "'"};
       }},
      {"--fuse", takes::nothing, "--fuse",
       "fuse conv2d+add+relu, linear+add+gelu and linear+gelu chains into one node each (before "
       "--propagate-device)",
       [](options& o, std::string_view) { o.fuse = true; }},
      {"--insert-casts", takes::value, "--insert-casts=<signatures.json>",
       "insert a cast where a kernel wants an operand in another dtype, then drop exact cast round trips (before "
       "--propagate-device)",
       [](options& o, std::string_view v) {
         if (o.cast_signatures) throw usage_error{"--insert-casts given twice"};
         if (v.empty()) throw usage_error{"--insert-casts: expected a signatures file"};
         o.cast_signatures = std::string(v);
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
      {"--huge-pages", takes::nothing, "--huge-pages",
       "ask for transparent huge pages for the graph and its room for copies (Linux; faster on some machines, slower "
       "on others: docs/performance.md)",
       [](options& o, std::string_view) { o.reading.pages = devpass::page_advice::huge_pages; }},
      {"--stats", takes::nothing, "--stats", "print per-phase statistics and copy bytes (and buffers) to stderr",
       [](options& o, std::string_view) { o.stats = true; }},
      {"--time-passes", takes::optional_value, "--time-passes[=json]", "print the wall time of each phase to stderr",
       [](options& o, std::string_view v) {
         if (v.empty())
           o.time_passes = timing::text;
         else if (v == "json")
           o.time_passes = timing::json;
         else
           throw usage_error{"--time-passes: expected json, got '" + std::string(v) + "'"};
       }},
      {"--print-after-each", takes::nothing, "--print-after-each", "print the graph (JSON) to stderr after every phase",
       [](options& o, std::string_view) { o.print_after_each = true; }},
      {"--debug-rules", takes::optional_value, "--debug-rules[=RULE]",
       "print each rule tried at each node and why it did not apply (RULE: only rules whose text contains it)",
       [](options& o, std::string_view v) {
         o.debug_rules = true;
         o.debug_rules_filter = std::string(v);
       }},
      {"--capturability", takes::optional_value, "--capturability[=json]",
       "after --plan-memory: whether the method can be captured as a CUDA graph, and every reason it cannot, to stderr",
       [](options& o, std::string_view v) {
         if (v.empty())
           o.capturability = report_format::text;
         else if (v == "json")
           o.capturability = report_format::json;
         else
           throw usage_error{"--capturability: expected no value or =json, got '" + std::string(v) + "'"};
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
      {"--help", takes::nothing, "--help", "print this help and exit",
       [](options& o, std::string_view) { o.help = true; }},
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
      optional_value_hint =
          "; a value of " + std::string(arg) + " goes after '=': " + std::string(arg) + "=" + argv[i + 1];
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

}  // namespace devpass::driver
