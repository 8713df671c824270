// tests/kernel_ir.hpp — a compiler's own IR whose op vocabulary is an enum of its kernels (cast,
// conv, bias_add, ...), apart from the role a node plays: what the pass families
// (passes/casts.hpp, passes/fusion.hpp) run on besides devpass::graph, with the IR's own names
// for the cast and the fused kernels. Made by graph_builder{}...build_as<kir::graph>(): add_node
// takes the builder's kernel text as the op name, and refuses a name the enum lacks.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "devpass/graph/graph_model.hpp"
#include "devpass/graph/tensor_spec.hpp"

namespace kir {

enum class kernel : std::uint8_t {
  none,
  cast,
  conv,
  bias_add,
  relu,
  dense,
  gelu,
  conv_bias_relu,
  dense_bias_gelu,
  dense_gelu,
  mm
};
inline constexpr std::string_view kernel_names[] = {"none",  "cast", "conv",           "bias_add",        "relu",
                                                    "dense", "gelu", "conv_bias_relu", "dense_bias_gelu", "dense_gelu",
                                                    "mm"};

struct instruction {
  devpass::op_kind role = devpass::op_kind::call;
  kernel op = kernel::none;
  bool erased = false;
  devpass::device on{};
  std::uint32_t arity = 0;
  std::vector<devpass::tensor_spec> results;
  std::string name;
};

using graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS, instruction, devpass::edge_info,
                                    boost::no_property, boost::vecS>;

inline kernel kernel_named(std::string_view name) {
  if (name.empty()) return kernel::none;
  for (std::size_t i = 0; i < std::size(kernel_names); ++i)
    if (kernel_names[i] == name) return static_cast<kernel>(i);
  throw std::invalid_argument("kir: no kernel named " + std::string(name));
}

}  // namespace kir

template <>
struct devpass::graph_model<kir::graph> {
  using G = kir::graph;
  static constexpr const auto& op_names = kir::kernel_names;
  static kir::kernel op(const G& g, vertex v) { return g[v].op; }
  static op_kind role(const G& g, vertex v) { return g[v].role; }
  static bool erased(const G& g, vertex v) { return g[v].erased; }
  static void mark_erased(G& g, vertex v) { g[v].erased = true; }
  static std::uint32_t arity(const G& g, vertex v) { return g[v].arity; }
  static void set_arity(G& g, vertex v, std::uint32_t a) { g[v].arity = a; }
  static std::uint32_t output_count(const G& g, vertex v) { return static_cast<std::uint32_t>(g[v].results.size()); }
  static device node_device(const G& g, vertex v) { return g[v].on; }
  static std::optional<device> marked_device(const G& g, value_ref x) { return g[x.producer].results[x.output].device; }
  static void mark_device(G& g, value_ref x, device d) { g[x.producer].results[x.output].device = d; }
  static dtype value_dtype(const G& g, value_ref x) { return g[x.producer].results[x.output].type; }
  static std::uint64_t value_bytes(const G& g, value_ref x) { return g[x.producer].results[x.output].byte_size(); }
  static const std::string& name(const G& g, vertex v) { return g[v].name; }
  static vertex add_node(G& g, const node_request& r) {
    kir::instruction made{r.role, kir::kernel_named(r.op), false, r.on, 0, {}, std::string(r.name)};
    made.results.assign(r.outputs.begin(), r.outputs.end());
    return boost::add_vertex(std::move(made), g);
  }
  static vertex add_copy(G& g, const copy_request& r) {
    tensor_spec spec = g[r.source.producer].results[r.source.output];
    spec.device = r.kind == op_kind::d2h_copy ? cpu_device : r.side;
    kir::instruction made{r.kind, kir::kernel::none, false, r.side, 0, {spec}, g[r.source.producer].name + "@copy"};
    return boost::add_vertex(std::move(made), g);
  }
};
