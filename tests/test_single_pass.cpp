// The single-pass driver mode (rules/single_pass.hpp) and the independence analysis it rests on
// (rules/independence.hpp): which tables qualify, the pair named for those that do not (the stock
// propagation tables among them), and that one sweep leaves what the worklist leaves — the same
// graph, byte for byte, and the same rewrite and node counters — on random and repository graphs.
#include <doctest/doctest.h>

#include <string>

#include "devpass/io/json_writer.hpp"
#include "devpass/passes/propagation_phases.hpp"
#include "devpass/rules/single_pass.hpp"
#include "propagation_cases.hpp"
#include "random_graph.hpp"
#include "read_graph_declared.hpp"

namespace {

using namespace devpass;
using devpass::testing_support::read_graph_file;
using namespace devpass::dsl;
using devpass::rules::independence::first_enabling_pair;
using devpass::rules::independence::rule_pair;

struct no_options {};

constexpr auto d = "d"_c;
constexpr auto e = "e"_c;
constexpr auto h = "h"_c;
constexpr auto k = "k"_c;
constexpr auto x = "x"_c;

// A copy per use of every host constant and host method input a device delegate reads. The copies
// are h2d_copy nodes, which no rule visits or reads: no rewrite enables another.
constexpr auto per_use_copies = make_table(
    on_use(delegate.as(d), constant.as(k))[device_delegate(d) && on_host(k)] / copy_into_use<op_kind::h2d_copy>(k, d),
    on_use(delegate.as(d), input.as(x))[device_delegate(d) && on_host(x)] / copy_into_use<op_kind::h2d_copy>(x, d));

// Unused copies of inputs and constants go: erasing one takes a reader from an input or a constant,
// whose uses no rule reads.
constexpr auto drop_dead_source_copies =
    make_table(h2d_copy(input.as(x)).as(h)[unused(h)] / erase(h), d2h_copy(constant.as(k)).as(e)[unused(e)] / erase(e));

bool same_pair(std::optional<rule_pair> found, std::size_t enabler, std::size_t enabled) {
  return found && found->enabler == enabler && found->enabled == enabled;
}

// Dead copies of every input and constant (an h2d per input, a d2h per constant), for the
// erasing table to find; made after the graph's own nodes, as a pass would leave them.
void add_dead_source_copies(graph& g) {
  for (vertex v = 0, n = boost::num_vertices(g); v < n; ++v) {
    const op_kind op = g[v].op;
    if (op != op_kind::input && op != op_kind::constant) continue;
    const bool input_node = op == op_kind::input;
    node copy{.id = g[v].id + "_dead",
              .op = input_node ? op_kind::h2d_copy : op_kind::d2h_copy,
              .device = cuda_device(0),
              .outputs = g[v].outputs};
    connect(g, {v, 0}, add_node(g, std::move(copy)), 0);
  }
}

struct run_result {
  std::string text;
  rules::rewrite_counters counters;
};
template <class Table>
run_result run(graph g, const Table& table) {
  rules::rewrite_context<no_options> ctx(g, {});
  const rules::rewrite_counters counters = rules::apply_rules(table, ctx);
  return {to_json(g), counters};
}

// One sweep and the worklist on the same graph: the same file, the same rewrites and node counts,
// and no more tries than the worklist's.
// Returns the rewrites, so that the callers can show the tables did something.
template <class Table>
std::size_t check_same_as_worklist(const graph& g, const Table& table) {
  const run_result worklist = run(g, table);
  const run_result single = run(g, rules::single_pass(table));
  CHECK(single.text == worklist.text);
  CHECK(single.counters.rewrites == worklist.counters.rewrites);
  CHECK(single.counters.nodes_added == worklist.counters.nodes_added);
  CHECK(single.counters.nodes_removed == worklist.counters.nodes_removed);
  CHECK(single.counters.matches_tried <= worklist.counters.matches_tried);
  return worklist.counters.rewrites;
}

}  // namespace

TEST_CASE("independence: tables whose rewrites touch nothing their rules read qualify") {
  static_assert(!first_enabling_pair(per_use_copies));
  static_assert(!first_enabling_pair(drop_dead_source_copies));
  // Annotating and reading what no rule writes: each_output over calls, placement of the call.
  static_assert(
      !first_enabling_pair(make_table(each_output(call.as(x))[dtype_is<dtype::float16>(x)] / place_on(x, x))));
  CHECK(rules::single_pass(per_use_copies).size == 2);
}

