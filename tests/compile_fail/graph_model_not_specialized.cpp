// expect: no devpass::graph_model specialization for this graph type
// A Boost.Graph of the right shape that nobody adapted: the rule driver says so, first.
#include <devpass/rules.hpp>

struct my_op {
  int kind = 0;
};
using my_graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS, my_op, devpass::edge_info,
                                       boost::no_property, boost::vecS>;

int main() {
  using namespace devpass::dsl;
  constexpr auto d = "d"_c;
  constexpr auto table = make_table(d2h_copy.as(d)[unused(d)] / erase(d));
  struct no_options {};
  my_graph g;
  devpass::rules::rewrite_context<no_options, my_graph> ctx(g, {});
  devpass::rules::apply_rules(table, ctx);
}
