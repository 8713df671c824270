// Device propagation called through passes/propagate_device_fwd.hpp: this TU sees declarations
// only (it includes neither propagate_device.hpp nor the rules), and propagate_fwd_instance.cpp,
// linked into the same program, compiles the pass once for devpass::graph and for a compiler's
// own IR (examples/own_graph/). The results must be the pass's own.
#include <doctest/doctest.h>

#include "convert.hpp"
#include "devpass/graph/copy_census.hpp"
#include "devpass/graph/error.hpp"
#include "devpass/passes/propagate_device_fwd.hpp"
#include "devpass/testing/graph_builder.hpp"
#include "own_graph.hpp"

using namespace devpass;

namespace {
// a (cuda:0) feeds b (cuda:1), whose result a host call reads with the method input.
graph two_gpus() {
  return testing::graph_builder{}
      .input("x", {2, 2})
      .delegate("a", "cuda:0", "relu", {"x"})
      .delegate("b", "cuda:1", "gelu", {"a"})
      .call("c", "add", {"b", "x"})
      .output({"c"})
      .build();
}
}  // namespace

TEST_CASE("propagate_device_fwd: the declared pass, compiled in another TU, gives the pass's copies") {
  graph executorch = two_gpus();
  const propagate_stats et = propagate_device(executorch, {.policy = copy_policy::executorch});
  CHECK(et.before.copies() == 0);
  CHECK(et.after == count_copies(executorch));
  CHECK(et.after.h2d == 2);  // ExecuTorch's: b's input bounces through the host
  CHECK(et.after.d2h == 2);
  CHECK(et.after.d2d == 0);

  graph shared = two_gpus();
  const propagate_stats dp = propagate_device(shared);  // the declared default options: the devpass policy
  CHECK(dp.after.h2d == 1);
  CHECK(dp.after.d2h == 1);
  CHECK(dp.after.d2d == 1);
  CHECK(dp.after == count_copies(shared));
}

TEST_CASE("propagate_device_fwd: a compiler's own IR, instantiated once elsewhere, agrees with devpass::graph") {
  for (const copy_policy policy : {copy_policy::executorch, copy_policy::devpass}) {
    graph g = two_gpus();
    mycc::ir_graph ir = mycc::from_devpass(g);
    const propagate_stats on_graph = propagate_device(g, {.policy = policy});
    const propagate_stats on_ir = propagate_device(ir, {.policy = policy});
    CHECK(on_ir.after == on_graph.after);
    CHECK(count_copies(ir) == count_copies(g));
  }
}

TEST_CASE("propagate_device_fwd: errors cross the TU boundary as the pass throws them") {
  graph g = two_gpus();
  CHECK_THROWS_AS(propagate_device(g, {.enable_non_cpu_memory_planning = false, .skip_h2d_for_method_inputs = true}),
                  config_error);
}
