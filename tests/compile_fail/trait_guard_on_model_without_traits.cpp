// expect: this_graph_model_declares_no_op_traits<boost::adjacency_list<
// has_trait reads graph_model<G>::traits; on a model that declares none the rule does not compile.
#include <devpass/rules.hpp>

#include "minimal_model.hpp"

using namespace devpass::dsl;
constexpr auto x = "x"_c;
constexpr auto r = "r"_c;
struct no_options {};

void fold(my_graph& g) {
  constexpr auto table = make_table(delegate(any.as(x)).as(r)[has_trait<devpass::op_trait::view>(r)] / rewire(r, x));
  rewrite_context<no_options, my_graph> ctx(g, no_options{});
  (void)apply_rules(table, ctx);
}
int main() {}
