// The one TU of test_propagate_fwd that compiles device propagation, for the graph models the
// other TU calls it on through propagate_device_fwd.hpp.
#include "devpass/passes/propagate_device.hpp"
#include "own_graph.hpp"

DEVPASS_INSTANTIATE_PROPAGATE_DEVICE(devpass::graph)
DEVPASS_INSTANTIATE_PROPAGATE_DEVICE(mycc::ir_graph)
