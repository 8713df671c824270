// devpass-run — runs a devpass.graph/1 file: device propagation, memory planning, execution with
// the builtin kernels (the opaque kernel for the rest) on deterministic inputs and constants.
//
//   devpass-run [--policy=executorch|devpass] [--skip-h2d-for-method-inputs]
//               [--skip-d2h-for-method-outputs] [--no-elide] [--no-resident-constants] [--seed N]
//               [--host-reference] [--verbose] <in.json|->
//
// Prints one JSON object on standard output (runtime::to_json): the copies of one execution, and the
// resident copies made once when the method was loaded; the "devices: ..." line and, with
// --verbose, the nodes that ran the opaque kernel go to standard error. --host-reference runs the
// original graph with every device mapped to the host and no copies: its checksums are what the
// pipeline's must equal. Exit codes: 0 ok, 1 bad input or failed run, 2 usage error.
#include <charconv>
#include <cstdint>
#include <exception>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>

#include "devpass/graph/error.hpp"
#include "devpass/io/json_reader.hpp"
// Declared only: the pass is compiled once, in src/instances/ (docs/building.md, "Compile times").
#include "devpass/passes/propagate_device_fwd.hpp"
#include "devpass/planning/memory_planner.hpp"
#include "devpass/runtime/graph_runner.hpp"
#include "devpass/runtime/kernels/builtin_fwd.hpp"

namespace {

constexpr std::string_view usage =
    "usage: devpass-run [--policy=executorch|devpass] [--skip-h2d-for-method-inputs]\n"
    "                   [--skip-d2h-for-method-outputs] [--no-elide] [--no-resident-constants] [--seed N]\n"
    "                   [--host-reference] [--verbose] <in.json|->\n";

struct usage_error {
  std::string message;
};

struct options {
  devpass::propagate_options propagate;
  std::uint64_t seed = 0;
  bool host_reference = false;
  bool verbose = false;
  bool help = false;
  std::optional<std::string> input;
};

std::uint64_t parse_seed(std::string_view text) {
  std::uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc{} || end != text.data() + text.size())
    throw usage_error{"--seed: '" + std::string(text) + "' is not a non-negative integer"};
  return value;
}

options parse(int argc, char** argv) {
  options o;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--help" || arg == "-h")
      o.help = true;
    else if (arg == "--policy=executorch")
      o.propagate.policy = devpass::copy_policy::executorch;
    else if (arg == "--policy=devpass")
      o.propagate.policy = devpass::copy_policy::devpass;
    else if (arg.starts_with("--policy"))
      throw usage_error{"--policy: expected --policy=executorch or --policy=devpass"};
    else if (arg == "--skip-h2d-for-method-inputs")
      o.propagate.skip_h2d_for_method_inputs = true;
    else if (arg == "--skip-d2h-for-method-outputs")
      o.propagate.skip_d2h_for_method_outputs = true;
    else if (arg == "--no-elide")
      o.propagate.elide = false;
    else if (arg == "--no-resident-constants")
      o.propagate.resident_constants = false;
    else if (arg == "--host-reference")
      o.host_reference = true;
    else if (arg == "--verbose")
      o.verbose = true;
    else if (arg.starts_with("--seed="))
      o.seed = parse_seed(arg.substr(7));
    else if (arg == "--seed") {
      if (++i == argc) throw usage_error{"--seed: missing value"};
      o.seed = parse_seed(argv[i]);
    } else if (arg.size() > 1 && arg.front() == '-')
      throw usage_error{"unknown option '" + std::string(arg) + "'"};
    else if (o.input)
      throw usage_error{"more than one input file"};
    else
      o.input = std::string(arg);
  }
  if (!o.help && !o.input) throw usage_error{"no input file"};
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  options o;
  try {
    o = parse(argc, argv);
  } catch (const usage_error& e) {
    std::cerr << "devpass-run: " << e.message << "\n" << usage;
    return 2;
  }
  if (o.help) {
    std::cout << usage;
    return 0;
  }
  try {
    devpass::graph g = devpass::read_graph_file(*o.input);
    devpass::runtime::kernel_registry kernels;
    devpass::runtime::register_builtin_kernels(kernels);
    const devpass::runtime::run_options run{o.seed};
    devpass::runtime::run_report report;
    if (o.host_reference) {
      report = devpass::runtime::run_host_reference(std::move(g), kernels, run);
    } else {
      (void)devpass::propagate_device(g, o.propagate);
      const devpass::memory_plan plan = devpass::plan_memory(g);
      report = devpass::runtime::run_graph(g, plan, kernels, run);
    }
    std::cerr << report.devices_line << "\n";
    if (o.verbose)
      for (const std::string& id : report.opaque_nodes) std::cerr << "opaque kernel: node '" << id << "'\n";
    std::cout << devpass::runtime::to_json(report) << "\n";
    return 0;
  } catch (const devpass::config_error& e) {
    std::cerr << "devpass-run: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "devpass-run: " << e.what() << "\n";
    return 1;
  }
}
