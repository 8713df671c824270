// examples/own_graph/main.cpp — devpass over a compiler's own IR (own_graph.hpp): the compiler
// builds its graph in its own terms, and devpass's device propagation, a rule table of the
// compiler's own, and the memory planner run on it as they run on devpass::graph. Checks its
// own result; exits 1 when a check fails.
#include <cstdio>
#include <string>

#include "devpass/graph/copy_census.hpp"
#include "devpass/graph/verify.hpp"
#include "devpass/passes/propagate_device.hpp"
#include "devpass/planning/memory_planner.hpp"
#include "devpass/rules.hpp"
#include "own_graph.hpp"

namespace {

using devpass::value_ref;
using devpass::vertex;

// How the compiler fills its IR: a vertex and its values, named.
vertex add(mycc::ir_graph& g, mycc::opcode op, devpass::device at, std::uint16_t values, std::string name,
           std::uint64_t bytes = 4096) {
  mycc::module& m = g[boost::graph_bundle];
  const vertex v =
      boost::add_vertex(mycc::op_node{op, false, mycc::encode(at), 0, static_cast<std::uint32_t>(m.values.size()),
                                      values, false, static_cast<std::uint32_t>(m.names.size())},
                        g);
  m.names.push_back(std::move(name));
  for (std::uint16_t k = 0; k < values; ++k) m.values.push_back({.bytes = bytes});
  return v;
}

int failures = 0;
void check(bool ok, const char* what) {
  std::printf("%s %s\n", ok ? "ok:  " : "FAIL:", what);
  failures += ok ? 0 : 1;
}

}  // namespace

int main() {
  using mycc::opcode;
  const auto gpu0 = devpass::cuda_device(0), gpu1 = devpass::cuda_device(1), host = devpass::cpu_device;

  // tokens -> embed (cuda:0) -> attn (cuda:0) -> logits (cuda:1) -> sample (host) -> result,
  // the weights on the host, the embedding also read by a host logger. Values of 4 KiB but the
  // sampled token (8 bytes).
  mycc::ir_graph g;
  const vertex tokens = add(g, opcode::param, host, 1, "tokens");
  const vertex w = add(g, opcode::weight, host, 1, "w");
  const vertex embed = add(g, opcode::kernel, gpu0, 1, "embed");
  const vertex attn = add(g, opcode::kernel, gpu0, 1, "attn");
  const vertex logits = add(g, opcode::kernel, gpu1, 1, "logits");
  const vertex log = add(g, opcode::host_op, host, 1, "log");
  const vertex sample = add(g, opcode::host_op, host, 1, "sample", 8);
  const vertex result = add(g, opcode::ret, host, 0, "result");
  devpass::connect(g, {tokens, 0}, embed, 0);
  devpass::connect(g, {w, 0}, embed, 1);
  devpass::connect(g, {embed, 0}, attn, 0);
  devpass::connect(g, {w, 0}, attn, 1);
  devpass::connect(g, {attn, 0}, logits, 0);
  devpass::connect(g, {embed, 0}, log, 0);
  devpass::connect(g, {logits, 0}, sample, 0);
  devpass::connect(g, {sample, 0}, result, 0);
  devpass::connect(g, {log, 0}, result, 1);

  // A rule of the compiler's own, over its own IR: its sampler has a device kernel, so a host
  // `sample` reading one device value runs on that value's device instead. The guard reads the
  // compiler's own name table; the action writes its own vertex fields.
  using namespace devpass::dsl;
  constexpr auto c = "c"_c;
  constexpr auto x = "x"_c;
  constexpr auto is_sampler = satisfies(
      [](const auto& ctx, value_ref node) { return devpass::display_name(ctx.g, node.producer) == "sample"; }, c);
  constexpr auto sample_on_device = make_table(call(delegate.as(x)).as(c)[is_sampler && on_device(x)] /
                                               apply(
                                                   [](auto& ctx, value_ref node, value_ref source) {
                                                     ctx.g[node.producer].op = opcode::kernel;
                                                     ctx.g[node.producer].device =
                                                         mycc::encode(devpass::location_of(ctx.g, source));
                                                     ctx.touch(node.producer);
                                                   },
                                                   c, x));
  struct no_options {};
  devpass::rules::rewrite_context<no_options, mycc::ir_graph> ctx(g, {});
  const auto counters = devpass::rules::apply_rules(sample_on_device, ctx);
  check(counters.rewrites == 1 && g[sample].op == opcode::kernel && g[sample].device == mycc::encode(gpu1),
        "the compiler's rule moved `sample` onto cuda:1");

  // devpass's own policy: one h2d per host value and device, a d2d for attn -> logits, a d2h per
  // device value read on the host: the embedding for the logger and the 8-byte token, not the
  // 4 KiB logits. The weight w is uploaded to cuda:0 once, for embed and attn, and only once: a
  // resident copy, made at load (the IR stores the mark: its optional `resident` operation).
  const devpass::propagate_stats stats = devpass::propagate_device(g);
  check(stats.after.h2d == 1 && stats.after.d2d == 1 && stats.after.d2h == 2,
        "1 h2d, 1 d2d, 2 d2h copies per execution");
  check(stats.after.resident == 1 && stats.after.resident_bytes == 4096, "w loaded onto cuda:0 once, at load");
  check(stats.after.d2h_bytes == 4096 + 8, "the d2h copies move 4104 bytes");
  check(devpass::verify_devices(g).ok(), "every value is read where it lives");
  const auto logits_input = devpass::operand(g, logits, 0);
  check(logits_input && g[logits_input->producer].op == opcode::peer_copy, "logits reads a peer copy of attn");
  check(devpass::operand(g, sample, 0) == value_ref{logits, 0}, "sample reads logits directly, on cuda:1");

  // Memory planning writes the compiler's own value table.
  const devpass::memory_plan plan = devpass::plan_memory(g);
  check(plan.buffer_count() == 3, "three arenas: cpu, cuda:0, cuda:1");
  bool all_planned = true;
  for (vertex v = 0; v < boost::num_vertices(g); ++v)
    for (std::uint16_t k = 0; k < g[v].value_count; ++k)
      if (g[v].op != opcode::weight && !g[v].resident)
        all_planned = all_planned && g[boost::graph_bundle].values[g[v].first_value + k].mem_id > 0;
  check(all_planned, "every value but the weight and its resident copy has a buffer");
  check(plan.resident.size() == 2 && plan.resident[1].device == gpu0 && plan.resident[1].bytes == 4096,
        "the weight is held on the host and on cuda:0, outside the arenas");
  std::printf("%zu vertices of %zu bytes, %zu copies, arenas:", boost::num_vertices(g), sizeof(mycc::op_node),
              stats.after.copies());
  for (std::size_t b = 1; b < plan.buffers.size(); ++b)
    std::printf(" %s %llu B", devpass::to_string(plan.buffers[b].device).c_str(),
                static_cast<unsigned long long>(plan.buffers[b].size));
  std::printf("\n");
  return failures == 0 ? 0 : 1;
}
