// A deterministic random graph generator for property tests: inputs, constants, delegates on
// cpu / cuda:0 / cuda:1 (some with two outputs), host calls, fan-out, one output node.
#pragma once

#include <random>
#include <vector>

#include "devpass/graph/graph.hpp"

namespace devpass::testing {

inline graph random_graph(std::uint64_t seed, std::size_t nodes = 40) {
  std::mt19937_64 rng(seed);
  const auto pick = [&](std::size_t n) { return static_cast<std::size_t>(rng() % n); };
  graph g;
  std::vector<value_ref> values;
  const tensor_spec spec{dtype::float32, {2, 3}};
  const std::size_t inputs = 1 + pick(3);
  for (std::size_t i = 0; i < inputs; ++i)
    values.push_back({add_node(g, {.id = "in" + std::to_string(i), .op = op_kind::input, .outputs = {spec}}), 0});
  const std::size_t constants = pick(3);
  for (std::size_t i = 0; i < constants; ++i)
    values.push_back({add_node(g, {.id = "w" + std::to_string(i), .op = op_kind::constant, .outputs = {spec}}), 0});
  for (std::size_t i = 0; i < nodes; ++i) {
    const std::size_t kind = pick(10);
    node n{.id = "n" + std::to_string(i), .kernel = "k", .outputs = {spec}};
    if (kind < 6) {
      n.op = op_kind::delegate;
      const std::size_t where = pick(10);
      n.device = where < 6 ? cuda_device(0) : where < 8 ? cuda_device(1) : cpu_device;
      if (pick(5) == 0) n.outputs.push_back(spec);
    } else {
      n.op = op_kind::call;
    }
    const vertex v = add_node(g, std::move(n));
    const std::size_t arity = 1 + pick(3);
    for (std::uint32_t s = 0; s < arity; ++s) {
      // Prefer recent values (chains), sometimes reach back (fan-out).
      const std::size_t back = pick(4) == 0 ? pick(values.size()) : pick(std::min<std::size_t>(3, values.size()));
      connect(g, values[values.size() - 1 - back], v, s);
    }
    for (std::uint32_t k = 0; k < g[v].outputs.size(); ++k) values.push_back({v, k});
  }
  const vertex out = add_node(g, {.id = "out", .op = op_kind::output});
  const std::size_t outputs = 1 + pick(3);
  for (std::uint32_t s = 0; s < outputs; ++s) connect(g, values[values.size() - 1 - pick(std::min<std::size_t>(6, values.size()))], out, s);
  return g;
}

}  // namespace devpass::testing
