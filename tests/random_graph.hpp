// A deterministic random graph generator for property tests: inputs, constants, delegates on
// cpu and CUDA devices (some with two outputs), host calls, fan-out, values nobody reads, one
// output node. random_graph_options widens it to what files can hold beyond ExecuTorch's own
// graphs: up to 8 devices, and method inputs and constants that the file already places on a
// device. The defaults give the graphs the earlier property tests were written against.
#pragma once

#include <random>
#include <vector>

#include "devpass/graph/graph.hpp"

namespace devpass::testing {

struct random_graph_options {
  std::size_t nodes = 40;
  std::uint16_t devices = 2;  // 2: the original mix (cpu, cuda:0, cuda:1); more: cuda:0 .. cuda:(devices-1)
  bool preplaced = false;     // some inputs and constants declared on a device by the file
  bool dead_values = false;   // a few delegates and calls at the end whose outputs nobody reads
};

inline graph random_graph(std::uint64_t seed, const random_graph_options& options) {
  std::mt19937_64 rng(seed);
  const auto pick = [&](std::size_t n) { return static_cast<std::size_t>(rng() % n); };
  const auto some_device = [&] {
    // cuda:0 half the time (one big partition), then the other devices evenly.
    if (options.devices <= 1) return cuda_device(0);
    return pick(2) == 0 ? cuda_device(0) : cuda_device(static_cast<std::uint16_t>(1 + pick(options.devices - 1)));
  };
  graph g;
  std::vector<value_ref> values;
  const tensor_spec spec{dtype::float32, {2, 3}};
  const auto leaf = [&](std::string id, op_kind op) {
    tensor_spec s = spec;
    if (options.preplaced && pick(3) == 0) s.device = some_device();
    values.push_back({add_node(g, {.id = std::move(id), .op = op, .outputs = {s}}), 0});
  };
  const std::size_t inputs = 1 + pick(3);
  for (std::size_t i = 0; i < inputs; ++i) leaf("in" + std::to_string(i), op_kind::input);
  const std::size_t constants = pick(3);
  for (std::size_t i = 0; i < constants; ++i) leaf("w" + std::to_string(i), op_kind::constant);
  const auto add_compute = [&](std::string id) {
    const std::size_t kind = pick(10);
    node n{.id = std::move(id), .kernel = "k", .outputs = {spec}};
    if (kind < 6) {
      n.op = op_kind::delegate;
      const std::size_t where = pick(10);
      if (options.devices <= 2)
        n.device = where < 6 ? cuda_device(0) : where < 8 ? cuda_device(1) : cpu_device;
      else
        n.device = where < 8 ? some_device() : cpu_device;
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
    return v;
  };
  for (std::size_t i = 0; i < options.nodes; ++i) {
    const vertex v = add_compute("n" + std::to_string(i));
    for (std::uint32_t k = 0; k < g[v].outputs.size(); ++k) values.push_back({v, k});
  }
  const vertex out = add_node(g, {.id = "out", .op = op_kind::output});
  const std::size_t outputs = 1 + pick(3);
  for (std::uint32_t s = 0; s < outputs; ++s)
    connect(g, values[values.size() - 1 - pick(std::min<std::size_t>(6, values.size()))], out, s);
  // Nodes whose values nobody reads: made after the output node has picked its operands.
  if (options.dead_values)
    for (std::size_t i = 0, dead = 1 + pick(3); i < dead; ++i) add_compute("dead" + std::to_string(i));
  return g;
}

inline graph random_graph(std::uint64_t seed, std::size_t nodes = 40) { return random_graph(seed, {.nodes = nodes}); }

}  // namespace devpass::testing
