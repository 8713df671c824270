// devpass/rules/root_filter.hpp — which nodes a rule table can match at all, read from the types
// of its rules' roots, so that the driver's sweep passes every other node in a tight loop of its
// own, before the call into the table and its per-node bookkeeping.
//
//   root_ops<Root>             what a root tests of its node's op first: the roles (op_t) and op
//                              names (named_op_t) it admits; an alternative admits both sides', a
//                              bound, any_order, each_output or on_use root its pattern's (on_use:
//                              its consumer's); any other root (any, ...) tests no op
//   root_filter<G>::of<R...>   the union over a table's roots: a node whose role and op are none of
//                              those is matched by no rule there. Inactive (every node visited)
//                              when some root tests no op, when the table names more than 8 ops,
//                              or when G's op vocabulary is text rather than interned names or an enum
//
// A node passed counts the tries the rules would have counted there (rewrite_counters): one per
// plain root, one per output per each_output root, none per on_use root (its consumer failed).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "devpass/pattern/alternatives.hpp"
#include "devpass/pattern/any_order.hpp"
#include "devpass/pattern/op_patterns.hpp"
#include "devpass/pattern/patterns.hpp"

namespace devpass::rules::detail {

template <pattern::fixed_string... Names>
struct op_name_list {};
template <class A, class B>
struct join_names;
template <pattern::fixed_string... A, pattern::fixed_string... B>
struct join_names<op_name_list<A...>, op_name_list<B...>> {
  using type = op_name_list<A..., B...>;
};

// What root pattern P tests of its node's op before anything else (see the header comment).
// `roles` has bit k for op_kind k.
template <class P>
struct root_ops {
  static constexpr bool tests_op = false;
  static constexpr std::uint8_t roles = 0;
  using names = op_name_list<>;
};
template <op_kind K, bool H, class... Os>
struct root_ops<pattern::op_t<K, H, Os...>> {
  static constexpr bool tests_op = true;
  static constexpr std::uint8_t roles = std::uint8_t{1} << static_cast<unsigned>(K);
  using names = op_name_list<>;
};
template <pattern::fixed_string N, bool H, class... Os>
struct root_ops<pattern::named_op_t<N, H, Os...>> {
  static constexpr bool tests_op = true;
  static constexpr std::uint8_t roles = 0;
  using names = op_name_list<N>;
};
template <class P, class Q>
struct root_ops<pattern::either_t<P, Q>> {
  static constexpr bool tests_op = root_ops<P>::tests_op && root_ops<Q>::tests_op;
  static constexpr std::uint8_t roles = root_ops<P>::roles | root_ops<Q>::roles;
  using names = typename join_names<typename root_ops<P>::names, typename root_ops<Q>::names>::type;
};
template <class P, class C>
struct root_ops<pattern::bound<P, C>> : root_ops<P> {};
template <class H, class P, class Q>
struct root_ops<pattern::any_order_t<H, P, Q>> : root_ops<H> {};
template <class P>
struct root_ops<pattern::each_output_t<P>> : root_ops<P> {};
template <class C, class O>
struct root_ops<pattern::on_use_t<C, O>> : root_ops<C> {};

template <class R>
inline constexpr bool is_each_output_root = false;
template <class P>
inline constexpr bool is_each_output_root<pattern::each_output_t<P>> = true;
template <class R>
inline constexpr bool is_on_use_root = false;
template <class C, class O>
inline constexpr bool is_on_use_root<pattern::on_use_t<C, O>> = true;

// Whether G's op vocabulary compares as a value (interned names, an enum).
template <class G>
consteval bool has_value_vocabulary() {
  if constexpr (pattern::has_op_vocabulary<G>)
    return std::is_enum_v<pattern::op_type_t<G>> || std::is_same_v<pattern::op_type_t<G>, op_name>;
  else
    return false;
}

template <class G>
class root_filter {
  static constexpr bool by_op = has_value_vocabulary<G>();
  using op_value = typename decltype([] {
    if constexpr (by_op)
      return std::type_identity<pattern::op_type_t<G>>{};
    else
      return std::type_identity<int>{};
  }())::type;
  static constexpr std::size_t capacity = 8;  // distinct op names; a table naming more is not filtered

