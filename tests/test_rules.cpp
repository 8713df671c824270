// Rules, actions and the rewrite driver: what each action does, first-match order, termination
// and the iteration bound, determinism, counters.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "devpass/rules.hpp"
#include "devpass/testing/graph_builder.hpp"
#include "random_graph.hpp"

using namespace devpass;
using namespace devpass::dsl;

namespace {
constexpr auto x = "x"_c;
constexpr auto d = "d"_c;
constexpr auto h = "h"_c;
constexpr auto c = "c"_c;

struct no_options {};
tensor_spec f32() { return {dtype::float32, {4}}; }

// a(input) -> k(cuda:0 delegate) -> d2h -> h2d(cuda:0) -> m(cuda:0 delegate) -> out; d2h -> r(call)
// -> out. The handles are the vertices in the order written.
struct chain {
  graph g = testing::graph_builder{}
                .input("a", {4})
                .delegate("k", "cuda:0", "add", {"a"})
                .d2h_copy("dh", "cuda:0", "k")
                .h2d_copy("hd", "cuda:0", "dh")
                .delegate("m", "cuda:0", "add", {"hd"})
                .call("r", "relu", {"dh"})
                .output({"m", "r"})
                .build();
  vertex a = 0, k = 1, dh = 2, hd = 3, m = 4, r = 5, out = 6;
};

constexpr auto elide =
    h2d_copy(d2h_copy(any.as(x)).as(d)).as(h)[same_device(h, x)] / (rewire(h, x), erase(h), erase_if_dead(d));

std::string id_of_operand(const graph& g, std::string_view consumer, std::uint32_t slot) {
  return g[operand(g, *find_node(g, consumer), slot)->producer].id;
}
}  // namespace

TEST_CASE("rules: a rule describes itself as written") {
  CHECK(elide.describe() ==
        "h2d_copy(d2h_copy(any as x) as d) as h [same_device(h, x)] / rewire(h, x), erase(h), erase_if_dead(d)");
  CHECK(decltype(elide)::shrinks);
  constexpr auto grow = on_use(delegate.as(d), any.as(x))[on_host(x)] / copy_into_use<op_kind::h2d_copy>(x, d);
  CHECK_FALSE(decltype(grow)::shrinks);
}

TEST_CASE("actions: rewire + erase + erase_if_dead keep a d2h that still has a consumer") {
  chain s;
  rewrite_context<no_options> ctx(s.g, {});
  const auto counters = apply_rules(make_table(elide), ctx);
  CHECK(counters.rewrites == 1);
  CHECK(counters.nodes_removed == 1);
  CHECK(boost::num_vertices(s.g) == 6);
  CHECK(id_of_operand(s.g, "m", 0) == "k");
  CHECK(id_of_operand(s.g, "r", 0) == "dh");
}

TEST_CASE("actions: erase_if_dead removes the d2h once nothing reads it") {
  chain s;
  set_operand(s.g, s.r, 0, {s.a, 0});
  rewrite_context<no_options> ctx(s.g, {});
  apply_rules(make_table(elide), ctx);
  CHECK(boost::num_vertices(s.g) == 5);
  CHECK_FALSE(find_node(s.g, "dh"));
}

TEST_CASE("actions: erase of a node that still has uses is an error naming it") {
  chain s;
  rewrite_context<no_options> ctx(s.g, {});
  const auto bad = make_table(d2h_copy.as(d) / erase(d));
  try {
    apply_rules(bad, ctx);
    FAIL("expected an error");
  } catch (const graph_error& e) {
    CHECK(e.node() == "dh");
    CHECK(e.field() == "uses");
  }
}

