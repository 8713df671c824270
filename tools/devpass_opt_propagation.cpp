// devpass-opt's device propagation, compiled here and declared in devpass-opt.cpp, so that the
// two halves of the tool compile side by side and an edit to the pass or to the driver rebuilds
// one of them (docs/building.md, "Compile times"). It includes no reader, so no simdjson.
#include "devpass/driver/opt_instrumentation.hpp"
#include "devpass/passes/propagate_device.hpp"

DEVPASS_INSTANTIATE_OPT_PROPAGATION(devpass::policy_from_options)
