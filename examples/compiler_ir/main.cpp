// examples/compiler_ir/main.cpp — a compiler runs its own pipeline (pipeline.hpp) over a model
// built in its own IR (compiler_ir.hpp): a conv → add → relu block, a view chain, a linear → gelu,
// a transpose pair, an all_reduce of a cuda:0 and a cuda:1 value, and a cast, with the weights on
// the host. Prints each phase's rewrites and the copies made, checks the result (every value read
// where it lives, among others), and exits 1 when a check fails.
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>

#include "devpass/graph/copy_census.hpp"
#include "devpass/pipeline/instrumentation.hpp"
#include "pipeline.hpp"

namespace {

using cir::opcode;
using devpass::value_ref;
using devpass::vertex;

int failures = 0;
void check(bool ok, const char* what) {
  std::printf("%s %s\n", ok ? "ok:  " : "FAIL:", what);
  failures += ok ? 0 : 1;
}

// The live vertex of that name. Names, not vertices, are kept across the pipeline: its rewrites
// erase nodes and compact the graph, which renumbers them.
std::optional<vertex> find(const cir::graph& g, std::string_view name) {
  for (vertex v = 0; v < boost::num_vertices(g); ++v)
    if (!g[v].erased && devpass::node_name(g, v) == name) return v;
  return std::nullopt;
}
// Whether slot `slot` of node `consumer` reads output 0 of node `producer`.
bool reads(const cir::graph& g, std::string_view consumer, std::uint32_t slot, std::string_view producer) {
  const auto c = find(g, consumer), p = find(g, producer);
  return c && p && devpass::operand(g, *c, slot) == value_ref{*p, 0};
}

cir::graph model() {
  using devpass::dtype;
  const auto host = devpass::cpu_device, gpu0 = devpass::cuda_device(0), gpu1 = devpass::cuda_device(1);
  const auto f32 = dtype::float32;
  cir::graph g;
  const vertex image = cir::add_op(g, opcode::param, host, "image", {}, f32, {1, 3, 32, 32});
  const vertex conv_w = cir::add_op(g, opcode::weight, host, "conv_w", {}, f32, {8, 3, 3, 3});
  const vertex bias = cir::add_op(g, opcode::weight, host, "bias", {}, f32, {1, 8, 32, 32});
  const vertex conv =
      cir::add_op(g, opcode::conv2d, gpu0, "conv", {image, conv_w}, f32, {1, 8, 32, 32}, cir::stride(1));
  const vertex biased = cir::add_op(g, opcode::add, gpu0, "biased", {conv, bias}, f32, {1, 8, 32, 32});
  const vertex act = cir::add_op(g, opcode::relu, gpu0, "act", {biased}, f32, {1, 8, 32, 32});
  const vertex rows = cir::add_op(g, opcode::view, gpu0, "rows", {act}, f32, {1, 8, 1024});
  const vertex flat = cir::add_op(g, opcode::reshape, gpu0, "flat", {rows}, f32, {1, 8192});
  const vertex fc_w = cir::add_op(g, opcode::weight, host, "fc_w", {}, f32, {64, 8192});
  const vertex fc = cir::add_op(g, opcode::linear, gpu0, "fc", {flat, fc_w}, f32, {1, 64});
  const vertex fc_act = cir::add_op(g, opcode::gelu, gpu0, "fc_act", {fc}, f32, {1, 64});
  const vertex column = cir::add_op(g, opcode::transpose, gpu0, "column", {fc_act}, f32, {64, 1}, cir::swap_dims(0, 1));
  const vertex row = cir::add_op(g, opcode::transpose, gpu0, "row", {column}, f32, {1, 64}, cir::swap_dims(0, 1));
  // The second rank's share, on cuda:1, summed into cuda:0's.
  const vertex features = cir::add_op(g, opcode::param, host, "features", {}, f32, {1, 128});
  const vertex proj_w = cir::add_op(g, opcode::weight, host, "proj_w", {}, f32, {128, 64});
  const vertex partial = cir::add_op(g, opcode::matmul, gpu1, "partial", {features, proj_w}, f32, {1, 64});
  const vertex summed = cir::add_op(g, opcode::all_reduce, gpu0, "summed", {row, partial}, f32, {1, 64},
                                    cir::reduce_by(cir::reduction::sum));
  const vertex half = cir::add_op(g, opcode::cast, gpu0, "half", {summed}, dtype::float16, {1, 64});
  cir::add_ret(g, "out", {half});
  return g;
}

}  // namespace

int main() {
  cir::graph g = model();
  devpass::pipeline::phase_statistics phases;
  const devpass::pipeline::table_result done = cir::compile(g, devpass::options_for<cir::policy>(), phases);

  for (const auto& phase : phases.phases)
    std::printf("%-24s %zu rewrites, %zu nodes added, %zu removed\n", phase.name.c_str(),
                phase.result.counters.rewrites, phase.result.counters.nodes_added, phase.result.counters.nodes_removed);
  std::printf("copies made:\n");
  for (vertex v = 0; v < boost::num_vertices(g); ++v) {
    const devpass::op_kind role = devpass::role_of(g, v);
    if (g[v].erased || (role != devpass::op_kind::h2d_copy && role != devpass::op_kind::d2h_copy &&
                        role != devpass::op_kind::d2d_copy))
      continue;
    const value_ref source = *devpass::operand(g, v, 0);
    std::printf("  %-26s %-9s %s -> %s, %llu B\n", devpass::node_name(g, v).c_str(),
                std::string(cir::name_of(g[v].op)).c_str(), devpass::to_string(devpass::location_of(g, source)).c_str(),
                devpass::to_string(devpass::location_of(g, value_ref{v, 0})).c_str(),
                static_cast<unsigned long long>(devpass::value_bytes(g, value_ref{v, 0})));
  }

  check(!find(g, "column") && !find(g, "row") && reads(g, "summed", 0, "fc_act"),
        "the transpose pair is elided: the all_reduce reads the gelu");
  check(!find(g, "rows") && reads(g, "flat", 0, "act"), "the view chain is folded: the reshape reads the relu");
  const devpass::copy_census copies = devpass::count_copies(g);
  check(copies.h2d == 6 && copies.d2h == 1 && copies.d2d == 1,
        "6 uploads (2 params, 4 weights), 1 download (the result), 1 peer copy");
  check(done.copies_made == copies, "the pipeline reports the copies it made");
  check(reads(g, "summed", 1, "partial@peer_copy[cuda:0]") && reads(g, "partial@peer_copy[cuda:0]", 0, "partial"),
        "the all_reduce reads cuda:1's share through one peer copy to cuda:0");
  check(reads(g, "out", 0, "half@download"), "the method returns the cast through one download");
  check(devpass::verify_devices(g).ok(), "every value is read where it lives");
  return failures == 0 ? 0 : 1;
}