TEST_CASE("actions: copy_into_use makes one copy per use, share_copy_into_use one per (value, device)") {
  const auto build = [](graph& g) {
    const vertex w = add_node(g, {.id = "w", .op = op_kind::constant, .outputs = {f32()}});
    const vertex k = add_node(
        g, {.id = "k", .op = op_kind::delegate, .device = cuda_device(0), .kernel = "add", .outputs = {f32()}});
    const vertex o = add_node(g, {.id = "out", .op = op_kind::output});
    connect(g, {w, 0}, k, 0);
    connect(g, {w, 0}, k, 1);
    connect(g, {k, 0}, o, 0);
  };
  SUBCASE("per use") {
    graph g;
    build(g);
    rewrite_context<no_options> ctx(g, {});
    apply_rules(make_table(on_use(delegate.as(d), constant.as(x)) / copy_into_use<op_kind::h2d_copy>(x, d)), ctx);
    CHECK(id_of_operand(g, "k", 0) == "k@h2d.0");
    CHECK(id_of_operand(g, "k", 1) == "k@h2d.1");
    CHECK(g[*find_node(g, "k@h2d.0")].device == cuda_device(0));
    CHECK(*g[*find_node(g, "k@h2d.0")].outputs[0].device == cuda_device(0));
  }
  SUBCASE("shared") {
    graph g;
    build(g);
    rewrite_context<no_options> ctx(g, {});
    apply_rules(make_table(on_use(delegate.as(d), constant.as(x)) / share_copy_into_use<op_kind::h2d_copy>(x, d)), ctx);
    CHECK(id_of_operand(g, "k", 0) == "w@h2d[cuda:0]");
    CHECK(id_of_operand(g, "k", 1) == "w@h2d[cuda:0]");
    CHECK(ctx.counters.nodes_added == 1);
  }
}

TEST_CASE("actions: copy_after moves the chosen uses to one copy, place_on records a device") {
  chain s;
  // k feeds r (host) and m (device): a d2h after k takes the host use only.
  set_operand(s.g, s.r, 0, {s.k, 0});
  set_operand(s.g, s.m, 0, {s.k, 0});
  rewrite_context<no_options> ctx(s.g, {});
  const auto host_reads = [](const auto& cx, devpass::use u) { return cx.g[u.consumer].op == op_kind::call; };
  apply_rules(make_table(each_output(delegate.as(d))[device_delegate(d) && satisfies(
                                                                               [](const auto& cx, value_ref v) {
                                                                                 return std::ranges::any_of(
                                                                                     uses(cx.g, v),
                                                                                     [&](devpass::use u) {
                                                                                       return cx.g[u.consumer].op ==
                                                                                              op_kind::call;
                                                                                     });
                                                                               },
                                                                               d)] /
                         copy_after<op_kind::d2h_copy>(d, host_reads)),
              ctx);
  // k already has a d2h (dh): it is reused, not duplicated.
  CHECK(id_of_operand(s.g, "r", 0) == "dh");
  CHECK(id_of_operand(s.g, "m", 0) == "k");
  CHECK(ctx.counters.nodes_added == 0);

  graph g = chain{}.g;
  rewrite_context<no_options> ctx2(g, {});
  apply_rules(make_table(on_use(delegate.as(d), input.as(x))[on_host(x)] / place_on(x, d)), ctx2);
  CHECK(g[*find_node(g, "a")].outputs[0].device == cuda_device(0));
}

TEST_CASE("driver: rules are tried in table order and the first match applies") {
  chain s;
  std::vector<std::string> fired;
  rewrite_context<no_options> ctx(s.g, {});
  apply_rules(make_table(h2d_copy(any.as(x)).as(h) /
                             (apply([&](auto&, value_ref) { fired.push_back("first"); }, h), rewire(h, x), erase(h)),
                         h2d_copy.as(h) / apply([&](auto&, value_ref) { fired.push_back("second"); }, h)),
              ctx);
  CHECK(fired == std::vector<std::string>{"first"});
  CHECK(id_of_operand(s.g, "m", 0) == "dh");
}

TEST_CASE("driver: a rule that never reaches a fixed point hits the bound and is named (a traced context)") {
  chain s;
  rewrite_context<no_options, graph, rules::tracing::on> ctx(s.g, {});
  const auto forever = make_table(call.as(c) / apply([](auto&, value_ref) {}, c));
  try {
    apply_rules(forever, ctx, {.bound = 50});
    FAIL("expected the bound to be hit");
  } catch (const rules::rewrite_error& e) {
    const std::string what = e.what();
    CHECK(what.find("call as c / apply(...)") != std::string::npos);
    CHECK(what.find("51 times") != std::string::npos);
  }
}

