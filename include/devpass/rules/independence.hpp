// devpass/rules/independence.hpp — whether the rules of a table can enable one another, decided at
// compile time from their patterns, guards and actions: what single_pass (single_pass.hpp) needs to
// run a table in one sweep.
//
//   footprint_of<Rule>()          what the rule reads: the nodes it visits, the operands, uses,
//                                 value locations and node devices its pattern and guard look at
//   effects_of<Rule>()            what its action may change, in the same terms, and the nodes it
//                                 may create
//   may_enable(effects, reads)    true when such a change could make a rule match where it did not
//   first_enabling_pair(table)    the first (enabler, enabled) pair of a table, or none
//
// Every set is a set of op kinds (one bit per op_kind): "the uses of any d2h_copy", "the operands
// of a delegate that may now read an h2d_copy". A change can enable a rule only when it touches
// something the rule reads: a node of a kind the rule visits is created; an operand the rule
// reads is rewired to a producer of a kind the rule's operand pattern accepts; the uses, the
// location or the device of a kind of node the rule's guard reads change. Kinds never change.
//
// The analysis is conservative, never guard-aware: a guard that is a user predicate (satisfies, a
// guard type of one's own) reads everything, and an action that is user code (apply, an action
// type of one's own) may change everything. `when(f)` reads only the context (its contract). So a
// table can be reported dependent although its guards would never let the pair fire; never the
// other way round.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <type_traits>
#include <utility>

#include "devpass/pattern/guards.hpp"
#include "devpass/pattern/patterns.hpp"
#include "devpass/rules/actions.hpp"
#include "devpass/rules/build_actions.hpp"
#include "devpass/rules/rule.hpp"

namespace devpass::rules::independence {

using kind_set = std::uint32_t;
inline constexpr kind_set all_kinds = (1u << 8) - 1;  // op_kind has 8 values (op_kind.hpp)
constexpr kind_set kind_bit(op_kind k) { return 1u << static_cast<unsigned>(k); }
inline constexpr kind_set sources = kind_bit(op_kind::input) | kind_bit(op_kind::constant);

// "The operands of consumers of these kinds, where they read producers of these kinds": what an
// operand pattern reads, or what a rewiring may make a consumer read.
struct operand_pair {
  kind_set consumers = 0;
  kind_set producers = 0;
};

// What a rule reads (footprint_of) or what an action may change (effects_of); `visits` / `creates`.
struct footprint {
  static constexpr std::size_t max_pairs = 8;
  kind_set nodes = 0;  // reads: the kinds of node it is tried at; effects: the kinds it may create
  std::array<operand_pair, max_pairs> operands{};
  std::size_t operand_pairs = 0;
  kind_set uses = 0;         // whose uses (readers) are read / may change
  kind_set location = 0;     // where whose values live
  kind_set node_device = 0;  // which nodes' own devices

