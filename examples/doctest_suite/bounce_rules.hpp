// examples/doctest_suite/bounce_rules.hpp — a compiler team's own rule table, the code its
// doctest suite (main.cpp) tests with devpass/testing.hpp.
//
// ExecuTorch's policy moves a value between two devices through the host: a d2h_copy after the
// producer, an h2d_copy before the consumer. On hardware with peer access one direct d2d_copy
// does the same in one transfer, so the team folds every such bounce, and drops the copies the
// fold leaves without readers (and any other dead copy). Run after propagate_device.
#pragma once

#include "devpass/rules.hpp"

namespace bounces {

using namespace devpass;
using namespace devpass::dsl;

inline constexpr auto x = "x"_c;
inline constexpr auto d = "d"_c;
inline constexpr auto h = "h"_c;
inline constexpr auto c = "c"_c;

// What the bounce's h2d fed now reads a d2d_copy of x to the h2d's device, named as the devpass
// policy names such a copy ("a@d2d[cuda:1]"). ctx.add_copy makes, connects and counts it on any
// graph model (docs/graph-concept.md).
inline constexpr auto copy_directly = apply(
    [](auto& ctx, value_ref from, value_ref bounce) {
      const vertex made = ctx.add_copy({.kind = op_kind::d2d_copy,
                                        .side = node_device(ctx.g, bounce.producer),
                                        .source = from,
                                        .naming = copy_naming::after_value_and_device});
      ctx.touch_uses(bounce);
      replace_uses(ctx.g, bounce, {made, 0});
    },
    x, h);

// match [guard] / action, one rule a line.
inline constexpr auto table = make_table(h2d_copy(d2h_copy(any.as(x)).as(d)).as(h)[on_device(x) && !same_device(h, x)] /
                                             (copy_directly, erase(h), erase_if_dead(d)),
                                         h2d_copy.as(c)[unused(c)] / erase(c), d2h_copy.as(c)[unused(c)] / erase(c),
                                         d2d_copy.as(c)[unused(c)] / erase(c));

// The pattern of the first rule, for tests that look at what it matches.
inline constexpr auto bounce = h2d_copy(d2h_copy(any.as(x)).as(d)).as(h);

}  // namespace bounces
