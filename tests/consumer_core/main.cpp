// A user rule table and the passes over devpass::core alone: no reader, no runtime; and the same
// passes over a compiler's own graph type, adapted as a model of the graph concept.
#include <devpass/passes/propagate_device.hpp>
#include <devpass/planning/memory_planner.hpp>
#include <devpass/rules.hpp>

#include <iostream>
#include <optional>
#include <string>

#ifdef SIMDJSON_VERSION
#error "devpass::core headers pulled in simdjson"
#endif

using namespace devpass;
using namespace devpass::dsl;

constexpr auto d = "d"_c;
struct options {};
// The team's own rule: an unused d2h_copy goes.
constexpr auto drop_dead_copies = make_table(d2h_copy.as(d)[unused(d)] / erase(d));

// The compiler's own IR: an op, a device, the arity and one value's mark and buffer per vertex.
struct ir_op {
  op_kind op = op_kind::call;
  device at;
  std::uint32_t arity = 0;
  bool erased = false;
  std::optional<device> mark;
  std::int32_t mem_id = -1;
};
using ir_graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS, ir_op, edge_info,
                                       boost::no_property, boost::vecS>;

template <>
struct devpass::graph_model<ir_graph> {
  using G = ir_graph;
  static op_kind role(const G& g, vertex v) { return g[v].op; }
  static bool erased(const G& g, vertex v) { return g[v].erased; }
  static void mark_erased(G& g, vertex v) { g[v].erased = true; }
  static std::uint32_t arity(const G& g, vertex v) { return g[v].arity; }
  static void set_arity(G& g, vertex v, std::uint32_t a) { g[v].arity = a; }
  static std::uint32_t output_count(const G& g, vertex v) { return g[v].op == op_kind::output ? 0 : 1; }
  static device node_device(const G& g, vertex v) { return g[v].at; }
  static std::optional<device> marked_device(const G& g, value_ref x) { return g[x.producer].mark; }
  static void mark_device(G& g, value_ref x, device d) { g[x.producer].mark = d; }
  static dtype value_dtype(const G&, value_ref) { return dtype::float32; }
  static std::uint64_t value_bytes(const G&, value_ref) { return 16; }
  static std::string name(const G&, vertex v) { return "op" + std::to_string(v); }
  static void set_buffer(G& g, value_ref x, std::optional<buffer_slot> at) {
    g[x.producer].mem_id = at ? at->mem_id : -1;
  }
  static vertex add_copy(G& g, const copy_request& r) {
    return boost::add_vertex(ir_op{r.kind, r.side, 0, false, r.kind == op_kind::d2h_copy ? cpu_device : r.side}, g);
  }
};

bool own_graph_ok() {
  ir_graph g;
  const auto x = boost::add_vertex(ir_op{op_kind::input}, g);
  const auto a = boost::add_vertex(ir_op{op_kind::delegate, cuda_device(0)}, g);
  const auto out = boost::add_vertex(ir_op{op_kind::output}, g);
  connect(g, {x, 0}, a, 0);
  connect(g, {a, 0}, out, 0);
  const propagate_stats stats = propagate_device(g, {});
  rules::rewrite_context<options, ir_graph> ctx(g, {});
  (void)rules::apply_rules(drop_dead_copies, ctx);
  const memory_plan plan = plan_memory(g);
  return stats.after.h2d == 1 && stats.after.d2h == 1 && plan.buffer_count() == 2 && g[a].mem_id > 0;
}

int main() {
  graph g;
  const tensor_spec spec{dtype::float32, {4}};
  const vertex x = add_node(g, {.id = "x", .op = op_kind::input, .outputs = {spec}});
  const vertex a =
      add_node(g, {.id = "a", .op = op_kind::delegate, .device = cuda_device(0), .kernel = "relu", .outputs = {spec}});
  const vertex out = add_node(g, {.id = "out", .op = op_kind::output});
  connect(g, {x, 0}, a, 0);
  connect(g, {a, 0}, out, 0);
  const propagate_stats stats = propagate_device(g, {});
  options o;
  rules::rewrite_context<options> ctx(g, o);
  (void)rules::apply_rules(drop_dead_copies, ctx);
  const memory_plan plan = plan_memory(g);
  const bool ok =
      stats.after.h2d == 1 && stats.after.d2h == 1 && plan.order.size() == boost::num_vertices(g) && own_graph_ok();
  std::cout << (ok ? "core consumer ok" : "core consumer broken") << "\n";
  return ok ? 0 : 1;
}
