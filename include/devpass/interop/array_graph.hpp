// devpass/interop/array_graph.hpp — a method handed over as flat arrays (from Python, another
// language, or a compiler that keeps its graph elsewhere), propagated, and handed back as arrays:
// the copies to make and the operands to rewire, never a file or JSON text in between.
//
// The arrays describe nodes 0..n-1 in topological order (every operand names an earlier node,
// which is what an FX graph's node list is): per node its role (op_kind's value), its device
// (device_code), how many values it produces, and its operands as CSR (operand_offsets[i] ..
// operand_offsets[i+1] into operand_nodes / operand_outputs, slot by slot). Names are optional
// and only feed error messages.
//
// Inside, the arrays become a lean graph model (array_graph: 28 bytes a vertex, values in a side
// table, the node's index kept as its origin) that propagate_device runs on directly. What comes
// back (propagation_arrays) names nodes by index: 0..n-1 are the caller's, n + k is the k-th
// surviving copy, in the order a caller should create them (a copy's source is earlier). The
// model has no `resident` operation (graph_model.hpp): every copy it hands back is made on every
// execution, whatever propagate_options::resident_constants says, so a caller's weights stay
// where its own runtime puts them (the ExecuTorch bridge).
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "devpass/graph/copy_census.hpp"
#include "devpass/graph/graph_model.hpp"
#include "devpass/graph/structure.hpp"
#include "devpass/passes/propagate_device.hpp"

namespace devpass::interop {

// A device in one integer: -1 is the host, k >= 0 is cuda:k.
using device_code = std::int32_t;
inline constexpr device_code host_code = -1;
// A value no pass placed (propagation_arrays::value_marks).
inline constexpr device_code unmarked = std::numeric_limits<device_code>::min();

constexpr device_code encode(device d) { return d.is_host() ? host_code : static_cast<device_code>(d.index); }
constexpr device decode(device_code c) { return c < 0 ? cpu_device : cuda_device(static_cast<std::uint16_t>(c)); }

struct graph_arrays {
  std::span<const std::uint8_t> roles{};             // op_kind, per node
  std::span<const device_code> devices{};            // per node
  std::span<const std::uint32_t> output_counts{};    // per node
  std::span<const std::uint32_t> operand_offsets{};  // n + 1 entries, from 0
  std::span<const std::uint32_t> operand_nodes{};    // per operand: the producing node (< the consumer)
  std::span<const std::uint32_t> operand_outputs{};  // per operand: which of its values
  std::span<const std::string> names = {};           // per node, or empty: messages say "node #i"
  // Per value (node i's values start at the sum of the earlier output counts), where it already
  // is when that is not where its producer runs (a method input the caller stages on a device),
  // else `unmarked`; or empty: nothing is placed yet.
  std::span<const device_code> value_marks = {};
};

struct propagation_arrays {
  // The copies, in creation order; copy k is node n + k. Its one operand is (source_node, source_output).
  std::vector<std::uint8_t> copy_roles;
  std::vector<device_code> copy_devices;  // the device side of the copy
  std::vector<std::uint32_t> copy_source_nodes, copy_source_outputs;
  // Every operand of the caller's nodes that now reads another value: (node, slot) -> value.
  std::vector<std::uint32_t> rewired_nodes, rewired_slots, rewired_to_nodes, rewired_to_outputs;
  // Per value of the caller's nodes (node i's values start at the sum of the earlier output
  // counts): where the pass placed it, or `unmarked`.
  std::vector<device_code> value_marks;
  std::vector<device_code> node_devices;    // per caller's node, after the pass (skip_h2d moves inputs)
  std::vector<std::uint32_t> erased_nodes;  // caller's nodes the pass removed (copies the input held)
  copy_census before, after;
  std::size_t copies_removed = 0;  // copies the pass made or found and then removed (round trips elided)
};

// The model the arrays become.
struct array_vertex {
  op_kind role = op_kind::call;
  bool erased = false;
  device_code device = host_code;
  std::uint32_t arity = 0;
  std::uint32_t first_value = 0;
  std::uint32_t output_count = 0;
  std::uint32_t origin = no_origin;  // the caller's index, or no_origin for a copy the pass made
  static constexpr std::uint32_t no_origin = std::numeric_limits<std::uint32_t>::max();
};
static_assert(sizeof(array_vertex) <= 28);

struct array_values {
  std::vector<device_code> marks;  // per value, `unmarked` until a pass places it
  std::span<const std::string> names;
};

using array_graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS, array_vertex, edge_info,
                                          array_values, boost::vecS>;

}  // namespace devpass::interop

template <>
struct devpass::graph_model<devpass::interop::array_graph> {
  using G = interop::array_graph;
  static interop::device_code& mark(G& g, value_ref x) {
    return g[boost::graph_bundle].marks[g[x.producer].first_value + x.output];
  }
  static interop::device_code mark(const G& g, value_ref x) {
    return g[boost::graph_bundle].marks[g[x.producer].first_value + x.output];
  }

