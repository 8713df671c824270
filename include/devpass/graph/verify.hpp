// devpass/graph/verify.hpp — checks that a graph is well formed, and that its devices agree.
//
//   verify_structure(g)  ids, op arity rules, input slots, edge output indexes, one output node,
//                        acyclicity (see docs/verifier.md for the full list);
//   verify_devices(g)    every consumer reads each operand on the device it runs on, and every
//                        produced value lives where its producer puts it (run after propagation);
//   verify(g)            both.
//
// Laws: a verifier never throws for a bad graph and never stops at the first problem: it reports
// every violation it finds, each a graph_error naming the node and the field. The order is
// deterministic: nodes in vertex order, checks in a fixed order within a node, then the checks
// that concern the whole graph (the output node count, then a cycle).
// verify(g).ok() implies topological_order(g) does not throw and operands(g, v) is complete.
#pragma once

#include <algorithm>
#include <cstddef>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <functional>
#include <utility>
#include <vector>

#include "devpass/graph/concat.hpp"
#include "devpass/graph/graph.hpp"

namespace devpass {

struct verify_report {
  std::vector<graph_error> problems;

  [[nodiscard]] bool ok() const noexcept { return problems.empty(); }
  // One problem per line, each line ending in '\n'; empty when ok().
  [[nodiscard]] std::string to_string() const {
    std::string text;
    for (const auto& p : problems) (text += p.what()) += '\n';
    return text;
  }
};

namespace detail {

inline void report(verify_report& r, const std::string& node, std::string field, std::string problem) {
  r.problems.emplace_back("", node, std::move(field), std::move(problem));
}

// "node #3": how a message refers to a node whose id cannot name it.
inline std::string node_ordinal(vertex v) { return "node #" + std::to_string(v); }

inline std::string shape_text(const tensor_spec& s) {
  std::string text = std::string(to_string(s.type)) + "[";
  for (std::size_t i = 0; i < s.shape.size(); ++i) {
    if (i != 0) text += ",";
    text += std::to_string(s.shape[i]);
  }
  return text + "]";
}

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

// The first node with each id: open addressing over (hash tag, vertex), 8 bytes a slot, ids
// compared only when the tags match. A node-based map costs an allocation per node, which
// dominated verifying 1M nodes. Indexes fewer than 2^32 - 1 nodes (verify_structure checks).
class first_id_index {
 public:
  static constexpr vertex none = static_cast<vertex>(-1);
  static constexpr std::size_t max_nodes = std::numeric_limits<std::uint32_t>::max() - 1;
  explicit first_id_index(std::size_t count) {
    std::size_t capacity = 16;
    while (capacity < 2 * count) capacity *= 2;
    slots_.assign(capacity, {0, empty});
  }
  // Hashes the id of node v (live) and starts loading its slot. The table is far larger than
  // the caches and each probe is a miss: waited for one node at a time, the misses dominate
  // verify_structure on large graphs; asked for `ahead` nodes early, they overlap. Call it
  // before find_or_insert(g, v, ...).
  static constexpr vertex ahead = 16;
  void prefetch(const graph& g, vertex v) {
    const std::uint64_t hash = std::hash<std::string_view>{}(g[v].id);
    hashes_[v % (2 * ahead)] = hash;
    __builtin_prefetch(&slots_[hash & (slots_.size() - 1)]);
  }
  // The earlier node whose id is `id`, or none after recording v as the first one. With
  // `prefetched`, prefetch(g, v) was called and its hash is used.
  vertex find_or_insert(const graph& g, vertex v, std::string_view id, bool prefetched = false) {
    const std::uint64_t hash = prefetched ? hashes_[v % (2 * ahead)] : std::hash<std::string_view>{}(id);
    const auto tag = static_cast<std::uint32_t>(hash >> 32);
    for (std::size_t i = hash & (slots_.size() - 1);; i = (i + 1) & (slots_.size() - 1)) {
      slot& s = slots_[i];
      if (s.node == empty) {
        s = {tag, static_cast<std::uint32_t>(v)};
        return none;
      }
      if (s.tag == tag && g[s.node].id == id) return s.node;
    }
  }
  // Frees the table once the ids are checked: the cycle check after it needs memory of its
  // own, and the two together would set devpass-opt's peak.
  void release() { std::vector<slot>().swap(slots_); }

