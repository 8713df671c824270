// tests/propagate_declared.hpp — device propagation on the declared path for a TU that also
// includes a header which brings in the pass's definitions (the moe_decode example's pipeline):
// declares the instantiation tests/instances/propagate_device_graph.cpp compiles, so this TU calls
// it instead of compiling the pass again. Include it before that header.
#pragma once

#include "devpass/passes/propagate_device_fwd.hpp"

extern template devpass::propagate_stats devpass::propagate_device<devpass::graph>(devpass::graph&,
                                                                                   const devpass::propagate_options&);
