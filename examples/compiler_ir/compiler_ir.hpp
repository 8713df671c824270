// examples/compiler_ir/compiler_ir.hpp — a compiler's own IR ("cir"), made a devpass graph model.
//
// The compiler keeps its graph in a Boost.Graph adjacency_list with its own op vocabulary (an
// enum of 20 ops: sources, convolutions and matmuls, elementwise ops, views, a cast, fused
// kernels, a collective, copies, the return), a 24-byte vertex, its own edge struct, and the
// values in a side table of the graph property: dtype, shape (a span into a shape pool), bytes,
// placement and buffer. Nothing of devpass's own node is stored. Beyond the concept, the model
// gives what devpass's optional operations ask (docs/graph-concept.md): the op vocabulary
// (op<"transpose"> patterns), op traits, value shapes, attributes, and any node made from a
// node_request (build_as<cir::graph>(), result patterns). The front end is front_end.hpp.
//
// Roles follow from the op and the device: a param is a method input, a weight a constant, the
// copies are the copy roles, ret is the output; every computational op is a delegate on a device
// and a call on the host. That mapping is what lets device propagation place the IR's values.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "devpass/graph/concat.hpp"
#include "devpass/graph/error.hpp"
#include "devpass/graph/graph_model.hpp"
#include "devpass/graph/node_description.hpp"
#include "devpass/graph/op_traits.hpp"
#include "devpass/graph/structure.hpp"

