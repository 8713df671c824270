// expect: a phase declares what must hold before it runs: using expects
// A phase that says nothing about what it needs cannot be placed in a checked pipeline.
#include <devpass/passes/propagate_device.hpp>
struct silent_phase {
  static constexpr std::string_view name = "silent";
  using provides = devpass::pipeline::type_list<>;
  template <class Policy>
  static constexpr bool compiled_in = true;
  devpass::pipeline::phase_result run(devpass::graph&, const devpass::propagate_options&) const { return {}; }
};
constexpr auto pipeline = devpass::pipeline::make_pipeline(silent_phase{});
int main() {}
