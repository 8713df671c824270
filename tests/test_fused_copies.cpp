// The fused paths against the literal ones: the executorch path (passes/fused_executorch_copies.hpp)
// against the three rule tables it replaces, the devpass policy's one sweep
// (passes/fused_shared_copies.hpp) against its rule table under the worklist driver. On every
// repository graph, the fuzz corpora and regressions and random graphs, under every flag set of
// both policies, and on both graph models, the two give the same graph (the written file, byte
// for byte; on the own IR every vertex, edge and mark), the same per-phase counters (matches
// tried included) and copy censuses, the same totals, and the same refusals.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "convert.hpp"
#include "devpass/io/json_writer.hpp"
#include "devpass/passes/propagate_device.hpp"
#include "own_graph.hpp"
#include "propagation_cases.hpp"
#include "read_graph_declared.hpp"

namespace {

using namespace devpass;
using devpass::testing_support::read_graph_string;
using testing_support::every_flag_set;

// The stock pipeline with the copy phases of both policies run as rule tables.
using literal_policy =
    policy_of<propagate_knobs{.runtime_selected = true, .fuse_executorch_copies = false, .fuse_shared_copies = false}>;

// What each phase reported, one line per phase.
struct phase_log {
  std::vector<std::string> lines;
  static constexpr bool inspects_graph() { return false; }
  template <class G>
  void before_phase(std::string_view, const G&) {}
  template <class G, class Result>
  void after_phase(std::string_view name, const G&, const Result& r) {
    const auto& c = r.counters;
    std::string line = std::string(name) + ": tried " + std::to_string(c.matches_tried) + ", rewrites " +
                       std::to_string(c.rewrites) + ", +" + std::to_string(c.nodes_added) + "/-" +
                       std::to_string(c.nodes_removed);
    if constexpr (requires { r.copies_made; })
      line += ", made " + std::to_string(r.copies_made.h2d) + "/" + std::to_string(r.copies_made.d2h) + "/" +
              std::to_string(r.copies_made.d2d) + " " + std::to_string(r.copies_made.bytes()) + " B, resident " +
              std::to_string(r.copies_made.resident) + " " + std::to_string(r.copies_made.resident_bytes) + " B";
    lines.push_back(std::move(line));
  }
};

std::string census_text(const copy_census& c) {
  return std::to_string(c.h2d) + "/" + std::to_string(c.d2h) + "/" + std::to_string(c.d2d) + " " +
         std::to_string(c.bytes()) + " B, resident " + std::to_string(c.resident) + " " +
         std::to_string(c.resident_bytes) + " B";
}

// Everything one run leaves and reports: the graph as text, the phase lines, the totals, or the
// refusal.
struct outcome {
  std::string graph, refusal;
  std::vector<std::string> phases;
  std::string totals;
};

template <class Policy, class G, class Describe>
outcome propagated(G g, const propagate_options& options, Describe&& describe) {
  outcome result;
  phase_log log;
  try {
    const propagate_stats stats = propagate_device_with<Policy>(g, options, log);
    result.totals = census_text(stats.before) + " -> " + census_text(stats.after);
  } catch (const std::exception& e) {
    result.refusal = e.what();
    return result;
  }
  result.graph = describe(g);
  result.phases = std::move(log.lines);
  return result;
}

std::string written(const graph& g) { return to_json(g); }

// A graph read through the concept (the own IR, or a devpass::graph the writer refuses): every
// vertex's role, device, name, operands and values.
template <class G>
std::string own_ir_text(const G& g) {
  std::string text;
  for (vertex v = 0; v < boost::num_vertices(g); ++v) {
    text += std::string(to_string(role_of(g, v))) + " " + display_name(g, v) + " on " + to_string(node_device(g, v)) +
            " reads";
    for (const value_ref in : operands(g, v))
      text += " " + std::to_string(in.producer) + ":" + std::to_string(in.output);
    for (std::uint32_t k = 0; k < output_count(g, v); ++k) {
      const auto mark = marked_device(g, value_ref{v, k});
      text += " | " + (mark ? to_string(*mark) : std::string("unmarked")) + " " +
              std::to_string(value_bytes(g, value_ref{v, k})) + " uses " +
              std::to_string(use_count(g, value_ref{v, k}));
    }
    text += "\n";
  }
  return text;
}

void check_same(const outcome& fused, const outcome& literal) {
  CHECK(fused.refusal == literal.refusal);
  CHECK(fused.graph == literal.graph);
  CHECK(fused.phases == literal.phases);
  CHECK(fused.totals == literal.totals);
}

// Both paths on both graph models; true when the options were accepted.
bool same_both_ways(const graph& source, const propagate_options& options) {
  const outcome fused = propagated<policy_from_options>(source, options, written);
  check_same(fused, propagated<literal_policy>(source, options, written));
  const mycc::ir_graph own = mycc::from_devpass(source);
  check_same(propagated<policy_from_options>(own, options, own_ir_text<mycc::ir_graph>),
             propagated<literal_policy>(own, options, own_ir_text<mycc::ir_graph>));
  return fused.refusal.empty();
}

// How many of the runs each fused path covers (the executorch plan declines graphs that already
// hold copies; the devpass sweep hands a graph with an unconnected or doubly fed slot to the
// driver at that node).
std::size_t planned = 0, swept = 0;
void count_planned(const graph& g, const propagate_options& options) {
  if (!options.enable_non_cpu_memory_planning) return;
  if (options.policy == copy_policy::executorch && propagation::plan_executorch_copies(g, options, options.elide))
    ++planned;
  if (options.policy == copy_policy::devpass && verify_propagation_input(g).ok()) {
    graph copy = g;
    if (propagation::fused::insert_shared_copies_in_one_sweep(copy, options).handed_over_at == boost::num_vertices(g))
      ++swept;
  }
}

// Both paths, both models, under every flag set; how many of the runs were accepted.
std::size_t same_under_every_flag_set(const graph& source) {
  std::size_t accepted = 0;
  for (const propagate_options& options : every_flag_set()) {
    CAPTURE(static_cast<int>(options.policy));
    CAPTURE(options.skip_h2d_for_method_inputs);
    CAPTURE(options.skip_d2h_for_method_outputs);
    CAPTURE(options.elide);
    count_planned(source, options);
    if (same_both_ways(source, options)) ++accepted;
  }
  return accepted;
}

std::string file_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

TEST_CASE("fused paths: every repository graph, every flag set, as the rule tables") {
  planned = swept = 0;
  const auto count =
      testing_support::over_every_repository_case([](const graph& source, const propagate_options& options) {
        count_planned(source, options);
        return same_both_ways(source, options);
      });
  CHECK(count.accepted > 300);
  CHECK(planned > 100);  // the fused paths ran, not only the fallbacks
  CHECK(swept > 100);
}

TEST_CASE("fused paths: random graphs, every flag set, as the rule tables") {
  planned = swept = 0;
  for (std::uint64_t seed = 0; seed < 120; ++seed) {
    CAPTURE(seed);
    (void)same_under_every_flag_set(testing_support::random_propagation_graph(seed));
  }
  CHECK(planned >= 120 * 4);
  CHECK(swept >= 120 * 4);
}

// Files may name an operand before the node that makes it, and the reader keeps the file's order:
// readers then come before their producers in vertex order, where the rewrite driver's sweep
// has passed them when a copy takes them over and visits them again (counted in matches tried).
TEST_CASE("fused paths: readers before their producers in vertex order, every flag set, as the rule tables") {
  const char* const files[] = {
      // a host call before the device delegate it reads
      R"({"format": "devpass.graph/1", "name": "m", "nodes": [
        {"id": "x", "op": "input", "outputs": [{"dtype": "float32", "shape": [4]}]},
        {"id": "c", "op": "call", "kernel": "relu", "inputs": ["a"], "outputs": [{"dtype": "float32", "shape": [4]}]},
        {"id": "a", "op": "delegate", "device": "cuda:0", "kernel": "relu", "inputs": ["x"], "outputs": [{"dtype": "float32", "shape": [4]}]},
        {"id": "out", "op": "output", "inputs": ["c"]}]})",
      // a host call and a host delegate reading both outputs of a later device delegate (each
      // visited again once for that producer), and the output node reading one of them too
      R"({"format": "devpass.graph/1", "name": "m", "nodes": [
        {"id": "x", "op": "input", "outputs": [{"dtype": "float32", "shape": [4]}]},
        {"id": "c", "op": "call", "kernel": "add", "inputs": ["a", "a:1"], "outputs": [{"dtype": "float32", "shape": [4]}, {"dtype": "float32", "shape": [2]}]},
        {"id": "h", "op": "delegate", "device": "cpu", "kernel": "add", "inputs": ["a:1", "a"], "outputs": [{"dtype": "float32", "shape": [4]}]},
        {"id": "a", "op": "delegate", "device": "cuda:0", "kernel": "split", "inputs": ["x"], "outputs": [{"dtype": "float32", "shape": [4]}, {"dtype": "float32", "shape": [4]}]},
        {"id": "b", "op": "delegate", "device": "cuda:1", "kernel": "relu", "inputs": ["a"], "outputs": [{"dtype": "float32", "shape": [4]}]},
        {"id": "out", "op": "output", "inputs": ["c", "h", "b", "a:1", "c:1"]}]})",
      // the output node first, reading device values made after it
      R"({"format": "devpass.graph/1", "name": "m", "nodes": [
        {"id": "out", "op": "output", "inputs": ["b", "a"]},
        {"id": "x", "op": "input", "outputs": [{"dtype": "float32", "shape": [4]}]},
        {"id": "a", "op": "delegate", "device": "cuda:0", "kernel": "relu", "inputs": ["x"], "outputs": [{"dtype": "float32", "shape": [4]}]},
        {"id": "b", "op": "delegate", "device": "cuda:0", "kernel": "relu", "inputs": ["a"], "outputs": [{"dtype": "float32", "shape": [4]}]}]})",
  };
  planned = swept = 0;
  for (const char* file : files) {
    CAPTURE(file);
    CHECK(same_under_every_flag_set(read_graph_string(file)) == every_flag_set().size());
  }
  CHECK(planned >= 3 * 4);
  CHECK(swept >= 3 * 4);
}