TEST_CASE("driver: without tracing, a rule that never reaches a fixed point is named by its place in the table") {
  // tracing::off, the default, compiles no rule descriptions: the error says which rule of the
  // table it was instead, and that a traced context names it as written.
  static_assert(!rules::rewrite_context<no_options>::traced);
  static_assert(rules::rewrite_context<no_options, graph, rules::tracing::on>::traced);
  chain s;
  rules::rewrite_context<no_options> ctx(s.g, {});
  const auto forever = make_table(d2h_copy.as(d)[unused(d)] / erase(d), call.as(c) / apply([](auto&, value_ref) {}, c));
  CHECK_THROWS_WITH_AS(
      apply_rules(forever, ctx, {.bound = 50}),
      "rule 2 (of 2 in its table) was applied 51 times without reaching a fixed point (bound 50); a context "
      "with rules::tracing::on names it as written",
      rules::rewrite_error);
}

TEST_CASE("driver: shrinking rules run to a fixed point without a bound") {
  // A chain of 200 dead d2h copies hanging off k: each erase frees the next.
  chain s;
  value_ref last{s.k, 0};
  for (int i = 0; i < 200; ++i) {
    const vertex v = add_node(
        s.g, {.id = "dead" + std::to_string(i), .op = op_kind::d2h_copy, .device = cuda_device(0), .outputs = {f32()}});
    connect(s.g, last, v, 0);
    last = {v, 0};
  }
  rewrite_context<no_options> ctx(s.g, {});
  const auto counters = apply_rules(make_table(d2h_copy.as(d)[unused(d)] / erase(d)), ctx, {.bound = 1});
  CHECK(counters.nodes_removed == 200);
  CHECK(boost::num_vertices(s.g) == 7);
}

TEST_CASE("driver: deterministic — the same graph gives the same rewrites in the same order") {
  const auto run = [] {
    chain s;
    std::vector<std::string> order;
    rewrite_context<no_options> ctx(s.g, {});
    apply_rules(make_table(on_use(any.as(c), any.as(x)) /
                           apply([&](auto& cx, value_ref a,
                                     value_ref b) { order.push_back(cx.g[a.producer].id + "<" + cx.g[b.producer].id); },
                                 c, x)),
                ctx, {.bound = 8});
    return order;
  };
  std::vector<std::string> first;
  try {
    first = run();
  } catch (const rules::rewrite_error&) {}
  std::vector<std::string> second;
  try {
    second = run();
  } catch (const rules::rewrite_error&) {}
  CHECK(first == second);
}

namespace {
// Tables above rules::detail::inline_rules_max rules dispatch each rule out of line (compile time
// grows linearly; driver.hpp): the same rules must behave the same there.
constexpr auto never =
    any.as(x)[satisfies([](const auto&, value_ref) { return false; }, x)] / apply([](auto&, value_ref) {}, x);
constexpr auto shared_d2h =
    on_use(
        any.as(c),
        any.as(
            x))[satisfies([](const auto& ctx, value_ref v) { return ctx.g[v.producer].op == op_kind::delegate; }, x) &&
                satisfies([](const auto& ctx, value_ref u) { return ctx.g[u.producer].op == op_kind::call; }, c)] /
    share_copy_into_use<op_kind::d2h_copy>(x, x);

std::string operands_text(const graph& g) {
  std::string s;
  for (vertex v = 0; v < boost::num_vertices(g); ++v) {
    s += g[v].id + "(";
    for (std::uint32_t i = 0; i < g[v].arity; ++i) {
      const auto o = operand(g, v, i);
      s += (o ? g[o->producer].id : "-") + ",";
    }
    s += ") ";
  }
  return s;
}
}  // namespace

#define DEVPASS_NEVER4 never, never, never, never
#define DEVPASS_NEVER16 DEVPASS_NEVER4, DEVPASS_NEVER4, DEVPASS_NEVER4, DEVPASS_NEVER4

