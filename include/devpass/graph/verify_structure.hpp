// devpass/graph/verify_structure.hpp — that a graph is well formed: ids, op arity rules, input
// slots, edge output indexes, one output node, acyclicity (docs/verifier.md has the full list).
// The laws are verify.hpp's.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "devpass/graph/concat.hpp"
#include "devpass/graph/graph.hpp"
#include "devpass/graph/successor_table.hpp"
#include "devpass/graph/verify_report.hpp"

namespace devpass {

namespace detail {

inline std::string shape_text(const tensor_spec& s) {
  std::string text = std::string(to_string(s.type)) + "[";
  for (std::size_t i = 0; i < s.shape.size(); ++i) {
    if (i != 0) text += ",";
    text += std::to_string(s.shape[i]);
  }
  return text + "]";
}

// The first node with each id: open addressing over (hash tag, vertex), 8 bytes a slot, ids
// compared only when the tags match. A node-based map costs an allocation per node, which
// dominated verifying 1M nodes. Indexes fewer than 2^32 - 1 nodes (verify_structure checks).
class first_id_index {
 public:
  static constexpr vertex none = static_cast<vertex>(-1);
  static constexpr std::size_t max_nodes = std::numeric_limits<std::uint32_t>::max() - 1;
  // Half as many slots again as nodes (load at most two thirds), not the next power of two above
  // twice as many: this table is devpass-opt's peak RSS when it verifies
  // (docs/performance.md#files). Probes stay short: 8-byte slots, eight a cache line.
  explicit first_id_index(std::size_t count) {
    slots_.assign(std::max<std::size_t>(16, count + count / 2), {0, empty});
  }
  // Hashes the id of node v (live) and starts loading its slot. The table is far larger than
  // the caches and each probe is a miss: waited for one node at a time, the misses dominate
  // verify_structure on large graphs; asked for `ahead` nodes early, they overlap. Call it
  // before find_or_insert(g, v, ...).
  static constexpr vertex ahead = 16;
  void prefetch(const graph& g, vertex v) {
    const std::uint64_t hash = std::hash<std::string_view>{}(g[v].id);
    hashes_[v % (2 * ahead)] = hash;
    __builtin_prefetch(&slots_[home(hash)]);
  }
  // The earlier node whose id is `id`, or none after recording v as the first one. With
  // `prefetched`, prefetch(g, v) was called and its hash is used.
  vertex find_or_insert(const graph& g, vertex v, std::string_view id, bool prefetched = false) {
    const std::uint64_t hash = prefetched ? hashes_[v % (2 * ahead)] : std::hash<std::string_view>{}(id);
    const auto tag = static_cast<std::uint32_t>(hash >> 32);
    for (std::size_t i = home(hash);; i = i + 1 == slots_.size() ? 0 : i + 1) {
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
  // The slot a hash starts probing at: its lower half scaled to the table, a multiply and a shift
  // (no modulo). The table has fewer than 1.5 * 2^32 slots (max_nodes), so half of its size times
  // a 32-bit number fits in 64 bits, and the result is below the size.
  [[nodiscard]] std::size_t home(std::uint64_t hash) const noexcept {
    const std::uint64_t half = slots_.size() / 2;
    return static_cast<std::size_t>((std::uint64_t{static_cast<std::uint32_t>(hash)} * half) >> 31);
  }
  struct slot {
    std::uint32_t tag;  // the hash's upper half (its lower half picks the slot)
    std::uint32_t node;
  };
  std::vector<slot> slots_;
  // The hashes of the nodes prefetched and not yet inserted: those of v + 1 .. v + ahead while v
  // is inserted, so twice that many places.
  std::uint64_t hashes_[2 * ahead] = {};
};

// What verify_structure reads of node v beyond its own storage: its in-edge entries, and its
// id's characters and output specs where they do not fit inline (an id over 15 characters,
// several outputs): heap blocks, a cache miss each, asked for early.
inline void prefetch_heap_blocks(const graph& g, vertex v) {
  const auto& stored = g.m_vertices[v];
  __builtin_prefetch(stored.m_property.id.data());
  __builtin_prefetch(stored.m_property.outputs.data());
  __builtin_prefetch(stored.m_in_edges.data());
}
// ... and then its producers' nodes (loaded once v's in-edge entries are) and its first spec's
// shape (on the heap past four dimensions).
inline void prefetch_producers(const graph& g, vertex v) {
  const auto& stored = g.m_vertices[v];
  if (!stored.m_property.outputs.empty()) __builtin_prefetch(stored.m_property.outputs.front().shape.data());
  for (const auto& in : stored.m_in_edges) __builtin_prefetch(&g.m_vertices[in.get_target()]);
}

// True when the live nodes have a cycle: Kahn's algorithm, ready nodes on a stack, over the
// edge list's successor table (successor_table.hpp: sequential reads, not a cache miss per node).
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

// Structural well-formedness. Per node, in vertex order: id, op/device, kernel, outputs, inputs
// (slot coverage, then each in-edge's output index), copy layouts. Then: the output node count,
// then acyclicity (naming one node on a cycle).
[[nodiscard]] inline verify_report verify_structure(const graph& g) {
  verify_report r;
  const std::size_t n = boost::num_vertices(g);
  if (n > detail::first_id_index::max_nodes) {
    r.add("", "nodes", "more than 2^32 - 2 nodes: too many to verify");
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
      r.add("", "id", node_ordinal(v) + " has an empty id");
    } else if (const vertex first = first_with_id.find_or_insert(g, v, id, true);
               first != detail::first_id_index::none) {
      r.add(id, "id", "duplicate id (also " + node_ordinal(first) + ")");
    } else if (ends_in_output_index(id)) {
      r.add(id, "id", "an id cannot end in ':<digits>': references would read it as an output index");
    }

    // op and device: the ops whose device is fixed by what they are.
    const auto op = nd.op;
    if (op == op_kind::output) output_nodes.push_back(v);
    if (op == op_kind::call && !nd.device.is_host())
      r.add(id, "device", "a call runs on the host, not on " + to_string(nd.device));
    if (is_copy(op) && nd.device.is_host())
      r.add(id, "device", "a " + std::string(to_string(op)) + " needs a device side, not cpu");

    // kernel
    if ((op == op_kind::delegate || op == op_kind::call) && nd.kernel.empty())
      r.add(id, "kernel", "a " + std::string(to_string(op)) + " needs a kernel name");

    // outputs
    if (op == op_kind::output && !nd.outputs.empty())
      r.add(id, "outputs", "the output node has no outputs, found " + std::to_string(nd.outputs.size()));
    if (is_copy(op) && nd.outputs.size() != 1)
      r.add(id, "outputs",
            "a " + std::string(to_string(op)) + " has exactly one output, found " + std::to_string(nd.outputs.size()));
    // A method input or constant is a value: without an output spec there is nothing to bind
    // or fill (the executor once read a spec that did not exist).
    if (is_source(op) && nd.outputs.empty())
      r.add(id, "outputs", std::string(op == op_kind::input ? "an input" : "a constant") + " needs an output");
    for (std::size_t k = 0; k < nd.outputs.size(); ++k)
      if (!checked_byte_size(nd.outputs[k].type, nd.outputs[k].shape))
        r.add(id, "outputs", "output " + std::to_string(k) + " has a negative dimension or a size that overflows");

    // inputs: arity rule of the op, then every slot connected exactly once, then edge outputs.
    const auto in_degree = boost::in_degree(v, g);
    if (is_source(op) && (nd.arity != 0 || in_degree != 0))
      r.add(id, "inputs",
            std::string(to_string(op)) + " takes no inputs, found " +
                std::to_string(std::max<std::size_t>(nd.arity, in_degree)));
    if (is_copy(op) && nd.arity != 1)
      r.add(id, "inputs",
            "a " + std::string(to_string(op)) + " has exactly one input, found " + std::to_string(nd.arity));
    slot_uses.assign(nd.arity, 0);
    bool beyond_arity = false;
    for (const auto e : boost::make_iterator_range(boost::in_edges(v, g))) {
      if (g[e].slot < nd.arity)
        ++slot_uses[g[e].slot];
      else
        beyond_arity = true;
      if (boost::source(e, g) >= v) backward_edge = true;
    }
    for (std::uint32_t s = 0; s < nd.arity; ++s) {
      if (slot_uses[s] == 0)
        r.add(id, "inputs", "input " + std::to_string(s) + " is not connected");
      else if (slot_uses[s] > 1)
        r.add(id, "inputs", "input " + std::to_string(s) + " is connected " + std::to_string(slot_uses[s]) + " times");
    }
    if (beyond_arity) r.add(id, "inputs", "an edge feeds a slot beyond the arity " + std::to_string(nd.arity));
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
    for (auto& [slot, text] : bad_refs) r.add(id, "inputs", std::move(text));

    // copies keep the layout of what they copy.
    if (is_copy(op) && nd.arity == 1 && slot_uses[0] == 1 && nd.outputs.size() == 1 && bad_refs.empty()) {
      const auto in = operand(g, v, 0);
      const tensor_spec& from = spec_of(g, *in);
      if (!from.same_layout(nd.outputs[0]))
        r.add(id, "outputs",
              "a copy keeps its input's layout: input is " + detail::shape_text(from) + ", output is " +
                  detail::shape_text(nd.outputs[0]));
      // Made once, at load: only a value that is the same on every execution may be copied so.
      if (nd.resident && !is_constant_value(g, *in))
        r.add(id, "resident",
              "a resident copy is made once, at load: it must copy a constant, not the " +
                  std::string(to_string(g[in->producer].op)) + " '" + value_name(g, *in) + "'");
    }
    if (nd.resident && !is_copy(op))
      r.add(id, "resident", "only a copy can be resident, not a " + std::string(to_string(op)));
  }

  first_with_id.release();
  if (output_nodes.empty()) r.add("", "nodes", "no output node");
  for (std::size_t i = 1; i < output_nodes.size(); ++i)
    r.add(g[output_nodes[i]].id, "op", "a second output node (the first is '" + g[output_nodes[0]].id + "')");

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

}  // namespace devpass
