// examples/own_graph/own_graph.hpp — a compiler's own IR, made a devpass graph model.
//
// The compiler ("mycc") keeps its graph in a lean Boost.Graph adjacency_list: its own opcode
// enum, a 20-byte vertex property, and value descriptions (dtype, bytes, placement, buffer) in a
// side table in the graph property, indexed from the vertex. Nothing of devpass's node (string
// ids, kernels, spec vectors) is stored. The adaptation is the specialization of
// devpass::graph_model below: one line per operation (docs/graph-concept.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "devpass/graph/graph_model.hpp"

namespace mycc {

enum class opcode : std::uint8_t { param, weight, kernel, host_op, upload, download, peer_copy, ret };

// A device in 16 bits: 0 is the host, 1 + i is cuda:i.
using device_code = std::uint16_t;
constexpr device_code encode(devpass::device d) { return d.is_host() ? 0 : static_cast<device_code>(d.index + 1); }
constexpr devpass::device decode(device_code c) { return c == 0 ? devpass::cpu_device : devpass::cuda_device(c - 1); }

struct op_node {
  opcode op = opcode::host_op;
  bool erased = false;
  device_code device = 0;
  std::uint32_t arity = 0;
  std::uint32_t first_value = 0;  // its values are values[first_value, first_value + value_count)
  std::uint16_t value_count = 0;
  bool resident = false;                                       // a copy made once, at load
  std::uint32_t name = unnamed;                                // index into names
  static constexpr std::uint32_t unnamed = ~std::uint32_t{0};  // a copy a pass made
};
static_assert(sizeof(op_node) <= 32, "the point of the exercise: a vertex property of at most 32 bytes");

struct value_info {
  std::uint64_t bytes = 0;
  devpass::dtype type = devpass::dtype::float32;
  device_code placed = 0xFFFF;  // 0xFFFF: no pass placed it yet
  std::int32_t mem_id = -1;     // -1: no planned buffer
  std::int64_t offset = 0;
};

struct module {
  std::vector<value_info> values;
  std::vector<std::string> names;
};

// The compiler's own edge: which result of the producer it carries, which operand of the
// consumer it feeds, and a word devpass keeps its position hint in (O(1) removal of one use).
// The model names the three for devpass (edge_output, edge_slot, edge_position below).
struct operand_edge {
  std::uint32_t result = 0;
  std::uint32_t operand = 0;
  std::uint32_t position_hint = 0;
};

using ir_graph =
    boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS, op_node, operand_edge, module, boost::vecS>;

// The opcode that plays a devpass role.
[[nodiscard]] inline opcode opcode_of(devpass::op_kind k) {
  using devpass::op_kind;
  switch (k) {
    case op_kind::input: return opcode::param;
    case op_kind::constant: return opcode::weight;
    case op_kind::delegate: return opcode::kernel;
    case op_kind::call: return opcode::host_op;
    case op_kind::h2d_copy: return opcode::upload;
    case op_kind::d2h_copy: return opcode::download;
    case op_kind::d2d_copy: return opcode::peer_copy;
    case op_kind::output: return opcode::ret;
  }
  return opcode::host_op;
}

}  // namespace mycc

template <>
struct devpass::graph_model<mycc::ir_graph> {
  using G = mycc::ir_graph;
  static constexpr op_kind roles[] = {op_kind::input,    op_kind::constant, op_kind::delegate, op_kind::call,
                                      op_kind::h2d_copy, op_kind::d2h_copy, op_kind::d2d_copy, op_kind::output};
  static mycc::value_info& info(G& g, value_ref x) {
    return g[boost::graph_bundle].values[g[x.producer].first_value + x.output];
  }
  static const mycc::value_info& info(const G& g, value_ref x) {
    return g[boost::graph_bundle].values[g[x.producer].first_value + x.output];
  }

  // The edge bundle is the compiler's own: its members, named for devpass.
  static constexpr auto edge_output = &mycc::operand_edge::result;
  static constexpr auto edge_slot = &mycc::operand_edge::operand;
  static constexpr auto edge_position = &mycc::operand_edge::position_hint;

