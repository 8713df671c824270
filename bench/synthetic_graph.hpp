// bench/synthetic_graph.hpp — a deterministic, model-shaped graph of any size for benchmarks.
//
// make_synthetic_graph(nodes, seed) has exactly `nodes` nodes (at least 3): one input "in",
// mostly chains of back-to-back cuda:0 delegates, some host `call`s, a few cuda:1 delegates,
// cpu constants feeding delegates, values read by 2-3 consumers (fan-out), and one output node
// reading the last few values. Small float32 shapes. Vertex order is a topological order, ids
// are unique ("n<k>", "c<k>"), and the graph passes verify_structure. Same arguments, same graph.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "devpass/graph/graph.hpp"
#include "devpass/graph/reserve.hpp"

namespace devpass {

namespace detail {
// splitmix64: tiny, fast, and the same on every platform (std distributions are not).
struct splitmix64 {
  std::uint64_t state;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  std::uint32_t below(std::uint32_t n) { return static_cast<std::uint32_t>(next() % n); }
};
}  // namespace detail

// constant_percent: how often a step adds a constant with the delegate reading it (8: about 7%
// of the nodes are constants; 30: about 23%, the constant-heavy graph of the bench).
[[nodiscard]] inline graph make_synthetic_graph(std::size_t nodes, std::uint64_t seed,
                                                std::uint32_t constant_percent = 8) {
  nodes = std::max<std::size_t>(nodes, 3);
  detail::splitmix64 rng{seed};
  static constexpr std::array<std::string_view, 5> kernels{"add", "mul", "matmul", "gelu", "layer_norm"};
  const tensor_spec spec{dtype::float32, {4, 8}};

  graph g;
  reserve_nodes(g, node_capacity_for(nodes));  // as read_graph does
  g[boost::graph_bundle].name = "synthetic_" + std::to_string(nodes);
  const vertex in = add_node(g, {.id = "in", .op = op_kind::input, .outputs = {spec}});

  // The last values made, newest last: chains read the newest, fan-out reads an older one.
  std::vector<value_ref> recent{{in, 0}};
  constexpr std::size_t window = 8;
  const auto remember = [&](vertex v) {
    recent.push_back({v, 0});
    if (recent.size() > window) recent.erase(recent.begin());
  };

  const std::size_t body = nodes - 2;  // everything but the input and the output node
  std::size_t made = 0;
  while (made < body) {
    const std::string k = std::to_string(made);
    const std::uint32_t roll = rng.below(100);
    if (roll < constant_percent && made + 2 <= body) {
      // A constant (weight) feeding a cuda:0 delegate.
      const vertex c = add_node(g, {.id = "c" + k, .op = op_kind::constant, .outputs = {spec}});
      const vertex d = add_node(
          g, {.id = "n" + k, .op = op_kind::delegate, .device = cuda_device(0), .kernel = "matmul", .outputs = {spec}});
      connect(g, recent.back(), d, 0);
      connect(g, {c, 0}, d, 1);
      remember(d);
      made += 2;
      continue;
    }
    node n{.id = "n" + k, .outputs = {spec}};
    // The same mix of the other kinds whatever constant_percent is.
    const std::uint32_t kind_roll = constant_percent == 8 ? roll : 8 + rng.below(92);
    if (kind_roll < 20) {
      n.op = op_kind::call;  // host kernel
      n.kernel = "relu";
    } else if (kind_roll < 25) {
      n.op = op_kind::delegate;
      n.device = cuda_device(1);
      n.kernel = std::string(kernels[rng.below(kernels.size())]);
    } else {
      n.op = op_kind::delegate;
      n.device = cuda_device(0);
      n.kernel = std::string(kernels[rng.below(kernels.size())]);
    }
    const bool binary = rng.below(100) < 30 && recent.size() > 1;
    const vertex v = add_node(g, std::move(n));
    connect(g, recent.back(), v, 0);
    if (binary) connect(g, recent[rng.below(static_cast<std::uint32_t>(recent.size() - 1))], v, 1);  // fan-out
    remember(v);
    ++made;
  }

  const vertex out = add_node(g, {.id = "out", .op = op_kind::output});
  const std::size_t results = std::min<std::size_t>(3, recent.size());
  for (std::size_t i = 0; i < results; ++i)
    connect(g, recent[recent.size() - results + i], out, static_cast<std::uint32_t>(i));
  return g;
}

}  // namespace devpass