namespace cir {

// The IR's ops, named by opcode_names below in this order.
enum class opcode : std::uint8_t {
  param,   // a method input
  weight,  // a constant
  conv2d,  // attribute: the stride, 1 to 9
  linear,  // x · wᵀ, + b with a third operand
  matmul,
  add,
  relu,
  gelu,
  view,             // a new shape over the same memory (of a contiguous input)
  reshape,          // a new shape, copying only when the input is not contiguous
  transpose,        // two dimensions swapped, a view; attribute: swap_dims(a, b)
  cast,             // a dtype conversion: the target dtype is its result's dtype
  conv2d_add_relu,  // relu(conv2d(x, w) + b), one kernel; attribute: the conv's stride
  linear_add_gelu,  // gelu(linear(x, w) + b), one kernel
  linear_gelu,      // gelu(linear(x, w, b)), one kernel
  all_reduce,       // a collective over its operands' devices; attribute: the reduction
  upload,           // host to device
  download,         // device to host
  peer_copy,        // device to device
  ret,              // the method's results
};
inline constexpr std::size_t opcode_count = static_cast<std::size_t>(opcode::ret) + 1;
inline constexpr std::string_view opcode_names[] = {
    // sources, kernels, views and the cast
    "param", "weight", "conv2d", "linear", "matmul", "add", "relu", "gelu", "view", "reshape", "transpose", "cast",
    // fused kernels, the collective, copies, the return
    "conv2d_add_relu", "linear_add_gelu", "linear_gelu", "all_reduce", "upload", "download", "peer_copy", "ret"};
static_assert(std::size(opcode_names) == opcode_count, "a name for every opcode, in enum order");
// An op's name in the IR's vocabulary ("transpose"): what op<"transpose"> and signatures name.
[[nodiscard]] constexpr std::string_view name_of(opcode op) { return opcode_names[static_cast<std::size_t>(op)]; }

// Whether an op computes (as opposed to a source, a copy or the return): the ops whose role is
// decided by the device they run on.
[[nodiscard]] constexpr bool computes(opcode op) { return op >= opcode::conv2d && op <= opcode::all_reduce; }

// A device in 16 bits: 0 is the host, 1 + i is cuda:i.
using device_code = std::uint16_t;
constexpr device_code encode(devpass::device d) { return d.is_host() ? 0 : static_cast<device_code>(d.index + 1); }
constexpr devpass::device decode(device_code c) { return c == 0 ? devpass::cpu_device : devpass::cuda_device(c - 1); }

enum class reduction : std::uint8_t { sum, max, min, avg };

// The attribute word of each op that has one.
constexpr std::uint32_t reduce_by(reduction r) { return static_cast<std::uint32_t>(r); }
constexpr std::uint32_t stride(unsigned s) { return s; }
// Dimensions a and b (0 to 9) of a transpose, in one word: 10 · a + b.
constexpr std::uint32_t swap_dims(unsigned a, unsigned b) { return 10 * a + b; }

struct op_node {
  opcode op = opcode::add;
  bool erased = false;
  device_code device = 0;
  std::uint32_t arity = 0;
  std::uint32_t first_value = 0;  // its values are values[first_value, first_value + value_count)
  std::uint16_t value_count = 0;
  std::uint32_t name = 0;  // index into names
  std::uint32_t attr = 0;  // the op's attribute word (above); 0 for ops without one
};
static_assert(sizeof(op_node) <= 24, "a vertex of at most 24 bytes: the IR's own lean node");

inline constexpr device_code unplaced = 0xFFFF;

struct value_info {
  std::uint64_t bytes = 0;
  devpass::dtype type = devpass::dtype::float32;
  std::uint8_t rank = 0;
  device_code placed = unplaced;  // where a pass placed it
  std::uint32_t dims = 0;         // its shape is shape_pool[dims, dims + rank)
  std::int32_t mem_id = -1;       // -1: no planned buffer
  std::int64_t offset = 0;
};

struct module {
  std::vector<value_info> values;
  std::vector<std::int64_t> shape_pool;
  std::vector<std::string> names;
};

// Which result of the producer an edge carries, which operand of the consumer it feeds, and the
// word devpass keeps its position hint in; the model names the three for devpass below.
struct operand_edge {
  std::uint32_t result = 0;
  std::uint32_t operand = 0;
  std::uint32_t position_hint = 0;
};

using graph =
    boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS, op_node, operand_edge, module, boost::vecS>;
using devpass::vertex;

// The role an op plays on a device (see the header comment).
[[nodiscard]] constexpr devpass::op_kind role_of(opcode op, device_code at) {
  using devpass::op_kind;
  switch (op) {
    case opcode::param: return op_kind::input;
    case opcode::weight: return op_kind::constant;
    case opcode::upload: return op_kind::h2d_copy;
    case opcode::download: return op_kind::d2h_copy;
    case opcode::peer_copy: return op_kind::d2d_copy;
    case opcode::ret: return op_kind::output;
    default: return at == 0 ? op_kind::call : op_kind::delegate;
  }
}

// The op that plays a role where the role alone says which (sources, copies, the return).
[[nodiscard]] constexpr std::optional<opcode> opcode_for_role(devpass::op_kind role) {
  using devpass::op_kind;
  switch (role) {
    case op_kind::input: return opcode::param;
    case op_kind::constant: return opcode::weight;
    case op_kind::h2d_copy: return opcode::upload;
    case op_kind::d2h_copy: return opcode::download;
    case op_kind::d2d_copy: return opcode::peer_copy;
    case op_kind::output: return opcode::ret;
    default: return std::nullopt;
  }
}

namespace detail {
// Attribute texts as a JSON value (node_description.hpp's attr): static, since attr returns views.
inline constexpr std::string_view reduction_texts[] = {"\"sum\"", "\"max\"", "\"min\"", "\"avg\""};
inline constexpr std::string_view digits = "0123456789";
struct dims_texts {
  char text[100][5];
};
constexpr dims_texts make_dims_texts() {
  dims_texts t{};
  for (int at = 0; at < 100; ++at) {
    const char text[5] = {'[', static_cast<char>('0' + at / 10), ',', static_cast<char>('0' + at % 10), ']'};
    std::copy_n(text, 5, t.text[at]);
  }
  return t;
}
inline constexpr dims_texts swap_dims_texts = make_dims_texts();

[[noreturn]] inline void refuse_attr(std::string_view node, std::string problem) {
  throw devpass::graph_error("", std::string(node), "attrs", std::move(problem));
}

// The attribute word of `op` from a request's attributes (minified JSON); the op's default when
// the attribute is absent. A graph_error naming the node and `attrs` for a text the IR cannot keep.
inline std::uint32_t attr_word(opcode op, std::string_view node, std::string_view attrs) {
  switch (op) {
    case opcode::all_reduce: {
      const auto text = devpass::json_member(attrs, "reduce");
      if (!text) return reduce_by(reduction::sum);
      for (std::size_t r = 0; r < std::size(reduction_texts); ++r)
        if (*text == reduction_texts[r]) return static_cast<std::uint32_t>(r);
      refuse_attr(node, "reduce " + std::string(*text) + " is not one of \"sum\", \"max\", \"min\", \"avg\"");
    }
    case opcode::transpose: {
      const auto text = devpass::json_member(attrs, "dims");
      if (!text) return swap_dims(0, 1);
      const std::string_view t = *text;
      if (t.size() == 5 && t[0] == '[' && t[2] == ',' && t[4] == ']' && digits.find(t[1]) != digits.npos &&
          digits.find(t[3]) != digits.npos)
        return swap_dims(static_cast<unsigned>(t[1] - '0'), static_cast<unsigned>(t[3] - '0'));
      refuse_attr(node, "dims " + std::string(t) + " is not two dimensions from 0 to 9, [a,b]");
    }
    case opcode::conv2d:
    case opcode::conv2d_add_relu: {
      const auto text = devpass::json_member(attrs, "stride");
      if (!text) return stride(1);
      if (text->size() == 1 && (*text)[0] >= '1' && (*text)[0] <= '9') return stride(unsigned((*text)[0] - '0'));
      refuse_attr(node, "stride " + std::string(*text) + " is not from 1 to 9");
    }
    default: return 0;
  }
}
}  // namespace detail

}  // namespace cir

