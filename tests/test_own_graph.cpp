// The graph concept (graph_model.hpp) on a second model: a compiler's own lean IR
// (examples/own_graph/). Every repository graph, and random graphs beyond what the files hold,
// converted to that IR and run through devpass's propagation (both policies, every flag set),
// a rule table and the memory planner, gives what devpass::graph gives: the same vertices in
// the same order, the same edges, the same placement of every value, the same plan.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <type_traits>
#include <vector>

#include "convert.hpp"
#include "devpass/graph/verify.hpp"
#include "devpass/passes/propagate_device_fwd.hpp"
#include "devpass/planning/memory_planner.hpp"
#include "devpass/rules.hpp"
#include "graph_dir.hpp"
#include "own_graph.hpp"
#include "propagation_cases.hpp"
#include "read_graph_declared.hpp"

namespace {

using namespace devpass;
using devpass::testing_support::read_graph_file;
using testing_support::every_flag_set;
using testing_support::repository_graphs;

// Everything a pass decides, read through the concept only, so both models print the same text
// when they hold the same graph: per live vertex its role, device, operands, and per value its
// mark, bytes and planned buffer.
template <class G>
std::string summary(const G& g) {
  std::string text;
  for (vertex v = 0; v < boost::num_vertices(g); ++v) {
    if (is_erased(g, v)) {
      text += "erased\n";
      continue;
    }
    text += std::string(to_string(role_of(g, v))) + " on " + to_string(node_device(g, v)) + " reads";
    for (const value_ref in : operands(g, v))
      text += " " + std::to_string(in.producer) + ":" + std::to_string(in.output);
    for (std::uint32_t k = 0; k < output_count(g, v); ++k) {
      const auto mark = marked_device(g, value_ref{v, k});
      text += " | value " + std::to_string(k) + " " + (mark ? to_string(*mark) : "unmarked") + " " +
              std::to_string(value_bytes(g, value_ref{v, k})) + "B at " + to_string(location_of(g, value_ref{v, k}));
    }
    text += "\n";
  }
  return text;
}
std::string buffers_of(const devpass::graph& g) {
  std::string text;
  for (vertex v = 0; v < boost::num_vertices(g); ++v)
    for (const tensor_spec& s : g[v].outputs)
      text += std::to_string(s.mem_id.value_or(-1)) + "@" + std::to_string(s.offset.value_or(0)) + " ";
  return text;
}
std::string buffers_of(const mycc::ir_graph& g) {
  std::string text;
  for (vertex v = 0; v < boost::num_vertices(g); ++v)
    for (std::uint32_t k = 0; k < g[v].value_count; ++k) {
      const auto& value = g[boost::graph_bundle].values[g[v].first_value + k];
      text += std::to_string(value.mem_id) + "@" + std::to_string(value.mem_id < 0 ? 0 : value.offset) + " ";
    }
  return text;
}
std::string plan_text(const memory_plan& plan) {
  std::string text;
  for (const vertex v : plan.order) text += std::to_string(v) + " ";
  for (const planned_buffer& b : plan.buffers)
    text += "| " + std::to_string(b.mem_id) + " " + to_string(b.device) + " " + std::to_string(b.size) + " " +
            std::to_string(b.lower_bound);
  return text;
}

// Runs propagation and planning on both models of `source`; checks they agree. Returns whether
// propagation accepted the options (both models must agree on that too, and on the message).
bool same_on_both(const devpass::graph& source, const propagate_options& options) {
  devpass::graph ours = source;
  mycc::ir_graph theirs = mycc::from_devpass(source);
  std::string ours_error, theirs_error;
  propagate_stats ours_stats, theirs_stats;
  try {
    ours_stats = propagate_device(ours, options);
  } catch (const std::exception& e) {
    ours_error = e.what();
  }
  try {
    theirs_stats = propagate_device(theirs, options);
  } catch (const std::exception& e) {
    theirs_error = e.what();
  }
  CHECK(theirs_error == ours_error);
  if (!ours_error.empty()) return false;
  CHECK(theirs_stats.before == ours_stats.before);
  CHECK(theirs_stats.after == ours_stats.after);
  CHECK(count_copies(theirs) == count_copies(ours));
  REQUIRE(summary(theirs) == summary(ours));
  CHECK(verify_devices(theirs).ok() == verify_devices(ours).ok());
  const memory_plan ours_plan = plan_memory(ours), theirs_plan = plan_memory(theirs);
  CHECK(plan_text(theirs_plan) == plan_text(ours_plan));
  CHECK(buffers_of(theirs) == buffers_of(ours));
  return true;
}

}  // namespace

// A template constrained by the concept, as a user's own code would be.
template <modeled_graph G>
constexpr bool accepted_by_a_constrained_template(const G*) {
  return true;
}
template <class G>
constexpr bool accepted_by_a_constrained_template(...) {
  return false;
}

