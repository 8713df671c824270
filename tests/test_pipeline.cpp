// Pipelines: compile-time composition, policies that drop phases, run-time selection,
// instrumentation (timing, statistics, print-after-each, verify-each).
#include <doctest/doctest.h>

#include <sstream>

#include "devpass/passes/propagate_device.hpp"
#include "devpass/pipeline/instrumentation.hpp"
#include "devpass/pipeline/pipeline.hpp"
#include "devpass/pipeline/table_phase.hpp"
#include "devpass/testing/graph_builder.hpp"

using namespace devpass;
using devpass::pattern::type_list;

namespace {

struct options {
  bool run_second = true;
  int* ran = nullptr;
};

struct first_phase {
  static constexpr std::string_view name = "first";
  using expects = type_list<capabilities::devices_assigned>;
  using provides = type_list<capabilities::copies_explicit>;
  template <class Policy>
  static constexpr bool compiled_in = true;
  pipeline::phase_result run(graph&, const options& o) const {
    *o.ran += 1;
    return {};
  }
};

// Breaks the graph on purpose: a second output node.
struct second_phase {
  static constexpr std::string_view name = "second";
  using expects = type_list<capabilities::copies_explicit>;
  using provides = type_list<>;
  template <class Policy>
  static constexpr bool compiled_in = Policy::enable_second;
  bool active(const options& o) const { return o.run_second; }
  pipeline::phase_result run(graph& g, const options& o) const {
    *o.ran += 10;
    (void)add_node(g, {.id = "out2", .op = op_kind::output});
    pipeline::phase_result r;
    r.counters.nodes_added = 1;
    return r;
  }
};

// A capability of a user's own that the input graph has: no phase provides it.
struct shapes_inferred {
  static constexpr bool given_by_input = true;
};
struct reads_shapes {
  static constexpr std::string_view name = "reads-shapes";
  using expects = type_list<shapes_inferred>;
  using provides = type_list<>;
  template <class Policy>
  static constexpr bool compiled_in = true;
  pipeline::phase_result run(graph&, const options& o) const {
    *o.ran += 100;
    return {};
  }
};

// A phase written before `expects` had its name: `requires_` is still read (deprecated).
struct older_phase {
  static constexpr std::string_view name = "older";
  using requires_ = type_list<capabilities::copies_explicit>;
  using provides = type_list<>;
  template <class Policy>
  [[maybe_unused]] static constexpr bool compiled_in = true;
  pipeline::phase_result run(graph&, const options&) const { return {}; }
};
static_assert(std::is_same_v<pipeline::expects_of<older_phase>, type_list<capabilities::copies_explicit>>);
static_assert(std::is_same_v<pipeline::expects_of<first_phase>, type_list<capabilities::devices_assigned>>);
static_assert(pipeline::detail::order_check<type_list<>, first_phase, older_phase>::value);

struct with_second {
  static constexpr bool enable_second = true;
};
struct without_second {
  static constexpr bool enable_second = false;
};

graph tiny() {
  graph g;
  const vertex x = add_node(g, {.id = "x", .op = op_kind::input, .outputs = {{dtype::float32, {2}}}});
  const vertex o = add_node(g, {.id = "out", .op = op_kind::output});
  connect(g, {x, 0}, o, 0);
  return g;
}

constexpr auto two_phases = pipeline::make_pipeline(first_phase{}, second_phase{});

// Names what it expects and nothing it provides: not a phase.
struct no_provides {
  static constexpr std::string_view name = "no-provides";
  using expects = type_list<>;
};

}  // namespace

TEST_CASE("pipeline: the stock phases and a user's phase are phases; a type without provides is not") {
  static_assert(pipeline::phase<first_phase> && pipeline::phase<second_phase>);
  static_assert(pipeline::phase<propagation::place_method_inputs> && pipeline::phase<propagation::elide_round_trips>);
  static_assert(pipeline::phase<propagation::executorch_copies> && pipeline::phase<propagation::annotate_devices>);
  static_assert(!pipeline::phase<no_provides> && pipeline::phase_requirements::expects<no_provides>);
  static_assert(!pipeline::phase<int>);
  CHECK(pipeline::phase_requirements::named<first_phase>);
}

TEST_CASE("pipeline: a policy drops a phase at compile time") {
  static_assert(second_phase::compiled_in<with_second>);
  static_assert(!second_phase::compiled_in<without_second>);
  int ran = 0;
  graph g = tiny();
  two_phases.run<without_second>(g, options{.ran = &ran});
  CHECK(ran == 1);
  ran = 0;
  two_phases.run<with_second>(g, options{.ran = &ran});
  CHECK(ran == 11);
}

TEST_CASE("pipeline: run-time options select phases that are compiled in") {
  int ran = 0;
  graph g = tiny();
  two_phases.run<with_second>(g, options{.run_second = false, .ran = &ran});
  CHECK(ran == 1);
}