template <>
struct devpass::graph_model<cir::graph> {
  using G = cir::graph;
  template <class Graph>  // G or const G
  static auto& info(Graph& g, value_ref x) {
    return g[boost::graph_bundle].values[g[x.producer].first_value + x.output];
  }

  static constexpr auto edge_output = &cir::operand_edge::result;
  static constexpr auto edge_slot = &cir::operand_edge::operand;
  static constexpr auto edge_position = &cir::operand_edge::position_hint;

  static op_kind role(const G& g, vertex v) { return cir::role_of(g[v].op, g[v].device); }
  static constexpr const auto& op_names = cir::opcode_names;
  static cir::opcode op(const G& g, vertex v) { return g[v].op; }

  static op_traits traits(const G& g, vertex v) {
    using cir::opcode;
    switch (g[v].op) {
      case opcode::view:
      case opcode::reshape:
      case opcode::transpose: return op_trait::view | op_trait::pure | op_trait::device_kernel;
      case opcode::add:
      case opcode::relu:
      case opcode::gelu:
      case opcode::cast: return op_trait::elementwise | op_trait::pure | op_trait::device_kernel;
      case opcode::conv2d:
      case opcode::linear:
      case opcode::matmul:
      case opcode::conv2d_add_relu:
      case opcode::linear_add_gelu:
      case opcode::linear_gelu: return op_trait::pure | op_trait::device_kernel;
      // Every rank must take part in a collective: never removed or duplicated.
      case opcode::all_reduce: return op_trait::device_kernel;
      // Copies move data and nothing else; a copy nobody reads may go.
      case opcode::upload:
      case opcode::download:
      case opcode::peer_copy: return op_trait::pure;
      default: return {};  // sources and the return are the method's signature
    }
  }
  static std::span<const std::int64_t> value_shape(const G& g, value_ref x) {
    const cir::value_info& value = info(g, x);
    return std::span<const std::int64_t>(g[boost::graph_bundle].shape_pool).subspan(value.dims, value.rank);
  }
  // "reduce" of an all_reduce, "dims" of a transpose, "stride" of a conv2d or conv2d_add_relu.
  static std::optional<std::string_view> attr(const G& g, vertex v, std::string_view key) {
    const std::uint32_t word = g[v].attr;
    switch (g[v].op) {
      case cir::opcode::all_reduce:
        if (key == "reduce") return cir::detail::reduction_texts[word];
        break;
      case cir::opcode::transpose:
        if (key == "dims") return std::string_view(cir::detail::swap_dims_texts.text[word], 5);
        break;
      case cir::opcode::conv2d:
      case cir::opcode::conv2d_add_relu:
        if (key == "stride") return cir::detail::digits.substr(word, 1);
        break;
      default: break;
    }
    return std::nullopt;
  }
  // All of them, one JSON object (what a result pattern copies to the node it builds: attrs_of).
  static std::string attrs(const G& g, vertex v) {
    for (const std::string_view key : {"reduce", "dims", "stride"})
      if (const auto text = attr(g, v, key)) return "{\"" + std::string(key) + "\":" + std::string(*text) + "}";
    return {};
  }

