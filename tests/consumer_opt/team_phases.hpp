// The team's own phase: ExecuTorch's policy moves a value between two GPUs through the host
// (h2d_copy(d2h_copy(x)), x on another device); the team's hardware has peer access, so one
// direct d2d_copy replaces the pair. A rule table of its own, run as a phase of its driver.
#pragma once

#include <devpass/passes/propagate_device.hpp>
#include <devpass/rules.hpp>

namespace team {

using namespace devpass::dsl;
inline constexpr auto x = "x"_c;
inline constexpr auto d = "d"_c;
inline constexpr auto h = "h"_c;

inline constexpr auto fold_table =
    make_table(h2d_copy(d2h_copy(any.as(x)).as(d)).as(h)[on_device(x) && !same_device(h, x)] /
               (apply(
                    [](auto& ctx, devpass::value_ref from, devpass::value_ref bounce) {
                      const devpass::vertex copy =
                          ctx.add_copy({.kind = devpass::op_kind::d2d_copy,
                                        .side = devpass::node_device(ctx.g, bounce.producer),
                                        .source = from,
                                        .naming = devpass::copy_naming::after_value_and_device});
                      ctx.touch_uses(bounce);
                      devpass::replace_uses(ctx.g, bounce, {copy, 0});
                    },
                    x, h),
                erase(h), erase_if_dead(d)));

struct fold_bounces {
  static constexpr std::string_view name = "fold-bounces";
  static constexpr std::string_view description = "one d2d_copy for each h2d_copy(d2h_copy(x)) between two devices";
  using expects = devpass::pipeline::type_list<devpass::capabilities::copies_explicit>;
  using provides = devpass::pipeline::type_list<>;
  template <class Policy>
  static constexpr bool compiled_in = true;
  template <class G>
  devpass::pipeline::phase_result run(G& g, const devpass::propagate_options& o) const {
    return devpass::propagation::run_table(fold_table, g, o);
  }
};

}  // namespace team