TEST_CASE("instrumentation: timing and statistics per phase, in order") {
  int ran = 0;
  graph g = tiny();
  pipeline::phase_timer timer;
  pipeline::phase_statistics stats;
  two_phases.run<with_second>(g, options{.ran = &ran}, pipeline::instrumentations(timer, stats));
  REQUIRE(timer.phases.size() == 2);
  CHECK(timer.phases[0].name == "first");
  CHECK(timer.phases[1].name == "second");
  CHECK(timer.total_seconds() >= 0);
  REQUIRE(stats.phases.size() == 2);
  CHECK(stats.phases[1].result.counters.nodes_added == 1);
}

TEST_CASE("instrumentation: print-after-each and verify-each") {
  int ran = 0;
  graph g = tiny();
  std::ostringstream out;
  const auto count_nodes = [](std::ostream& o, const graph& gr) { o << boost::num_vertices(gr) << " nodes\n"; };
  pipeline::print_after_each<decltype(count_nodes)> printer{&out, count_nodes};
  pipeline::verify_each verifier{.devices = false};
  try {
    two_phases.run<with_second>(g, options{.ran = &ran}, pipeline::instrumentations(printer, verifier));
    FAIL("verify-each must stop the pipeline after the phase that broke the graph");
  } catch (const pipeline::verify_failure& e) {
    CHECK(e.phase() == "second");
    CHECK(std::string(e.what()).find("output") != std::string::npos);
  }
  CHECK(out.str() == "// after first\n2 nodes\n// after second\n3 nodes\n");
}

namespace {
// Input a on the host, d0 on cuda:0 reads it, d1 on `second` reads d0, the output reads d1.
graph chain_of_two_delegates(device second) {
  graph g;
  const tensor_spec s{dtype::float32, {2, 2}};
  const vertex a = add_node(g, {.id = "a", .op = op_kind::input, .outputs = {s}});
  const vertex d0 =
      add_node(g, {.id = "d0", .op = op_kind::delegate, .device = cuda_device(0), .kernel = "add", .outputs = {s}});
  const vertex d1 =
      add_node(g, {.id = "d1", .op = op_kind::delegate, .device = second, .kernel = "add", .outputs = {s}});
  const vertex o = add_node(g, {.id = "out", .op = op_kind::output});
  connect(g, {a, 0}, d0, 0);
  connect(g, {d0, 0}, d1, 0);
  connect(g, {d1, 0}, o, 0);
  return g;
}
}  // namespace

// The executorch policy's copies are made by one composite phase (fused_executorch_copies.hpp),
// whose making marks the values: annotate-devices is still reported, and every value is marked.
TEST_CASE("instrumentation: the propagation phases report copies inserted and elided") {
  graph g = chain_of_two_delegates(cuda_device(0));
  pipeline::phase_statistics stats;
  propagate_device_with<executorch_propagate_policy>(g, {.policy = copy_policy::executorch}, stats);
  std::vector<std::string> names;
  for (const auto& p : stats.phases) names.push_back(p.name);
  CHECK(names == std::vector<std::string>{"insert-input-copies", "insert-output-copies", "elide-round-trips",
                                          "annotate-devices"});
  CHECK(stats.phases[0].result.counters.nodes_added == 2);
  CHECK(stats.phases[1].result.counters.nodes_added == 2);
  CHECK(stats.phases[2].result.counters.nodes_removed == 2);
  for (const vertex v : boost::make_iterator_range(boost::vertices(g)))
    for (std::uint32_t k = 0; k < g[v].outputs.size(); ++k) CHECK(g[v].outputs[k].device == location_of(g, {v, k}));
}

// The devpass policy's sweep marks the values itself (fused_shared_copies.hpp): annotate-devices is
// still reported, and every value is marked where it lives, as a literal run leaves it.
TEST_CASE("instrumentation: the devpass policy reports annotate-devices after its sweep marked every value") {
  graph g = chain_of_two_delegates(cuda_device(0));
  pipeline::phase_statistics stats;
  const propagate_stats done = propagate_device_with<propagate_policy>(g, {}, stats);
  std::vector<std::string> names;
  for (const auto& p : stats.phases) names.push_back(p.name);
  CHECK(names == std::vector<std::string>{"insert-shared-copies", "annotate-devices"});
  CHECK(done.after.h2d == 1);
  CHECK(done.after.d2h == 1);
  for (const vertex v : boost::make_iterator_range(boost::vertices(g)))
    for (std::uint32_t k = 0; k < g[v].outputs.size(); ++k) CHECK(g[v].outputs[k].device == location_of(g, {v, k}));
}

TEST_CASE(
    "pipeline: a capability with given_by_input holds before the first phase; the pipeline names none of its own") {
  static_assert(pipeline::given_by_input<shapes_inferred> && pipeline::given_by_input<capabilities::devices_assigned>);
  static_assert(!pipeline::given_by_input<capabilities::copies_explicit>);
  constexpr auto p = pipeline::make_pipeline(reads_shapes{}, first_phase{});
  graph g = tiny();
  int ran = 0;
  p.run<with_second>(g, options{.ran = &ran});
  CHECK(ran == 101);
}

