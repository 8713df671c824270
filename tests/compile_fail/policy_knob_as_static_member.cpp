// expect: a policy sets its knobs in `static constexpr propagate_knobs knobs
// The form policies had before knobs were a reflected struct: a static member that the phases
// would no longer read. Refused rather than silently ignored.
#include <devpass/passes/propagate_device.hpp>

struct my_policy : devpass::propagate_policy {
  static constexpr bool elide_round_trips = false;
};

void run(devpass::graph& g) { devpass::propagate_device_with<my_policy>(g, {}); }
int main() {}