TEST_CASE("driver: a table of more rules than are inlined behaves as the same live rules alone") {
  static_assert(rules::detail::inline_rules_max < 18);
  SUBCASE("same graph and counters") {
    chain a, b;
    rewrite_context<no_options> ca(a.g, {}), cb(b.g, {});
    const auto small = make_table(shared_d2h, elide);
    const auto large = make_table(DEVPASS_NEVER16, shared_d2h, never, elide);
    static_assert(decltype(large)::size == 19);
    const auto ra = apply_rules(small, ca);
    const auto rb = apply_rules(large, cb);
    CHECK(ra.rewrites == rb.rewrites);
    CHECK(ra.nodes_added == rb.nodes_added);
    CHECK(ra.nodes_removed == rb.nodes_removed);
    CHECK(rb.matches_tried > ra.matches_tried);
    CHECK(operands_text(a.g) == operands_text(b.g));
  }
  SUBCASE("the first rule that matches applies, past the inlined ones too") {
    chain s;
    std::vector<std::string> fired;
    rewrite_context<no_options> ctx(s.g, {});
    (void)apply_rules(
        make_table(DEVPASS_NEVER16, never,
                   h2d_copy(any.as(x)).as(h) /
                       (apply([&](auto&, value_ref) { fired.push_back("first"); }, h), rewire(h, x), erase(h)),
                   h2d_copy.as(h) / apply([&](auto&, value_ref) { fired.push_back("second"); }, h)),
        ctx);
    CHECK(fired == std::vector<std::string>{"first"});
  }
  SUBCASE("the bound names the rule (a traced context)") {
    chain s;
    rewrite_context<no_options, graph, rules::tracing::on> ctx(s.g, {});
    const auto forever = make_table(DEVPASS_NEVER16, never, never, call.as(c) / apply([](auto&, value_ref) {}, c));
    try {
      (void)apply_rules(forever, ctx, {.bound = 50});
      FAIL("expected the bound to stop the run");
    } catch (const rules::rewrite_error& e) {
      CHECK(std::string(e.what()) ==
            "rule `call as c / apply(...)` was applied 51 times without reaching a fixed point (bound 50)");
    }
  }
}
#undef DEVPASS_NEVER16
#undef DEVPASS_NEVER4

TEST_CASE("driver: a trace reports every rule tried at each node, with the matcher's and the guards' reasons") {
  chain s;                            // k(cuda:0) -> dh -> hd(cuda:0) -> m: the round trip elides
  s.g[s.hd].device = cuda_device(1);  // ... unless the h2d goes to another device
  struct event {
    std::string rule, node, site, why;
  };
  std::vector<event> events;
  rules::rule_trace trace;
  trace.user = &events;
  trace.report = [](void* user, std::string_view rule, std::string_view node, std::string_view site,
                    std::string_view why) {
    static_cast<std::vector<event>*>(user)->push_back(
        {std::string(rule), std::string(node), std::string(site), std::string(why)});
  };
  rewrite_context<no_options, graph, rules::tracing::on> ctx(s.g, {});
  ctx.trace = &trace;
  const auto r = apply_rules(make_table(elide), ctx);
  CHECK(r.rewrites == 0);
  const auto why_at = [&](std::string_view node) {
    for (const event& e : events)
      if (e.node == node) return e.site + ": " + e.why;
    return std::string("not reported");
  };
  CHECK(why_at("k") == "value 0: node 'k' is delegate, expected h2d_copy");
  CHECK(why_at("hd") == "value 0: same_device(h, x) is false: h = 'hd' on cuda:1, x = 'k' on cuda:0");
  CHECK(events.size() == boost::num_vertices(s.g));  // one site per node for a node rule
  CHECK(events.front().rule == elide.describe());

  SUBCASE("a rule that applies is reported as applied; `only` filters by the rule's text") {
    chain t;
    std::vector<event> applied;
    rules::rule_trace only_elide = trace;
    only_elide.user = &applied;
    only_elide.only = "same_device";
    rewrite_context<no_options, graph, rules::tracing::on> c2(t.g, {});
    c2.trace = &only_elide;
    (void)apply_rules(make_table(elide, never), c2);
    bool saw_applied = false;
    for (const event& e : applied) {
      CHECK(e.rule.find("same_device") != std::string::npos);
      saw_applied = saw_applied || (e.node == "hd" && e.why == "applied");
    }
    CHECK(saw_applied);
  }
}

