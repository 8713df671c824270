// expect: phase_expects_a_capability_no_earlier_phase_provides<devpass::propagation::elide_round_trips, devpass::capabilities::copies_explicit>
// Elision needs explicit copies: running it before any copy-insertion phase is a mistake.
#include <devpass/passes/propagate_device.hpp>
constexpr auto wrong = devpass::pipeline::make_pipeline(devpass::propagation::elide_round_trips{},
                                                        devpass::propagation::insert_shared_copies{});
int main() {}