  static bool erased(const G& g, vertex v) { return g[v].erased; }
  static void mark_erased(G& g, vertex v) { g[v].erased = true; }
  static std::uint32_t arity(const G& g, vertex v) { return g[v].arity; }
  static void set_arity(G& g, vertex v, std::uint32_t a) { g[v].arity = a; }
  static std::uint32_t output_count(const G& g, vertex v) { return g[v].value_count; }
  static device node_device(const G& g, vertex v) { return cir::decode(g[v].device); }
  static void set_node_device(G& g, vertex v, device d) { g[v].device = cir::encode(d); }
  static std::optional<device> marked_device(const G& g, value_ref x) {
    const auto placed = info(g, x).placed;
    return placed == cir::unplaced ? std::nullopt : std::optional(cir::decode(placed));
  }
  static void mark_device(G& g, value_ref x, device d) { info(g, x).placed = cir::encode(d); }
  static dtype value_dtype(const G& g, value_ref x) { return info(g, x).type; }
  static std::uint64_t value_bytes(const G& g, value_ref x) { return info(g, x).bytes; }
  static const std::string& name(const G& g, vertex v) { return g[boost::graph_bundle].names[g[v].name]; }
  static void set_buffer(G& g, value_ref x, std::optional<buffer_slot> at) {
    info(g, x).mem_id = at ? at->mem_id : -1;
    info(g, x).offset = at ? at->offset : 0;
  }

  // A copy, named in the IR's words after what it copies or the use it feeds: "w@upload[cuda:0]",
  // "a@download", "p@peer_copy[cuda:0]", "k@upload.1". Device propagation's devpass policy makes
  // one copy per value, kind and device, so these names are unique without a name allocator.
  static vertex add_copy(G& g, const copy_request& r) {
    cir::module& m = g[boost::graph_bundle];
    const cir::opcode op = *cir::opcode_for_role(r.kind);
    const vertex base = r.naming == copy_naming::after_use ? r.site.consumer : r.source.producer;
    std::string copy_name = m.names[g[base].name];
    if (r.naming != copy_naming::after_use && r.source.output != 0)
      copy_name.append(":").append(std::to_string(r.source.output));
    copy_name.append("@").append(op_names[static_cast<std::size_t>(op)]);
    if (r.naming == copy_naming::after_use)
      copy_name.append(".").append(std::to_string(r.site.slot));
    else if (r.naming == copy_naming::after_value_and_device)
      copy_name.append("[").append(to_string(r.side)).append("]");
    cir::value_info value = info(g, r.source);
    value.placed = cir::encode(r.kind == op_kind::d2h_copy ? cpu_device : r.side);
    value.mem_id = -1;
    value.offset = 0;
    const vertex v =
        boost::add_vertex(cir::op_node{op, false, cir::encode(r.side), 0, static_cast<std::uint32_t>(m.values.size()),
                                       1, static_cast<std::uint32_t>(m.names.size())},
                          g);
    m.values.push_back(value);
    m.names.push_back(std::move(copy_name));
    return v;
  }

