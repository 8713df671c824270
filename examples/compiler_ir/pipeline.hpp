// examples/compiler_ir/pipeline.hpp — the compiler's own pipeline over its IR (compiler_ir.hpp):
// a rule table of its own, written with devpass's DSL on the IR's op names, then device
// propagation under the team's policy, as one compile-time devpass pipeline.
//
//   simplify-views           transpose pairs elided, view chains folded, identity views and dead
//                            pure ops removed (cir::rules::simplify)
//   (insert-casts, fuse)     the place for them is marked in cir::passes below
//   check-propagation-input  the graph propagation relies on, refused naming node and field
//   tag-delegate-devices     legacy mode only (devpass's)
//   place-method-inputs      skip_h2d only (devpass's)
//   devpass-copies           devpass's shared copies: an upload per (host value, device), a
//                            peer_copy per (device value, other device), a download per device
//                            value the host reads; every value marked where it lives (reported
//                            to instrumentation as insert-shared-copies and annotate-devices)
#pragma once

#include <algorithm>
#include <utility>

#include "compiler_ir.hpp"
#include "devpass/graph/verify_devices.hpp"
#include "devpass/passes/fused_shared_copies.hpp"
#include "devpass/passes/propagate_options.hpp"
#include "devpass/pipeline/pipeline.hpp"
#include "devpass/pipeline/table_phase.hpp"
#include "devpass/rules.hpp"

namespace cir {

namespace rules {
using namespace devpass::dsl;

inline constexpr auto x = "x"_c;
inline constexpr auto t = "t"_c;
inline constexpr auto u = "u"_c;
inline constexpr auto inner = "inner"_c;
inline constexpr auto v = "v"_c;
inline constexpr auto d = "d"_c;

// A view that only changes the shape, keeping the element order: a view or a reshape of p.
template <class P>
constexpr auto shape_view(P p) {
  return op<"view">(p) | op<"reshape">(p);
}

// The two transposes swap the same two dimensions.
inline constexpr auto same_swap = satisfies(
    [](const auto& ctx, devpass::value_ref first, devpass::value_ref second) {
      return devpass::node_attr(ctx.g, first.producer, "dims") == devpass::node_attr(ctx.g, second.producer, "dims");
    },
    t, u);
// The view's result has its input's shape.
inline constexpr auto same_shape = satisfies(
    [](const auto& ctx, devpass::value_ref view, devpass::value_ref input) {
      return std::ranges::equal(devpass::value_shape(ctx.g, view), devpass::value_shape(ctx.g, input));
    },
    v, x);
// The op is pure (its op traits: has_trait), with this one result: nothing but its readers
// depends on it. An all_reduce is not pure: every rank must take part, read or not.
inline constexpr auto pure_op =
    has_trait<devpass::op_trait::pure>(d) &&
    satisfies([](const auto& ctx, devpass::value_ref node) { return devpass::output_count(ctx.g, node.producer) == 1; },
              d);

// Each rule reads match [guard] / action, below the comment that says what it does and why.
inline constexpr auto simplify = make_table(
    // A transpose of a transpose swapping the same dimensions is its input. Only when the inner
    // transpose has no other reader: a transpose is a view, so while another reader keeps the
    // inner one, the outer one costs nothing and eliding it would gain nothing.
    op<"transpose">(op<"transpose">(any.as(x)).as(t)).as(u)[one_use(t) && same_swap] /
        (rewire(u, x), erase(u), erase_if_dead(t)),
    // A reshape of a shape view, or a view of a view, reads the inner one's input; the inner one
    // goes when the outer one was its only reader (another reader still needs its shape). Not a
    // view of a reshape: that reshape may be the copy that made its input contiguous.
    op<"reshape">(shape_view(any.as(x)).as(inner))[one_use(inner)] / (rewire(inner, x), erase(inner)),
    op<"view">(op<"view">(any.as(x)).as(inner))[one_use(inner)] / (rewire(inner, x), erase(inner)),
    // A shape view to the shape it already has is its input.
    shape_view(any.as(x)).as(v)[same_shape] / (rewire(v, x), erase(v)),
    // A pure op nobody reads goes.
    any.as(d)[pure_op && unused(d)] / erase(d));
}  // namespace rules

// The team's policy: devpass's copy sharing (peer copies between GPUs, one upload of a weight
// per device); no round-trip elision compiled in, since the front end emits no copies and the
// sharing never makes a round trip; and its own knob, read by its own phase.
struct policy {
  static constexpr devpass::propagate_knobs knobs{.share_copies = true, .elide_round_trips = false};
  static constexpr bool simplify_views = true;
};

// What the team's phases provide, for the phases that will need it.
struct views_simplified {};

using devpass::capabilities::devices_assigned;
using devpass::pipeline::type_list;

struct when_simplifying_views {
  template <class Policy>
  static constexpr bool compiled_in = Policy::simplify_views;
};
struct simplify_views : devpass::pipeline::table_phase<"simplify-views", rules::simplify, type_list<devices_assigned>,
                                                       type_list<views_simplified>, when_simplifying_views> {};

// What devpass's propagation relies on (docs/device-propagation.md#preconditions), checked once
// the team's rewrites are done and before any copy is made: a bad graph is a graph_error naming
// the node and field, with nothing copied.
struct refuse_bad_propagation_input {
  template <class G>
  void operator()(G& g) const {
    devpass::verify_report report = devpass::verify_propagation_input(g);
    if (!report.ok()) throw std::move(report.problems.front());
  }
};
struct check_propagation_input
    : devpass::pipeline::loop_phase<"check-propagation-input", refuse_bad_propagation_input,
                                    type_list<devices_assigned>, type_list<>, devpass::propagation::when_copies<true>> {
};

inline constexpr auto passes = devpass::pipeline::make_pipeline(
    simplify_views{},
    // >>> The cast-insertion and fusion phases go here, in this order: after the views are
    // simplified, before devices are bridged by copies.
    //   insert-casts  a cast where an op reads a value of another dtype than it computes in
    //   fuse          elementwise ops fused into the op they read
    // Both build ops from result patterns (build<"op">(...), replace, build_into_use). <<<
    check_propagation_input{}, devpass::propagation::tag_delegate_devices{},
    devpass::propagation::place_method_inputs{}, devpass::propagation::shared_copies{});

// Runs the pipeline under Policy; returns what its phases did (rewrites, copies made). Options
// that ask for phases the policy compiled out (options.policy = executorch) are a config_error,
// not a run that copies nothing.
template <class Policy = policy, class Instrumentation = devpass::pipeline::no_instrumentation>
devpass::pipeline::table_result compile(graph& g,
                                        const devpass::propagate_options& options = devpass::options_for<Policy>(),
                                        Instrumentation&& instrumentation = {}) {
  devpass::validate(options);
  devpass::check_options_agree<Policy>(options);
  return passes.run<Policy, devpass::pipeline::table_result>(g, options, instrumentation);
}

}  // namespace cir
