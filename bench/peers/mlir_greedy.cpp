// bench/peers/mlir_greedy.cpp — the executorch policy's job done the MLIR way, for
// `scripts/bench propagate` to compare against: mlir_greedy <graph.flat>
//
// Reads a graph bench_propagate wrote (bench/flat_graph.hpp), builds it as MLIR operations in
// the generic form of an unregistered dialect `dp` (allowUnregisteredDialects: no TableGen, no
// dialect library; one op per node, one result per node output, a `device` i32 attribute on
// delegates and copies, -1 the host), then times the job alone:
//   insert  one walk: an h2d_copy per (device delegate, operand), a d2h_copy per used result of a
//           device delegate that every user then reads (the executorch policy's phases 1 and 2)
//   elide   applyPatternsAndFoldGreedily, default config, with two RewritePatterns:
//           h2d_copy(d2h_copy(x)) with x on the h2d's device -> x, and a d2h_copy with no use -> erased
// Construction and the context are outside the timed region. Prints one line for its caller:
//   seconds <pass> h2d <left> d2h <left> d2d 0 peak_rss_kib <this process's> insert_seconds <the walk's share>
// and exits non-zero when the module is not what the job should leave (an original op lost).
//
// Built only where MLIR 14 is installed (bench/CMakeLists.txt) and with its flags, so it
// includes no devpass header: the graph comes from the file, made from bench/synthetic_graph.hpp.
#include <cstdint>
#include <cstdio>
#include <vector>

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Rewrite/FrozenRewritePatternSet.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include "bench_report.hpp"
#include "flat_graph.hpp"

namespace {

using devpass::bench::flat_graph;

// The op names and the attribute name, made once: looking them up by string is not the job.
struct vocabulary {
  explicit vocabulary(mlir::MLIRContext* ctx)
      : input("dp.input", ctx),
        constant("dp.constant", ctx),
        delegate("dp.delegate", ctx),
        call("dp.call", ctx),
        output("dp.output", ctx),
        h2d("dp.h2d_copy", ctx),
        d2h("dp.d2h_copy", ctx),
        device(mlir::StringAttr::get(ctx, "device")) {}
  mlir::OperationName input, constant, delegate, call, output, h2d, d2h;
  mlir::StringAttr device;

