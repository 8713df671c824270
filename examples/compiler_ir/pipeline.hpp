// examples/compiler_ir/pipeline.hpp — the compiler's own pipeline over its IR (compiler_ir.hpp):
// a rule table of its own, written with devpass's DSL on the IR's op names, devpass's fusion and
// cast families on the IR's vocabulary, then device propagation under the team's policy, as one
// compile-time devpass pipeline.
//
//   simplify-views           transpose pairs elided, view chains folded, identity views and dead
//                            pure ops removed (cir::rules::simplify)
//   fuse                     conv2d → add → relu, linear → add → gelu and linear(x, w, b) → gelu
//                            chains made one conv2d_add_relu, linear_add_gelu or linear_gelu
//                            (devpass::fusion with cir::fusion_names; policy knob fuse_kernels)
//   insert-casts             a cast where a kernel's signature wants an operand in another dtype,
//                            one per (value, dtype), where the value lives; only when
//                            options.signatures is given (devpass::casts)
//   elide-cast-round-trips   cast(cast(x)) back to x's dtype dropped where the first cast widens
//                            exactly (f16 → f32 → f16), never a lossy pair
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
#include "devpass/passes/cast_signatures.hpp"
#include "devpass/passes/casts.hpp"
#include "devpass/passes/fused_shared_copies.hpp"
#include "devpass/passes/fusion.hpp"
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
// per device); no copy round-trip elision compiled in, since the front end emits no copies and
// the sharing never makes a round trip; and its own knobs, read by its own phases.
struct policy {
  static constexpr devpass::propagate_knobs knobs{.share_copies = true, .elide_round_trips = false};
  static constexpr bool simplify_views = true;
  static constexpr bool fuse_kernels = true;
};

// The IR's names for devpass's fusion chains (passes/fusion.hpp) and for the kernels they become.
struct fusion_names {
  using conv2d = devpass::fusion::ops<"conv2d">;
  using add = devpass::fusion::ops<"add">;
  using relu = devpass::fusion::ops<"relu">;
  using linear = devpass::fusion::ops<"linear">;
  using gelu = devpass::fusion::ops<"gelu">;
  static constexpr devpass::pattern::fixed_string conv2d_add_relu = "conv2d_add_relu";
  static constexpr devpass::pattern::fixed_string linear_add_gelu = "linear_add_gelu";
  static constexpr devpass::pattern::fixed_string linear_gelu = "linear_gelu";
};

// What a compile is asked: device propagation's options, and the kernels' cast signatures (none:
// no cast is inserted). The signatures are the caller's and must outlive the compile.
struct compile_options : devpass::propagate_options {
  const devpass::cast_signatures* signatures = nullptr;
};

// The default options under Policy (devpass::options_for), with these signatures.
template <class Policy = policy>
constexpr compile_options options_for(const devpass::cast_signatures* signatures = nullptr) {
  return {devpass::options_for<Policy>(), signatures};
}

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

// devpass's fuse phase on the IR's names, compiled in by the team's knob.
struct fuse : devpass::fusion::fuse<fusion_names> {
  template <class Policy>
  static constexpr bool compiled_in = Policy::fuse_kernels;
};

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
    // After the views are simplified (an identity view inside a chain would hide it), and before
    // devices are bridged by copies, so that what the fused kernels and the casts read is copied
    // where they run. Fusion before insertion: a cast inside a chain would hide it too, and the
    // signatures then name the kernels that run (conv2d_add_relu, not conv2d).
    fuse{}, devpass::casts::insert_casts<"cast">{}, devpass::casts::elide_round_trips<"cast">{},
    check_propagation_input{}, devpass::propagation::tag_delegate_devices{},
    devpass::propagation::place_method_inputs{}, devpass::propagation::shared_copies{});

// Runs the pipeline under Policy; returns what its phases did (rewrites, copies made). Options
// that ask for phases the policy compiled out (options.policy = executorch) are a config_error,
// not a run that copies nothing.
template <class Policy = policy, class Instrumentation = devpass::pipeline::no_instrumentation>
devpass::pipeline::table_result compile(graph& g, const compile_options& options = options_for<Policy>(),
                                        Instrumentation&& instrumentation = {}) {
  devpass::validate(options);
  devpass::check_options_agree<Policy>(options);
  return passes.run<Policy, devpass::pipeline::table_result>(g, options, instrumentation);
}

}  // namespace cir