  static op_kind role(const G& g, vertex v) { return g[v].role; }
  static bool erased(const G& g, vertex v) { return g[v].erased; }
  static void mark_erased(G& g, vertex v) { g[v].erased = true; }
  static std::uint32_t arity(const G& g, vertex v) { return g[v].arity; }
  static void set_arity(G& g, vertex v, std::uint32_t a) { g[v].arity = a; }
  static std::uint32_t output_count(const G& g, vertex v) { return g[v].output_count; }
  static device node_device(const G& g, vertex v) { return interop::decode(g[v].device); }
  static std::optional<device> marked_device(const G& g, value_ref x) {
    const interop::device_code m = mark(g, x);
    return m == interop::unmarked ? std::nullopt : std::optional(interop::decode(m));
  }
  static void mark_device(G& g, value_ref x, device d) { mark(g, x) = interop::encode(d); }
  static void set_node_device(G& g, vertex v, device d) { g[v].device = interop::encode(d); }
  // The caller keeps dtypes and shapes; propagation needs neither (copy byte counts read 0).
  static dtype value_dtype(const G&, value_ref) { return dtype::float32; }
  static std::uint64_t value_bytes(const G&, value_ref) { return 0; }
  static std::string name(const G& g, vertex v) {
    const auto& names = g[boost::graph_bundle].names;
    const std::uint32_t origin = g[v].origin;
    if (origin == interop::array_vertex::no_origin) return std::string(to_string(g[v].role)) + " #" + std::to_string(v);
    return origin < names.size() ? names[origin] : "node #" + std::to_string(origin);
  }
  static vertex add_copy(G& g, const copy_request& r) {
    auto& marks = g[boost::graph_bundle].marks;
    interop::array_vertex copy;
    copy.role = r.kind;
    copy.device = interop::encode(r.side);
    copy.first_value = static_cast<std::uint32_t>(marks.size());
    copy.output_count = 1;
    marks.push_back(interop::encode(r.kind == op_kind::d2h_copy ? cpu_device : r.side));
    return boost::add_vertex(copy, g);
  }
};

namespace devpass::interop {

namespace detail {
[[noreturn]] inline void refuse(const graph_arrays& a, std::size_t node, const std::string& field,
                                const std::string& problem) {
  const std::string name = node < a.names.size() ? a.names[node] : "node #" + std::to_string(node);
  throw graph_error("", name, field, problem);
}
}  // namespace detail

// Checks the arrays' shape and builds the model; throws std::invalid_argument (array lengths) or
// graph_error naming the node and field.
[[nodiscard]] inline array_graph make_array_graph(const graph_arrays& a) {
  const std::size_t n = a.roles.size();
  if (a.devices.size() != n || a.output_counts.size() != n || a.operand_offsets.size() != n + 1 ||
      (!a.names.empty() && a.names.size() != n))
    throw std::invalid_argument(
        "graph arrays: roles, devices, output_counts" + std::string(a.names.empty() ? "" : ", names") +
        " need one entry per node and operand_offsets one more (" + std::to_string(n) + " nodes)");
  if (a.operand_offsets[0] != 0 || a.operand_offsets[n] != a.operand_nodes.size() ||
      a.operand_nodes.size() != a.operand_outputs.size())
    throw std::invalid_argument(
        "graph arrays: operand_offsets must run from 0 to the number of operands, "
        "and operand_nodes and operand_outputs be that long");
  array_graph g(n, array_values{{}, a.names});
  auto& marks = g[boost::graph_bundle].marks;
  for (std::size_t i = 0; i < n; ++i) {
    if (a.roles[i] > static_cast<std::uint8_t>(op_kind::output))
      detail::refuse(a, i, "role", "unknown role " + std::to_string(a.roles[i]));
    if (a.devices[i] < host_code)
      detail::refuse(a, i, "device", "device code " + std::to_string(a.devices[i]) + " (-1 is the host, k is cuda:k)");
    array_vertex& v = g[i];
    v.role = static_cast<op_kind>(a.roles[i]);
    v.device = a.devices[i];
    v.first_value = static_cast<std::uint32_t>(marks.size());
    v.output_count = a.output_counts[i];
    v.origin = static_cast<std::uint32_t>(i);
    marks.resize(marks.size() + a.output_counts[i], unmarked);
  }
  if (!a.value_marks.empty()) {
    if (a.value_marks.size() != marks.size())
      throw std::invalid_argument("graph arrays: value_marks needs one entry per value (" +
                                  std::to_string(marks.size()) + ")");
    for (std::size_t i = 0; i < n; ++i)
      for (std::uint32_t k = 0; k < a.output_counts[i]; ++k) {
        const device_code m = a.value_marks[g[i].first_value + k];
        if (m != unmarked && m < host_code) detail::refuse(a, i, "value_marks", "device code " + std::to_string(m));
        marks[g[i].first_value + k] = m;
      }
  }
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t begin = a.operand_offsets[i], end = a.operand_offsets[i + 1];
    if (begin > end || end > a.operand_nodes.size())
      detail::refuse(a, i, "operands", "operand_offsets decrease or run past the operands");
    for (std::uint32_t k = begin; k < end; ++k) {
      const std::uint32_t producer = a.operand_nodes[k], output = a.operand_outputs[k];
      if (producer >= i)
        detail::refuse(a, i, "inputs",
                       "slot " + std::to_string(k - begin) + " reads node #" + std::to_string(producer) +
                           ", not an earlier node (the arrays must be in topological order)");
      if (output >= a.output_counts[producer])
        detail::refuse(a, i, "inputs",
                       "slot " + std::to_string(k - begin) + " reads output " + std::to_string(output) +
                           " of a node with " + std::to_string(a.output_counts[producer]) + " outputs");
      connect(g, value_ref{producer, output}, i, k - begin);
    }
  }
  return g;
}