TEST_CASE("fused paths: the fuzz corpora and regressions, every flag set, as the rule tables") {
  planned = swept = 0;
  std::size_t files = 0;
  for (const char* folder : {"corpus", "regressions/propagate"}) {
    for (const auto& entry : std::filesystem::directory_iterator(std::filesystem::path(DEVPASS_FUZZ_DIR) / folder)) {
      const std::string bytes = file_bytes(entry.path());
      // A corpus file is a graph; a regression is the fuzzer's input, a byte of options first.
      std::optional<graph> source;
      for (const std::size_t skip : {0u, 1u}) {
        if (source || bytes.size() <= skip) continue;
        try {
          source = read_graph_string(bytes.substr(skip));
        } catch (const std::exception&) {}
      }
      if (!source) continue;
      ++files;
      CAPTURE(entry.path().string());
      (void)same_under_every_flag_set(*source);
    }
  }
  CHECK(files >= 12);
  CHECK(swept > 12);
}

namespace {
// Counts the copies in the graph after each phase; says it looks at the graph, or not.
template <bool Inspects>
struct copy_watch {
  std::vector<std::size_t> copies;
  static constexpr bool inspects_graph() { return Inspects; }
  template <class G>
  void before_phase(std::string_view, const G&) {}
  template <class G, class Result>
  void after_phase(std::string_view, const G& g, const Result&) {
    copies.push_back(count_copies(g).copies());
  }
};
graph two_delegates() {
  return read_graph_string(R"({"format": "devpass.graph/1", "name": "m", "nodes": [
    {"id": "x", "op": "input", "outputs": [{"dtype": "float32", "shape": [4]}]},
    {"id": "a", "op": "delegate", "device": "cuda:0", "kernel": "relu", "inputs": ["x"], "outputs": [{"dtype": "float32", "shape": [4]}]},
    {"id": "b", "op": "delegate", "device": "cuda:0", "kernel": "relu", "inputs": ["a"], "outputs": [{"dtype": "float32", "shape": [4]}]},
    {"id": "out", "op": "output", "inputs": ["b"]}]})");
}
}  // namespace

