// devpass/graph/verify_devices.hpp — that a graph's devices agree: every consumer reads each
// operand on the device it runs on, and every produced value lives where its producer puts it
// (verify_devices, run after propagation); and the part of it device propagation needs before it
// runs (verify_propagation_input). Any graph model. The laws are verify.hpp's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "devpass/graph/concat.hpp"
#include "devpass/graph/graph.hpp"
#include "devpass/graph/verify_report.hpp"

namespace devpass {

namespace detail {

// The device a node reads its operands on; nullopt where any device is acceptable (the output
// node) or where the rule is not a single device (d2d_copy, checked separately).
inline std::optional<device> reads_on(op_kind op, device at) {
  switch (op) {
    case op_kind::delegate: return at;
    case op_kind::call: return cpu_device;
    case op_kind::h2d_copy: return cpu_device;
    case op_kind::d2h_copy: return at;
    default: return std::nullopt;
  }
}

// The device a node's values are produced on; nullopt for method inputs and constants, which
// live where their spec device says, else where their node's device says.
inline std::optional<device> produces_on(op_kind op, device at) {
  switch (op) {
    case op_kind::delegate:
    case op_kind::h2d_copy:
    case op_kind::d2d_copy: return at;
    case op_kind::call:
    case op_kind::d2h_copy: return cpu_device;
    default: return std::nullopt;
  }
}

// The messages of the two device checks below, out of line: they are built only for a bad graph,
// and composing them inline put a chain of string temporaries into every model's instantiation.
[[gnu::cold, gnu::noinline]] inline void report_produced_device(verify_report& r, const std::string& node,
                                                                std::uint32_t k, op_kind op, device produced,
                                                                device marked) {
  r.add(node, concat({"outputs[", std::to_string(k), "]"}),
        concat({"a ", to_string(op), " produces on ", to_string(produced), " but the value is marked on ",
                to_string(marked)}));
}
[[gnu::cold, gnu::noinline]] inline std::string wrong_read(const std::string& value, device at, op_kind op,
                                                           device runs_on, std::optional<device> wanted) {
  if (wanted)
    return concat(
        {"reads '", value, "' on ", to_string(at), " but a ", to_string(op), " reads on ", to_string(*wanted)});
  return concat({"reads '", value, "' on ", to_string(at), " but a d2d_copy to ", to_string(runs_on),
                 " reads from another device"});
}
// Reports bad_reads (slot, text) in slot order. Few: a node has a handful of operands.
[[gnu::cold, gnu::noinline]] inline void report_bad_reads(
    verify_report& r, const std::string& node, std::vector<std::pair<std::uint32_t, std::string>>& bad_reads) {
  for (std::size_t i = 1; i < bad_reads.size(); ++i)  // insertion sort: no std::sort instantiation
    for (std::size_t j = i; j > 0 && bad_reads[j] < bad_reads[j - 1]; --j) std::swap(bad_reads[j], bad_reads[j - 1]);
  for (auto& [slot, text] : bad_reads) r.add(node, concat({"inputs[", std::to_string(slot), "]"}), std::move(text));
}

// The same for node v of g: its name, too, is read only for a bad graph, so that the check of
// every good node builds no string (and is small enough to inline into the sweep that makes it).
template <class G>
[[gnu::cold, gnu::noinline]] void report_produced_device_of(verify_report& r, const G& g, vertex v, std::uint32_t k,
                                                            device produced, device marked) {
  report_produced_device(r, display_name(g, v), k, role_of(g, v), produced, marked);
}

// A value whose producer fixes where it lives (a delegate, a call, a copy) must not be marked
// elsewhere by its spec: one problem per such output.
template <class G>
[[gnu::always_inline]] inline void check_produced_devices(verify_report& r, const G& g, vertex v) {
  const op_kind op = role_of(g, v);
  const auto produced = produces_on(op, node_device(g, v));
  if (!produced) return;
  for (std::uint32_t k = 0, outputs = output_count(g, v); k < outputs; ++k)
    if (const auto d = marked_device(g, value_ref{v, k}); d && *d != *produced) [[unlikely]]
      report_produced_device_of(r, g, v, k, *produced, *d);
}

// Each operand of node v read on the wrong device, by slot ("inputs[k]"). Edges that
// verify_structure rejects (bad output index, erased producer) are skipped. `bad_reads` is
// scratch space, kept by the caller across nodes.
template <class G>
void check_reads(verify_report& r, const G& g, vertex v,
                 std::vector<std::pair<std::uint32_t, std::string>>& bad_reads) {
  const op_kind op = role_of(g, v);
  const device runs_on = node_device(g, v);
  const auto wanted = reads_on(op, runs_on);
  bad_reads.clear();
  for (const auto e : boost::make_iterator_range(boost::in_edges(v, g))) {
    const vertex p = boost::source(e, g);
    if (is_erased(g, p) || edge_output(g, e) >= output_count(g, p)) continue;
    const value_ref value{p, edge_output(g, e)};
    const device at = location_of(g, value);
    if ((wanted && at != *wanted) || (!wanted && op == op_kind::d2d_copy && (at.is_host() || at == runs_on)))
        [[unlikely]]
      bad_reads.emplace_back(edge_slot(g, e), wrong_read(value_name(g, value), at, op, runs_on, wanted));
  }
  if (!bad_reads.empty()) [[unlikely]]
    report_bad_reads(r, display_name(g, v), bad_reads);
}

// Why node v's in-edges do not fill its input slots 0..arity-1 once each, or nothing.
// boost::add_edge makes an edge with slot 0 and leaves the arity as it was (0): such a graph has
// no operands as far as every pass can tell, so it is refused rather than left uncopied.
[[gnu::cold, gnu::noinline]] inline std::string slots_problem(std::size_t in_edges, std::uint32_t arity,
                                                              std::uint32_t bad_slot, bool beyond) {
  std::string problem =
      in_edges != arity
          ? concat({"has ", std::to_string(in_edges), in_edges == 1 ? " in-edge" : " in-edges", " but arity ",
                    std::to_string(arity)})
          : concat({beyond ? "an in-edge feeds slot " : "two in-edges feed slot ", std::to_string(bad_slot),
                    beyond ? concat({", beyond the arity ", std::to_string(arity)}) : std::string()});
  return problem +
         "; make edges with devpass::connect(g, value, consumer, slot), which sets the slot and "
         "the arity (boost::add_edge sets neither)";
}
// A problem of node v's slots, reported out of line: the check of every good node stays small
// enough to inline into the sweep that makes it (a call with a frame of its own cost it a fifth
// of its instructions).
template <class G>
[[gnu::cold, gnu::noinline]] void report_slots_problem(verify_report& r, const G& g, vertex v, std::size_t in_edges,
                                                       std::uint32_t arity, std::uint32_t bad_slot, bool beyond) {
  r.add(display_name(g, v), "inputs", slots_problem(in_edges, arity, bad_slot, beyond));
}
// Whether node v's in-edges, as many as its `arity` slots, feed each slot once; else reports the
// first that does not. Nodes of more than 64 slots (concatenations): a flag per slot.
template <class G>
[[gnu::noinline]] void check_wide_slots(verify_report& r, const G& g, vertex v, std::uint32_t arity) {
  std::vector<bool> seen(arity, false);
  for (const auto e : boost::make_iterator_range(boost::in_edges(v, g))) {
    const std::uint32_t slot = edge_slot(g, e);
    if (slot >= arity || seen[slot]) [[unlikely]] {
      report_slots_problem(r, g, v, arity, arity, slot, slot >= arity);
      return;
    }
    seen[slot] = true;
  }
}
template <class G>
[[gnu::always_inline]] inline void check_slots(verify_report& r, const G& g, vertex v) {
  const std::uint32_t arity = arity_of(g, v);
  const std::size_t in_edges = boost::in_degree(v, g);
  if (in_edges != arity) [[unlikely]] {
    report_slots_problem(r, g, v, in_edges, arity, 0, false);
    return;
  }
  // One edge into one slot: its slot is not read. The edge and its slot lie apart from the node
  // (two cache misses a node: reading them made the executorch pass 6 to 16% slower at 100k
  // nodes, bench_propagate against the same pass without the check), and boost::add_edge's edge
  // (slot 0) is right there. A single edge given another slot by hand is verify_structure's to
  // find. Two or more slots: each edge's slot is read, as a duplicate slot 0 is what add_edge
  // leaves.
  if (arity < 2) return;
  if (arity > 64) [[unlikely]] {
    check_wide_slots(r, g, v, arity);
    return;
  }
  // As many edges as slots: each slot fed once iff no slot is beyond the arity or fed twice.
  std::uint64_t seen = 0;
  for (const auto e : boost::make_iterator_range(boost::in_edges(v, g))) {
    const std::uint32_t slot = edge_slot(g, e);
    if (slot >= arity || ((seen >> slot) & 1u)) [[unlikely]] {
      report_slots_problem(r, g, v, in_edges, arity, slot, slot >= arity);
      return;
    }
    seen |= std::uint64_t{1} << slot;
  }
}

// verify_propagation_input's checks of one live node v (propagate_device runs them in the sweep
// that also counts the copies).
template <class G>
[[gnu::always_inline]] inline void check_propagation_input(
    verify_report& r, const G& g, vertex v, std::vector<std::pair<std::uint32_t, std::string>>& bad_reads) {
  check_slots(r, g, v);
  check_produced_devices(r, g, v);
  if (const op_kind op = role_of(g, v); op == op_kind::d2h_copy || op == op_kind::d2d_copy)
    check_reads(r, g, v, bad_reads);
}

}  // namespace detail

// What device propagation needs of the graph it is given (docs/device-propagation.md,
// "Preconditions"), the part of verify_devices that must hold before it runs:
//   - every node's in-edges feed its input slots 0..arity-1 once each (edges made with
//     devpass::connect; boost::add_edge sets no slot and no arity);
//   - every value a delegate, call or copy produces is marked (if at all) on the device its
//     producer puts it: the pass reads a value's device from its mark, and a stale mark would
//     send copies the wrong way;
//   - every d2h_copy and d2d_copy already in the graph reads from a device (d2h: its own, d2d:
//     another one): no phase moves a copy's own operand, so such a copy would stay wrong.
// (An h2d_copy reading a device value is fine: both policies put a d2h under it.)
// Any graph model.
template <class G>
[[nodiscard]] verify_report verify_propagation_input(const G& g) {
  verify_report r;
  std::vector<std::pair<std::uint32_t, std::string>> bad_reads;
  for (vertex v = 0, n = boost::num_vertices(g); v < n; ++v)
    if (!is_erased(g, v)) detail::check_propagation_input(r, g, v, bad_reads);
  return r;
}

// Device consistency, per node in vertex order: first each output whose spec device disagrees with
// where its producer puts it (field "outputs[k]"), then each operand read on the wrong device
// (field "inputs[k]", by slot). Where a value lives is location_of(); a method input or constant
// lives where its spec device says, else where its node's device says (cpu when unset). The output node accepts any
// device.
// Edges that verify_structure rejects (bad output index, erased producer) are skipped here.
// Any graph model (the structural checks above are devpass::graph's: ids, kernels, specs).
template <class G>
[[nodiscard]] verify_report verify_devices(const G& g) {
  verify_report r;
  const std::size_t n = boost::num_vertices(g);
  std::vector<std::pair<std::uint32_t, std::string>> bad_reads;
  for (vertex v = 0; v < n; ++v) {
    if (is_erased(g, v)) continue;
    detail::check_produced_devices(r, g, v);
    if (role_of(g, v) != op_kind::output) detail::check_reads(r, g, v, bad_reads);
  }
  return r;
}

}  // namespace devpass
