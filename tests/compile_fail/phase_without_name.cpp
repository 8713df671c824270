// expect: a phase has a name: static constexpr std::string_view name
// The instrumentation and --time-passes name every phase: one without a name does not compile.
#include <devpass/passes/propagate_device.hpp>
struct anonymous_phase {
  using expects = devpass::pipeline::type_list<>;
  using provides = devpass::pipeline::type_list<>;
  template <class Policy>
  static constexpr bool compiled_in = true;
  devpass::pipeline::phase_result run(devpass::graph&, const devpass::propagate_options&) const { return {}; }
};
constexpr auto pipeline = devpass::pipeline::make_pipeline(anonymous_phase{});
int main() {}
