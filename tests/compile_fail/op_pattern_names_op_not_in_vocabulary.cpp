// expect: the_model_op_vocabulary_has_no_op_named<devpass::diagnostic::op_named<'c', 'o', 'n', 'v'> ?>
// The own IR's ops are an enum with names (examples/own_graph/); a pattern naming an op the enum
// does not have is refused at compile time, naming it.
#include <devpass/rules.hpp>

#include "../../examples/own_graph/own_graph.hpp"

bool is_conv(const mycc::ir_graph& g, devpass::vertex v) {
  devpass::pattern::capture_set<devpass::meta::type_list<>> caps;
  return devpass::dsl::op<"conv">.match(g, devpass::value_ref{v, 0}, caps);
}
int main() {}