TEST_CASE("pipeline: run returns what the phases that ran reported, added up") {
  int ran = 0;
  graph g = tiny();
  CHECK(two_phases.run<with_second>(g, options{.ran = &ran}).counters.nodes_added == 1);
  g = tiny();
  CHECK(two_phases.run<without_second>(g, options{.ran = &ran}).counters.nodes_added == 0);
  g = tiny();
  CHECK(two_phases.run<with_second>(g, options{.run_second = false, .ran = &ran}).counters.nodes_added == 0);
}

TEST_CASE("pipeline: the stock pipeline's total is the copies its phases made, fused or literal") {
  // Under ExecuTorch's policy an h2d into each delegate and a d2h after each (4 made); with d1 on
  // another device than d0 none is elided. The same whichever path runs.
  const propagate_options options{.policy = copy_policy::executorch};
  graph fused = chain_of_two_delegates(cuda_device(1));
  const propagation::phase_result total =
      propagation::phases.run<executorch_propagate_policy, propagation::phase_result>(fused, options);
  CHECK(total.copies_made.h2d == 2);
  CHECK(total.copies_made.d2h == 2);
  CHECK(total.counters.nodes_added == 4);
  CHECK(total.counters.nodes_removed == 0);
  CHECK(total.copies_made == count_copies(fused));
  // With an instrumentation that looks at the graph between phases the three rule tables run
  // one by one; the same total.
  struct looks_at_graph {
    static constexpr bool inspects_graph() { return true; }
    void before_phase(std::string_view, const graph&) {}
    void after_phase(std::string_view, const graph&, const pipeline::phase_result&) {}
  };
  graph literal = chain_of_two_delegates(cuda_device(1));
  const propagation::phase_result literal_total =
      propagation::phases.run<executorch_propagate_policy, propagation::phase_result>(literal, options,
                                                                                      looks_at_graph{});
  CHECK(literal_total.copies_made == total.copies_made);
  CHECK(literal_total.counters.nodes_added == total.counters.nodes_added);
  CHECK(literal_total.counters.nodes_removed == total.counters.nodes_removed);
}

namespace team {
using namespace devpass::dsl;
// A team's own options, derived from propagate_options, read by its own rule's guard.
struct team_options : propagate_options {
  bool drop_dead_constant_copies = true;
};
struct when_team {
  using options_type = team_options;
  template <class Policy>
  static constexpr bool compiled_in = true;
};
inline constexpr auto k = "k"_c;
inline constexpr auto e = "e"_c;
inline constexpr auto dropping = when([](const auto& ctx) { return ctx.options.drop_dead_constant_copies; });
inline constexpr auto drop_table = make_table(d2h_copy(constant.as(k)).as(e)[unused(e) && dropping] / erase(e));
struct drop_dead_copies : pipeline::table_phase<"drop-dead-copies", drop_table,
                                                type_list<capabilities::copies_explicit>, type_list<>, when_team> {};
inline constexpr auto with_drop = pipeline::make_pipeline(propagation::insert_shared_copies{}, drop_dead_copies{});
}  // namespace team

TEST_CASE("pipeline: a team's own options reach its rules; braced options are the phases' options type") {
  static_assert(std::is_same_v<decltype(team::with_drop)::options_type, team::team_options>);
  static_assert(std::is_same_v<std::remove_const_t<decltype(propagation::phases)>::options_type, propagate_options>);
  const auto with_dead_copy = [] {
    graph g = testing::graph_builder{}
                  .constant("w", {2}, "cuda:0")
                  .delegate("a", "cuda:0", "neg", {"w"})
                  .output({"a"})
                  .build();
    const vertex copy = add_node(g, node{.id = "w@d2h",
                                         .op = op_kind::d2h_copy,
                                         .device = cuda_device(0),
                                         .outputs = {tensor_spec{dtype::float32, {2}, cpu_device}}});
    connect(g, {*find_node(g, "w"), 0}, copy, 0);
    return g;
  };
  graph kept = with_dead_copy(), dropped = with_dead_copy();
  // Braced: team_options (its base, then its own switch, off); the rule's guard reads it.
  team::with_drop.run<propagate_policy>(kept, {{.policy = copy_policy::devpass}, false});
  CHECK(find_node(kept, "w@d2h"));
  team::with_drop.run<propagate_policy>(dropped, team::team_options{});
  CHECK_FALSE(find_node(dropped, "w@d2h"));
  // The stock pipeline takes braced propagate_options.
  graph g = with_dead_copy();
  const auto total = propagation::phases.run<propagate_policy, propagation::phase_result>(g, {.elide = false});
  CHECK(total.copies_made.d2h == 1);
}
