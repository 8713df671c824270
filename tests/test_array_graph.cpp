// The array interface (interop/array_graph.hpp), what the Python bridge hands over: every
// repository graph, and random graphs, flattened to arrays, propagated, and the result applied
// back in the caller's numbering, reads exactly as the same propagation on devpass::graph: each
// node's operands through the same chain of copies, every value placed on the same device, the
// same census, the same refusals.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "devpass/interop/array_graph.hpp"
#include "graph_dir.hpp"
#include "propagation_cases.hpp"

namespace {

using namespace devpass;
using interop::device_code;
using testing_support::every_flag_set;

// A devpass::graph as arrays, in topological order; `order[i]` is the vertex of array node i.
struct flattened {
  std::vector<vertex> order;
  std::vector<std::uint8_t> roles;
  std::vector<device_code> devices;
  std::vector<std::uint32_t> output_counts, operand_offsets{0}, operand_nodes, operand_outputs;
  std::vector<std::string> names;
  std::vector<device_code> marks;
  [[nodiscard]] interop::graph_arrays arrays() const {
    return {roles, devices, output_counts, operand_offsets, operand_nodes, operand_outputs, names, marks};
  }
};

// The same graph with its vertices renumbered in topological order. The arrays must be in that
// order, and propagation visits vertices in index order, so both sides start from this graph
// (on graphs with pre-placed values the order decides which of two equal-cost copies is made).
devpass::graph in_topological_order(const devpass::graph& g) {
  const std::vector<vertex> order = topological_order(g);
  std::vector<vertex> index(boost::num_vertices(g));
  devpass::graph sorted(0, g[boost::graph_bundle]);
  for (const vertex v : order) index[v] = boost::add_vertex(g[v], sorted);
  for (const vertex v : order) {
    const std::vector<value_ref> inputs = operands(g, v);
    for (std::uint32_t slot = 0; slot < inputs.size(); ++slot)
      connect(sorted, value_ref{index[inputs[slot].producer], inputs[slot].output}, index[v], slot);
  }
  return sorted;
}

flattened flatten(const devpass::graph& g) {
  flattened f;
  for (vertex v = 0; v < boost::num_vertices(g); ++v) f.order.push_back(v);
  std::vector<std::uint32_t> index(boost::num_vertices(g));
  for (std::uint32_t i = 0; i < f.order.size(); ++i) index[f.order[i]] = i;
  for (const vertex v : f.order) {
    f.roles.push_back(static_cast<std::uint8_t>(g[v].op));
    f.devices.push_back(interop::encode(g[v].device));
    f.output_counts.push_back(static_cast<std::uint32_t>(g[v].outputs.size()));
    for (const value_ref in : operands(g, v)) {
      f.operand_nodes.push_back(index[in.producer]);
      f.operand_outputs.push_back(in.output);
    }
    f.operand_offsets.push_back(static_cast<std::uint32_t>(f.operand_nodes.size()));
    f.names.push_back(g[v].id);
    for (std::uint32_t k = 0; k < g[v].outputs.size(); ++k) {
      const auto mark = marked_device(g, value_ref{v, k});
      f.marks.push_back(mark ? interop::encode(*mark) : interop::unmarked);
    }
  }
  return f;
}

// What each node of the caller reads, written out through every copy in between:
// "relu <- h2d_copy[cuda:0](x:0)". The same text from either side means the same rewrite.
std::string described(const devpass::graph& g, value_ref v) {
  const node& n = g[v.producer];
  if (!is_copy(n.op)) return n.id + ":" + std::to_string(v.output);
  return std::string(to_string(n.op)) + "[" + to_string(n.device) + "](" +
         described(g, operands(g, v.producer).front()) + ")";
}
std::string reads_of(const devpass::graph& g) {
  std::map<std::string, std::string> lines;  // by id: the two sides number nodes differently
  for (vertex v = 0; v < boost::num_vertices(g); ++v) {
    if (g[v].erased || is_copy(g[v].op)) continue;
    std::string line = to_string(g[v].device) + " <-";
    for (const value_ref in : operands(g, v)) line += " " + described(g, in);
    for (std::uint32_t k = 0; k < g[v].outputs.size(); ++k) {
      const auto mark = marked_device(g, value_ref{v, k});
      line += " | " + (mark ? to_string(*mark) : std::string("unmarked"));
    }
    lines[g[v].id] = line;
  }
  std::string text;
  for (const auto& [id, line] : lines) text += id + ": " + line + "\n";
  return text;
}

std::string array_value(const flattened& f, const interop::propagation_arrays& r, std::uint32_t node,
                        std::uint32_t output) {
  if (node < f.order.size()) return f.names[node] + ":" + std::to_string(output);
  const std::size_t k = node - f.order.size();
  return std::string(to_string(static_cast<op_kind>(r.copy_roles[k]))) + "[" +
         to_string(interop::decode(r.copy_devices[k])) + "](" +
         array_value(f, r, r.copy_source_nodes[k], r.copy_source_outputs[k]) + ")";
}
std::string reads_of(const flattened& f, const interop::propagation_arrays& r) {
  const std::size_t n = f.order.size();
  std::vector<std::vector<std::string>> reads(n);
  for (std::size_t i = 0; i < n; ++i)
    for (std::uint32_t k = f.operand_offsets[i]; k < f.operand_offsets[i + 1]; ++k)
      reads[i].push_back(array_value(f, r, f.operand_nodes[k], f.operand_outputs[k]));
  for (std::size_t j = 0; j < r.rewired_nodes.size(); ++j)
    reads[r.rewired_nodes[j]][r.rewired_slots[j]] = array_value(f, r, r.rewired_to_nodes[j], r.rewired_to_outputs[j]);
  std::map<std::string, std::string> lines;
  std::uint32_t first_value = 0;
  for (std::uint32_t i = 0; i < n; ++i) {
    const bool gone = std::find(r.erased_nodes.begin(), r.erased_nodes.end(), i) != r.erased_nodes.end();
    if (!gone && !is_copy(static_cast<op_kind>(f.roles[i]))) {
      std::string line = to_string(interop::decode(r.node_devices[i])) + " <-";
      for (const std::string& read : reads[i]) line += " " + read;
      for (std::uint32_t k = 0; k < f.output_counts[i]; ++k) {
        const device_code mark = r.value_marks[first_value + k];
        line += " | " + (mark == interop::unmarked ? std::string("unmarked") : to_string(interop::decode(mark)));
      }
      lines[f.names[i]] = line;
    }
    first_value += f.output_counts[i];
  }
  std::string text;
  for (const auto& [id, line] : lines) text += id + ": " + line + "\n";
  return text;
}

// Propagates `source` both ways and checks the two agree; returns whether the options were accepted.
bool same_through_arrays(const devpass::graph& unsorted, const propagate_options& options) {
  const devpass::graph source = in_topological_order(unsorted);
  devpass::graph ours = source;
  const flattened f = flatten(source);
  std::string ours_error, arrays_error;
  propagate_stats stats;
  interop::propagation_arrays result;
  try {
    // The arrays carry no resident mark (array_graph has no `resident` operation): every copy
    // they hand back is made on every execution, as devpass::graph's with resident_constants off.
    propagate_options every_execution = options;
    every_execution.resident_constants = false;
    stats = propagate_device(ours, every_execution);
  } catch (const std::exception& e) {
    ours_error = e.what();
  }
  try {
    result = interop::propagate_arrays(f.arrays(), options);
  } catch (const std::exception& e) {
    arrays_error = e.what();
  }
  CHECK(arrays_error == ours_error);
  if (!ours_error.empty()) return false;
  CHECK(result.after.h2d == stats.after.h2d);
  CHECK(result.after.d2h == stats.after.d2h);
  CHECK(result.after.d2d == stats.after.d2d);
  CHECK(result.copy_roles.size() == count_copies(ours).copies() - stats.before.copies() + result.erased_nodes.size());
  REQUIRE(reads_of(f, result) == reads_of(ours));
  // A copy is listed after the copy it reads, so a caller can make them in order.
  for (std::size_t k = 0; k < result.copy_roles.size(); ++k) CHECK(result.copy_source_nodes[k] < f.order.size() + k);
  return true;
}

}  // namespace