 public:
  // The filter of a table whose rules have roots Roots... (see the header comment).
  template <class... Roots>
  static root_filter of() {
    root_filter f;
    if constexpr ((root_ops<Roots>::tests_op && ...)) {
      f.active_ = true;
      f.roles_ = (root_ops<Roots>::roles | ...);
      (f.add_names(typename root_ops<Roots>::names{}), ...);
      f.tries_per_node_ = ((!is_each_output_root<Roots> && !is_on_use_root<Roots> ? 1u : 0u) + ...);
      f.tries_per_output_ = ((is_each_output_root<Roots> ? 1u : 0u) + ...);
    }
    return f;
  }

  [[nodiscard]] bool active() const { return active_; }
  // The first node from v on, before `end`, that is erased or admitted (or `end`); the tries the
  // rules count at the nodes passed are added to `tries`. One loop per shape of filter, each with
  // its test's state in registers: the loop is as short as a hand-written one.
  vertex skip(const G& g, vertex v, vertex end, std::size_t& tries) const {
    if (tries_per_output_ != 0) return pass<true>(g, v, end, tries, [&](vertex u) { return admits(g, u); });
    if (op_count_ == 0)
      return pass<false>(g, v, end, tries, [&, roles = roles_](vertex u) {
        return ((static_cast<unsigned>(roles) >> static_cast<unsigned>(role_of(g, u))) & 1u) != 0;
      });
    if constexpr (by_op)
      if (roles_ == 0 && op_count_ == 1)
        return pass<false>(g, v, end, tries, [&, op = ops_[0]](vertex u) { return graph_model<G>::op(g, u) == op; });
    return pass<false>(g, v, end, tries, [&](vertex u) { return admits(g, u); });
  }
  // Whether node v (not erased) is one the table's roots cannot match: then the tries the rules
  // would have counted there are added to `tries`, as skip() adds them.
  bool passes(const G& g, vertex v, std::size_t& tries) const { return skip(g, v, v + 1, tries) != v; }
  // Whether some root may match at node v (not erased).
  [[nodiscard]] bool admits(const G& g, vertex v) const {
    if (roles_ != 0 && (roles_ >> static_cast<unsigned>(role_of(g, v)) & 1u)) return true;
    if constexpr (by_op) {
      if (op_count_ == 0) return false;
      const op_value op = graph_model<G>::op(g, v);
      for (std::size_t i = 0; i < op_count_; ++i)
        if (ops_[i] == op) return true;
    }
    return false;
  }

 private:
  template <bool CountOutputs, class Admits>
  vertex pass(const G& g, vertex v, vertex end, std::size_t& tries, Admits admitted) const {
    const vertex from = v;
    std::size_t outputs = 0;
    for (; v < end && !is_erased(g, v) && !admitted(v); ++v)
      if constexpr (CountOutputs) outputs += output_count(g, v);
    tries += (v - from) * tries_per_node_ + outputs * tries_per_output_;
    return v;
  }
  template <pattern::fixed_string... Names>
  void add_names(op_name_list<Names...>) {
    if constexpr (sizeof...(Names) > 0) {
      if constexpr (by_op)
        (add(op_named<Names>()), ...);
      else
        active_ = false;  // op<"..."> on a vocabulary of text: compared as text by the pattern
    }
  }
  template <pattern::fixed_string Name>
  static op_value op_named() {
    if constexpr (std::is_enum_v<op_value>)
      return pattern::detail::enumerator_named<G, Name>();
    else
      return pattern::detail::interned_name<Name>();
  }
  void add(op_value op) {
    for (std::size_t i = 0; i < op_count_; ++i)
      if (ops_[i] == op) return;
    if (op_count_ == capacity) {
      active_ = false;
      return;
    }
    ops_[op_count_++] = op;
  }

  bool active_ = false;
  std::uint8_t roles_ = 0;
  std::size_t op_count_ = 0;
  std::array<op_value, capacity> ops_{};
  std::size_t tries_per_node_ = 0;
  std::size_t tries_per_output_ = 0;
};

}  // namespace devpass::rules::detail
