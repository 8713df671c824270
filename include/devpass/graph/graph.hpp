// devpass/graph/graph.hpp — devpass's own graph, what its file format reads and writes: a
// Boost.Graph bidirectional adjacency_list with bundled node, edge and method properties, and a
// model of the graph concept (graph_model.hpp), so every pass runs on it as on any other model.
//
// A node produces `outputs.size()` values; a value is (producer, output index). An edge u -> v
// carries {output, slot}: input slot `slot` of v reads output `output` of u.
//
// Storage: the nodes in one vector (vecS); each node's out- and in-edge entries in two lists that
// hold their first entry in the node itself (inline_vec_s<1>, inline_edges.hpp: a vecS with no
// heap block for a list of one, which most of a graph's lists and a copy's in-edge list are); and
// the edges themselves (source, target, {output, slot}) in one vector (vecS), g.m_edges, in the
// order they were made. The per-node edge entries hold an index into it. A vector rather than
// Boost's default std::list: no allocation per edge, and the edges of nodes made one after the
// other lie one after the other, so a sweep over the nodes reads them as a stream (measured:
// reading the edge properties through list nodes was a third of the propagation's matching time).
// The structural operations (operands, uses, set_operand, erase_node, compact, topological_order)
// and their descriptor rules are structure.hpp's, the same for every model.
#pragma once

#include <algorithm>
#include <boost/graph/adjacency_list.hpp>
#include <charconv>
#include <cstdint>
#include <functional>
#include <iterator>
#include <limits>
#include <optional>
#include <queue>
#include <string>
#include <string_view>
#include <vector>

#include "devpass/graph/device.hpp"
#include "devpass/graph/error.hpp"
#include "devpass/graph/graph_model.hpp"
#include "devpass/graph/inline_edges.hpp"
#include "devpass/graph/node_description.hpp"
#include "devpass/graph/node_outputs.hpp"
#include "devpass/graph/op_kind.hpp"
#include "devpass/graph/shared_text.hpp"
#include "devpass/graph/structure.hpp"
#include "devpass/graph/tensor_spec.hpp"