// Reads the result back in the caller's numbering (see propagation_arrays).
[[nodiscard]] inline propagation_arrays read_back(const array_graph& g, const graph_arrays& a) {
  const std::size_t n = a.roles.size();
  propagation_arrays out;
  constexpr std::uint32_t unnumbered = array_vertex::no_origin;
  std::vector<std::uint32_t> index(boost::num_vertices(g), unnumbered);
  std::vector<char> alive(n, 0);
  for (vertex v = 0; v < boost::num_vertices(g); ++v)
    if (!g[v].erased && g[v].origin != array_vertex::no_origin) index[v] = g[v].origin, alive[g[v].origin] = 1;
  // Copies are numbered after the copy they read, so a caller makes them in order. Creation
  // order is not that order: ExecuTorch's phase 2 puts a d2h under an h2d phase 1 made.
  std::vector<vertex> copies;
  const auto number = [&](auto& self, vertex v) -> void {
    if (index[v] != unnumbered) return;
    const value_ref source = operand(g, v, 0).value();
    self(self, source.producer);
    index[v] = static_cast<std::uint32_t>(n + copies.size());
    copies.push_back(v);
  };
  for (vertex v = 0; v < boost::num_vertices(g); ++v)
    if (!g[v].erased && g[v].origin == array_vertex::no_origin) number(number, v);
  out.node_devices.assign(a.devices.begin(), a.devices.end());
  for (const vertex v : copies) {
    const value_ref source = operand(g, v, 0).value();
    out.copy_roles.push_back(static_cast<std::uint8_t>(g[v].role));
    out.copy_devices.push_back(g[v].device);
    out.copy_source_nodes.push_back(index[source.producer]);
    out.copy_source_outputs.push_back(source.output);
  }
  for (vertex v = 0; v < boost::num_vertices(g); ++v) {
    const array_vertex& node = g[v];
    if (node.erased || node.origin == array_vertex::no_origin) continue;
    out.node_devices[node.origin] = node.device;
    const std::uint32_t begin = a.operand_offsets[node.origin];
    for (std::uint32_t slot = 0; slot < node.arity; ++slot) {
      const std::optional<value_ref> now = operand(g, v, slot);
      if (!now) continue;
      const std::uint32_t to = index[now->producer];
      if (to == a.operand_nodes[begin + slot] && now->output == a.operand_outputs[begin + slot]) continue;
      out.rewired_nodes.push_back(node.origin);
      out.rewired_slots.push_back(slot);
      out.rewired_to_nodes.push_back(to);
      out.rewired_to_outputs.push_back(now->output);
    }
  }
  // Marks in the caller's value numbering (a removed node's values read `unmarked`).
  std::vector<std::uint32_t> first(n + 1, 0);
  for (std::size_t i = 0; i < n; ++i) first[i + 1] = first[i] + a.output_counts[i];
  out.value_marks.assign(first[n], unmarked);
  for (vertex v = 0; v < boost::num_vertices(g); ++v) {
    const array_vertex& node = g[v];
    if (node.erased || node.origin == array_vertex::no_origin) continue;
    for (std::uint32_t k = 0; k < node.output_count; ++k)
      out.value_marks[first[node.origin] + k] = g[boost::graph_bundle].marks[node.first_value + k];
  }
  for (std::uint32_t i = 0; i < n; ++i)
    if (!alive[i]) out.erased_nodes.push_back(i);
  return out;
}

// The whole round: arrays in, propagate_device (options as for any graph), arrays out. Throws as
// propagate_device does (config_error for options that cannot work, graph_error naming a node).
namespace detail {
// Counts what the phases removed: a caller mirroring ExecuTorch's pass needs to know whether a
// round trip was elided (ExecuTorch then sweeps its graph's dead code).
struct removal_counter {
  std::size_t removed = 0;
  static constexpr bool inspects_graph() { return false; }
  template <class G>
  void before_phase(std::string_view, const G&) {}
  template <class G, class Result>
  void after_phase(std::string_view, const G&, const Result& r) {
    removed += r.counters.nodes_removed;
  }
};
}  // namespace detail

[[nodiscard]] inline propagation_arrays propagate_arrays(const graph_arrays& a, const propagate_options& options) {
  array_graph g = make_array_graph(a);
  detail::removal_counter removals;
  const propagate_stats stats = propagate_device_with<policy_from_options>(g, options, removals);
  propagation_arrays out = read_back(g, a);
  out.before = stats.before;
  out.after = stats.after;
  out.copies_removed = removals.removed;
  return out;
}

}  // namespace devpass::interop
