// expect: this_graph_model_cannot_make_nodes<boost::adjacency_list<
// A result pattern builds a node through graph_model<G>::add_node: on a model without it the rule
// does not compile, and the first error line says so.
#include <devpass/rules.hpp>

#include "minimal_model.hpp"

using namespace devpass::dsl;
constexpr auto x = "x"_c;
constexpr auto r = "r"_c;
struct no_options {};

void fuse(my_graph& g) {
  constexpr auto table = make_table(delegate(delegate(any.as(x))).as(r) / replace(r, build<"fused">(x)));
  rewrite_context<no_options, my_graph> ctx(g, no_options{});
  (void)apply_rules(table, ctx);
}
int main() {}
