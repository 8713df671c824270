// expect: under_this_policy_phase_expects_a_capability_no_earlier_compiled_in_phase_provides<devpass::executorch_propagate_policy, devpass::propagation::elide_round_trips, devpass::capabilities::copies_explicit>
// The order is right for the devpass policy, but the executorch policy compiles
// insert-shared-copies out: elide-round-trips would run without the copies it requires.
#include <devpass/passes/propagate_device.hpp>
constexpr auto pipeline = devpass::pipeline::make_pipeline(devpass::propagation::insert_shared_copies{},
                                                           devpass::propagation::elide_round_trips{});
void run(devpass::graph& g) { pipeline.run<devpass::executorch_propagate_policy>(g, devpass::propagate_options{}); }
int main() {}
