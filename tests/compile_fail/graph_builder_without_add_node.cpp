// expect: graph_builder::build_as<G> makes nodes through `static vertex add_node\(G&, const node_request&\)`
// The test graph builder fills another model through its add_node; this model has none.
#include <devpass/testing/graph_builder.hpp>
#include "minimal_model.hpp"

int main() { (void)devpass::testing::graph_builder{}.input("x", {2}).output({"x"}).build_as<my_graph>(); }