TEST_CASE("own graph: both models satisfy the concept; a graph nobody adapted does not") {
  static_assert(modeled_graph<mycc::ir_graph> && plannable_graph<mycc::ir_graph>);
  static_assert(modeled_graph<devpass::graph> && plannable_graph<devpass::graph>);
  using unadapted = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS, int, edge_info,
                                          boost::no_property, boost::vecS>;
  static_assert(!modeled_graph<unadapted> && !model_requirements::specialized<unadapted>);
  static_assert(model_requirements::adjacency_list_storage<unadapted>);
  using list_storage = boost::adjacency_list<boost::listS, boost::vecS, boost::bidirectionalS, int, edge_info,
                                             boost::no_property, boost::vecS>;
  static_assert(!model_requirements::adjacency_list_storage<list_storage>);
  CHECK(accepted_by_a_constrained_template<mycc::ir_graph>(nullptr));
  CHECK_FALSE(accepted_by_a_constrained_template<unadapted>(nullptr));
}

TEST_CASE("own graph: the model's vertex property is at most 32 bytes") {
  CHECK(sizeof(mycc::op_node) <= 32);
  static_assert(check_graph_model<mycc::ir_graph>());
}

TEST_CASE("own graph: every repository graph gives devpass::graph's result, both policies, every flag set") {
  const auto count = testing_support::over_every_repository_case(same_on_both);
  CHECK(count.accepted > 10 * count.refused);  // refusals: ExecuTorch's skip_h2d on inputs read twice
}

TEST_CASE("own graph: random graphs with pre-placed values, dead values and many devices give the same result") {
  std::size_t accepted = 0;
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    const devpass::graph source = testing_support::random_propagation_graph(seed);
    for (const propagate_options& options : every_flag_set()) {
      CAPTURE(seed);
      accepted += same_on_both(source, options) ? 1u : 0u;
    }
  }
  CHECK(accepted > 1000);
}

TEST_CASE("own graph: a refused input names the node by the model's own name") {
  devpass::graph source = read_graph_file(devpass::testing_support::graph_path("cases/d2h_extra_cpu_consumer.json"));
  mycc::ir_graph g = mycc::from_devpass(source);
  CHECK_THROWS_WITH(
      propagate_device(g, {.policy = copy_policy::executorch, .skip_h2d_for_method_inputs = true}),
      "node 'a': consumers: skip_h2d_for_method_inputs needs a method input with one consumer (ExecuTorch), "
      "this one has 't', 'u'");
}

namespace {
// Everything a pass could change, in storage order: per vertex its fields through the concept and
// its in- and out-edges as stored (the other end, output, slot, position), then how many
// vertices and edges there are and (the own IR) how many values and names its module holds.
template <class G>
std::string storage_of(const G& g) {
  std::string text =
      std::to_string(boost::num_vertices(g)) + " vertices, " + std::to_string(boost::num_edges(g)) + " edges\n";
  const auto edge_text = [&](vertex other, const typename G::edge_descriptor& e) {
    return " " + std::to_string(other) + ":" + std::to_string(edge_output(g, e)) + "/" +
           std::to_string(edge_slot(g, e)) + "@" + std::to_string(g[e].*edge_fields<G>::position);
  };
  for (vertex v = 0; v < boost::num_vertices(g); ++v) {
    text += display_name(g, v) + " " + std::string(to_string(role_of(g, v))) + " on " + to_string(node_device(g, v)) +
            " arity " + std::to_string(arity_of(g, v)) + (is_erased(g, v) ? " erased" : "") + " in";
    for (const auto e : boost::make_iterator_range(boost::in_edges(v, g))) text += edge_text(boost::source(e, g), e);
    text += " out";
    for (const auto e : boost::make_iterator_range(boost::out_edges(v, g))) text += edge_text(boost::target(e, g), e);
    for (std::uint32_t k = 0; k < output_count(g, v); ++k) {
      const auto mark = marked_device(g, value_ref{v, k});
      text += " | " + (mark ? to_string(*mark) : std::string("unmarked"));
    }
    text += "\n";
  }
  if constexpr (std::is_same_v<G, mycc::ir_graph>)
    text += std::to_string(g[boost::graph_bundle].values.size()) + " values, " +
            std::to_string(g[boost::graph_bundle].names.size()) + " names\n";
  return text;
}

// Propagates g (whose last node the input check refuses) under every policy, with and without
// skip_h2d, and requires each run to throw naming that node and to leave g as it was.
template <class G>
void refused_as_given(G& g) {
  const vertex last = boost::num_vertices(g) - 1;
  const std::string before = storage_of(g);
  for (const auto policy : {copy_policy::devpass, copy_policy::executorch})
    for (const bool skip_h2d : {false, true}) {
      CAPTURE(policy == copy_policy::devpass);
      CAPTURE(skip_h2d);
      try {
        propagate_device(g, {.policy = policy, .skip_h2d_for_method_inputs = skip_h2d});
        FAIL("expected a graph_error");
      } catch (const graph_error& e) {
        CHECK(e.node() == display_name(g, last));
        CHECK(e.field() == "inputs");
      }
      CHECK(storage_of(g) == before);
    }
}
}  // namespace

