// expect: the_model_op_vocabulary_has_no_op_named<devpass::diagnostic::op_named<'f', 'u', 's', 'e', 'd'> ?>
// On a model whose vocabulary is an enum (examples/own_graph/), a result pattern naming an op the
// enum lacks is refused at compile time, naming it.
#include <devpass/rules.hpp>

#include "../../examples/own_graph/own_graph.hpp"

using namespace devpass::dsl;
constexpr auto x = "x"_c;
constexpr auto r = "r"_c;
struct no_options {};

void fuse(mycc::ir_graph& g) {
  constexpr auto table = make_table(op<"kernel">(op<"kernel">(any.as(x))).as(r) / replace(r, build<"fused">(x)));
  rewrite_context<no_options, mycc::ir_graph> ctx(g, no_options{});
  (void)apply_rules(table, ctx);
}
int main() {}
