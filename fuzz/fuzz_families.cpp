// Fuzz target: reader -> the pass families (fusion, cast insertion with a fixed signature table,
// cast round-trip elision) -> device propagation (options from the first byte). Each family
// leaves a graph that passes verify_structure, at the fixed point of its table (a second run
// rewrites nothing); after the insertion, and after the elision, every slot a signature names
// reads the dtype it wants (but a cast's own); and propagation after them either refuses the graph
// with a graph_error or config_error or leaves one that passes the verifier.
#include "devpass/passes/casts.hpp"
#include "devpass/passes/fusion.hpp"
#include "fuzz_checks.hpp"

namespace {
// What the kernels of the sample graphs, the corpus and the dictionary want: half and
// brain-float inputs, integer slots, a fused kernel's, and a signature of the cast itself (which
// the insertion never reads).
const devpass::cast_signatures& signatures() {
  using devpass::dtype;
  static const devpass::cast_signatures table = [] {
    devpass::cast_signatures s;
    s.set("conv2d", {dtype::float16, dtype::float16});
    s.set("add", {dtype::float16, std::nullopt});
    s.set("relu", {dtype::float32});
    s.set("linear", {dtype::bfloat16, dtype::bfloat16, dtype::float32});
    s.set("gelu", {dtype::float32});
    s.set("matmul", {dtype::float16, dtype::float16});
    s.set("mul", {dtype::int8, dtype::int32});
    s.set("neg", {dtype::int8});
    s.set("aten.add.Tensor", {dtype::float16, dtype::float16});
    s.set("aten.mm.default", {dtype::float16, dtype::float16});
    s.set("fused.linear_gelu", {dtype::float16});
    s.set("aten._to_copy.default", {dtype::float16});
    return s;
  }();
  return table;
}

// Every slot a signature names reads a value of the dtype it wants; a cast's own slot, and a
// copy's (a file may write a kernel name on a copy; a copy keeps its input's layout), excepted.
void check_casts_inserted(const devpass::graph& g) {
  for (const auto v : boost::make_iterator_range(boost::vertices(g))) {
    if (g[v].erased || !devpass::runs_kernel(g[v].op) || g[v].kernel.view() == devpass::casts::default_cast_op.view())
      continue;
    const auto* entry = signatures().find(g[v].kernel.view());
    for (std::uint32_t slot = 0; entry && slot < g[v].arity; ++slot) {
      const auto wanted = devpass::cast_signatures::wanted_in(entry, slot);
      const auto value = devpass::operand(g, v, slot);
      devpass::fuzz::require(!wanted || (value && devpass::value_dtype(g, *value) == *wanted),
                             "after insert_casts every slot a signature names reads the dtype it wants",
                             g[v].id + " slot " + std::to_string(slot));
    }
  }
}

// Runs one family and checks its postconditions: the structure verifies, and the family's table
// is at its fixed point (a second run rewrites nothing).
template <class Family>
void run_family(devpass::graph& g, std::string_view name, Family family) {
  (void)family(g);
  const devpass::verify_report report = devpass::verify_structure(g);
  devpass::fuzz::require(report.ok(), std::string(name) + " leaves a graph that passes verify_structure",
                         report.to_string());
  devpass::fuzz::require(family(g).rewrites == 0, std::string(name) + " a second time rewrites nothing");
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace devpass;
  const auto [options, file] = fuzz::split_options({data, size});
  std::optional<graph> read = fuzz::read_or_reject(file);
  if (!read) return 0;
  graph& g = *read;
  run_family(g, "fuse_ops", [](graph& h) { return fuse_ops(h); });
  run_family(g, "insert_casts", [](graph& h) { return insert_casts(h, signatures()); });
  check_casts_inserted(g);
  run_family(g, "elide_cast_round_trips", [](graph& h) { return elide_cast_round_trips(h); });
  check_casts_inserted(g);  // a round trip's reader now reads x, of the dtype the trip ended in
  try {
    propagate_device(g, options);
  } catch (const graph_error&) {
    return 0;
  } catch (const config_error&) {
    return 0;
  }
  fuzz::check_propagated(g, options);
  return 0;
}
