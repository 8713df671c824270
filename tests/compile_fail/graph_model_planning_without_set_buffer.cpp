// expect: graph_model lacks `static void set_buffer\(G&, value_ref, std::optional<buffer_slot>\)`, which plan_memory needs
// A model complete for propagation but without set_buffer: planning says what it needs, first.
#include <devpass/planning/memory_planner.hpp>
#include "minimal_model.hpp"

int main() {
  my_graph g;
  (void)devpass::plan_memory(g);
}
