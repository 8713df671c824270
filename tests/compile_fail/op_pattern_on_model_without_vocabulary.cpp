// expect: this_graph_model_has_no_op_vocabulary<boost::adjacency_list<
// A model without an op vocabulary (graph_model<G>::op): a pattern naming an op does not compile.
#include <devpass/rules.hpp>
#include "minimal_model.hpp"

bool is_relu(const my_graph& g, devpass::vertex v) {
  devpass::pattern::capture_set<devpass::meta::type_list<>> caps;
  return devpass::dsl::op<"relu">.match(g, devpass::value_ref{v, 0}, caps);
}
int main() {}
