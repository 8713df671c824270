// examples/custom_rule.cpp — a user-defined rule and policy, added without touching the library.
//
// The rule: a constant whose every use is an h2d_copy to one device is placed on that device
// (its value filled there at load time) instead of being copied on every execution. The devpass
// policy does the same by default with resident copies, made once at load, whichever devices read
// the constant (propagate_options::resident_constants); the rule shows a user table doing it by
// moving the constant itself. The policy: a user policy derived from the defaults; the pipeline:
// the library's phases with ours in between, run here with resident constants off, so that every
// copy it finds is one made on every execution.
#include <iostream>

#include "devpass/passes/propagate_device.hpp"
#include "devpass/pipeline/instrumentation.hpp"

using namespace devpass;
using namespace devpass::dsl;

namespace {

constexpr auto w = "w"_c;
constexpr auto h = "h"_c;

// Every use of the constant is an h2d_copy to the same device as `h`.
constexpr auto only_copied_to_that_device = satisfies(
    [](const auto& ctx, value_ref constant_value, value_ref copy) {
      bool all = true;
      for_each_use(ctx.g, constant_value, [&](use u) {
        const node& n = ctx.g[u.consumer];
        all = all && n.op == op_kind::h2d_copy && n.device == ctx.g[copy.producer].device;
      });
      return all;
    },
    w, h);

// match [guard] / action — the rule reads like a transition table line.
constexpr auto preload_rules =
    make_table(h2d_copy(constant.as(w)).as(h)[only_copied_to_that_device] / (place_on(w, h), rewire(h, w), erase(h)));

// A phase: any type with a name, its requirements and a run().
struct preload_constants {
  static constexpr std::string_view name = "preload-constants";
  using expects = type_list<capabilities::copies_explicit>;
  using provides = type_list<>;
  template <class Policy>
  static constexpr bool compiled_in = Policy::preload_constants;
  pipeline::phase_result run(graph& g, const propagate_options& o) const {
    return propagation::run_table(preload_rules, g, o);
  }
};

// The user's policy: the defaults plus one flag of ours.
struct my_policy : propagate_policy {
  static constexpr bool preload_constants = true;
};

constexpr auto my_pipeline = pipeline::make_pipeline(propagation::insert_shared_copies{}, preload_constants{},
                                                     propagation::elide_round_trips{}, propagation::annotate_devices{});

graph two_layers() {
  graph g;
  const tensor_spec s{dtype::float32, {64, 64}};
  const vertex x = add_node(g, {.id = "x", .op = op_kind::input, .outputs = {s}});
  const vertex wt = add_node(g, {.id = "weight", .op = op_kind::constant, .outputs = {s}});
  const vertex l0 = add_node(
      g, {.id = "layer0", .op = op_kind::delegate, .device = cuda_device(0), .kernel = "matmul", .outputs = {s}});
  const vertex l1 = add_node(
      g, {.id = "layer1", .op = op_kind::delegate, .device = cuda_device(0), .kernel = "matmul", .outputs = {s}});
  const vertex out = add_node(g, {.id = "out", .op = op_kind::output});
  connect(g, {x, 0}, l0, 0);
  connect(g, {wt, 0}, l0, 1);
  connect(g, {l0, 0}, l1, 0);
  connect(g, {wt, 0}, l1, 1);
  connect(g, {l1, 0}, out, 0);
  return g;
}

}  // namespace

int main() {
  graph copied = two_layers(), standard = two_layers(), custom = two_layers();
  const propagate_options every_run{.resident_constants = false};
  propagate_device(copied, every_run);
  propagate_device(standard);
  pipeline::phase_statistics stats;
  my_pipeline.run<my_policy>(custom, every_run, stats);

  const auto a = count_copies(copied), s = count_copies(standard), b = count_copies(custom);
  std::cout << "copied every run: " << a.h2d << " h2d (" << a.h2d_bytes << " B per run)\n";
  std::cout << "default pipeline: " << s.h2d << " h2d (" << s.h2d_bytes << " B per run), " << s.resident
            << " resident copy (" << s.resident_bytes << " B at load)\n";
  std::cout << "with preload:     " << b.h2d << " h2d (" << b.h2d_bytes << " B per run)\n";
  for (const auto& p : stats.phases) std::cout << "  " << p.name << ": " << p.result.counters.rewrites << " rewrites\n";
  const auto weight = find_node(custom, "weight");
  const bool ok = weight && custom[*weight].outputs[0].device == cuda_device(0) && b.h2d + 1 == a.h2d &&
                  s.h2d == b.h2d && s.resident == 1 && verify(custom).ok();
  std::cout << (ok ? "weight preloaded on cuda:0" : "unexpected result") << "\n";
  return ok ? 0 : 1;
}
