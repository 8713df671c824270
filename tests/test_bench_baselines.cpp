// The devpass policy's jobs by hand that the propagation bench divides the framework by
// (bench/graph_api_propagation.hpp on devpass::graph, bench/own_graph_hand_written.hpp on the
// compiler's own IR): on the bench's synthetic graphs they leave the graph propagate_device
// leaves with its default options — the same copies (kind, device, resident or not, what each
// copies and who reads it) and every value marked where it lives — and count the copies as its
// census does. The copies may be made in another order, so each graph is compared as a sorted
// list of node descriptions that name a copy by what it copies.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "convert.hpp"
#include "devpass/passes/propagate_device_fwd.hpp"
#include "graph_api_propagation.hpp"
#include "own_graph.hpp"
#include "own_graph_hand_written.hpp"
#include "synthetic_graph.hpp"

namespace {

using namespace devpass;

std::string device_text(std::optional<device> d) { return d ? to_string(*d) : std::string("-"); }

// A node of either model, named for the comparison: a node of the input by its vertex, a copy by
// its kind, device and the value it copies (a copy copies a value of the input: the devpass
// policy makes no copy of a copy).
template <class G>
std::string node_key(const G& g, vertex v, std::size_t input_nodes) {
  if (v < input_nodes) return "v" + std::to_string(v);
  const value_ref source = *operand(g, v, 0);
  return std::string(to_string(role_of(g, v))) + "[" + to_string(node_device(g, v)) + "] of " +
         node_key(g, source.producer, input_nodes) + ":" + std::to_string(source.output);
}

// Every live node: its key, role, device, whether resident, where each value is marked, and what
// each slot reads; sorted.
template <class G>
std::vector<std::string> described(const G& g, std::size_t input_nodes) {
  std::vector<std::string> lines;
  for (vertex v = 0, n = boost::num_vertices(g); v < n; ++v) {
    if (is_erased(g, v)) continue;
    std::string line = node_key(g, v, input_nodes) + " " + std::string(to_string(role_of(g, v))) + " on " +
                       to_string(node_device(g, v)) + (is_resident(g, v) ? " resident" : "") + " marks";
    for (std::uint32_t k = 0; k < output_count(g, v); ++k) line += " " + device_text(marked_device(g, {v, k}));
    line += " reads";
    for (std::uint32_t s = 0; s < arity_of(g, v); ++s) {
      const value_ref in = *operand(g, v, s);
      line += " " + node_key(g, in.producer, input_nodes) + ":" + std::to_string(in.output);
    }
    lines.push_back(std::move(line));
  }
  std::sort(lines.begin(), lines.end());
  return lines;
}

// The census's counts beside a job by hand's.
template <class Counts>
void check_counts(const copy_census& census, const Counts& by_hand) {
  CHECK(by_hand.h2d == census.h2d);
  CHECK(by_hand.d2h == census.d2h);
  CHECK(by_hand.d2d == census.d2d);
  CHECK(by_hand.resident == census.resident);
}

// Each of the bench's synthetic graphs the cases name, given to `check`.
template <class Check>
void over_synthetic_graphs(Check&& check) {
  struct synthetic_case {
    std::size_t nodes;
    std::uint64_t seed;
    std::uint32_t constant_percent;
  };
  constexpr synthetic_case cases[] = {{3, 1, 8}, {400, 42, 8}, {3000, 42, 8}, {3000, 7, 30}, {2500, 3, 60}};
  for (const auto& c : cases) {
    CAPTURE(c.nodes);
    CAPTURE(c.seed);
    CAPTURE(c.constant_percent);
    check(make_synthetic_graph(c.nodes, c.seed, c.constant_percent));
  }
}

}  // namespace

TEST_CASE("graph API job by hand: the copies and marks propagate_device leaves on devpass::graph") {
  over_synthetic_graphs([](const graph& source) {
    graph by_pass = source, by_hand = source;
    const propagate_stats stats = propagate_device(by_pass, {});
    const bench::graph_api_result counts = bench::graph_api_propagate_shared(by_hand);
    check_counts(stats.after, counts);
    CHECK(described(by_hand, boost::num_vertices(source)) == described(by_pass, boost::num_vertices(source)));
    // The copies' ids too: named as the pass names them.
    const auto sorted_ids = [](const graph& g) {
      std::vector<std::string> ids;
      for (const auto v : boost::make_iterator_range(boost::vertices(g))) ids.push_back(g[v].id);
      std::sort(ids.begin(), ids.end());
      return ids;
    };
    CHECK(sorted_ids(by_hand) == sorted_ids(by_pass));
  });
}

TEST_CASE("own IR job by hand: the copies and marks propagate_device leaves on the compiler's IR") {
  over_synthetic_graphs([](const graph& source) {
    mycc::ir_graph by_pass = mycc::from_devpass(source), by_hand = mycc::from_devpass(source);
    const propagate_stats stats = propagate_device(by_pass, {});
    const bench::own_graph_result counts = bench::own_graph_propagate_shared(by_hand);
    check_counts(stats.after, counts);
    CHECK(described(by_hand, boost::num_vertices(source)) == described(by_pass, boost::num_vertices(source)));
  });
}

TEST_CASE("jobs by hand: the synthetic graphs give them resident copies to make") {
  // Else the cases above would not tell a job that marks no copy resident from one that does.
  const graph source = make_synthetic_graph(3000, 7, 30);
  graph g = source;
  CHECK(bench::graph_api_propagate_shared(g).resident > 0);
  mycc::ir_graph ir = mycc::from_devpass(source);
  CHECK(bench::own_graph_propagate_shared(ir).resident > 0);
}