TEST_CASE("independence: the pair that may enable is named, itself included") {
  // Erasing an unused d2h can leave the d2h it read unused: d2h(d2h(x)).
  CHECK(same_pair(first_enabling_pair(make_table(d2h_copy.as(d)[unused(d)] / erase(d))), 1, 1));
  // A rule that copies any host value into a delegate makes h2d copies another rule visits.
  CHECK(same_pair(first_enabling_pair(make_table(
                      h2d_copy(input.as(x)).as(h)[unused(h)] / erase(h),
                      on_use(delegate.as(d), any.as(x))[on_host(x)] / copy_into_use<op_kind::h2d_copy>(x, d))),
                  2, 1));
  // Placing an input reads as a change to where inputs live, which the guard reads.
  CHECK(same_pair(first_enabling_pair(make_table(on_use(delegate.as(d), input.as(x))[on_host(x)] / place_on(x, d))), 1,
                  1));
  // A user predicate reads anything; a user action may change anything.
  CHECK(same_pair(
      first_enabling_pair(make_table(
          each_output(call.as(x))[satisfies([](const auto&, value_ref) { return true; }, x)] / place_on(x, x))),
      1, 1));
  CHECK(same_pair(first_enabling_pair(make_table(each_output(call.as(x)) / apply([](auto&, value_ref) {}, x))), 1, 1));
}

TEST_CASE("independence: none of the stock propagation tables qualifies, and why") {
  // Elision: rewiring h to x can make a new h2d(d2h(...)) pair (chains of round trips).
  CHECK(same_pair(first_enabling_pair(propagation::elide_table), 1, 1));
  // The copy tables read user predicates (ExecuTorch's and devpass's own decisions) or `any`
  // operands, which the copies they make are: the analysis reads no guard's meaning.
  CHECK(same_pair(first_enabling_pair(propagation::executorch_input_table), 1, 1));
  CHECK(same_pair(first_enabling_pair(propagation::executorch_output_table), 1, 1));
  CHECK(same_pair(first_enabling_pair(propagation::devpass_copy_table), 1, 1));
  CHECK(same_pair(first_enabling_pair(propagation::place_inputs_table), 1, 1));
}

TEST_CASE("single pass: the worklist's graph and counters on random graphs") {
  std::size_t copies = 0, erased = 0;
  for (std::uint64_t seed = 0; seed < 120; ++seed) {
    INFO("seed " << seed);
    graph g = testing_support::random_propagation_graph(seed);
    copies += check_same_as_worklist(g, per_use_copies);
    add_dead_source_copies(g);
    erased += check_same_as_worklist(g, drop_dead_source_copies);
  }
  CHECK(copies > 120);
  CHECK(erased > 120);
}

TEST_CASE("single pass: the worklist's graph and counters on the repository's graphs") {
  std::size_t graphs = 0, copies = 0;
  for (const auto& path : testing_support::repository_graphs()) {
    INFO(path.string());
    graph g;
    try {
      g = read_graph_file(path.string());
    } catch (const graph_error&) {
      continue;  // the malformed files
    }
    ++graphs;
    copies += check_same_as_worklist(g, per_use_copies);
    add_dead_source_copies(g);
    check_same_as_worklist(g, drop_dead_source_copies);
  }
  CHECK(graphs > 20);
  CHECK(copies > 0);
}

TEST_CASE("single pass: what it does on a small graph, counted") {
  // x (input) and w (constant) both read twice by a cuda:0 delegate, once by a host call.
  graph g;
  const tensor_spec spec{dtype::float32, {4}};
  const vertex in = add_node(g, {.id = "x", .op = op_kind::input, .outputs = {spec}});
  const vertex w = add_node(g, {.id = "w", .op = op_kind::constant, .outputs = {spec}});
  const vertex del =
      add_node(g, {.id = "d", .op = op_kind::delegate, .device = cuda_device(0), .kernel = "k", .outputs = {spec}});
  const vertex host_call = add_node(g, {.id = "c", .op = op_kind::call, .kernel = "k", .outputs = {spec}});
  connect(g, {in, 0}, del, 0);
  connect(g, {w, 0}, del, 1);
  connect(g, {in, 0}, del, 2);
  connect(g, {del, 0}, host_call, 0);
  connect(g, {w, 0}, host_call, 1);
  const vertex out = add_node(g, {.id = "out", .op = op_kind::output});
  connect(g, {host_call, 0}, out, 0);
  rules::rewrite_context<no_options> ctx(g, {});
  const rules::rewrite_counters c = rules::apply_rules(rules::single_pass(per_use_copies), ctx);
  CHECK(c.rewrites == 3);     // d's three slots
  CHECK(c.nodes_added == 3);  // a copy per use
  // Rule 1 tries d's three slots, rule 2 the same three: the only node whose consumer matches.
  CHECK(c.matches_tried == 6);
  CHECK(boost::num_vertices(g) == 8);
  for (std::uint32_t slot = 0; slot < 3; ++slot) CHECK(g[operand(g, del, slot)->producer].op == op_kind::h2d_copy);
  CHECK(operand(g, host_call, 1)->producer == w);  // a host call keeps reading w
}
