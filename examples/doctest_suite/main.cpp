// examples/doctest_suite/main.cpp — how a compiler team tests its own rule table (bounce_rules.hpp)
// and its choice of policy with devpass/testing.hpp: graphs from the builder, CHECK_MATCHES for
// what the pattern sees, CHECK_CONVERGES for the table, CHECK_COPIES and CHECK_SAME_GRAPH for what
// it leaves. Built as its own doctest program (it has its own main) and run by CTest (label
// `example`); docs/testing.md walks through it.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include "devpass/testing.hpp"

#include "bounce_rules.hpp"
#include "devpass/passes/propagate_device.hpp"

using namespace devpass;
using devpass::testing::graph_builder;

namespace {

// x -> a on cuda:0 -> b on cuda:1 -> c on the host (also reads x): one device boundary between
// two GPUs, and the host at both ends.
graph two_gpus() {
  return graph_builder{}
      .input("x", {2, 2})
      .delegate("a", "cuda:0", "relu", {"x"})
      .delegate("b", "cuda:1", "gelu", {"a"})
      .call("c", "add", {"b", "x"})
      .output({"c"})
      .build();
}

graph propagated(copy_policy policy) {
  graph g = two_gpus();
  propagate_device(g, {.policy = policy});
  return g;
}

}  // namespace

// The policies compared: the README's snippet, as it is there (so it builds its graph inline).
TEST_CASE("policies: ExecuTorch's bounces a->b through the host, devpass copies it directly") {
  const auto propagated = [](copy_policy policy) {
    graph g = testing::graph_builder{}
                  .input("x", {2, 2})
                  .delegate("a", "cuda:0", "relu", {"x"})
                  .delegate("b", "cuda:1", "gelu", {"a"})
                  .call("c", "add", {"b", "x"})
                  .output({"c"})
                  .build();
    propagate_device(g, {.policy = policy});
    return g;
  };
  CHECK_COPIES(propagated(copy_policy::executorch), 2, 2, 0);  // h2d, d2h, d2d
  CHECK_COPIES(propagated(copy_policy::devpass), 1, 1, 1);
}

TEST_CASE("bounce pattern: matches the host bounce between the GPUs, not the copies at the ends") {
  const graph g = propagated(copy_policy::executorch);
  CHECK_MATCHES(bounces::bounce, g, "b@h2d.0");      // h2d to cuda:1 of a d2h from cuda:0
  CHECK_NOT_MATCHES(bounces::bounce, g, "a@h2d.0");  // h2d of the method input: no d2h under it
  CHECK_NOT_MATCHES(bounces::bounce, g, "a@d2h");    // the d2h itself
}

TEST_CASE("bounce table: folds the bounce into one d2d and reaches a fixed point") {
  graph g = propagated(copy_policy::executorch);
  CHECK_CONVERGES(bounces::table, g);  // g is left as the table made it
  CHECK_COPIES(g, 1, 1, 1);
  // What the team expects, written out: the builder's annotate_devices() marks every value's
  // device as propagation does. Ids name the nodes; their order in the graph does not matter.
  const graph expected = graph_builder{}
                             .input("x", {2, 2})
                             .h2d_copy("a@h2d.0", "cuda:0", "x")
                             .delegate("a", "cuda:0", "relu", {"a@h2d.0"})
                             .d2d_copy("a@d2d[cuda:1]", "cuda:1", "a")
                             .delegate("b", "cuda:1", "gelu", {"a@d2d[cuda:1]"})
                             .d2h_copy("b@d2h", "cuda:1", "b")
                             .call("c", "add", {"b@d2h", "x"})
                             .output({"c"})
                             .annotate_devices()
                             .build();
  CHECK_SAME_GRAPH(g, expected);
  CHECK(verify(g).ok());
}

TEST_CASE("bounce table: leaves the devpass policy's result as it is") {
  graph g = propagated(copy_policy::devpass);
  const graph before = g;
  CHECK_CONVERGES(bounces::table, g);
  CHECK_SAME_GRAPH(g, before);
}

TEST_CASE("bounce table: drops copies nobody reads, keeps the ones somebody does") {
  graph g = graph_builder{}
                .input("x", {4})
                .h2d_copy("x@h2d", "cuda:0", "x")
                .delegate("k", "cuda:0", "neg", {"x@h2d"})
                .d2h_copy("k@d2h", "cuda:0", "k")
                .d2h_copy("k@d2h.unused", "cuda:0", "k")
                .d2d_copy("k@d2d.unused", "cuda:1", "k")
                .output({"k@d2h"})
                .build();
  CHECK_COPIES(g, 1, 2, 1);
  CHECK_CONVERGES(bounces::table, g);
  CHECK_COPIES(g, 1, 1, 0);
  CHECK_SAME_GRAPH(g, graph_builder{}
                          .input("x", {4})
                          .h2d_copy("x@h2d", "cuda:0", "x")
                          .delegate("k", "cuda:0", "neg", {"x@h2d"})
                          .d2h_copy("k@d2h", "cuda:0", "k")
                          .output({"k@d2h"})
                          .build());
}