 private:
  static constexpr std::uint32_t empty = std::numeric_limits<std::uint32_t>::max();
  struct slot {
    std::uint32_t tag;  // the hash's upper half (its lower bits pick the slot)
    std::uint32_t node;
  };
  std::vector<slot> slots_;
  // The hashes of the nodes prefetched and not yet inserted: those of v + 1 .. v + ahead while v
  // is inserted, so twice that many places.
  std::uint64_t hashes_[2 * ahead] = {};
};

// What verify_structure reads of node v beyond its own storage: its id's characters, its
// output specs and its in-edge entries (heap blocks, a cache miss each), asked for early.
inline void prefetch_heap_blocks(const graph& g, vertex v) {
  const auto& stored = g.m_vertices[v];
  __builtin_prefetch(stored.m_property.id.data());
  __builtin_prefetch(stored.m_property.outputs.data());
  __builtin_prefetch(stored.m_in_edges.data());
}
// ... and then its producers' nodes (loaded once v's in-edge entries are) and its first spec's shape.
inline void prefetch_producers(const graph& g, vertex v) {
  const auto& stored = g.m_vertices[v];
  if (!stored.m_property.outputs.empty()) __builtin_prefetch(stored.m_property.outputs.front().shape.data());
  for (const auto& in : stored.m_in_edges) __builtin_prefetch(&g.m_vertices[in.get_target()]);
}

// The messages of the two device checks below, out of line: they are built only for a bad graph,
// and composing them inline put a chain of string temporaries into every model's instantiation.
[[gnu::cold, gnu::noinline]] inline void report_produced_device(verify_report& r, const std::string& node, std::uint32_t k,
                                                                op_kind op, device produced, device marked) {
  report(r, node, concat({"outputs[", std::to_string(k), "]"}),
         concat({"a ", to_string(op), " produces on ", to_string(produced), " but the value is marked on ", to_string(marked)}));
}
[[gnu::cold, gnu::noinline]] inline std::string wrong_read(const std::string& value, device at, op_kind op, device runs_on,
                                                          std::optional<device> wanted) {
  if (wanted) return concat({"reads '", value, "' on ", to_string(at), " but a ", to_string(op), " reads on ", to_string(*wanted)});
  return concat({"reads '", value, "' on ", to_string(at), " but a d2d_copy to ", to_string(runs_on), " reads from another device"});
}
// Reports bad_reads (slot, text) in slot order. Few: a node has a handful of operands.
[[gnu::cold, gnu::noinline]] inline void report_bad_reads(verify_report& r, const std::string& node,
                                                          std::vector<std::pair<std::uint32_t, std::string>>& bad_reads) {
  for (std::size_t i = 1; i < bad_reads.size(); ++i)  // insertion sort: no std::sort instantiation
    for (std::size_t j = i; j > 0 && bad_reads[j] < bad_reads[j - 1]; --j) std::swap(bad_reads[j], bad_reads[j - 1]);
  for (auto& [slot, text] : bad_reads) report(r, node, concat({"inputs[", std::to_string(slot), "]"}), std::move(text));
}

// A value whose producer fixes where it lives (a delegate, a call, a copy) must not be marked
// elsewhere by its spec: one problem per such output.
template <class G>
void check_produced_devices(verify_report& r, const G& g, vertex v) {
  const op_kind op = role_of(g, v);
  const auto produced = produces_on(op, node_device(g, v));
  if (!produced) return;
  for (std::uint32_t k = 0, outputs = output_count(g, v); k < outputs; ++k)
    if (const auto d = marked_device(g, value_ref{v, k}); d && *d != *produced) [[unlikely]]
      report_produced_device(r, display_name(g, v), k, op, *produced, *d);
}

// Each operand of node v read on the wrong device, by slot ("inputs[k]"). Edges that
// verify_structure rejects (bad output index, erased producer) are skipped. `bad_reads` is
// scratch space, kept by the caller across nodes.
template <class G>
void check_reads(verify_report& r, const G& g, vertex v, std::vector<std::pair<std::uint32_t, std::string>>& bad_reads) {
  const op_kind op = role_of(g, v);
  const device runs_on = node_device(g, v);
  const auto wanted = reads_on(op, runs_on);
  bad_reads.clear();
  for (const auto e : boost::make_iterator_range(boost::in_edges(v, g))) {
    const vertex p = boost::source(e, g);
    if (is_erased(g, p) || g[e].output >= output_count(g, p)) continue;
    const value_ref value{p, g[e].output};
    const device at = location_of(g, value);
    if ((wanted && at != *wanted) || (!wanted && op == op_kind::d2d_copy && (at.is_host() || at == runs_on))) [[unlikely]]
      bad_reads.emplace_back(g[e].slot, wrong_read(value_name(g, value), at, op, runs_on, wanted));
  }
  if (!bad_reads.empty()) [[unlikely]]
    report_bad_reads(r, display_name(g, v), bad_reads);
}

// verify_propagation_input's checks of one live node v (propagate_device runs them in the sweep
// that also counts the copies).
template <class G>
void check_propagation_input(verify_report& r, const G& g, vertex v, std::vector<std::pair<std::uint32_t, std::string>>& bad_reads) {
  check_produced_devices(r, g, v);
  if (const op_kind op = role_of(g, v); op == op_kind::d2h_copy || op == op_kind::d2d_copy) check_reads(r, g, v, bad_reads);
}

// True when the live nodes have a cycle: Kahn's algorithm, ready nodes on a stack, over the
// edge list's successor table (structure.hpp: sequential reads, not a cache miss per node).
[[nodiscard]] inline bool has_cycle(const graph& g) {
  const std::size_t n = boost::num_vertices(g);
  std::vector<std::uint8_t> live(n);
  std::size_t live_count = 0;
  for (vertex v = 0; v < n; ++v) live_count += live[v] = !g[v].erased;
  successor_table next(g, live, [](vertex, vertex) {});
  std::vector<std::uint32_t>& waiting = next.in_degree;  // counted down
  std::vector<vertex> ready;
  for (vertex v = 0; v < n; ++v)
    if (live[v] && waiting[v] == 0) ready.push_back(v);
  std::size_t done = 0;
  while (!ready.empty()) {
    const vertex v = ready.back();
    ready.pop_back();
    ++done;
    for (const std::uint32_t t : next.of(v))
      if (--waiting[t] == 0) ready.push_back(t);
  }
  return done != live_count;
}

}  // namespace detail

// What device propagation needs of the graph it is given (docs/device-propagation.md,
// "Preconditions"), the part of verify_devices that must hold before it runs:
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

// Structural well-formedness. Per node, in vertex order: id, op/device, kernel, outputs, inputs
// (slot coverage, then each in-edge's output index), copy layouts. Then: the output node count,
// then acyclicity (naming one node on a cycle).
[[nodiscard]] inline verify_report verify_structure(const graph& g) {
  verify_report r;
  const std::size_t n = boost::num_vertices(g);
  if (n > detail::first_id_index::max_nodes) {
    detail::report(r, "", "nodes", "more than 2^32 - 2 nodes: too many to verify");
    return r;
  }
  detail::first_id_index first_with_id(n);
  std::vector<vertex> output_nodes;
  std::vector<std::uint32_t> slot_uses;
  std::vector<std::pair<std::uint32_t, std::string>> bad_refs;
  bool backward_edge = false;  // without one, vertex order is topological and there is no cycle

  for (vertex v = 0; v < std::min<std::size_t>(n, first_with_id.ahead); ++v)
    if (!g[v].erased) first_with_id.prefetch(g, v);
  for (vertex v = 0; v < n; ++v) {
    if (const vertex next = v + first_with_id.ahead; next < n && !g[next].erased) first_with_id.prefetch(g, next);
    if (const vertex far = v + 2 * first_with_id.ahead; far < n) detail::prefetch_heap_blocks(g, far);
    if (const vertex next = v + first_with_id.ahead; next < n) detail::prefetch_producers(g, next);
    const node& nd = g[v];
    if (nd.erased) continue;
    const std::string& id = nd.id;

    // id
    if (id.empty()) {
      detail::report(r, "", "id", detail::node_ordinal(v) + " has an empty id");
    } else if (const vertex first = first_with_id.find_or_insert(g, v, id, true); first != detail::first_id_index::none) {
      detail::report(r, id, "id", "duplicate id (also " + detail::node_ordinal(first) + ")");
    } else if (ends_in_output_index(id)) {
      detail::report(r, id, "id", "an id cannot end in ':<digits>': references would read it as an output index");
    }

    // op and device: the ops whose device is fixed by what they are.
    const auto op = nd.op;
    if (op == op_kind::output) output_nodes.push_back(v);
    if (op == op_kind::call && !nd.device.is_host())
      detail::report(r, id, "device", "a call runs on the host, not on " + to_string(nd.device));
    if (is_copy(op) && nd.device.is_host())
      detail::report(r, id, "device", "a " + std::string(to_string(op)) + " needs a device side, not cpu");

    // kernel
    if ((op == op_kind::delegate || op == op_kind::call) && nd.kernel.empty())
      detail::report(r, id, "kernel", "a " + std::string(to_string(op)) + " needs a kernel name");

    // outputs
    if (op == op_kind::output && !nd.outputs.empty())
      detail::report(r, id, "outputs", "the output node has no outputs, found " + std::to_string(nd.outputs.size()));
    if (is_copy(op) && nd.outputs.size() != 1)
      detail::report(r, id, "outputs",
                     "a " + std::string(to_string(op)) + " has exactly one output, found " + std::to_string(nd.outputs.size()));
    // A method input or constant is a value: without an output spec there is nothing to bind
    // or fill (the executor once read a spec that did not exist).
    if (is_source(op) && nd.outputs.empty())
      detail::report(r, id, "outputs", std::string(op == op_kind::input ? "an input" : "a constant") + " needs an output");
    for (std::size_t k = 0; k < nd.outputs.size(); ++k)
      if (!checked_byte_size(nd.outputs[k].type, nd.outputs[k].shape))
        detail::report(r, id, "outputs",
                       "output " + std::to_string(k) + " has a negative dimension or a size that overflows");

    // inputs: arity rule of the op, then every slot connected exactly once, then edge outputs.
    const auto in_degree = boost::in_degree(v, g);
    if (is_source(op) && (nd.arity != 0 || in_degree != 0))
      detail::report(r, id, "inputs",
                     std::string(to_string(op)) + " takes no inputs, found " +
                         std::to_string(std::max<std::size_t>(nd.arity, in_degree)));
    if (is_copy(op) && nd.arity != 1)
      detail::report(r, id, "inputs",
                     "a " + std::string(to_string(op)) + " has exactly one input, found " + std::to_string(nd.arity));
    slot_uses.assign(nd.arity, 0);
    bool beyond_arity = false;
    for (const auto e : boost::make_iterator_range(boost::in_edges(v, g))) {
      if (g[e].slot < nd.arity) ++slot_uses[g[e].slot];
      else beyond_arity = true;
      if (boost::source(e, g) >= v) backward_edge = true;
    }
    for (std::uint32_t s = 0; s < nd.arity; ++s) {
      if (slot_uses[s] == 0) detail::report(r, id, "inputs", "input " + std::to_string(s) + " is not connected");
      else if (slot_uses[s] > 1)
        detail::report(r, id, "inputs",
                       "input " + std::to_string(s) + " is connected " + std::to_string(slot_uses[s]) + " times");
    }
    if (beyond_arity)
      detail::report(r, id, "inputs", "an edge feeds a slot beyond the arity " + std::to_string(nd.arity));
    // Edge lists are in insertion order; report by slot so the order does not depend on history.
    bad_refs.clear();
    for (const auto e : boost::make_iterator_range(boost::in_edges(v, g))) {
      const node& producer = g[boost::source(e, g)];
      if (producer.erased)
        bad_refs.emplace_back(g[e].slot, "input " + std::to_string(g[e].slot) + " reads an erased node");
      else if (g[e].output >= producer.outputs.size())
        bad_refs.emplace_back(g[e].slot, "input " + std::to_string(g[e].slot) + " reads output " +
                                             std::to_string(g[e].output) + " of '" + producer.id + "', which has " +
                                             std::to_string(producer.outputs.size()) + " output(s)");
    }
    std::sort(bad_refs.begin(), bad_refs.end());
    for (auto& [slot, text] : bad_refs) detail::report(r, id, "inputs", std::move(text));

    // copies keep the layout of what they copy.
    if (is_copy(op) && nd.arity == 1 && slot_uses[0] == 1 && nd.outputs.size() == 1 && bad_refs.empty()) {
      const auto in = operand(g, v, 0);
      const tensor_spec& from = spec_of(g, *in);
      if (!from.same_layout(nd.outputs[0]))
        detail::report(r, id, "outputs",
                       "a copy keeps its input's layout: input is " + detail::shape_text(from) + ", output is " +
                           detail::shape_text(nd.outputs[0]));
    }
  }

  first_with_id.release();
  if (output_nodes.empty()) detail::report(r, "", "nodes", "no output node");
  for (std::size_t i = 1; i < output_nodes.size(); ++i)
    detail::report(r, g[output_nodes[i]].id, "op", "a second output node (the first is '" + g[output_nodes[0]].id + "')");

  // A cycle is rare and needs a node named; the check for one needs no particular order. Kahn's
  // algorithm with a plain stack decides it in O(V + E) (topological_order's priority queue costs
  // a log factor: half of verify's time on a propagated 1M-node graph); only a graph with a cycle
  // goes on to topological_order, whose message names a node on it.
  if (backward_edge && detail::has_cycle(g)) {
    try {
      (void)topological_order(g);
    } catch (const graph_error& e) {
      r.problems.push_back(e);
    }
  }
  return r;
}

// Device consistency, per node in vertex order: first each output whose spec device disagrees with
// where its producer puts it (field "outputs[k]"), then each operand read on the wrong device
// (field "inputs[k]", by slot). Where a value lives is location_of(); a method input or constant
// lives where its spec device says, else where its node's device says (cpu when unset). The output node accepts any device.
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

[[nodiscard]] inline verify_report verify(const graph& g) {
  verify_report r = verify_structure(g);
  verify_report d = verify_devices(g);
  r.problems.insert(r.problems.end(), std::make_move_iterator(d.problems.begin()),
                    std::make_move_iterator(d.problems.end()));
  return r;
}

}  // namespace devpass