  constexpr void add_operands(kind_set consumers, kind_set producers) {
    if (consumers == 0 || producers == 0) return;
    if (operand_pairs == max_pairs) {  // more pairs than kept: one pair that covers them all
      operands[0] = {all_kinds, all_kinds};
      operand_pairs = 1;
      return;
    }
    operands[operand_pairs++] = {consumers, producers};
  }
  constexpr footprint& operator|=(const footprint& other) {
    nodes |= other.nodes;
    for (std::size_t i = 0; i < other.operand_pairs; ++i)
      add_operands(other.operands[i].consumers, other.operands[i].producers);
    uses |= other.uses;
    location |= other.location;
    node_device |= other.node_device;
    return *this;
  }
  static constexpr footprint everything() {
    footprint f;
    f.nodes = f.uses = f.location = f.node_device = all_kinds;
    f.add_operands(all_kinds, all_kinds);
    return f;
  }
};

// Whether a change with these effects can make a rule with this footprint match somewhere it did
// not: a node it visits is new, an operand it reads now comes from a kind its pattern accepts, or
// uses, locations or devices it reads changed.
constexpr bool may_enable(const footprint& effects, const footprint& reads) {
  if (effects.nodes & reads.nodes) return true;
  for (std::size_t i = 0; i < effects.operand_pairs; ++i)
    for (std::size_t j = 0; j < reads.operand_pairs; ++j)
      if ((effects.operands[i].consumers & reads.operands[j].consumers) &&
          (effects.operands[i].producers & reads.operands[j].producers))
        return true;
  return (effects.uses & reads.uses) || (effects.location & reads.location) ||
         (effects.node_device & reads.node_device);
}

namespace detail {

// The kinds of node a pattern matches.
template <class P>
struct kinds_of : std::integral_constant<kind_set, all_kinds> {};  // any, and what is unknown
template <op_kind K, bool H, class... Os>
struct kinds_of<pattern::op_t<K, H, Os...>> : std::integral_constant<kind_set, kind_bit(K)> {};
template <class P, class C>
struct kinds_of<pattern::bound<P, C>> : kinds_of<P> {};
template <class P, class Q>
struct kinds_of<pattern::either_t<P, Q>> : std::integral_constant<kind_set, kinds_of<P>::value | kinds_of<Q>::value> {};
template <class H, class P, class Q>
struct kinds_of<pattern::any_order_t<H, P, Q>> : kinds_of<H> {};

// The kinds of the operands of the node a pattern P names: the kinds its operand patterns accept,
// none for inputs and constants, any when the pattern leaves the operands open.
template <class P>
struct operand_kinds : std::integral_constant<kind_set, all_kinds> {};
template <op_kind K, class... Os>
struct operand_kinds<pattern::op_t<K, true, Os...>>
    : std::integral_constant<kind_set, (kinds_of<Os>::value | ... | 0)> {};
template <op_kind K>
struct operand_kinds<pattern::op_t<K, false>>
    : std::integral_constant<kind_set, pattern::fixed_arity(K) == 0 ? 0 : all_kinds> {};
template <class P, class C>
struct operand_kinds<pattern::bound<P, C>> : operand_kinds<P> {};
template <class P, class Q>
struct operand_kinds<pattern::either_t<P, Q>>
    : std::integral_constant<kind_set, operand_kinds<P>::value | operand_kinds<Q>::value> {};
template <class H, class P, class Q>
struct operand_kinds<pattern::any_order_t<H, P, Q>>
    : std::integral_constant<kind_set, kinds_of<P>::value | kinds_of<Q>::value> {};
// A named op may be any role (the vocabulary is the model's): its node is of any kind, its
// operands as its operand patterns say.
template <pattern::fixed_string N, class... Os>
struct operand_kinds<pattern::named_op_t<N, true, Os...>>
    : std::integral_constant<kind_set, (kinds_of<Os>::value | ... | 0)> {};

// Of<P'> of every sub-pattern P' of P that capture C is bound to, or-ed (0: P does not bind C):
// one walk over the pattern forms for what is asked of a capture's node.
template <template <class> class Of, class P, class C>
struct of_capture : std::integral_constant<kind_set, 0> {};
template <template <class> class Of, class P, class C2, class C>
struct of_capture<Of, pattern::bound<P, C2>, C>
    : std::integral_constant<kind_set, (std::is_same_v<C2, C> ? Of<P>::value : 0) | of_capture<Of, P, C>::value> {};
template <template <class> class Of, op_kind K, class... Os, class C>
struct of_capture<Of, pattern::op_t<K, true, Os...>, C>
    : std::integral_constant<kind_set, (of_capture<Of, Os, C>::value | ... | 0)> {};
template <template <class> class Of, pattern::fixed_string N, class... Os, class C>
struct of_capture<Of, pattern::named_op_t<N, true, Os...>, C>
    : std::integral_constant<kind_set, (of_capture<Of, Os, C>::value | ... | 0)> {};
template <template <class> class Of, class P, class Q, class C>
struct of_capture<Of, pattern::either_t<P, Q>, C>
    : std::integral_constant<kind_set, of_capture<Of, P, C>::value | of_capture<Of, Q, C>::value> {};
template <template <class> class Of, class H, class P, class Q, class C>
struct of_capture<Of, pattern::any_order_t<H, P, Q>, C>
    : std::integral_constant<kind_set, of_capture<Of, P, C>::value | of_capture<Of, Q, C>::value> {};
template <template <class> class Of, class P, class C>
struct of_capture<Of, pattern::each_output_t<P>, C> : of_capture<Of, P, C> {};
template <template <class> class Of, class Cn, class O, class C>
struct of_capture<Of, pattern::on_use_t<Cn, O>, C>
    : std::integral_constant<kind_set, of_capture<Of, Cn, C>::value | of_capture<Of, O, C>::value> {};

// The kinds of the node a capture names in pattern P, and the kinds of that node's operands.
template <class P, class C>
using capture_kinds = of_capture<kinds_of, P, C>;
template <class P, class C>
using capture_operand_kinds = of_capture<operand_kinds, P, C>;

// What a pattern reads besides the kinds it matches: the operands of each op it constrains.
template <class P>
struct pattern_reads {
  static constexpr footprint value() { return {}; }
};
template <op_kind K, class... Os>
struct pattern_reads<pattern::op_t<K, true, Os...>> {
  static constexpr footprint value() {
    footprint f;
    f.add_operands(kind_bit(K), (kinds_of<Os>::value | ... | 0));
    (f |= ... |= pattern_reads<Os>::value());
    return f;
  }
};
template <pattern::fixed_string N, class... Os>
struct pattern_reads<pattern::named_op_t<N, true, Os...>> {
  static constexpr footprint value() {
    footprint f;
    f.add_operands(all_kinds, (kinds_of<Os>::value | ... | 0));
    (f |= ... |= pattern_reads<Os>::value());
    return f;
  }
};
template <class P, class C>
struct pattern_reads<pattern::bound<P, C>> : pattern_reads<P> {};
template <class H, class P, class Q>
struct pattern_reads<pattern::any_order_t<H, P, Q>> {
  static constexpr footprint value() {
    footprint f;
    f.add_operands(kinds_of<H>::value, kinds_of<P>::value | kinds_of<Q>::value);
    f |= pattern_reads<P>::value();
    f |= pattern_reads<Q>::value();
    return f;
  }
};
template <class P, class Q>
struct pattern_reads<pattern::either_t<P, Q>> {
  static constexpr footprint value() {
    footprint f = pattern_reads<P>::value();
    f |= pattern_reads<Q>::value();
    return f;
  }
};

// The kinds of node a root form is tried at, and what it reads there.
template <class Root>
struct root_reads {
  static constexpr footprint value() {
    footprint f = pattern_reads<Root>::value();
    f.nodes |= kinds_of<Root>::value;
    return f;
  }
};
template <class P>
struct root_reads<pattern::each_output_t<P>> : root_reads<P> {};
template <class Cn, class O>
struct root_reads<pattern::on_use_t<Cn, O>> {
  static constexpr footprint value() {
    footprint f = pattern_reads<Cn>::value();
    f |= pattern_reads<O>::value();
    f.nodes |= kinds_of<Cn>::value;
    f.add_operands(kinds_of<Cn>::value, kinds_of<O>::value);  // every input slot of the consumer
    return f;
  }
};

// The kinds of the node whose slot an on_use root matched (any, for the other roots: they have
// no slot, and an action needing one does not run there).
template <class Root>
struct site_consumer_kinds : std::integral_constant<kind_set, all_kinds> {};
template <class Cn, class O>
struct site_consumer_kinds<pattern::on_use_t<Cn, O>> : kinds_of<Cn> {};

// The kinds of the value an on_use root matched at the slot (any, for the other roots).
template <class Root>
struct site_operand_kinds : std::integral_constant<kind_set, all_kinds> {};
template <class Cn, class O>
struct site_operand_kinds<pattern::on_use_t<Cn, O>> : kinds_of<O> {};

template <class Root, class... Caps>
constexpr kind_set kinds_of_captures() {
  return (capture_kinds<Root, Caps>::value | ... | 0);
}

// What a guard reads, in the terms of its rule's root.
template <class Root, class Guard>
struct guard_reads {
  static constexpr footprint value() { return footprint::everything(); }  // a guard type of one's own
};
template <class Root>
struct guard_reads<Root, pattern::always> {
  static constexpr footprint value() { return {}; }
};
template <class Root, class F>
struct guard_reads<Root, pattern::context_guard<F>> {
  static constexpr footprint value() { return {}; }  // when(f): the context only, by its contract
};
template <class Root, class A, class B>
struct guard_reads<Root, pattern::and_guard<A, B>> {
  static constexpr footprint value() {
    footprint f = guard_reads<Root, A>::value();
    return f |= guard_reads<Root, B>::value();
  }
};
template <class Root, class A, class B>
struct guard_reads<Root, pattern::or_guard<A, B>> : guard_reads<Root, pattern::and_guard<A, B>> {};
template <class Root, class A>
struct guard_reads<Root, pattern::not_guard<A>> : guard_reads<Root, A> {};
// The built-in value guards read what their names say; `satisfies` (a user predicate) anything.
template <class Root, pattern::fixed_string Tag, class F, class... Caps>
struct guard_reads<Root, pattern::value_guard<Tag, F, Caps...>> {
  static constexpr footprint value() {
    const std::string_view tag = Tag.view();
    const kind_set kinds = kinds_of_captures<Root, Caps...>();
    footprint f;
    if (tag == "on_host" || tag == "on_device")
      f.location = kinds;
    else if (tag == "same_device")
      f.location = f.node_device = kinds;
    else if (tag == "device_delegate")
      f.node_device = kinds;
    else if (tag == "one_use" || tag == "many_uses" || tag == "unused")
      f.uses = kinds;
    else if (tag == "dtype_is" || tag == "same_dtype" || tag == "round_trips_exactly" || tag == "has_trait" ||
             tag == "rank_is" || tag == "shape_is" || tag == "has_attr" || tag == "attr_is") {
      // A value's dtype and shape, a node's traits and attributes never change (value_guards.hpp).
    } else {
      f = footprint::everything();
    }
    return f;
  }
};

// What an action may change, in the terms of its rule's root.
template <class Root, class Action>
struct action_effects {
  static constexpr footprint value() { return footprint::everything(); }  // apply(...), an action type of one's own
};
template <class Root, action A, action B>
struct action_effects<Root, sequence_t<A, B>> {
  static constexpr footprint value() {
    footprint f = action_effects<Root, A>::value();
    return f |= action_effects<Root, B>::value();
  }
};
// Every use of `from` reads `to`: any consumer may now read a producer of to's kinds.
template <class Root, class From, class To>
struct action_effects<Root, rewire_t<From, To>> {
  static constexpr footprint value() {
    footprint f;
    f.add_operands(all_kinds, capture_kinds<Root, To>::value);
    f.uses = capture_kinds<Root, From>::value | capture_kinds<Root, To>::value;
    return f;
  }
};
// The node goes; the values it read lose a reader.
template <class Root, class A, bool OnlyIfDead>
struct action_effects<Root, erase_t<A, OnlyIfDead>> {
  static constexpr footprint value() {
    footprint f;
    f.uses = capture_operand_kinds<Root, A>::value;
    return f;
  }
};
// A copy of kind K (new, or shared: it gains a reader) now feeds the matched slot; x gains the
// copy as a reader when it is new, and loses the slot.
template <class Root, op_kind K, bool Share, class X, class At>
struct action_effects<Root, copy_into_use_t<K, Share, X, At>> {
  static constexpr footprint value() {
    footprint f;
    f.nodes = kind_bit(K);
    f.add_operands(site_consumer_kinds<Root>::value, kind_bit(K));
    f.uses = capture_kinds<Root, X>::value | kind_bit(K);
    return f;
  }
};
// A copy of kind K of x takes over the uses its predicate picks, of any consumer.
template <class Root, op_kind K, class X, class Moves>
struct action_effects<Root, copy_after_t<K, X, Moves>> {
  static constexpr footprint value() {
    footprint f;
    f.nodes = kind_bit(K);
    f.add_operands(all_kinds, kind_bit(K));
    f.uses = capture_kinds<Root, X>::value | kind_bit(K);
    return f;
  }
};
// x now lives where `at` runs; an input's or constant's node device moves with it.
template <class Root, class X, class At>
struct action_effects<Root, place_on_t<X, At>> {
  static constexpr footprint value() {
    footprint f;
    f.location = capture_kinds<Root, X>::value;
    f.node_device = capture_kinds<Root, X>::value & sources;
    return f;
  }
};

// A node of r's kind (the same role) replaces r: any reader of r may now read such a node; the
// operands gain it as a reader; r's node may go, its operands losing a reader.
template <class Root, class R, pattern::fixed_string Op, class DType, pattern::fixed_string Suffix, class AttrsFrom,
          class... Operands>
struct action_effects<Root, replace_t<R, build_t<Op, DType, Suffix, AttrsFrom, Operands...>>> {
  static constexpr footprint value() {
    footprint f;
    f.nodes = capture_kinds<Root, R>::value;
    f.add_operands(all_kinds, capture_kinds<Root, R>::value);
    f.uses = capture_kinds<Root, R>::value | capture_operand_kinds<Root, R>::value |
             (capture_kinds<Root, Operands>::value | ... | 0);
    return f;
  }
};
// A call or delegate (new, or shared: it gains a reader) now feeds the matched slot; its
// operands gain it as a reader, the value read there loses the slot.
template <class Root, pattern::fixed_string Op, class DType, pattern::fixed_string Suffix, class AttrsFrom,
          class... Operands, bool Share>
struct action_effects<Root, build_into_use_t<build_t<Op, DType, Suffix, AttrsFrom, Operands...>, Share>> {
  static constexpr footprint value() {
    constexpr kind_set built = kind_bit(op_kind::call) | kind_bit(op_kind::delegate);
    footprint f;
    f.nodes = built;
    f.add_operands(site_consumer_kinds<Root>::value, built);
    f.uses = built | (capture_kinds<Root, Operands>::value | ... | 0) | site_operand_kinds<Root>::value;
    return f;
  }
};

}  // namespace detail

template <class Rule>
constexpr footprint footprint_of() {
  using Root = typename Rule::root_type;
  footprint f = detail::root_reads<Root>::value();
  return f |= detail::guard_reads<Root, std::remove_cvref_t<decltype(std::declval<Rule>().guard)>>::value();
}
template <class Rule>
constexpr footprint effects_of() {
  using Root = typename Rule::root_type;
  return detail::action_effects<Root, std::remove_cvref_t<decltype(std::declval<Rule>().action)>>::value();
}

// Rules numbered from 1 in table order: `enabler`'s action may enable `enabled` (itself too).
struct rule_pair {
  std::size_t enabler = 0;
  std::size_t enabled = 0;
};

template <class... Rules>
constexpr std::optional<rule_pair> first_enabling_pair() {
  constexpr std::size_t n = sizeof...(Rules);
  const std::array<footprint, n> reads{footprint_of<Rules>()...};
  const std::array<footprint, n> effects{effects_of<Rules>()...};
  for (std::size_t a = 0; a < n; ++a)
    for (std::size_t b = 0; b < n; ++b)
      if (may_enable(effects[a], reads[b])) return rule_pair{a + 1, b + 1};
  return std::nullopt;
}
template <class... Rules>
constexpr std::optional<rule_pair> first_enabling_pair(const rule_table<Rules...>&) {
  return first_enabling_pair<Rules...>();
}

}  // namespace devpass::rules::independence
