// The bench's hand-written job (bench/hand_written_job.hpp: device propagation by hand, both
// policies, the pass's checks and counters) against propagate_device: on every repository graph
// and random graphs, under every flag set of both policies, the same graph (the written file,
// byte for byte), the same copy censuses, and the same refusals.
#include <doctest/doctest.h>

#include <string>

#include "devpass/io/json_writer.hpp"
#include "devpass/passes/propagate_device_fwd.hpp"
#include "hand_written_job.hpp"
#include "propagation_cases.hpp"

namespace {

using namespace devpass;

std::string census_text(const copy_census& c) {
  return std::to_string(c.h2d) + "/" + std::to_string(c.d2h) + "/" + std::to_string(c.d2d) + " " +
         std::to_string(c.bytes()) + " B, resident " + std::to_string(c.resident) + " " +
         std::to_string(c.resident_bytes) + " B";
}

// The graph written, the censuses, or the refusal.
template <class Propagate>
std::string outcome(graph g, const propagate_options& options, Propagate&& propagate) {
  try {
    const propagate_stats stats = propagate(g, options);
    return census_text(stats.before) + " -> " + census_text(stats.after) + "\n" + to_json(g);
  } catch (const std::exception& e) {
    return std::string("refused: ") + e.what();
  }
}

// Both on one graph and flag set; true when the options were accepted.
bool same_as_the_pass(const graph& source, const propagate_options& options) {
  const std::string pass =
      outcome(source, options, [](graph& g, const propagate_options& o) { return propagate_device(g, o); });
  CHECK(outcome(source, options, bench::hand_written_propagate) == pass);
  return !pass.starts_with("refused: ");
}

}  // namespace

TEST_CASE("hand-written job: every repository graph, every flag set, as propagate_device") {
  const auto count = testing_support::over_every_repository_case(same_as_the_pass);
  CHECK(count.accepted > 300);
  CHECK(count.refused > 0);  // executorch's skip_h2d refusals
}

TEST_CASE("hand-written job: random graphs, every flag set, as propagate_device") {
  for (std::uint64_t seed = 0; seed < 60; ++seed) {
    CAPTURE(seed);
    for (const propagate_options& options : testing_support::every_flag_set()) {
      INFO(testing_support::flags_text(options));
      (void)same_as_the_pass(testing_support::random_propagation_graph(seed), options);
    }
  }
}

TEST_CASE("hand-written job: refuses what the pass refuses before changing the graph") {
  graph g = testing_support::random_propagation_graph(1);
  // A delegate's value marked on another device than its delegate's: the input check's.
  for (const auto v : boost::make_iterator_range(boost::vertices(g)))
    if (g[v].op == op_kind::delegate && !g[v].outputs.empty()) {
      g[v].outputs[0].device = g[v].device.is_host() ? cuda_device(0) : cpu_device;
      break;
    }
  for (const propagate_options& options : testing_support::every_flag_set()) {
    CAPTURE(static_cast<int>(options.policy));
    CAPTURE(options.enable_non_cpu_memory_planning);
    (void)same_as_the_pass(g, options);
  }
  CHECK_THROWS_AS(bench::hand_written_propagate(g, {}), graph_error);
}