  static op_kind role(const G& g, vertex v) { return roles[static_cast<int>(g[v].op)]; }
  // The IR's op vocabulary, its own enum: patterns name its ops (op<"upload">), checked at
  // compile time against these names (op_names[i] names the opcode of value i).
  static constexpr std::string_view op_names[] = {"param",  "weight",   "kernel",    "host_op",
                                                  "upload", "download", "peer_copy", "ret"};
  static mycc::opcode op(const G& g, vertex v) { return g[v].op; }
  static bool erased(const G& g, vertex v) { return g[v].erased; }
  static void mark_erased(G& g, vertex v) { g[v].erased = true; }
  static std::uint32_t arity(const G& g, vertex v) { return g[v].arity; }
  static void set_arity(G& g, vertex v, std::uint32_t a) { g[v].arity = a; }
  static std::uint32_t output_count(const G& g, vertex v) { return g[v].value_count; }
  static device node_device(const G& g, vertex v) { return mycc::decode(g[v].device); }
  static std::optional<device> marked_device(const G& g, value_ref x) {
    const auto placed = info(g, x).placed;
    return placed == 0xFFFF ? std::nullopt : std::optional(mycc::decode(placed));
  }
  static void mark_device(G& g, value_ref x, device d) { info(g, x).placed = mycc::encode(d); }
  static void set_node_device(G& g, vertex v, device d) { g[v].device = mycc::encode(d); }
  static dtype value_dtype(const G& g, value_ref x) { return info(g, x).type; }
  static std::uint64_t value_bytes(const G& g, value_ref x) { return info(g, x).bytes; }
  static std::string name(const G& g, vertex v) {
    if (g[v].name != mycc::op_node::unnamed) return g[boost::graph_bundle].names[g[v].name];
    return std::string(to_string(role(g, v))) + "#" + std::to_string(v);
  }
  static bool resident(const G& g, vertex v) { return g[v].resident; }
  static void set_buffer(G& g, value_ref x, std::optional<buffer_slot> at) {
    info(g, x).mem_id = at ? at->mem_id : -1;
    info(g, x).offset = at ? at->offset : 0;
  }
  // Any node (the graph builder's build_as, for the IR's doctest suites): the op and attributes
  // are not kept (the IR's opcode is its role).
  static vertex add_node(G& g, const node_request& r) {
    mycc::module& m = g[boost::graph_bundle];
    const mycc::op_node n{mycc::opcode_of(r.role),
                          false,
                          mycc::encode(r.on),
                          0,
                          static_cast<std::uint32_t>(m.values.size()),
                          static_cast<std::uint16_t>(r.outputs.size()),
                          r.resident,
                          static_cast<std::uint32_t>(m.names.size())};
    m.names.emplace_back(r.name);
    for (const tensor_spec& spec : r.outputs)
      m.values.push_back(
          {spec.byte_size(), spec.type, spec.device ? mycc::encode(*spec.device) : mycc::device_code{0xFFFF}});
    return boost::add_vertex(n, g);
  }
  // Copies get no name (the request's naming is for models that keep names).
  static vertex add_copy(G& g, const copy_request& r) {
    auto& values = g[boost::graph_bundle].values;
    mycc::value_info value = info(g, r.source);
    value.placed = mycc::encode(r.kind == op_kind::d2h_copy ? cpu_device : r.side);
    value.mem_id = -1;
    const auto op = r.kind == op_kind::h2d_copy   ? mycc::opcode::upload
                    : r.kind == op_kind::d2h_copy ? mycc::opcode::download
                                                  : mycc::opcode::peer_copy;
    const vertex v =
        boost::add_vertex(mycc::op_node{op, false, mycc::encode(r.side), 0, static_cast<std::uint32_t>(values.size()),
                                        1, r.resident, mycc::op_node::unnamed},
                          g);
    values.push_back(value);
    return v;
  }
};
