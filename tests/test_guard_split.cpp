// The driver's guard split and visit order: consumer-only guard conjuncts of an on_use rule are
// tested once per node, not once per slot; what a conjunct decides is unchanged; nodes touched by
// a rewrite are settled before the sweep moves on.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "devpass/rules.hpp"

using namespace devpass;
using namespace devpass::dsl;

namespace {
constexpr auto x = "x"_c;
constexpr auto d = "d"_c;

struct no_options {};
tensor_spec f32() { return {dtype::float32, {4}}; }

// Counts guard evaluations; the guards are stateless lambdas, so the count is global.
int consumer_tests = 0;
int operand_tests = 0;
std::vector<std::string> tried;

// in0, in1, in2 (inputs) -> k (cuda:0 delegate, 3 slots); h (host call, 1 slot) reads in0.
struct fan_in {
  graph g;
  vertex k, h;
  fan_in() {
    const vertex a = add_node(g, {.id = "a", .op = op_kind::input, .outputs = {f32()}});
    const vertex b = add_node(g, {.id = "b", .op = op_kind::input, .outputs = {f32()}});
    const vertex c = add_node(g, {.id = "c", .op = op_kind::input, .outputs = {f32()}});
    k = add_node(g,
                 {.id = "k", .op = op_kind::delegate, .device = cuda_device(0), .kernel = "add3", .outputs = {f32()}});
    h = add_node(g, {.id = "h", .op = op_kind::call, .kernel = "relu", .outputs = {f32()}});
    connect(g, {a, 0}, k, 0);
    connect(g, {b, 0}, k, 1);
    connect(g, {c, 0}, k, 2);
    connect(g, {a, 0}, h, 0);
  }
};

constexpr auto counted_consumer = satisfies(
    [](const auto& ctx, value_ref consumer) {
      ++consumer_tests;
      return ctx.g[consumer.producer].op == op_kind::delegate;
    },
    d);
constexpr auto counted_operand = satisfies(
    [](const auto&, value_ref) {
      ++operand_tests;
      return false;
    },
    x);
}  // namespace

TEST_CASE("guard split: consumer-only conjuncts and option guards go early, the rest stays in order") {
  constexpr auto guard = on_host(x) && device_delegate(d) && when([](const auto&) { return true; }) && on_device(x);
  constexpr auto parts = rules::detail::split<type_list<std::remove_const_t<decltype(d)>>>(guard);
  CHECK(parts.early.describe() == "device_delegate(d) && when(...)");
  CHECK(parts.later.describe() == "on_host(x) && on_device(x)");
  // `||` and `!` are not split: they go whole to the side their reads allow.
  constexpr auto mixed = !on_host(x) && (device_delegate(d) || on_host(x));
  constexpr auto mixed_parts = rules::detail::split<type_list<std::remove_const_t<decltype(d)>>>(mixed);
  CHECK(std::is_same_v<std::remove_cvref_t<decltype(mixed_parts.early)>, pattern::always>);
  CHECK(mixed_parts.later.describe() == "!on_host(x) && (device_delegate(d) || on_host(x))");
}

TEST_CASE("guard split: an on_use rule tests a consumer-only conjunct once per node, not per slot") {
  fan_in s;
  rules::rewrite_context<no_options> ctx(s.g, {});
  consumer_tests = operand_tests = 0;
  // The consumer pattern is `any`, so every node is a candidate; the early conjunct rejects all
  // but the delegate, whose three slots then reach the operand conjunct.
  const auto counters = rules::apply_rules(
      make_table(on_use(any.as(d), any.as(x))[counted_consumer && counted_operand] / rules::erase_if_dead(d)), ctx);
  CHECK(counters.rewrites == 0);
  CHECK(consumer_tests == 5);  // a, b, c, k, h: once each
  CHECK(operand_tests == 3);   // k's three slots; h was rejected before its operand was read
  CHECK(counters.matches_tried == 3);
}

TEST_CASE("guard split: the split does not change what a rule rewrites") {
  // The same rule with the consumer conjunct first and last copies the same slots.
  const auto run = [](auto table) {
    fan_in s;
    rules::rewrite_context<no_options> ctx(s.g, {});
    rules::apply_rules(table, ctx);
    std::vector<std::string> ids;
    for (const auto v : boost::make_iterator_range(boost::vertices(s.g))) ids.push_back(s.g[v].id);
    return ids;
  };
  const auto first = run(make_table(on_use(any.as(d), input.as(x))[device_delegate(d) && on_host(x)] /
                                    rules::share_copy_into_use<op_kind::h2d_copy>(x, d)));
  const auto last = run(make_table(on_use(any.as(d), input.as(x))[on_host(x) && device_delegate(d)] /
                                   rules::share_copy_into_use<op_kind::h2d_copy>(x, d)));
  CHECK(first == last);
  CHECK(first == std::vector<std::string>{"a", "b", "c", "k", "h", "a@h2d[cuda:0]", "b@h2d[cuda:0]", "c@h2d[cuda:0]"});
}

TEST_CASE("driver: the nodes a rewrite touches are settled before the sweep moves on") {
  // a -> k (cuda:0) -> m (cuda:0) -> r (host call). Copying a into k touches a and the new copy;
  // both are tried again right after k, before m and r.
  graph g;
  const vertex a = add_node(g, {.id = "a", .op = op_kind::input, .outputs = {f32()}});
  const vertex k =
      add_node(g, {.id = "k", .op = op_kind::delegate, .device = cuda_device(0), .kernel = "add", .outputs = {f32()}});
  const vertex m =
      add_node(g, {.id = "m", .op = op_kind::delegate, .device = cuda_device(0), .kernel = "add", .outputs = {f32()}});
  const vertex r = add_node(g, {.id = "r", .op = op_kind::call, .kernel = "relu", .outputs = {f32()}});
  connect(g, {a, 0}, k, 0);
  connect(g, {k, 0}, m, 0);
  connect(g, {m, 0}, r, 0);
  tried.clear();
  constexpr auto logged = satisfies(
      [](const auto& ctx, value_ref v) {
        tried.push_back(ctx.g[v.producer].id);
        return true;
      },
      d);
  rules::rewrite_context<no_options> ctx(g, {});
  rules::apply_rules(make_table(on_use(any.as(d), input.as(x))[logged && device_delegate(d)] /
                                rules::share_copy_into_use<op_kind::h2d_copy>(x, d)),
                     ctx);
  CHECK(tried == std::vector<std::string>{"a", "k", "k", "a@h2d[cuda:0]", "a", "m", "r"});
}