TEST_CASE("fused executorch path: an instrumentation that inspects the graph sees the literal phases") {
  const propagate_options options{.policy = copy_policy::executorch};
  graph looked_at = two_delegates();
  copy_watch<true> inspecting;
  propagate_device_with(looked_at, options, inspecting);
  // insert-input-copies: h2d(x), h2d(a); insert-output-copies: + d2h(a), d2h(b); elision: h2d(d2h(a)) goes.
  CHECK(inspecting.copies == std::vector<std::size_t>{2, 4, 2, 2});

  graph fused = two_delegates();
  copy_watch<false> counting;
  propagate_device_with(fused, options, counting);
  // Fused, the copies are made in insert-output-copies (its counters are complete once they are),
  // and only those elision keeps.
  CHECK(counting.copies == std::vector<std::size_t>{0, 2, 2, 2});
  CHECK(to_json(fused) == to_json(looked_at));
}

TEST_CASE("fused executorch path: declines graphs outside its preconditions, before changing them") {
  const propagate_options options{.policy = copy_policy::executorch};
  graph g = two_delegates();
  CHECK(propagation::plan_executorch_copies(g, options, true).has_value());
  propagate_device(g, options);  // now it holds copies
  const std::string before = to_json(g);
  CHECK_FALSE(propagation::plan_executorch_copies(g, options, true).has_value());
  // An unconnected slot: the rule tables skip it, the plan does not guess.
  graph open = two_delegates();
  graph_model<graph>::set_arity(open, 2, 2);
  CHECK_FALSE(propagation::plan_executorch_copies(open, options, true).has_value());
  CHECK(to_json(g) == before);
}

