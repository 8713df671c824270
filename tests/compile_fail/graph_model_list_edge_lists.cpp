// expect: the graph type must be boost::adjacency_list<OutEdgeListS, vecS, bidirectionalS, V, E, GP, vecS>
// Out-edge lists in a std::list (listS): removing one use is no longer a swap with the last entry
// at the position the edge records. Refused, first, though vecS-like lists (inline_vec_s) pass.
#include <devpass/passes/propagate_device.hpp>

struct my_op {
  int kind = 0;
};
using my_graph = boost::adjacency_list<boost::listS, boost::vecS, boost::bidirectionalS, my_op, devpass::edge_info,
                                       boost::no_property, boost::vecS>;

int main() {
  my_graph g;
  (void)devpass::propagate_device(g);
}
