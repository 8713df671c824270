// examples/compiler_ir/main.cpp — a compiler runs its own pipeline (pipeline.hpp) over a model
// built in its own IR (compiler_ir.hpp, front_end.hpp): a conv → add → relu block and a linear →
// gelu that fuse, a view chain, a transpose pair, a matmul on cuda:1 whose kernel wants float16
// operands, an all_reduce of a cuda:0 and a cuda:1 value, and a cast, with the weights on the
// host. Prints each phase's rewrites, the kernels the pipeline made and the copies, checks the
// result (every value read where it lives, among others), and exits 1 when a check fails.
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>

#include "devpass/graph/copy_census.hpp"
#include "devpass/pipeline/instrumentation.hpp"
#include "front_end.hpp"
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
  const vertex fc_b = cir::add_op(g, opcode::weight, host, "fc_b", {}, f32, {64});
  const vertex fc = cir::add_op(g, opcode::linear, gpu0, "fc", {flat, fc_w, fc_b}, f32, {1, 64});
  const vertex fc_act = cir::add_op(g, opcode::gelu, gpu0, "fc_act", {fc}, f32, {1, 64});
  const vertex column = cir::add_op(g, opcode::transpose, gpu0, "column", {fc_act}, f32, {64, 1}, cir::swap_dims(0, 1));
  const vertex row = cir::add_op(g, opcode::transpose, gpu0, "row", {column}, f32, {1, 64}, cir::swap_dims(0, 1));
  // The second rank's share, on cuda:1, summed into cuda:0's: a float16 matmul (the signatures in
  // main) of a cuda:1 value and a host weight, both float32, accumulating in float32.
  const vertex features = cir::add_op(g, opcode::param, host, "features", {}, f32, {1, 128});
  const vertex hidden = cir::add_op(g, opcode::relu, gpu1, "hidden", {features}, f32, {1, 128});
  const vertex proj_w = cir::add_op(g, opcode::weight, host, "proj_w", {}, f32, {128, 64});
  const vertex partial = cir::add_op(g, opcode::matmul, gpu1, "partial", {hidden, proj_w}, f32, {1, 64});
  const vertex summed = cir::add_op(g, opcode::all_reduce, gpu0, "summed", {row, partial}, f32, {1, 64},
                                    cir::reduce_by(cir::reduction::sum));
  const vertex half = cir::add_op(g, opcode::cast, gpu0, "half", {summed}, dtype::float16, {1, 64});
  cir::add_ret(g, "out", {half});
  return g;
}

}  // namespace

int main() {
  cir::graph g = model();
  // The kernels' operand dtypes: the matmul runs in float16 (slot by slot; an op not listed takes
  // any dtype).
  devpass::cast_signatures signatures;
  signatures.set("matmul", {devpass::dtype::float16, devpass::dtype::float16});
  devpass::pipeline::phase_statistics phases;
  const devpass::pipeline::table_result done = cir::compile(g, cir::options_for(&signatures), phases);

  for (const auto& phase : phases.phases)
    std::printf("%-24s %zu rewrites, %zu nodes added, %zu removed\n", phase.name.c_str(),
                phase.result.counters.rewrites, phase.result.counters.nodes_added, phase.result.counters.nodes_removed);
  // The kernels the fuse and insert-casts phases made: named after the node they replace or cast.
  std::printf("kernels made:\n");
  for (vertex v = 0; v < boost::num_vertices(g); ++v) {
    const opcode op = g[v].op;
    const bool fused = op == opcode::conv2d_add_relu || op == opcode::linear_add_gelu || op == opcode::linear_gelu;
    if (g[v].erased || !(fused || (op == opcode::cast && devpass::node_name(g, v).find("@cast") != std::string::npos)))
      continue;
    std::printf("  %-26s %-15s %-8s on %s, %s\n", devpass::node_name(g, v).c_str(),
                std::string(cir::name_of(op)).c_str(), std::string(devpass::to_string(devpass::role_of(g, v))).c_str(),
                devpass::to_string(devpass::node_device(g, v)).c_str(),
                std::string(devpass::to_string(devpass::value_dtype(g, value_ref{v, 0}))).c_str());
  }
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

  check(!find(g, "column") && !find(g, "row") && reads(g, "summed", 0, "fc_act@linear_gelu"),
        "the transpose pair is elided: the all_reduce reads the fused linear and gelu");
  const auto conv = find(g, "act@conv2d_add_relu");
  check(conv && g[*conv].op == opcode::conv2d_add_relu && !find(g, "conv") && !find(g, "biased") && !find(g, "act") &&
            devpass::role_of(g, *conv) == devpass::op_kind::delegate &&
            devpass::node_device(g, *conv) == devpass::cuda_device(0) &&
            reads(g, "act@conv2d_add_relu", 0, "image@upload[cuda:0]") &&
            reads(g, "act@conv2d_add_relu", 1, "conv_w@upload[cuda:0]") &&
            reads(g, "act@conv2d_add_relu", 2, "bias@upload[cuda:0]"),
        "conv, add and relu are one conv2d_add_relu on cuda:0, reading the image, the weight and the bias");
  check(!find(g, "rows") && reads(g, "flat", 0, "act@conv2d_add_relu"),
        "the view chain is folded: the reshape reads the fused conv");
  const auto fc = find(g, "fc_act@linear_gelu");
  check(fc && g[*fc].op == opcode::linear_gelu && !find(g, "fc") && !find(g, "fc_act") &&
            reads(g, "fc_act@linear_gelu", 0, "flat"),
        "linear and gelu are one linear_gelu, reading the reshape");
  const auto hidden16 = find(g, "hidden@cast"), weight16 = find(g, "proj_w@cast");
  check(hidden16 && devpass::role_of(g, *hidden16) == devpass::op_kind::delegate &&
            devpass::node_device(g, *hidden16) == devpass::cuda_device(1) &&
            devpass::value_dtype(g, value_ref{*hidden16, 0}) == devpass::dtype::float16 &&
            reads(g, "hidden@cast", 0, "hidden") && reads(g, "partial", 0, "hidden@cast"),
        "the matmul's cuda:1 operand is cast to float16 on cuda:1, where it lives");
  check(weight16 && devpass::role_of(g, *weight16) == devpass::op_kind::call &&
            devpass::value_dtype(g, value_ref{*weight16, 0}) == devpass::dtype::float16 &&
            reads(g, "proj_w@cast", 0, "proj_w") && reads(g, "partial", 1, "proj_w@cast@upload[cuda:1]") &&
            devpass::value_bytes(g, value_ref{*find(g, "proj_w@cast@upload[cuda:1]"), 0}) == 128 * 64 * 2,
        "the matmul's host weight is cast to float16 on the host, and uploaded as float16 (half the bytes)");
  const devpass::copy_census copies = devpass::count_copies(g);
  check(copies.h2d == 7 && copies.d2h == 1 && copies.d2d == 1,
        "7 uploads (2 params, 4 weights, 1 weight cast), 1 download (the result), 1 peer copy");
  check(done.copies_made == copies, "the pipeline reports the copies it made");
  check(reads(g, "summed", 1, "partial@peer_copy[cuda:0]") && reads(g, "partial@peer_copy[cuda:0]", 0, "partial"),
        "the all_reduce reads cuda:1's share through one peer copy to cuda:0");
  check(reads(g, "out", 0, "half@download"), "the method returns the cast through one download");
  check(devpass::verify_devices(g).ok(), "every value is read where it lives");
  return failures == 0 ? 0 : 1;
}
