// Device propagation on random graphs (fixed seeds): the properties both policies must keep.
#include <doctest/doctest.h>

#include <map>
#include <sstream>

#include "devpass/graph/verify.hpp"
#include "devpass/passes/propagate_device.hpp"
#include "devpass/testing.hpp"
#include "random_graph.hpp"

using namespace devpass;

namespace {

// A canonical text of the graph: nodes in topological order with devices and operands.
std::string canonical(const graph& g) {
  std::ostringstream out;
  for (const vertex v : topological_order(g)) {
    const node& n = g[v];
    out << n.id << " " << to_string(n.op) << " " << to_string(n.device) << " (";
    for (const value_ref in : operands(g, v)) out << value_name(g, in) << " ";
    out << ") ->";
    for (const auto& s : n.outputs) out << " " << (s.device ? to_string(*s.device) : "?");
    out << "\n";
  }
  return out.str();
}

// The original value a slot reads, looking through copies.
std::string source_through_copies(const graph& g, value_ref v) {
  while (is_copy(g[v.producer].op)) v = operand(g, v.producer, 0).value();
  return value_name(g, v);
}

// (consumer id, slot) -> original value name, for every non-copy consumer.
std::map<std::pair<std::string, std::uint32_t>, std::string> reads(const graph& g) {
  std::map<std::pair<std::string, std::uint32_t>, std::string> result;
  for (const auto v : boost::make_iterator_range(boost::vertices(g))) {
    if (is_copy(g[v].op)) continue;
    const auto ops = operands(g, v);
    for (std::uint32_t s = 0; s < ops.size(); ++s) result[{g[v].id, s}] = source_through_copies(g, ops[s]);
  }
  return result;
}

std::vector<propagate_options> all_options() {
  std::vector<propagate_options> result;
  for (const auto policy : {copy_policy::executorch, copy_policy::devpass})
    for (const bool skip_h2d : {false, true})
      for (const bool skip_d2h : {false, true})
        for (const bool elide : {false, true})
          result.push_back({.policy = policy,
                            .skip_h2d_for_method_inputs = skip_h2d,
                            .skip_d2h_for_method_outputs = skip_d2h,
                            .elide = elide});
  return result;
}

std::string describe(const propagate_options& o) {
  return std::string(o.policy == copy_policy::executorch ? "executorch" : "devpass") +
         (o.skip_h2d_for_method_inputs ? " skip_h2d" : "") + (o.skip_d2h_for_method_outputs ? " skip_d2h" : "") +
         (o.elide ? "" : " no-elide");
}

// Runs propagation on a copy of `original` under `options` and checks what every result must
// hold: the device verifier passes (a postcondition: no pass writes an inconsistent graph), each
// consumer reads the value it read before (through copies), the census is exact, and a second run
// changes nothing. Counts the run, or the refusal ExecuTorch's skip_h2d makes.
struct property_counts {
  std::size_t runs = 0, rejected = 0;
};

void check_properties(const graph& original, const propagate_options& options, property_counts& counts) {
  const auto original_reads = reads(original);
  graph g = original;
  propagate_stats stats;
  try {
    stats = propagate_device(g, options);
  } catch (const graph_error& e) {
    // Only ExecuTorch's skip_h2d rejects graphs: an input with several consumers.
    CHECK(options.policy == copy_policy::executorch);
    CHECK(options.skip_h2d_for_method_inputs);
    CHECK(e.field() == "consumers");
    ++counts.rejected;
    return;
  }
  ++counts.runs;
  // The census after the pass is kept as the pass goes (or recounted when it removed nodes).
  CHECK(stats.after == count_copies(g));
  const auto report = verify(g);
  CHECK_MESSAGE(report.ok(), report.to_string());
  CHECK(reads(g) == original_reads);
  graph twice = g;
  const auto again = propagate_device(twice, options);
  CHECK(again.after == count_copies(twice));
  CHECK(canonical(twice) == canonical(g));
}

}  // namespace

TEST_CASE("propagate properties: verifier passes, values preserved, idempotent, on 60 random graphs") {
  property_counts counts;
  for (std::uint64_t seed = 1; seed <= 60; ++seed) {
    const graph original = testing::random_graph(seed);
    for (const auto& options : all_options()) {
      CAPTURE(seed);
      CAPTURE(describe(options));
      check_properties(original, options, counts);
    }
  }
  CHECK(counts.runs > counts.rejected);
}