namespace devpass {

// What every sweep over the nodes reads (op, device, arity, erased) sits together after the id,
// in one cache line: a pass over a million nodes then reads one line per node, not two.
struct node {
  std::string id{};
  op_kind op = op_kind::call;
  devpass::device device{};  // where the node runs; a copy's device side; cpu when the file omits it
  std::uint32_t arity = 0;   // number of input slots
  bool erased = false;       // tombstone, see erase_node / compact
  bool resident = false;     // a copy made once, at load, not on every execution (copy_request::resident)
  shared_text kernel{};      // for delegate and call
  node_outputs outputs{};
  shared_text attrs{};  // the `attrs` object as minified JSON text, empty when absent
};

struct method_info {
  std::string name;
};

class id_allocator;  // id_allocator.hpp: the ids of the nodes passes make

using graph = boost::adjacency_list<inline_vec_s<1>, boost::vecS, boost::bidirectionalS, node, edge_info, method_info,
                                    boost::vecS>;
using edge = graph::edge_descriptor;
static_assert(std::is_same_v<graph::vertex_descriptor, vertex>);

namespace detail {
constexpr std::string_view copy_suffix(op_kind kind) {
  return kind == op_kind::h2d_copy ? "h2d" : kind == op_kind::d2h_copy ? "d2h" : "d2d";
}
// The id a copy_request asks for: "<base>[:<output>]@<suffix><tail>", the tail "[<device>]" or
// ".<slot>" as r.naming says; base is the id of the node it is named after (the consumer for
// copy_naming::after_use, then with no output part; else the producer of r.source). Written in
// one allocation with no temporary strings: the id is one of the few allocations a copy costs,
// and a chain of string operator+ is inlined into every caller
// (docs/performance.md#what-each-design-choice-saves).
inline std::string copy_id(std::string_view base, const copy_request& r) {
  constexpr std::size_t digits_max = std::numeric_limits<std::uint32_t>::digits10 + 1;
  const std::uint32_t output = r.naming == copy_naming::after_use ? 0 : r.source.output;
  char output_text[1 + digits_max];  // ":4294967295"
  char* output_end = output_text;
  if (output != 0) {
    *output_end++ = ':';
    output_end = std::to_chars(output_end, std::end(output_text), output).ptr;
  }
  char tail[2 + std::max(device_name_size_max, digits_max)];  // "[cuda:65535]", ".4294967295"
  char* tail_end = tail;
  if (r.naming == copy_naming::after_use) {
    *tail_end++ = '.';
    tail_end = std::to_chars(tail_end, std::end(tail), r.site.slot).ptr;
  } else if (r.naming == copy_naming::after_value_and_device) {
    *tail_end++ = '[';
    tail_end = write_device_name(tail_end, r.side);
    *tail_end++ = ']';
  }
  const std::string_view suffix = copy_suffix(r.kind);
  const auto output_size = static_cast<std::size_t>(output_end - output_text);
  const auto tail_size = static_cast<std::size_t>(tail_end - tail);
  // Sized once and written in place (five appends each checked the capacity again).
  std::string id(base.size() + output_size + 1 + suffix.size() + tail_size, '@');
  char* out = std::copy(base.begin(), base.end(), id.data());
  out = std::copy_n(output_text, output_size, out) + 1;  // past the '@'
  out = std::copy(suffix.begin(), suffix.end(), out);
  std::copy_n(tail, tail_size, out);
  return id;
}
}  // namespace detail

// devpass::graph as a model of the graph concept: each operation reads or writes a member of
// the bundled node.
template <>
struct graph_model<graph> {
  using rewrite_state = id_allocator;
  static op_kind role(const graph& g, vertex v) { return g[v].op; }
  // The op vocabulary: a delegate's or call's kernel name, interned (op_name.hpp); none for the
  // other roles (a file may name a kernel on a copy; no op pattern and no signature reads it).
  static op_name op(const graph& g, vertex v) { return runs_kernel(g[v].op) ? g[v].kernel.interned() : op_name{}; }
  // What guards read beyond the roles (node_description.hpp): the ATen traits of the kernel, the
  // spec's shape, a member of the attrs object.
  static op_traits traits(const graph& g, vertex v) {
    return runs_kernel(g[v].op) ? aten_op_traits(g[v].kernel.view()) : op_traits{};
  }
  static std::span<const std::int64_t> value_shape(const graph& g, value_ref x) {
    const tensor_shape& shape = g[x.producer].outputs[x.output].shape;
    return {shape.begin(), shape.size()};
  }
  static std::optional<std::string_view> attr(const graph& g, vertex v, std::string_view key) {
    return json_member(g[v].attrs.view(), key);
  }
  static std::string_view attrs(const graph& g, vertex v) { return g[v].attrs.view(); }
  static bool erased(const graph& g, vertex v) { return g[v].erased; }
  static void mark_erased(graph& g, vertex v) { g[v].erased = true; }
  static std::uint32_t arity(const graph& g, vertex v) { return g[v].arity; }
  static void set_arity(graph& g, vertex v, std::uint32_t a) { g[v].arity = a; }
  static std::uint32_t output_count(const graph& g, vertex v) {
    return static_cast<std::uint32_t>(g[v].outputs.size());
  }
  static device node_device(const graph& g, vertex v) { return g[v].device; }
  static std::optional<device> marked_device(const graph& g, value_ref x) {
    return g[x.producer].outputs[x.output].device;
  }
  static void mark_device(graph& g, value_ref x, device d) { g[x.producer].outputs.at(x.output).device = d; }
  // The file format: an input's device is where the caller provides it, a constant's where it lives.
  static void set_node_device(graph& g, vertex v, device d) { g[v].device = d; }
  static dtype value_dtype(const graph& g, value_ref x) { return g[x.producer].outputs[x.output].type; }
  static std::uint64_t value_bytes(const graph& g, value_ref x) { return g[x.producer].outputs[x.output].byte_size(); }
  static const std::string& name(const graph& g, vertex v) { return g[v].id; }
  static bool resident(const graph& g, vertex v) { return g[v].resident; }
  static void set_buffer(graph& g, value_ref x, std::optional<buffer_slot> at) {
    tensor_spec& spec = g[x.producer].outputs[x.output];
    spec.mem_id = at ? std::optional<std::int32_t>(at->mem_id) : std::nullopt;
    spec.offset = at ? std::optional<std::int64_t>(at->offset) : std::nullopt;
  }
  // A copy named after what it copies or feeds, unique by the id allocator: "x@h2d[cuda:0]",
  // "x:1@d2h", "k@h2d.2". The device goes in brackets: an id may not end in ":<digits>" (files
  // read that as an output). Ids is id_allocator, complete where a rewrite runs, or
  // candidate_ids where the allocator said every candidate is free (graph_model.hpp).
  template <class Ids>
  static vertex add_copy(graph& g, Ids& ids, const copy_request& r) {
    // Named after the use it feeds (its consumer), or after the value it copies (its producer).
    const vertex base = r.naming == copy_naming::after_use ? r.site.consumer : r.source.producer;
    return add_copy_named(g, ids.make_derived(base, detail::copy_id(g[base].id, r)), r);
  }
  // The copy itself, once its id is chosen: one function for both kinds of Ids (compiled once in
  // a TU that makes copies both ways, as device propagation does).
  static vertex add_copy_named(graph& g, std::string id, const copy_request& r) {
    tensor_spec spec = g[r.source.producer].outputs.at(r.source.output);  // before the vertex moves
    spec.device = r.kind == op_kind::d2h_copy ? cpu_device : r.side;
    spec.mem_id.reset();
    spec.offset.reset();
    // Made in place: a node built aside and moved in would be written twice (and boost::add_vertex
    // resizes by one through the vector's general growth path).
    g.m_vertices.emplace_back();
    node& copy = g.m_vertices.back().m_property;
    copy.id = std::move(id);
    copy.op = r.kind;
    copy.device = r.side;
    copy.resident = r.resident;
    copy.outputs.push_back(std::move(spec));
    return static_cast<vertex>(g.m_vertices.size() - 1);
  }
  // Any node (graph_model.hpp, node_request): the op is its kernel. Its id is r.name, made unique
  // by the allocator (a request named after a node derives from that node's id, as copies do).
  template <class Ids>
  static vertex add_node(graph& g, Ids& ids, const node_request& r) {
    std::string id =
        r.named_after ? ids.make_derived(*r.named_after, std::string(r.name)) : ids.make(std::string(r.name));
    node n{std::move(id), r.role, r.on};
    n.resident = r.resident;
    n.kernel = shared_text(r.op);
    n.attrs = shared_text(r.attrs);
    for (const tensor_spec& spec : r.outputs) n.outputs.push_back(spec);
    const vertex v = boost::add_vertex(g);
    g[v] = std::move(n);
    return v;
  }
};

[[nodiscard]] inline const std::string& method_name(const graph& g) { return g[boost::graph_bundle].name; }

// Room for the nodes passes add, to reserve before a graph is filled: as many again. Vertex
// storage is one vector, and growing it when full moves every node (mostly page faults on the new
// block; docs/performance.md). Reserved before the graph is filled,
// the room costs address space only, until a pass uses it. read_graph reserves this much. Half as
// many again was too little: ExecuTorch's policy adds 0.50 copies a node on the synthetic graphs
// (an h2d per device-delegate slot fed from the host, a d2h per device value the host reads), so
// its last copies moved the whole graph (docs/performance.md#room-for-the-copies).
[[nodiscard]] constexpr std::size_t node_capacity_for(std::size_t nodes) noexcept { return 2 * nodes; }

// Moves the node in (boost::add_vertex(property, g) would copy its strings and vectors).
[[nodiscard]] inline vertex add_node(graph& g, node n) {
  const vertex v = boost::add_vertex(g);
  g[v] = std::move(n);
  return v;
}

[[nodiscard]] inline const tensor_spec& spec_of(const graph& g, value_ref value) {
  return g[value.producer].outputs.at(value.output);
}

// Linear search by id; for repeated lookups build a map once.
[[nodiscard]] inline std::optional<vertex> find_node(const graph& g, std::string_view id) {
  for (const auto v : boost::make_iterator_range(boost::vertices(g)))
    if (!g[v].erased && g[v].id == id) return v;
  return std::nullopt;
}

// Whether an id ends in ":<digits>", which no id may: a reference "id:k" names output k of node
// id, so such an id would be ambiguous (the reader and the verifier reject it).
[[nodiscard]] inline bool ends_in_output_index(std::string_view id) noexcept {
  const auto colon = id.rfind(':');
  return colon != std::string_view::npos && colon + 1 < id.size() &&
         id.find_first_not_of("0123456789", colon + 1) == std::string_view::npos;
}

}  // namespace devpass
