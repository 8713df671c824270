// Fuzz target: reader -> device propagation (options from the first byte) -> verifier ->
// memory planning. Propagation either refuses the graph with a graph_error or config_error, or
// leaves a graph that passes the verifier, that a second run leaves unchanged, and that plans.
#include "fuzz_checks.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace devpass;
  const auto [options, file] = fuzz::split_options({data, size});
  graph g;
  try {
    g = read_graph_string(file);
    propagate_device(g, options);
  } catch (const graph_error&) {
    return 0;
  } catch (const config_error&) {
    return 0;
  }
  fuzz::check_propagated(g, options);
  if (options.enable_non_cpu_memory_planning) {
    const std::string once = fuzz::written(g);
    propagate_device(g, options);
    fuzz::require(fuzz::written(g) == once, "propagating a propagated graph changes nothing");
  }
  try {
    fuzz::check_plan(g, plan_memory(g));
  } catch (const graph_error&) {}
  return 0;
}
