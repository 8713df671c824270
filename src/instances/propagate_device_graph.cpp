// The TU of devpass's own programs (tests, fuzz replays, devpass-run) that compiles device
// propagation for devpass::graph (the demo's pipeline.cpp compiles it for the demo). Every other
// TU calls it through passes/propagate_device_fwd.hpp, as a compiler's TUs would, so editing the
// pass recompiles this TU and the tests of the pass's mechanics, not every program
// (docs/building.md, "Compile times").
#include "devpass/passes/propagate_device.hpp"

DEVPASS_INSTANTIATE_PROPAGATE_DEVICE(devpass::graph)
