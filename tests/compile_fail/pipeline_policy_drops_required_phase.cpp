// expect: pipeline order under this policy: a phase requires a capability that no earlier phase compiled in by the policy provides
// The order is right for the devpass policy, but the executorch policy compiles
// insert-shared-copies out: elide-round-trips would run without the copies it requires.
#include <devpass/passes/propagate_device.hpp>
constexpr auto pipeline = devpass::pipeline::make_pipeline(devpass::propagation::insert_shared_copies{},
                                                           devpass::propagation::elide_round_trips{});
void run(devpass::graph& g) { pipeline.run<devpass::executorch_propagate_policy>(g, devpass::propagate_options{}); }
int main() {}