namespace {
// Twelve cuda:0 delegates the sweep passes before their readers: a host call reading each of them
// (some twice) and a cuda:1 delegate reading each and the input. Their d2h and d2d copies touch
// more producers per node than the sweep keeps in its short list.
graph wide_fan_in() {
  std::string nodes = R"({"id": "x", "op": "input", "outputs": [{"dtype": "float32", "shape": [4]}]})";
  std::string delegates;
  for (int i = 0; i < 12; ++i) {
    const std::string id = "d" + std::to_string(i);
    nodes +=
        R"(, {"id": ")" + id +
        R"(", "op": "delegate", "device": "cuda:0", "kernel": "relu", "inputs": ["x"], "outputs": [{"dtype": "float32", "shape": [4]}]})";
    delegates += (i ? ", \"" : "\"") + id + "\"";
  }
  nodes += R"(, {"id": "h", "op": "call", "kernel": "add", "inputs": [)" + delegates +
           R"(, "d0", "d3"], "outputs": [{"dtype": "float32", "shape": [4]}]})";
  nodes += R"(, {"id": "e", "op": "delegate", "device": "cuda:1", "kernel": "add", "inputs": [)" + delegates +
           R"(, "x"], "outputs": [{"dtype": "float32", "shape": [4]}]})";
  nodes += R"(, {"id": "out", "op": "output", "inputs": ["h", "e", "d5"]})";
  return read_graph_string(R"({"format": "devpass.graph/1", "name": "m", "nodes": [)" + nodes + "]}");
}
}  // namespace

