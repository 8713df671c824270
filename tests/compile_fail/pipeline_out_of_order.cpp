// expect: pipeline order: a phase requires a capability no earlier phase provides
// Elision needs explicit copies: running it before any copy-insertion phase is a mistake.
#include <devpass/passes/propagate_device.hpp>
constexpr auto wrong = devpass::pipeline::make_pipeline(devpass::propagation::elide_round_trips{},
                                                        devpass::propagation::insert_shared_copies{});
int main() {}
