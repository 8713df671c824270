// devpass/pattern/alternatives.hpp — `p | q`: a value matched by either pattern (TVM's `|`, an
// MLIR pattern per alternative). p is tried first; q only where p does not match, with the
// captures as they were before p. Both sides bind the same captures, so that whatever the rule's
// guard and action read is bound whichever side matched:
//
//   op<"aten.relu.default">(any.as(x)) | op<"aten.gelu.default">(any.as(x))
//   maybe(op<"aten.relu.default">, p)      an optional link: op<"aten.relu.default">(p) | p
#pragma once

#include <string>
#include <type_traits>

#include "devpass/graph/concat.hpp"
#include "devpass/pattern/patterns.hpp"

namespace devpass::pattern {

// Whether two capture lists hold the same captures, in any order.
template <class A, class B>
inline constexpr bool same_captures = all_in<A, B>::value&& all_in<B, A>::value;

template <class P, class Q>
struct either_t : pattern_base<either_t<P, Q>> {
  static_assert(same_captures<typename P::binds, typename Q::binds>,
                "devpass: both sides of `p | q` bind the same captures (a capture bound on one side only would be "
                "unbound when the other side matched)");
  using binds = typename P::binds;
  using first = P;
  using second = Q;

  template <class G, class Caps, class Why = no_reason>
  bool match(const G& g, value_ref v, Caps& caps, Why&& why = {}) const {
    const Caps before = caps;
    if constexpr (std::remove_cvref_t<Why>::wanted) {
      reason first_why, second_why;
      if (P{}.match(g, v, caps, first_why)) return true;
      caps = before;
      if (Q{}.match(g, v, caps, second_why)) return true;
      why.set([&] {
        return devpass::concat(
            {"neither alternative: ", first_why.text.value_or("no match"), "; ", second_why.text.value_or("no match")});
      });
      return false;
    } else {
      if (P{}.match(g, v, caps)) return true;
      caps = before;
      return Q{}.match(g, v, caps);
    }
  }
  static std::string describe() {
    using merged = named_op_alternative<either_t>;
    if constexpr (merged::one_op)
      return merged::describe(merged::names());
    else
      return devpass::concat({"(", P::describe(), " | ", Q::describe(), ")"});
  }
};

// Both sides one op under other names, with the same operands (patterns.hpp).
template <class P, class Q>
struct named_op_alternative<either_t<P, Q>> {
  static constexpr bool one_op =
      named_op_alternative<P>::one_op && named_op_alternative<Q>::one_op &&
      std::is_same_v<typename named_op_alternative<P>::rest, typename named_op_alternative<Q>::rest>;
  using rest = typename named_op_alternative<P>::rest;
  static std::string names() {
    return devpass::concat({named_op_alternative<P>::names(), " | ", named_op_alternative<Q>::names()});
  }
  static std::string describe(const std::string& names) { return named_op_alternative<P>::describe(names); }
};

template <class P>
concept value_pattern_type = std::is_base_of_v<pattern_base<P>, P>;

template <value_pattern_type P, value_pattern_type Q>
constexpr either_t<P, Q> operator|(P, Q) {
  return {};
}

// maybe(link, p): a link of a chain that may be absent (TVM's optional): `link(p) | p`, where
// link is an op pattern without operands. `maybe(op<"aten.relu.default">, op<"aten.add.Tensor">(...))`
// matches an add with or without a relu after it.
template <value_pattern_type Link, value_pattern_type P>
constexpr auto maybe(Link link, P p) {
  return either_t<decltype(link(p)), P>{};
}

}  // namespace devpass::pattern
