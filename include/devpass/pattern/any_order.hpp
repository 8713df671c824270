// devpass/pattern/any_order.hpp — operands of a commutative op in either order (XLA's
// AddAnyOrder, LLVM's m_c_Add): any_order(head, p, q) matches a node that `head` matches (a role or
// op<"..."> without operands) with two operands, p and q in slots 0 and 1, or else q and p, the
// second try with the captures as they were before the first:
//
//   any_order(op<"aten.add.Tensor">, op<"aten.mm.default">.as(m), constant.as(b))
#pragma once

#include <string>
#include <utility>

#include "devpass/graph/concat.hpp"
#include "devpass/pattern/op_patterns.hpp"
#include "devpass/pattern/patterns.hpp"

namespace devpass::pattern {

template <class Head, class P, class Q>
struct any_order_t : pattern_base<any_order_t<Head, P, Q>> {
  using binds = join_t<typename Head::binds, typename P::binds, typename Q::binds>;
  static_assert(unique<binds>::value, "devpass: a capture name is bound twice in one pattern");
  using head = Head;
  using first = P;
  using second = Q;

  template <class G, class Caps, class Why = no_reason>
  bool match(const G& g, value_ref v, Caps& caps, Why&& why = {}) const {
    if (!Head{}.match(g, v, caps, why)) return false;
    const Caps before = caps;
    if constexpr (std::remove_cvref_t<Why>::wanted) {
      reason in_order, swapped;
      if (detail::match_operands<P, Q>(g, v.producer, caps, in_order, std::index_sequence<0, 1>{})) return true;
      caps = before;
      if (detail::match_operands<Q, P>(g, v.producer, caps, swapped, std::index_sequence<0, 1>{})) return true;
      why.set([&] {
        return devpass::concat({"in either order: ", in_order.text.value_or("no match"),
                                "; swapped: ", swapped.text.value_or("no match")});
      });
      return false;
    } else {
      if (detail::match_operands<P, Q>(g, v.producer, caps, why, std::index_sequence<0, 1>{})) return true;
      caps = before;
      return detail::match_operands<Q, P>(g, v.producer, caps, why, std::index_sequence<0, 1>{});
    }
  }
  static std::string describe() {
    return devpass::concat({"any_order(", Head::describe(), ", ", P::describe(), ", ", Q::describe(), ")"});
  }
};

template <fixed_string Name, class P, class Q>
struct named_op_alternative<any_order_t<named_op_t<Name, false>, P, Q>> {
  static constexpr bool one_op = true;
  using rest = any_order_t<named_op_t<"", false>, P, Q>;
  static std::string names() { return named_op_alternative<named_op_t<Name, false>>::names(); }
  static std::string describe(const std::string& names) {
    return devpass::concat({"any_order(op<", names, ">, ", P::describe(), ", ", Q::describe(), ")"});
  }
};

// any_order(head, p, q): head is a role or named op pattern given no operands.
template <op_kind K, class P, class Q>
constexpr any_order_t<op_t<K, false>, P, Q> any_order(op_t<K, false>, P, Q) {
  return {};
}
template <fixed_string N, class P, class Q>
constexpr any_order_t<named_op_t<N, false>, P, Q> any_order(named_op_t<N, false>, P, Q) {
  return {};
}

}  // namespace devpass::pattern
