// devpass/pattern/same_value.hpp — `is(x)`: the value captured as x earlier in the same match
// (XLA's .Is(), LLVM's m_Specific). Operands are matched left to right and a pattern's own value
// after its operands, so x is bound by an earlier operand (or an earlier operand's operand):
//
//   op<"aten.mul.Tensor">(any.as(x), is(x))        a value multiplied by itself
//   on_use(delegate.as(d), is(d))                    not this: d is the consumer, not an operand
//
// A pattern that reads x before anything binds it does not compile (checked where the pattern
// becomes a rule's root, or when it is matched on its own).
#pragma once

#include <string>
#include <type_traits>

#include "devpass/graph/concat.hpp"
#include "devpass/meta/diagnostic.hpp"
#include "devpass/pattern/alternatives.hpp"
#include "devpass/pattern/any_order.hpp"
#include "devpass/pattern/op_patterns.hpp"
#include "devpass/pattern/patterns.hpp"

namespace devpass::diagnostic {
template <class Capture>
struct is_reads_a_capture_no_earlier_part_of_the_pattern_binds;
}  // namespace devpass::diagnostic

namespace devpass::pattern {

template <class C>
struct is_t : pattern_base<is_t<C>> {
  using binds = type_list<>;
  using reads = type_list<C>;
  template <class G, class Caps, class Why = no_reason>
  bool match(const G& g, value_ref v, Caps& caps, Why&& why = {}) const {
    if (caps.get(C{}) == v) return true;
    why.set([&] {
      return devpass::concat(
          {"'", value_name(g, v), "' is not ", C::name(), " ('", value_name(g, caps.get(C{})), "')"});
    });
    return false;
  }
  static std::string describe() { return devpass::concat({"is(", C::name(), ")"}); }
};

template <fixed_string Name>
constexpr is_t<cap<Name>> is(cap<Name>) {
  return {};
}

// The captures bound once P has matched, given those bound before (match order: operands left to
// right, then the value itself), and whether every is(x) in P reads a capture bound by then.
namespace detail {
template <class P, class Bound>
struct match_order {
  static constexpr bool ok = true;
  using bound_after = join_t<Bound, typename P::binds>;
  using first_unbound = void;
};
template <class C, class Bound>
struct match_order<is_t<C>, Bound> {
  static constexpr bool ok = contains_v<C, Bound>;
  using bound_after = Bound;
  using first_unbound = std::conditional_t<ok, void, C>;
};
template <class P, class C, class Bound>
struct match_order<bound<P, C>, Bound> : match_order<P, Bound> {
  using bound_after = join_t<typename match_order<P, Bound>::bound_after, type_list<C>>;
};
template <class Bound, class... Os>
struct operands_order {
  static constexpr bool ok = true;
  using bound_after = Bound;
  using first_unbound = void;
};
template <class Bound, class O, class... Os>
struct operands_order<Bound, O, Os...> {
  using head = match_order<O, Bound>;
  using tail = operands_order<typename head::bound_after, Os...>;
  static constexpr bool ok = head::ok && tail::ok;
  using bound_after = typename tail::bound_after;
  using first_unbound = std::conditional_t<head::ok, typename tail::first_unbound, typename head::first_unbound>;
};
template <op_kind K, class... Os, class Bound>
struct match_order<op_t<K, true, Os...>, Bound> : operands_order<Bound, Os...> {};
template <fixed_string N, class... Os, class Bound>
struct match_order<named_op_t<N, true, Os...>, Bound> : operands_order<Bound, Os...> {};
template <class P, class Q, class Bound>
struct match_order<either_t<P, Q>, Bound> {
  static constexpr bool ok = match_order<P, Bound>::ok && match_order<Q, Bound>::ok;
  using bound_after = join_t<Bound, typename P::binds>;
  using first_unbound = std::conditional_t<match_order<P, Bound>::ok, typename match_order<Q, Bound>::first_unbound,
                                           typename match_order<P, Bound>::first_unbound>;
};
// Either order is tried: is(x) must hold in both.
template <class H, class P, class Q, class Bound>
struct match_order<any_order_t<H, P, Q>, Bound> {
  using in_order = operands_order<Bound, P, Q>;
  using swapped = operands_order<Bound, Q, P>;
  static constexpr bool ok = in_order::ok && swapped::ok;
  using bound_after = typename in_order::bound_after;
  using first_unbound =
      std::conditional_t<in_order::ok, typename swapped::first_unbound, typename in_order::first_unbound>;
};
template <class P, class Bound>
struct match_order<each_output_t<P>, Bound> : match_order<P, Bound> {};
template <class Cn, class O, class Bound>
struct match_order<on_use_t<Cn, O>, Bound> : operands_order<Bound, Cn, O> {};
}  // namespace detail

// Asserts that every is(x) in root pattern P reads a capture an earlier part of P binds: the
// first error line names the capture.
template <class P>
constexpr void check_is_reads_bound() {
  using order = detail::match_order<P, type_list<>>;
  if constexpr (!order::ok) {
    static_assert(diagnostic::report<diagnostic::is_reads_a_capture_no_earlier_part_of_the_pattern_binds<
                      spelled_t<typename order::first_unbound>>>());
    static_assert(order::ok, "devpass: is(x) reads a capture that no earlier part of the pattern binds");
  }
}

}  // namespace devpass::pattern
