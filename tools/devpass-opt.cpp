// devpass-opt — reads a devpass.graph/1 file, runs the passes its options name, writes the result.
//
//   devpass-opt [options] <in.json|-> [-o <out>]
//
// Conventions of opt/mlir-opt: options before or after the input, "-" is standard input, output
// goes to standard output unless -o says otherwise. Exit codes: 0 ok, 1 invalid input, 2 usage
// error. On any error nothing is written (files are written to a temporary and renamed).
//
// Adding a pass is one row in option_table: its action appends a pass_step to options::passes.
// The tool only parses options and calls the library (docs/command-line.md).
#include <cstdio>
#include <exception>
#include <functional>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "devpass/graph/verify.hpp"
#include "devpass/io/dot_writer.hpp"
#include "devpass/io/json_reader.hpp"
#include "devpass/io/json_writer.hpp"

#ifndef DEVPASS_VERSION
#define DEVPASS_VERSION "unknown"
#endif

namespace {

constexpr std::string_view program = "devpass-opt";

// A command line that cannot be run: exit 2.
struct usage_error {
  std::string message;
};

// Which invariants hold after a step: the structure always; device consistency only once copies
// have been placed (a file straight from a partitioner reads values across devices).
enum class verify_level { structure, full };

struct pass_step {
  std::string name;
  std::function<void(devpass::graph&)> run;
  verify_level holds_after = verify_level::full;
};

enum class emit_kind { json, dot };

struct options {
  std::optional<std::string> input;
  std::optional<std::string> output;
  emit_kind emit = emit_kind::json;
  bool verify_each = false;
  bool help = false;
  bool version = false;
  std::vector<pass_step> passes;  // in command-line order
};

enum class takes { nothing, value };

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
    {"--verify-each", takes::nothing, "--verify-each",
     "verify the graph after reading it and after every pass; report every violation",
     [](options& o, std::string_view) { o.verify_each = true; }},
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
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (only_files || arg == "-" || arg.empty() || arg.front() != '-') {
      set_input(o, arg);
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
    if (left.size() < 26) left.resize(26, ' ');
    else left += ' ';
    os << "  " << left << spec.help << "\n";
  }
  os << "\nEXIT STATUS: 0 ok, 1 invalid input, 2 usage error. On an error no output is written.\n";
}

// Prints every problem; true when there were none.
bool verify_ok(const devpass::graph& g, verify_level level, std::string_view after) {
  const devpass::verify_report report =
      level == verify_level::full ? devpass::verify(g) : devpass::verify_structure(g);
  if (report.ok()) return true;
  std::cerr << program << ": verification failed after " << after << " (" << report.problems.size()
            << " problem" << (report.problems.size() == 1 ? "" : "s") << "):\n";
  for (const auto& problem : report.problems) std::cerr << "  " << problem.what() << "\n";
  return false;
}

int run(const options& o) {
  devpass::graph g = devpass::read_graph_file(*o.input);
  const std::string input_name = *o.input == "-" ? "<stdin>" : *o.input;
  if (o.verify_each && !verify_ok(g, verify_level::structure, "reading " + input_name)) return 1;
  for (const pass_step& pass : o.passes) {
    pass.run(g);
    if (o.verify_each && !verify_ok(g, pass.holds_after, pass.name)) return 1;
  }
  const std::string out = o.output.value_or("-");
  if (o.emit == emit_kind::dot) devpass::write_dot_file(g, out);
  else devpass::write_graph_file(g, out);
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
