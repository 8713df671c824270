#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <devpass/passes/propagate_device.hpp>
#include <devpass/testing.hpp>
#include "bounce_rules.hpp"

using namespace devpass;
using devpass::testing::graph_builder;

TEST_CASE("bounce table: folds the bounce into one d2d") {
  graph g = graph_builder{}
                .input("x", {2, 2})
                .delegate("a", "cuda:0", "relu", {"x"})
                .delegate("b", "cuda:1", "gelu", {"a"})
                .call("c", "add", {"b", "x"})
                .output({"c"})
                .build();
  propagate_device(g, {.policy = copy_policy::executorch});
  CHECK_MATCHES(bounces::bounce, g, "b@h2d.0");
  CHECK_CONVERGES(bounces::table, g);  // and leaves g as the table made it
  CHECK_COPIES(g, 1, 1, 1);            // h2d, d2h, d2d
  const graph expected = graph_builder{}
                             .input("x", {2, 2})
                             .h2d_copy("x@h2d[cuda:0]", "cuda:0", "x")
                             .delegate("a", "cuda:0", "relu", {"x@h2d[cuda:0]"})
                             .d2d_copy("a@d2d[cuda:1]", "cuda:1", "a")
                             .delegate("b", "cuda:1", "gelu", {"a@d2d[cuda:1]"})
                             .d2h_copy("b@d2h", "cuda:1", "b")
                             .call("c", "add", {"b@d2h", "x"})
                             .output({"c"})
                             .annotate_devices()
                             .build();
  CHECK_SAME_GRAPH(g, expected);
}
