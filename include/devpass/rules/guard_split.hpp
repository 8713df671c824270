// devpass/rules/guard_split.hpp — splits a rule's guard, at compile time, into the part that
// only reads some captures (tested early, once) and the rest.
//
// A rule rooted at on_use(consumer, operand) is tried at every input slot of every node. The
// conjuncts of its guard that read only the consumer's captures (or no capture: options) give
// the same answer at every slot, so the driver tests them once per node, before it reads the
// node's operands: `on_use(any.as(c), any.as(x))[consumer_reads_host(c) && on_device(x)]` then
// costs one test on a device delegate instead of one per slot. Guards only read the graph, so
// testing a conjunct earlier does not change what the rule matches.
//
// Only top-level `&&` is split; `||` and `!` stay whole (a leaf of the split).
#pragma once

#include "devpass/pattern/guards.hpp"

namespace devpass::rules::detail {

template <class Early, class Later>
struct split_guard {
  [[no_unique_address]] Early early;  // reads only the early captures
  [[no_unique_address]] Later later;  // the rest, in the order written
};

template <class A, class B>
constexpr auto conjoin(A a, B b) {
  if constexpr (std::is_same_v<A, pattern::always>)
    return b;
  else if constexpr (std::is_same_v<B, pattern::always>)
    return a;
  else
    return a && b;
}

template <class G>
struct is_and : std::false_type {};
template <class A, class B>
struct is_and<pattern::and_guard<A, B>> : std::true_type {};

// split<EarlyCaps>(guard): early = the conjuncts whose reads are all in EarlyCaps.
template <class EarlyCaps, class G>
constexpr auto split(const G& guard) {
  if constexpr (is_and<G>::value) {
    const auto left = split<EarlyCaps>(guard.a);
    const auto right = split<EarlyCaps>(guard.b);
    const auto early = conjoin(left.early, right.early);
    const auto later = conjoin(left.later, right.later);
    return split_guard<std::remove_const_t<decltype(early)>, std::remove_const_t<decltype(later)>>{early, later};
  } else if constexpr (pattern::all_in<typename G::reads, EarlyCaps>::value) {
    return split_guard<G, pattern::always>{guard, {}};
  } else {
    return split_guard<pattern::always, G>{{}, guard};
  }
}

}  // namespace devpass::rules::detail