  [[nodiscard]] mlir::OperationName of(std::uint8_t kind) const {
    switch (kind) {
      case flat_graph::input: return input;
      case flat_graph::constant: return constant;
      case flat_graph::delegate: return delegate;
      case flat_graph::output: return output;
      default: return call;
    }
  }
};

// The graph as a module: ops in file order (a topological order), all values tensor<4x8xf32>.
mlir::OwningOpRef<mlir::ModuleOp> build(mlir::MLIRContext& ctx, const vocabulary& names, const flat_graph& f) {
  mlir::OpBuilder b(&ctx);
  const mlir::Location loc = b.getUnknownLoc();
  mlir::OwningOpRef<mlir::ModuleOp> module = mlir::ModuleOp::create(loc);
  b.setInsertionPointToEnd(module->getBody());
  const mlir::Type value_type = mlir::RankedTensorType::get({4, 8}, b.getF32Type());
  std::vector<mlir::Operation*> ops(f.op.size());
  for (std::size_t v = 0; v < f.op.size(); ++v) {
    mlir::OperationState state(loc, names.of(f.op[v]));
    for (std::uint32_t i = f.first_input[v], e = i + f.arity[v]; i < e; ++i)
      state.addOperands(ops[f.src_node[i]]->getResult(f.src_output[i]));
    for (std::uint32_t k = 0; k < f.outputs[v]; ++k) state.addTypes(value_type);
    if (f.op[v] == flat_graph::delegate) state.addAttribute(names.device, b.getI32IntegerAttr(f.dev[v]));
    ops[v] = b.createOperation(state);
  }
  return module;
}

// The executorch policy's phases 1 and 2 in one walk of the body, in order: a delegate's
// operands already read the d2h copies of earlier delegates' results, so its h2d copies do.
void insert_copies(mlir::ModuleOp module, const vocabulary& names) {
  mlir::OpBuilder b(module.getContext());
  const mlir::Location loc = b.getUnknownLoc();
  const auto copy = [&](mlir::OperationName kind, mlir::Value of, mlir::Attribute device) {
    mlir::OperationState state(loc, kind);
    state.addOperands(of);
    state.addTypes(of.getType());
    state.addAttribute(names.device, device);
    return b.createOperation(state);
  };
  // Early increment: the copies made around an op are not visited.
  for (mlir::Operation& op : llvm::make_early_inc_range(*module.getBody())) {
    if (op.getName() != names.delegate) continue;
    const mlir::Attribute device = op.getAttr(names.device);
    if (device.cast<mlir::IntegerAttr>().getInt() < 0) continue;  // a host delegate
    b.setInsertionPoint(&op);
    for (mlir::OpOperand& operand : op.getOpOperands())
      operand.set(copy(names.h2d, operand.get(), device)->getResult(0));
    b.setInsertionPointAfter(&op);
    for (mlir::OpResult result : op.getResults()) {
      if (result.use_empty()) continue;
      mlir::Operation* d2h = copy(names.d2h, result, device);
      result.replaceAllUsesExcept(d2h->getResult(0), d2h);
    }
  }
}

// h2d_copy(d2h_copy(x)) with x on the h2d's device: its users read x.
struct elide_round_trip : mlir::RewritePattern {
  elide_round_trip(mlir::MLIRContext* ctx, const vocabulary& ops) : RewritePattern("dp.h2d_copy", 1, ctx), names(ops) {}
  mlir::LogicalResult matchAndRewrite(mlir::Operation* h2d, mlir::PatternRewriter& rewriter) const override {
    mlir::Operation* d2h = h2d->getOperand(0).getDefiningOp();
    if (!d2h || d2h->getName() != names.d2h) return mlir::failure();
    const mlir::Value x = d2h->getOperand(0);
    mlir::Operation* producer = x.getDefiningOp();
    if (!producer || producer->getAttr(names.device) != h2d->getAttr(names.device)) return mlir::failure();
    rewriter.replaceOp(h2d, x);
    return mlir::success();
  }
  const vocabulary& names;
};

// A d2h_copy nothing reads. (The driver erases no unregistered op by itself: it cannot know
// that one has no side effects.)
struct erase_dead_d2h : mlir::RewritePattern {
  explicit erase_dead_d2h(mlir::MLIRContext* ctx) : RewritePattern("dp.d2h_copy", 1, ctx) {}
  mlir::LogicalResult matchAndRewrite(mlir::Operation* d2h, mlir::PatternRewriter& rewriter) const override {
    if (!d2h->use_empty()) return mlir::failure();
    rewriter.eraseOp(d2h);
    return mlir::success();
  }
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: mlir_greedy <graph.flat>  (a file bench_propagate writes)\n");
    return 2;
  }
  flat_graph f;
  if (!devpass::bench::read_flat_graph(f, argv[1])) {
    std::fprintf(stderr, "mlir_greedy: cannot read %s\n", argv[1]);
    return 1;
  }
  mlir::MLIRContext ctx(mlir::MLIRContext::Threading::DISABLED);  // the other runs use one thread too
  ctx.allowUnregisteredDialects();
  const vocabulary names(&ctx);
  mlir::OwningOpRef<mlir::ModuleOp> module = build(ctx, names, f);

  bool converged = false;
  double insert_seconds = 0;
  const double seconds = devpass::bench::seconds([&] {
    insert_seconds = devpass::bench::seconds([&] { insert_copies(*module, names); });
    mlir::RewritePatternSet patterns(&ctx);
    patterns.add<elide_round_trip>(&ctx, names);
    patterns.add<erase_dead_d2h>(&ctx);
    converged = mlir::succeeded(
        mlir::applyPatternsAndFoldGreedily(module->getOperation(), mlir::FrozenRewritePatternSet(std::move(patterns))));
  });

  std::size_t h2d = 0, d2h = 0, others = 0;
  for (mlir::Operation& op : *module->getBody()) {
    const mlir::OperationName name = op.getName();
    h2d += name == names.h2d;
    d2h += name == names.d2h;
    others += name != names.h2d && name != names.d2h;
  }
  if (!converged || others != f.op.size()) {
    std::fprintf(stderr, "mlir_greedy: the driver %s, %zu of the %zu original ops left\n",
                 converged ? "converged" : "did not converge", others, f.op.size());
    return 1;
  }
  std::printf("seconds %.9g h2d %zu d2h %zu d2d 0 peak_rss_kib %ld insert_seconds %.9g\n", seconds, h2d, d2h,
              devpass::bench::peak_rss_kib(), insert_seconds);
  return 0;
}