TEST_CASE(
    "array graph: every repository graph through the arrays reads as on devpass::graph, both policies, every flag "
    "set") {
  const auto count = testing_support::over_every_repository_case(same_through_arrays);
  CHECK(count.accepted > 10 * count.refused);
}

TEST_CASE("array graph: random graphs with pre-placed values, dead values and many devices read the same") {
  std::size_t accepted = 0;
  for (std::uint64_t seed = 1; seed <= 30; ++seed) {
    const devpass::graph source = testing_support::random_propagation_graph(seed);
    for (const propagate_options& options : every_flag_set()) {
      CAPTURE(seed);
      accepted += same_through_arrays(source, options) ? 1u : 0u;
    }
  }
  CHECK(accepted > 700);
}

TEST_CASE("array graph: ExecuTorch's same-device round trip is elided and reported as removed") {
  // x -> a (cuda:0) -> b (cuda:0) -> out: ExecuTorch's phases make h2d, d2h, h2d, d2h and elide one pair.
  const std::vector<std::uint8_t> roles{0, 2, 2, 7};
  const std::vector<device_code> devices{-1, 0, 0, -1};
  const std::vector<std::uint32_t> outputs{1, 1, 1, 0}, offsets{0, 0, 1, 2, 3}, nodes{0, 1, 2}, slots{0, 0, 0};
  const std::vector<std::string> names{"x", "a", "b", "out"};
  const interop::graph_arrays arrays{roles, devices, outputs, offsets, nodes, slots, names};
  const auto r = interop::propagate_arrays(arrays, {.policy = copy_policy::executorch});
  CHECK(r.copies_removed == 2);
  REQUIRE(r.copy_roles.size() == 2);
  CHECK(static_cast<op_kind>(r.copy_roles[0]) == op_kind::h2d_copy);
  CHECK(r.copy_source_nodes[0] == 0);
  CHECK(static_cast<op_kind>(r.copy_roles[1]) == op_kind::d2h_copy);
  CHECK(r.copy_source_nodes[1] == 2);
  CHECK(r.value_marks == std::vector<device_code>{-1, 0, 0});
  const auto d = interop::propagate_arrays(arrays, {.policy = copy_policy::devpass});
  CHECK(d.copies_removed == 0);
  CHECK(d.copy_roles.size() == 2);
}