namespace {
// A table's run with the root filter (rules/root_filter.hpp) and without it: a context with a
// trace tries every rule at every node, so the two runs differ in nothing but the filter.
template <class Table>
rewrite_counters check_same_with_and_without_root_filter(const Table& table, const graph& source) {
  graph filtered = source, unfiltered = source;
  rewrite_context<no_options> plain(filtered, {});
  rewrite_context<no_options, graph, rules::tracing::on> traced(unfiltered, {});
  rules::rule_trace quiet;
  quiet.report = [](void*, std::string_view, std::string_view, std::string_view, std::string_view) {};
  traced.trace = &quiet;
  const rewrite_counters with = apply_rules(table, plain);
  const rewrite_counters without = apply_rules(table, traced);
  CHECK(with.matches_tried == without.matches_tried);
  CHECK(with.rewrites == without.rewrites);
  CHECK(with.nodes_added == without.nodes_added);
  CHECK(with.nodes_removed == without.nodes_removed);
  CHECK(operands_text(filtered) == operands_text(unfiltered));
  return with;
}
template <class... Rules>
bool root_filter_active(const rules::rule_table<Rules...>&) {
  return rules::detail::root_filter<graph>::of<typename Rules::root_type...>().active();
}
// A random graph whose one-output kernels are relu, gelu and others, with values nobody reads.
graph random_kernel_graph(std::uint64_t seed) {
  graph g = testing::random_graph(seed, {.nodes = 120, .dead_values = true});
  for (vertex v = 0; v < boost::num_vertices(g); ++v)
    if (runs_kernel(g[v].op) && g[v].outputs.size() == 1) g[v].kernel = v % 3 == 0 ? "relu" : v % 3 == 1 ? "gelu" : "k";
  return g;
}
constexpr auto inner = "inner"_c;
constexpr auto outer = "outer"_c;
constexpr auto relu_fold = (op<"relu">(op<"relu">.as(inner)) | op<"relu">(op<"gelu">.as(inner))).as(outer) /
                           (rewire(outer, inner), erase(outer));
}  // namespace

TEST_CASE("driver: the root filter passes the nodes no root's op admits, counting the tries made there") {
  constexpr std::uint64_t seeds = 8;
  // The counters of a filtered table's runs over the random graphs, each the same as without the filter.
  const auto over_random_graphs = [](const auto& table) {
    CHECK(root_filter_active(table));
    rewrite_counters total;
    for (std::uint64_t seed = 1; seed <= seeds; ++seed)
      total += check_same_with_and_without_root_filter(table, random_kernel_graph(seed));
    return total;
  };
  SUBCASE("op names, an alternative of them, and roles") {
    CHECK(over_random_graphs(make_table(relu_fold, call.as(d)[unused(d)] / erase(d))).rewrites > 0);
  }
  SUBCASE("plain, each_output and on_use roots, rules that add nodes") {
    const auto table =
        make_table(on_use(call.as(c), delegate.as(x))[on_device(x)] / copy_into_use<op_kind::d2h_copy>(x, c),
                   each_output(d2h_copy.as(d))[unused(d)] / erase(d), elide);
    CHECK(over_random_graphs(table).nodes_added > 0);
  }
  SUBCASE("a root that tests no op: no filter, and every rule still applies") {
    constexpr auto is_call =
        satisfies([](const auto& ctx, value_ref v) { return role_of(ctx.g, v.producer) == op_kind::call; }, d);
    const auto by_op = make_table(relu_fold, call.as(d)[unused(d)] / erase(d));
    const auto mixed = make_table(relu_fold, any.as(d)[is_call && unused(d)] / erase(d));
    CHECK_FALSE(root_filter_active(mixed));
    std::size_t rewrites = 0;
    for (std::uint64_t seed = 1; seed <= seeds; ++seed) {
      graph a = random_kernel_graph(seed), b = a;
      rewrite_context<no_options> ca(a, {}), cb(b, {});
      const rewrite_counters filtered = apply_rules(by_op, ca), unfiltered = apply_rules(mixed, cb);
      CHECK(filtered.matches_tried == unfiltered.matches_tried);  // each root is tried once a visit
      CHECK(filtered.rewrites == unfiltered.rewrites);
      CHECK(filtered.nodes_removed == unfiltered.nodes_removed);
      CHECK(operands_text(a) == operands_text(b));
      rewrites += unfiltered.rewrites;
    }
    CHECK(rewrites > 0);
  }
}
