// expect: the graph type must be boost::adjacency_list<OutEdgeListS, vecS, bidirectionalS, V, E, GP, vecS>
// Vertices in a std::list (listS) have no index, and the passes index by vertex: refused, first.
#include <devpass/planning/memory_planner.hpp>

struct my_op {
  int kind = 0;
};
using my_graph = boost::adjacency_list<boost::vecS, boost::listS, boost::bidirectionalS, my_op, devpass::edge_info>;

int main() {
  my_graph g;
  (void)devpass::plan_memory(g);
}
