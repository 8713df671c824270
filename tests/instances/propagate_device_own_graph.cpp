// The one TU of the test programs that compiles device propagation for a compiler's own IR
// (examples/own_graph/), the second graph model the tests run the pass on.
#include "devpass/passes/propagate_device.hpp"
#include "own_graph.hpp"

DEVPASS_INSTANTIATE_PROPAGATE_DEVICE(mycc::ir_graph)