  // Any node: request.op is an op name of the IR (a delegate or call must have one; for the other
  // roles it may be empty, the role then says which op). The op must play the requested role on
  // the requested device, except that a computational op is a delegate on a device and a call on
  // the host whichever of the two was asked. The name is kept as given (the graph builder's); the
  // attributes as the request gives them (fusion's conv2d_add_relu: its conv2d's, attrs_of).
  static vertex add_node(G& g, const node_request& r) {
    const std::string name(r.name);
    cir::opcode op{};
    if (r.op.empty()) {
      const auto by_role = cir::opcode_for_role(r.role);
      if (!by_role)
        throw graph_error("", name, "op",
                          std::string("a ") + std::string(to_string(r.role)) + " needs an op of the IR");
      op = *by_role;
    } else {
      const auto* found = std::find(std::begin(op_names), std::end(op_names), r.op);
      if (found == std::end(op_names))
        throw graph_error("", name, "op", "'" + std::string(r.op) + "' is no op of the IR");
      op = static_cast<cir::opcode>(found - std::begin(op_names));
    }
    const op_kind plays = cir::role_of(op, cir::encode(r.on));
    const bool asked_to_compute = r.role == op_kind::delegate || r.role == op_kind::call;
    if (plays != r.role && !(asked_to_compute && cir::computes(op)))
      throw graph_error("", name, "op",
                        "'" + std::string(op_names[static_cast<std::size_t>(op)]) + "' on " + to_string(r.on) +
                            " plays " + std::string(to_string(plays)) + ", not " + std::string(to_string(r.role)));
    const std::uint32_t attr = cir::detail::attr_word(op, name, r.attrs);
    cir::module& m = g[boost::graph_bundle];
    const cir::op_node n{.op = op,
                         .device = cir::encode(r.on),
                         .first_value = static_cast<std::uint32_t>(m.values.size()),
                         .value_count = static_cast<std::uint16_t>(r.outputs.size()),
                         .name = static_cast<std::uint32_t>(m.names.size()),
                         .attr = attr};
    m.names.push_back(name);
    for (const tensor_spec& spec : r.outputs) {
      m.values.push_back({.bytes = spec.byte_size(),
                          .type = spec.type,
                          .rank = static_cast<std::uint8_t>(spec.shape.size()),
                          .placed = spec.device ? cir::encode(*spec.device) : cir::unplaced,
                          .dims = static_cast<std::uint32_t>(m.shape_pool.size())});
      m.shape_pool.insert(m.shape_pool.end(), spec.shape.begin(), spec.shape.end());
    }
    return boost::add_vertex(n, g);
  }

  // A rewrite run names the nodes it makes after another uniquely, as devpass::graph's ids: a name
  // taken ("x@cast", for x's cast to a second dtype) gets "#2", "#3"... The live names are gathered
  // when the run makes its first node.
  struct rewrite_state {
    explicit rewrite_state(const G&) {}
    std::optional<std::unordered_set<std::string>> taken;
  };
  static vertex add_node(G& g, rewrite_state& state, const node_request& r) {
    if (!r.named_after) return add_node(g, r);
    if (!state.taken)
      for (state.taken.emplace(); const vertex v : boost::make_iterator_range(boost::vertices(g)))
        if (!g[v].erased) state.taken->insert(name(g, v));
    std::string unique(r.name);
    for (unsigned k = 2; !state.taken->insert(unique).second; ++k) unique = concat({r.name, "#", std::to_string(k)});
    return add_node(g, {r.role, r.on, unique, r.op, r.attrs, r.outputs, r.named_after});
  }
};