TEST_CASE(
    "propagate properties: the same holds with up to 8 devices, inputs and constants placed by the file, dead values") {
  // Beyond ExecuTorch's own graphs: a file may declare a method input or a constant on a device.
  // Both policies must still leave every read on its reader's device (found by fuzzing: an
  // executorch-policy run once left a delegate on cuda:1 reading a constant on cuda:0).
  property_counts counts;
  std::size_t preplaced_read_elsewhere = 0;
  for (std::uint64_t seed = 1; seed <= 150; ++seed) {
    const graph original = testing::random_graph(
        seed,
        {.nodes = 30, .devices = static_cast<std::uint16_t>(2 + seed % 7), .preplaced = true, .dead_values = true});
    // How often the case the fix is about occurs: a placed value read by a delegate elsewhere.
    for (const auto v : boost::make_iterator_range(boost::vertices(original))) {
      const node& n = original[v];
      if (n.op != op_kind::delegate) continue;
      for (const value_ref in : operands(original, v)) {
        const node& p = original[in.producer];
        if ((p.op == op_kind::input || p.op == op_kind::constant) && !location_of(original, in).is_host() &&
            location_of(original, in) != n.device)
          ++preplaced_read_elsewhere;
      }
    }
    for (const auto& options : all_options()) {
      CAPTURE(seed);
      CAPTURE(describe(options));
      check_properties(original, options, counts);
    }
  }
  CHECK(counts.runs > counts.rejected);
  CHECK(preplaced_read_elsewhere > 50);
}

TEST_CASE("propagate properties: legacy mode tags delegate inputs and outputs, and keeps the structure") {
  // Without non-cpu memory planning (ExecuTorch's legacy mode) no copies are made: values are
  // only tagged, so devices need not agree; the structure must still hold and nothing is added.
  for (std::uint64_t seed = 1; seed <= 60; ++seed) {
    CAPTURE(seed);
    graph g = testing::random_graph(seed, {.nodes = 30, .devices = 8, .preplaced = true, .dead_values = true});
    const std::size_t nodes = boost::num_vertices(g);
    propagate_device(g, {.enable_non_cpu_memory_planning = false});
    CHECK(boost::num_vertices(g) == nodes);
    CHECK_COPIES(g, 0, 0, 0);
    const auto report = verify_structure(g);
    CHECK_MESSAGE(report.ok(), report.to_string());
  }
}

TEST_CASE("propagate properties: devpass never makes more copies than executorch") {
  for (std::uint64_t seed = 1; seed <= 100; ++seed) {
    CAPTURE(seed);
    for (const bool skip_d2h : {false, true}) {
      graph e = testing::random_graph(seed), d = e;
      propagate_device(e, {.policy = copy_policy::executorch, .skip_d2h_for_method_outputs = skip_d2h});
      propagate_device(d, {.policy = copy_policy::devpass, .skip_d2h_for_method_outputs = skip_d2h});
      const auto ce = count_copies(e), cd = count_copies(d);
      CHECK(cd.copies() <= ce.copies());
      CHECK(cd.bytes() <= ce.bytes());
    }
  }
}

TEST_CASE("propagate properties: the same graph gives the same result, byte for byte") {
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    graph a = testing::random_graph(seed), b = testing::random_graph(seed);
    propagate_device(a, {});
    propagate_device(b, {});
    CHECK(canonical(a) == canonical(b));
  }
}

TEST_CASE("propagate properties: the devpass policy leaves no round trip, so skipping elision is exact") {
  // propagate_device skips the elision phase under the devpass policy when the input has no
  // copy. Sound only if the devpass insertion never makes an h2d(d2h(x)) pair or a dead d2h:
  // run the elision table on every such result and require that it finds nothing.
  std::size_t checked = 0;
  for (std::uint64_t seed = 1; seed <= 60; ++seed) {
    const graph original = testing::random_graph(seed);
    REQUIRE_COPIES(original, 0, 0, 0);
    for (const bool skip_h2d : {false, true})
      for (const bool skip_d2h : {false, true}) {
        CAPTURE(seed);
        CAPTURE(skip_h2d);
        CAPTURE(skip_d2h);
        graph g = original;
        const propagate_options options{.policy = copy_policy::devpass,
                                        .skip_h2d_for_method_inputs = skip_h2d,
                                        .skip_d2h_for_method_outputs = skip_d2h};
        propagate_device(g, options);
        rules::rewrite_context<propagate_options> ctx(g, options);
        const auto counters = rules::apply_rules(propagation::elide_table, ctx);
        CHECK(counters.rewrites == 0);
        ++checked;
      }
  }
  CHECK(checked == 240);
}
