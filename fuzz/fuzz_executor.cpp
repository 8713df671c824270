// Fuzz target: the executor on emulated devices. A graph with small shapes (at most 64 KiB of
// values, so the fuzzer explores graphs rather than allocations) is propagated (options from the
// first byte), planned and run with the builtin kernels; it either fails with an exception that
// names what is wrong, or its output checksums equal the host reference's, as for devpass-run.
#include "devpass/runtime/graph_runner.hpp"
#include "devpass/runtime/kernels/builtin.hpp"
#include "fuzz_checks.hpp"

namespace {
constexpr std::uint64_t byte_budget = 64 * 1024;

bool small_enough(const devpass::graph& g) {
  std::uint64_t total = 0;
  for (const auto v : boost::make_iterator_range(boost::vertices(g)))
    for (const auto& spec : g[v].outputs) {
      total += spec.byte_size();
      if (total > byte_budget) return false;
    }
  return true;
}

std::vector<std::uint64_t> checksums(const devpass::runtime::run_report& r) {
  std::vector<std::uint64_t> sums;
  for (const auto& o : r.outputs) sums.push_back(o.checksum);
  return sums;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace devpass;
  const auto [options, file] = fuzz::split_options({data, size});
  if (!options.enable_non_cpu_memory_planning) return 0;  // a legacy-mode graph is not runnable
  static const runtime::kernel_registry kernels = [] {
    runtime::kernel_registry k;
    runtime::register_builtin_kernels(k);
    return k;
  }();
  const runtime::run_options run{.seed = 7, .allow_cuda = false};
  graph g;
  try {
    g = read_graph_string(file);
    if (!small_enough(g)) return 0;
    const runtime::run_report reference = runtime::run_host_reference(g, kernels, run);
    propagate_device(g, options);
    fuzz::check_propagated(g, options);
    const memory_plan plan = plan_memory(g);
    const runtime::run_report placed = runtime::run_graph(g, plan, kernels, run);
    fuzz::require(checksums(placed) == checksums(reference), "the placed program computes the host program's outputs");
  } catch (const std::exception&) {
    // graph_error, config_error, a kernel's shape or dtype refusal: each names what is wrong.
  }
  return 0;
}
