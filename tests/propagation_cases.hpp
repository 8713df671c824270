// tests/propagation_cases.hpp — what the tests that compare two ways of propagating run over:
// every flag set of both policies (legacy mode, the skips, elision on and off), every graph
// file of the repository (tests/data/graphs, all folders), and random graphs beyond them.
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "devpass/passes/propagate_device_fwd.hpp"
#include "graph_dir.hpp"
#include "random_graph.hpp"
#include "read_graph_declared.hpp"

namespace devpass::testing_support {

// One flag set as text, for a failing check's message.
inline std::string flags_text(const propagate_options& o) {
  return std::string(o.policy == copy_policy::executorch ? "executorch" : "devpass") +
         (o.enable_non_cpu_memory_planning ? "" : " legacy") + (o.skip_h2d_for_method_inputs ? " skip_h2d" : "") +
         (o.skip_d2h_for_method_outputs ? " skip_d2h" : "") + (o.elide ? "" : " no_elide") +
         (o.resident_constants ? "" : " no_resident");
}

// Both policies under 16 flag sets each, and the devpass policy's 8 with copies enabled again with
// its constants copied on every execution (resident_constants off; the executorch policy ignores it).
inline std::vector<propagate_options> every_flag_set() {
  std::vector<propagate_options> sets;
  for (const auto policy : {copy_policy::devpass, copy_policy::executorch})
    for (int bits = 0; bits < 16; ++bits)
      sets.push_back({.policy = policy,
                      .enable_non_cpu_memory_planning = (bits & 1) == 0,
                      .skip_h2d_for_method_inputs = (bits & 1) == 0 && (bits & 2) != 0,
                      .skip_d2h_for_method_outputs = (bits & 1) == 0 && (bits & 4) != 0,
                      .elide = (bits & 8) == 0});
  for (int bits = 0; bits < 16; bits += 2)
    sets.push_back({.policy = copy_policy::devpass,
                    .skip_h2d_for_method_inputs = (bits & 2) != 0,
                    .skip_d2h_for_method_outputs = (bits & 4) != 0,
                    .elide = (bits & 8) == 0,
                    .resident_constants = false});
  return sets;
}

inline std::vector<std::filesystem::path> repository_graphs() {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(graph_dir()))
    if (entry.path().extension() == ".json") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

struct case_count {
  std::size_t accepted = 0, refused = 0;
};

// Runs same(source, options) (true: the options were accepted) on every repository graph under
// every flag set, each case captured for doctest's failure messages.
template <class Same>
case_count over_every_repository_case(Same&& same) {
  const auto files = repository_graphs();
  REQUIRE(files.size() >= 13);
  case_count count;
  for (const auto& file : files) {
    const graph source = read_graph_file(file.string());
    for (const propagate_options& options : every_flag_set()) {
      CAPTURE(file.string());
      INFO(flags_text(options));
      (same(source, options) ? count.accepted : count.refused) += 1;
    }
  }
  return count;
}

// Graph `seed` of the random ones: 30-69 nodes on 2-5 devices, values pre-placed on devices in
// every other one, dead values in every third.
inline graph random_propagation_graph(std::uint64_t seed) {
  return testing::random_graph(seed, {.nodes = 30 + seed % 40,
                                      .devices = static_cast<std::uint16_t>(2 + seed % 4),
                                      .preplaced = seed % 2 == 0,
                                      .dead_values = seed % 3 == 0});
}

}  // namespace devpass::testing_support