namespace {
// Where the devpass sweep hands a graph to the driver (its vertex count: nowhere).
vertex handed_over_at(graph&& g, const propagate_options& options = {}) {
  return propagation::fused::insert_shared_copies_in_one_sweep(g, options).handed_over_at;
}
// Fused and literal runs of a graph the writer may refuse, compared through the concept. Made
// afresh for each (a graph with a tombstone cannot be copied).
template <class Make>
void same_through_the_concept(Make&& make, std::string_view refusal = {}) {
  const outcome fused = propagated<policy_from_options>(make(), propagate_options{}, own_ir_text<graph>);
  CHECK(fused.refusal.find(refusal) != std::string::npos);
  CHECK(fused.refusal.empty() == refusal.empty());
  const outcome literal = propagated<literal_policy>(make(), propagate_options{}, own_ir_text<graph>);
  check_same(fused, literal);
}
}  // namespace

TEST_CASE("fused devpass path: a node whose rewrites touch many passed producers, as the rule table") {
  const graph source = wide_fan_in();
  for (const propagate_options& options : every_flag_set()) {
    if (options.policy != copy_policy::devpass) continue;
    CAPTURE(options.skip_d2h_for_method_outputs);
    CHECK(handed_over_at(graph(source), options) == boost::num_vertices(source));
    CHECK(same_both_ways(source, options));
  }
  // What the literal table reports, pinned: an h2d of x per device (2), a d2h per cuda:0 value
  // read on the host and one of e (13), a d2d per cuda:0 value e reads (12); a rewrite per
  // rewired slot: the delegates' 12, h's 14, e's 13, the output's 2.
  graph g = source;
  phase_log log;
  propagate_device_with<policy_from_options>(g, propagate_options{}, log);
  REQUIRE(log.lines.size() >= 2);
  CHECK(log.lines.front() ==
        "insert-shared-copies: tried 514, rewrites 41, +27/-0, made 2/13/12 432 B, resident 0 0 B");
}

TEST_CASE("fused devpass path: hands a node it does not cover to the driver, which goes on from there") {
  CHECK(handed_over_at(two_delegates()) == 4);
  const auto open = [] {  // b's slot 1 unconnected: the driver's operand cache skips it
    graph g = two_delegates();
    graph_model<graph>::set_arity(g, 2, 2);
    return g;
  };
  CHECK(handed_over_at(open()) == 2);
  // The input check refuses both graphs below before either path runs (slots fed once each).
  same_through_the_concept(open, "node 'b': inputs: has 1 in-edge but arity 2");
  const auto doubled = [] {  // b's slot 0 fed twice
    graph g = two_delegates();
    connect(g, value_ref{1, 0}, 2, 0);
    return g;
  };
  CHECK(handed_over_at(doubled()) == 2);
  same_through_the_concept(doubled, "node 'b': inputs: has 2 in-edges but arity 1");
  const auto erased = [] {  // a tombstone: the driver compacts the graph at the end
    graph g = two_delegates();
    erase_node(g, 3);
    return g;
  };
  CHECK(handed_over_at(erased()) == 3);
  same_through_the_concept(erased);
  // a's value 0 marked off its device (the input check refuses that): handed over at a, where
  // the table never settles, as literally.
  const auto misplaced = [] {
    graph g = two_delegates();
    g[1].outputs[0].device = cuda_device(1);
    return g;
  };
  graph fused = misplaced(), literal = misplaced();
  CHECK_THROWS_WITH_AS(propagation::fused::insert_shared_copies_in_one_sweep(fused, propagate_options{}),
                       "rule 2 (of 3 in its table) was applied 93 times without reaching a fixed point (bound 92); a "
                       "context with rules::tracing::on names it as written",
                       rules::rewrite_error);
  CHECK_THROWS_WITH_AS(propagation::insert_shared_copies{}.run(literal, propagate_options{}),
                       "rule 2 (of 3 in its table) was applied 93 times without reaching a fixed point (bound 92); a "
                       "context with rules::tracing::on names it as written",
                       rules::rewrite_error);
}
