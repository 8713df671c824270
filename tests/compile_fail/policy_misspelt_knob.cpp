// expect: elide_round_trip
// A user policy with a misspelt knob (elide_round_trip for elide_round_trips): a designated
// initializer of a member propagate_knobs does not have, so the first error names it.
#include <devpass/passes/propagate_device.hpp>

struct my_policy {
  static constexpr devpass::propagate_knobs knobs{.elide_round_trip = false};
};

void run(devpass::graph& g) { devpass::propagate_device_with<my_policy>(g, {}); }
int main() {}