TEST_CASE("array graph: a constant's copies are made on every execution: the arrays carry no resident mark") {
  // x, w -> a = add(x, w) on cuda:0 -> out
  const std::vector<std::uint8_t> roles{0, 1, 2, 7};
  const std::vector<device_code> devices{-1, -1, 0, -1};
  const std::vector<std::uint32_t> outputs{1, 1, 1, 0}, offsets{0, 0, 0, 2, 3}, nodes{0, 1, 2}, slots{0, 0, 0};
  const auto r = interop::propagate_arrays({roles, devices, outputs, offsets, nodes, slots}, {});
  CHECK(r.after.h2d == 2);  // x and w
  CHECK(r.after.resident == 0);
}

TEST_CASE("array graph: a method input the caller stages on a device is read there, no h2d") {
  // x (staged on cuda:0) -> a (cuda:0) -> out
  const std::vector<std::uint8_t> roles{0, 2, 7};
  const std::vector<device_code> devices{-1, 0, -1}, marks{0, interop::unmarked};
  const std::vector<std::uint32_t> outputs{1, 1, 0}, offsets{0, 0, 1, 2}, nodes{0, 1}, slots{0, 0};
  const auto r = interop::propagate_arrays({roles, devices, outputs, offsets, nodes, slots, {}, marks}, {});
  REQUIRE(r.copy_roles.size() == 1);
  CHECK(static_cast<op_kind>(r.copy_roles[0]) == op_kind::d2h_copy);  // only the output comes back
  CHECK(r.value_marks == std::vector<device_code>{0, 0});
}

TEST_CASE("array graph: malformed arrays are refused naming the node and field") {
  const std::vector<std::uint8_t> roles{0, 3, 7};
  const std::vector<device_code> devices{-1, -1, -1};
  const std::vector<std::uint32_t> outputs{1, 1, 0}, offsets{0, 0, 1, 2};
  const std::vector<std::string> names{"x", "relu", "out"};
  SUBCASE("an operand that reads a later node") {
    const std::vector<std::uint32_t> nodes{2, 1}, slots{0, 0};
    CHECK_THROWS_WITH(
        static_cast<void>(interop::make_array_graph({roles, devices, outputs, offsets, nodes, slots, names})),
        "node 'relu': inputs: slot 0 reads node #2, not an earlier node (the arrays must be in topological order)");
  }
  SUBCASE("an output index past the producer's values") {
    const std::vector<std::uint32_t> nodes{0, 1}, slots{3, 0};
    CHECK_THROWS_WITH(
        static_cast<void>(interop::make_array_graph({roles, devices, outputs, offsets, nodes, slots, names})),
        "node 'relu': inputs: slot 0 reads output 3 of a node with 1 outputs");
  }
  SUBCASE("an unknown role, without names") {
    const std::vector<std::uint8_t> bad_roles{0, 9, 7};
    const std::vector<std::uint32_t> nodes{0, 1}, slots{0, 0};
    CHECK_THROWS_WITH(
        static_cast<void>(interop::make_array_graph({bad_roles, devices, outputs, offsets, nodes, slots, {}})),
        "node 'node #1': role: unknown role 9");
  }
  SUBCASE("value marks for the wrong number of values, or a bad device code") {
    const std::vector<std::uint32_t> nodes{0, 1}, slots{0, 0};
    const std::vector<device_code> one_mark{0};
    CHECK_THROWS_WITH(
        static_cast<void>(interop::make_array_graph({roles, devices, outputs, offsets, nodes, slots, names, one_mark})),
        "graph arrays: value_marks needs one entry per value (2)");
    const std::vector<device_code> bad_marks{interop::unmarked, -7};
    CHECK_THROWS_WITH(static_cast<void>(interop::make_array_graph(
                          {roles, devices, outputs, offsets, nodes, slots, names, bad_marks})),
                      "node 'relu': value_marks: device code -7");
  }
  SUBCASE("arrays of different lengths") {
    const std::vector<std::uint32_t> nodes{0, 1}, slots{0, 0};
    const std::vector<device_code> short_devices{-1, -1};
    CHECK_THROWS_AS(
        static_cast<void>(interop::make_array_graph({roles, short_devices, outputs, offsets, nodes, slots, names})),
        std::invalid_argument);
  }
}
