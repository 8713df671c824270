// expect: a phase declares what holds after it ran: using provides
// A phase that says nothing about what it gives the phases after it cannot be placed in a
// checked pipeline either.
#include <devpass/passes/propagate_device.hpp>
struct mute_phase {
  static constexpr std::string_view name = "mute";
  using expects = devpass::pipeline::type_list<>;
  template <class Policy>
  static constexpr bool compiled_in = true;
  devpass::pipeline::phase_result run(devpass::graph&, const devpass::propagate_options&) const { return {}; }
};
constexpr auto pipeline = devpass::pipeline::make_pipeline(mute_phase{});
int main() {}
