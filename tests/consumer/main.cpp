#include <devpass/graph/graph.hpp>
#include <iostream>

int main() {
  devpass::graph g;
  const auto x = devpass::add_node(g, {.id = "x", .op = devpass::op_kind::input,
                                       .outputs = {{devpass::dtype::float32, {2, 2}}}});
  const auto out = devpass::add_node(g, {.id = "out", .op = devpass::op_kind::output});
  devpass::connect(g, {x, 0}, out, 0);
  const bool ok = devpass::method_outputs(g).size() == 1 && devpass::topological_order(g).size() == 2;
  std::cout << (ok ? "consumer ok" : "consumer broken") << "\n";
  return ok ? 0 : 1;
}
