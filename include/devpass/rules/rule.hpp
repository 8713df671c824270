// devpass/rules/rule.hpp — rules and rule tables, read like Boost.SML transition tables:
//
//   rule  := root [guard] / action        (or root / action)
//   root  := pattern | each_output(pattern) | on_use(consumer_pattern, operand_pattern)
//   table := make_table(rule, rule, ...)  tried in order at each site; the first match applies
//
// Compile-time checks, each a static_assert whose message names the mistake: the action uses a
// capture the pattern does not bind; the guard reads one (see patterns.hpp); a table is empty.
// A rule shrinks the graph when its action surely erases a node (`erase`); the driver relies on
// that for termination and bounds every other rule (see rewrite_driver.hpp).
#pragma once

#include <cstddef>
#include <string>
#include <utility>

#include "devpass/graph/concat.hpp"
#include "devpass/meta/diagnostic.hpp"
#include "devpass/pattern/alternatives.hpp"
#include "devpass/pattern/any_order.hpp"
#include "devpass/pattern/op_patterns.hpp"
#include "devpass/pattern/patterns.hpp"
#include "devpass/pattern/same_value.hpp"
#include "devpass/rules/actions.hpp"
#include "devpass/rules/build_actions.hpp"

namespace devpass::rules {

template <class T>
struct is_root : std::false_type {};
template <op_kind K, bool H, class... Os>
struct is_root<pattern::op_t<K, H, Os...>> : std::true_type {};
template <class P, class C>
struct is_root<pattern::bound<P, C>> : std::true_type {};
template <>
struct is_root<pattern::any_t> : std::true_type {};
template <pattern::fixed_string N, bool H, class... Os>
struct is_root<pattern::named_op_t<N, H, Os...>> : std::true_type {};
template <class P, class Q>
struct is_root<pattern::either_t<P, Q>> : std::true_type {};
template <class H, class P, class Q>
struct is_root<pattern::any_order_t<H, P, Q>> : std::true_type {};
template <class P>
struct is_root<pattern::each_output_t<P>> : std::true_type {};
template <class C, class O>
struct is_root<pattern::on_use_t<C, O>> : std::true_type {};
template <class T>
concept root = is_root<T>::value;

template <root Root, class Guard, action Action>
struct rule {
  using root_type = Root;
  using binds = typename Root::binds;
  static constexpr bool shrinks = Action::erases;
  [[no_unique_address]] Guard guard;
  [[no_unique_address]] Action action;

  [[nodiscard]] std::string describe() const {
    const std::string g = guard.describe();
    return devpass::concat(
        {Root::describe(), g.empty() ? "" : " [", g, g.empty() ? "" : "]", " / ", action.describe()});
  }
};

template <class Action, class Binds>
constexpr void check_action_uses_bound_captures() {
  using unbound = diagnostic::first_not_in_t<typename Action::uses, Binds>;
  if constexpr (!std::is_void_v<unbound>) {
    // The first error line names the capture (meta/diagnostic.hpp); this one says the rule.
    static_assert(diagnostic::report<
                  diagnostic::the_action_uses_a_capture_the_pattern_does_not_bind<pattern::spelled_t<unbound>>>());
    static_assert(std::is_void_v<unbound>, "devpass: the action uses a capture that the pattern does not bind");
  }
}

template <class Root>
inline constexpr bool rooted_at_a_use = false;
template <class C, class O>
inline constexpr bool rooted_at_a_use<pattern::on_use_t<C, O>> = true;

template <class Action, class Root>
constexpr void check_use_site() {
  if constexpr (action_needs_site<Action>() && !rooted_at_a_use<Root>) {
    static_assert(
        diagnostic::report<diagnostic::the_action_feeds_the_matched_use_but_the_rule_is_not_rooted_at_a_use<Action>>());
    static_assert(rooted_at_a_use<Root>,
                  "devpass: this action feeds the matched use (copy_into_use, build_into_use, ...): root the rule "
                  "with on_use(consumer, operand)");
  }
}

template <root R, class G, action A>
constexpr rule<R, G, A> operator/(pattern::guarded<R, G> lhs, A a) {
  pattern::check_is_reads_bound<R>();
  check_action_uses_bound_captures<A, typename R::binds>();
  check_use_site<A, R>();
  return {lhs.guard, a};
}
template <root R, action A>
constexpr rule<R, pattern::always, A> operator/(R, A a) {
  pattern::check_is_reads_bound<R>();
  check_action_uses_bound_captures<A, typename R::binds>();
  check_use_site<A, R>();
  return {{}, a};
}

// What follows `/` is not an action: most often a lambda written where apply(f, captures...)
// belongs. Said in one line instead of a page of operator/ candidates.
template <class F>
inline constexpr bool an_action_after_slash = action<F>;
struct not_a_rule {};
template <root R, class G, class F>
requires(!action<F>) constexpr not_a_rule operator/(pattern::guarded<R, G>, F) {
  static_assert(an_action_after_slash<F>,
                "devpass: after `/` comes an action (rewire, erase, copy_after, ...); a lambda is one when "
                "wrapped: apply([](auto& ctx, value_ref x, ...) { ... }, x, ...)");
  return {};
}
template <root R, class F>
requires(!action<F>) constexpr not_a_rule operator/(R, F) {
  static_assert(an_action_after_slash<F>,
                "devpass: after `/` comes an action (rewire, erase, copy_after, ...); a lambda is one when "
                "wrapped: apply([](auto& ctx, value_ref x, ...) { ... }, x, ...)");
  return {};
}

namespace detail {
// A flat, non-recursive tuple: `indexed_set<index_sequence<I...>, Ts...>` derives from
// every `indexed<I, Ts>` at once, so reading element I names its base directly. std::tuple is
// recursive in libstdc++ (a chain of N bases, each naming the rest of the types; its constructor's
// constraints and std::get and tuple_element walk it), which made a table of N rules cost
// O(N^2) instantiations to build and to read.
template <std::size_t I, class T>
struct indexed {
  [[no_unique_address]] T value;
};
template <class Indices, class... Ts>
struct indexed_set;
template <std::size_t... I, class... Ts>
struct indexed_set<std::index_sequence<I...>, Ts...> : indexed<I, Ts>... {};
template <class... Ts>
using flat_tuple = indexed_set<std::index_sequence_for<Ts...>, Ts...>;
// Element I of a flat_tuple, as element<I, T_I>(set): the base is named, not searched for.
template <std::size_t I, class T>
constexpr const T& element(const indexed<I, T>& e) {
  return e.value;
}
}  // namespace detail

template <class... Rules>
struct rule_table {
  detail::flat_tuple<Rules...> rules;  // rule I is the base detail::indexed<I, Rule_I>
  static constexpr std::size_t size = sizeof...(Rules);
};

template <class... Rules>
constexpr rule_table<Rules...> make_table(Rules... rules) {
  static_assert(sizeof...(Rules) > 0, "devpass: a rule table needs at least one rule");
  return {{{rules}...}};
}

}  // namespace devpass::rules