TEST_CASE("own graph: a graph whose last node is refused is left as given, both models, policies and skip_h2d") {
  // Every copy phase plans the nodes before the last one, which need copies (an h2d into t and
  // u, a d2h for w), before the input check reaches the output node, the last.
  const devpass::graph source =
      read_graph_file(devpass::testing_support::graph_path("cases/d2h_extra_cpu_consumer.json"));
  {
    devpass::graph accepted = source;
    CHECK(propagate_device(accepted, {}).after.copies() > 0);
  }
  const auto refused = [](auto& g) {  // a third in-edge into the output node, whose arity is 2
    boost::add_edge(vertex{0}, boost::num_vertices(g) - 1, g);
    refused_as_given(g);
  };
  devpass::graph g = source;
  refused(g);
  mycc::ir_graph own = mycc::from_devpass(source);
  refused(own);
}

TEST_CASE("own graph: a user rule table runs on the model: the elision rules after a run without elision") {
  using namespace devpass::dsl;
  constexpr auto x = "x"_c;
  constexpr auto d = "d"_c;
  constexpr auto h = "h"_c;
  constexpr auto elide = make_table(
      h2d_copy(d2h_copy(any.as(x)).as(d)).as(h)[same_device(h, x)] / (rewire(h, x), erase(h), erase_if_dead(d)),
      d2h_copy.as(d)[unused(d)] / erase(d));
  std::size_t compared = 0;
  for (const auto& file : repository_graphs()) {
    CAPTURE(file.string());
    const devpass::graph source = read_graph_file(file.string());
    devpass::graph elided = source;
    propagate_device(elided, {.policy = copy_policy::executorch});
    mycc::ir_graph g = mycc::from_devpass(source);
    propagate_device(g, {.policy = copy_policy::executorch, .elide = false});
    struct no_options {};
    rules::rewrite_context<no_options, mycc::ir_graph> ctx(g, {});
    rules::apply_rules(elide, ctx);
    CHECK(count_copies(g) == count_copies(elided));
    CHECK(summary(g) == summary(elided));
    ++compared;
  }
  CHECK(compared >= 13);
}

TEST_CASE("own graph: patterns explain themselves with the model's names") {
  using namespace devpass::dsl;
  devpass::graph source = read_graph_file(devpass::testing_support::graph_path("cases/multi_output.json"));
  mycc::ir_graph g = mycc::from_devpass(source);
  const vertex r = *find_node(source, "r");
  CHECK(pattern::explain(delegate, g, value_ref{r, 0}) == "node 'r' is call, expected delegate");
  CHECK_FALSE(pattern::explain(call(any), g, value_ref{r, 0}));
}

// The conversion reserves room for the copies a pass adds, and keeps it only where the graph is
// built in place: an adjacency_list has no move, so assigning a returned graph copies it into
// storage of its own growth (the bench lost its room that way: docs/graph-concept.md, "Room for
// the copies").
TEST_CASE("own graph: fill_from_devpass and from_devpass keep the room they reserve") {
  const devpass::graph source = read_graph_file(devpass::testing_support::graph_path("cases/multi_output.json"));
  const std::size_t nodes = boost::num_vertices(source), capacity = nodes + 100;
  mycc::ir_graph filled;
  mycc::fill_from_devpass(filled, source, capacity);
  CHECK(boost::num_vertices(filled) == nodes);
  CHECK(filled.m_vertices.capacity() >= capacity);
  CHECK(filled.m_edges.capacity() >= boost::num_edges(source) + 100);
  CHECK(filled[boost::graph_bundle].values.capacity() >= capacity);
  const mycc::ir_graph initialised = mycc::from_devpass(source, capacity);  // the returned graph itself
  CHECK(initialised.m_vertices.capacity() >= capacity);
  CHECK(summary(initialised) == summary(filled));
  mycc::ir_graph assigned;
  assigned = mycc::from_devpass(source, capacity);  // a copy: the same graph, not the same room
  CHECK(summary(assigned) == summary(filled));
  // The trap the docs describe: if Boost.Graph ever moves graphs, this fails and the docs change.
  CHECK(assigned.m_vertices.capacity() < capacity);
}
