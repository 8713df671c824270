// devpass/runtime/method_setup.hpp — what a caller prepares around running a method: the devices
// its allocators must serve, its inputs (deterministic, where each input lives), and the graph as
// the host alone would run it (the reference a placed run is compared with).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "devpass/graph/graph.hpp"
#include "devpass/runtime/allocator_registry.hpp"
#include "devpass/runtime/tensor.hpp"

namespace devpass::runtime {

// Every device a node runs on or a value lives on, cpu included, sorted, without duplicates.
[[nodiscard]] inline std::vector<device> devices_of(const graph& g) {
  std::vector<device> result{cpu_device};
  for (const auto v : boost::make_iterator_range(boost::vertices(g))) {
    if (g[v].erased) continue;
    result.push_back(g[v].device);
    for (std::uint32_t k = 0; k < g[v].outputs.size(); ++k) result.push_back(location_of(g, {v, k}));
  }
  std::sort(result.begin(), result.end());
  result.erase(std::unique(result.begin(), result.end()), result.end());
  return result;
}

// The method inputs (in vertex order), filled from `seed` by node id, each on the device its
// input node's value lives on.
[[nodiscard]] inline std::vector<tensor> make_method_inputs(const graph& g, allocator_registry& allocators,
                                                            std::uint64_t seed) {
  std::vector<tensor> result;
  for (const vertex v : method_inputs(g))
    result.push_back(make_deterministic_tensor(allocators, g[v].outputs.at(0), location_of(g, {v, 0}), seed, g[v].id));
  return result;
}

// The graph as the host would run it: every node and value on the cpu, no planning.
inline void map_to_host(graph& g) {
  for (const auto v : boost::make_iterator_range(boost::vertices(g))) {
    g[v].device = cpu_device;
    for (tensor_spec& s : g[v].outputs) {
      s.device.reset();
      s.mem_id.reset();
      s.offset.reset();
    }
  }
}

}  // namespace devpass::runtime
