// The umbrella devpass::devpass: the graph model and the reader (devpass::io, simdjson).
#include <devpass/graph/graph.hpp>
#include <devpass/io/json_reader.hpp>
#include <iostream>

int main() {
  devpass::graph g;
  const auto x =
      devpass::add_node(g, {.id = "x", .op = devpass::op_kind::input, .outputs = {{devpass::dtype::float32, {2, 2}}}});
  const auto out = devpass::add_node(g, {.id = "out", .op = devpass::op_kind::output});
  devpass::connect(g, {x, 0}, out, 0);
  const devpass::graph read = devpass::read_graph_string(
      R"({"format":"devpass.graph/1","name":"t","nodes":[{"id":"x","op":"input","outputs":[{"dtype":"float32","shape":[2]}]},)"
      R"({"id":"out","op":"output","inputs":["x"]}]})");
  const bool ok = devpass::method_outputs(g).size() == 1 && devpass::topological_order(g).size() == 2 &&
                  boost::num_vertices(read) == 2;
  std::cout << (ok ? "consumer ok" : "consumer broken") << "\n";
  return ok ? 0 : 1;
}
