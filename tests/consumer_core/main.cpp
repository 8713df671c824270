// A user rule table and the passes over devpass::core alone: no reader, no runtime.
#include <devpass/rules.hpp>
#include <devpass/passes/propagate_device.hpp>
#include <devpass/planning/memory_planner.hpp>

#include <iostream>

#ifdef SIMDJSON_VERSION
#error "devpass::core headers pulled in simdjson"
#endif

using namespace devpass;
using namespace devpass::dsl;

constexpr auto d = "d"_c;
struct options {};
// The team's own rule: an unused d2h_copy goes.
constexpr auto drop_dead_copies = make_table(d2h_copy.as(d)[unused(d)] / erase(d));

int main() {
  graph g;
  const tensor_spec spec{dtype::float32, {4}};
  const vertex x = add_node(g, {.id = "x", .op = op_kind::input, .outputs = {spec}});
  const vertex a = add_node(g, {.id = "a", .op = op_kind::delegate, .device = cuda_device(0), .kernel = "relu", .outputs = {spec}});
  const vertex out = add_node(g, {.id = "out", .op = op_kind::output});
  connect(g, {x, 0}, a, 0);
  connect(g, {a, 0}, out, 0);
  const propagate_stats stats = propagate_device(g, {});
  options o;
  rules::rewrite_context<options> ctx(g, o);
  (void)rules::apply_rules(drop_dead_copies, ctx);
  const memory_plan plan = plan_memory(g);
  const bool ok = stats.after.h2d == 1 && stats.after.d2h == 1 && plan.order.size() == boost::num_vertices(g);
  std::cout << (ok ? "core consumer ok" : "core consumer broken") << "\n";
  return ok ? 0 : 1;
}
