// devpass/pattern/patterns.hpp — typed patterns over the graph.
//
// Grammar (every pattern is an empty type; a whole pattern is one type):
//   pattern  := any | op(operands...) | pattern.as(capture)
//   op       := input | constant | delegate | call | h2d_copy | d2h_copy | d2d_copy | output
//   operands := pattern, ...   (operand i is matched against input slot i; with operands given the
//                               node's arity must equal their number; without, any operands)
// A pattern matches a value (producer node, output index) of any graph model (graph_model.hpp). Captures bind values.
// Matching writes
// into scratch captures that the driver only publishes when the whole rule matched.
// Every pattern can describe() itself; explain(p, g, v) says why it does not match a value, by
// running the same match() with a reason to fill (no second, hand-written matcher to drift).
// Misuse does not compile: more operands than an op's arity, binding the same name twice.
#pragma once

#include <optional>
#include <string>
#include <type_traits>

#include "devpass/graph/concat.hpp"
#include "devpass/graph/structure.hpp"
#include "devpass/meta/diagnostic.hpp"
#include "devpass/pattern/capture.hpp"
#include "devpass/pattern/guards.hpp"

namespace devpass::pattern {

// The fixed arity of an op, or -1 when it takes any number of operands.
constexpr int fixed_arity(op_kind k) {
  switch (k) {
    case op_kind::input:
    case op_kind::constant: return 0;
    case op_kind::h2d_copy:
    case op_kind::d2h_copy:
    case op_kind::d2d_copy: return 1;
    default: return -1;
  }
}

template <class P, class C>
struct bound;

// `p | q` where each side is one op pattern under another name with the same operands (a table
// naming an op by several names: op<"relu">(x) | op<"aten.relu.default">(x)) describes itself
// with the names once and the operands once: op<"relu" | "aten.relu.default">(x)
// (alternatives.hpp). Specialised for named ops (op_patterns.hpp), any_order over a named op
// (any_order.hpp) and alternatives of those; `rest` is what must be the same on both sides.
template <class P>
struct named_op_alternative {
  static constexpr bool one_op = false;
  using rest = void;
};

// A root pattern with its guard: `pattern [guard]`.
template <class Root, class Guard>
struct guarded {
  Root root;
  Guard guard;
};

template <class Guard, class Binds>
constexpr void check_guard_reads_bound_captures() {
  using unbound = diagnostic::first_not_in_t<typename Guard::reads, Binds>;
  if constexpr (!std::is_void_v<unbound>) {
    // The first error line names the capture (meta/diagnostic.hpp); this one says the rule.
    static_assert(
        diagnostic::report<diagnostic::the_guard_reads_a_capture_the_pattern_does_not_bind<spelled_t<unbound>>>());
    static_assert(std::is_void_v<unbound>, "devpass: the guard reads a capture that the pattern does not bind");
  }
}

// `pattern [guard]`, for every root form.
template <class Self>
struct guardable {
  template <guard G>
  constexpr guarded<Self, G> operator[](G g) const {
    check_guard_reads_bound_captures<G, typename Self::binds>();
    return {Self{}, g};
  }
};

// CRTP base giving every pattern `.as(capture)` and `[guard]`.
template <class Self>
struct pattern_base : guardable<Self> {
  template <fixed_string Name>
  constexpr bound<Self, cap<Name>> as(cap<Name>) const {
    static_assert(!contains_v<cap<Name>, typename Self::binds>,
                  "devpass: this capture name is already bound in the pattern; use another name");
    return {};
  }
};

// Why a match failed, written by the same code that matches (as XLA's pattern matcher threads an
// explanation stream through its matchers): match(g, v, caps, why) with `no_reason` costs nothing
// (every call on it is empty and inlined away); with `reason` the first failure is kept as text.
// explain() is match() with a reason, so the two cannot disagree.
struct no_reason {
  static constexpr bool wanted = false;
  template <class Text>
  void set(Text&&) {}
};
struct reason {
  static constexpr bool wanted = true;
  std::optional<std::string> text;
  template <class Text>
  void set(Text&& make) {
    if (!text) text = make();
  }
};

struct any_t : pattern_base<any_t> {
  using binds = type_list<>;
  template <class G, class Caps, class Why = no_reason>
  bool match(const G& g, value_ref v, Caps&, Why&& why = {}) const {
    if (!is_erased(g, v.producer)) return true;
    why.set([&] { return "node '" + display_name(g, v.producer) + "' is erased"; });
    return false;
  }
  static std::string describe() { return "any"; }
};

namespace detail {
// Operand `slot` of `consumer` matched against P (a sub-pattern), with the reason it fails.
template <class P, class G, class Caps, class Why>
bool match_operand(const G& g, vertex consumer, std::uint32_t slot, Caps& caps, Why& why) {
  const auto value = operand(g, consumer, slot);
  if (!value) {
    why.set([&] {
      return devpass::concat(
          {"operand ", std::to_string(slot), " of '", display_name(g, consumer), "' is not connected"});
    });
    return false;
  }
  if constexpr (std::remove_cvref_t<Why>::wanted) {
    reason inner;
    if (P{}.match(g, *value, caps, inner)) return true;
    why.set([&] {
      return devpass::concat({"operand ", std::to_string(slot), " of '", display_name(g, consumer),
                              "': ", inner.text.value_or("no match")});
    });
    return false;
  } else {
    return P{}.match(g, *value, caps);
  }
}
// The node's operands, slot by slot, against Operands: its arity must be their number.
template <class... Operands, class G, class Caps, class Why, std::size_t... I>
bool match_operands(const G& g, vertex consumer, Caps& caps, Why& why, std::index_sequence<I...>) {
  if (const std::uint32_t arity = arity_of(g, consumer); arity != sizeof...(Operands)) {
    why.set([&] {
      return devpass::concat({"node '", display_name(g, consumer), "' has ", std::to_string(arity),
                              " operands, expected ", std::to_string(sizeof...(Operands))});
    });
    return false;
  }
  return (match_operand<Operands>(g, consumer, static_cast<std::uint32_t>(I), caps, why) && ...);
}
// "head(a, b)" for a pattern with operands, "head" without.
template <bool HasOperands, class... Operands>
std::string describe_with_operands(std::string head) {
  if constexpr (HasOperands) {
    head += "(";
    std::size_t i = 0;
    ((head.append(i++ ? ", " : "").append(Operands::describe())), ...);
    head += ")";
  }
  return head;
}
}  // namespace detail

template <op_kind Kind, bool HasOperands, class... Operands>
struct op_t : pattern_base<op_t<Kind, HasOperands, Operands...>> {
  using binds = join_t<typename Operands::binds...>;
  static_assert(unique<binds>::value, "devpass: a capture name is bound twice in one pattern");

  // op(operands...): constrains the operands slot by slot.
  template <class... Ps>
  constexpr op_t<Kind, true, Ps...> operator()(Ps...) const {
    static_assert(!HasOperands, "devpass: operands are already given for this op pattern");
    static_assert(fixed_arity(Kind) < 0 || static_cast<int>(sizeof...(Ps)) <= fixed_arity(Kind),
                  "devpass: operand index beyond the op's arity (copies take 1 operand, input and constant 0)");
    return {};
  }

  template <class G, class Caps, class Why = no_reason>
  bool match(const G& g, value_ref v, Caps& caps, Why&& why = {}) const {
    if (is_erased(g, v.producer)) {
      why.set([&] { return "node '" + display_name(g, v.producer) + "' is erased"; });
      return false;
    }
    if (const op_kind op = role_of(g, v.producer); op != Kind) {
      why.set([&] {
        return devpass::concat(
            {"node '", display_name(g, v.producer), "' is ", to_string(op), ", expected ", to_string(Kind)});
      });
      return false;
    }
    if constexpr (HasOperands)
      return detail::match_operands<Operands...>(g, v.producer, caps, why, std::index_sequence_for<Operands...>{});
    else
      return true;
  }

  static std::string describe() {
    return detail::describe_with_operands<HasOperands, Operands...>(std::string(to_string(Kind)));
  }
};

template <class P, class C>
struct bound : pattern_base<bound<P, C>> {
  using binds = join_t<typename P::binds, type_list<C>>;
  template <class G, class Caps, class Why = no_reason>
  bool match(const G& g, value_ref v, Caps& caps, Why&& why = {}) const {
    if (!P{}.match(g, v, caps, why)) return false;
    caps.set(C{}, v);
    return true;
  }
  static std::string describe() { return devpass::concat({P::describe(), " as ", C::name()}); }
};

inline constexpr any_t any{};
inline constexpr op_t<op_kind::input, false> input{};
inline constexpr op_t<op_kind::constant, false> constant{};
inline constexpr op_t<op_kind::delegate, false> delegate{};
inline constexpr op_t<op_kind::call, false> call{};
inline constexpr op_t<op_kind::h2d_copy, false> h2d_copy{};
inline constexpr op_t<op_kind::d2h_copy, false> d2h_copy{};
inline constexpr op_t<op_kind::d2d_copy, false> d2d_copy{};
inline constexpr op_t<op_kind::output, false> output{};

// Root forms: where the driver tries a pattern.
//   P                 at value 0 of every node (node rules)
//   each_output(P)    at every output value of every node
//   on_use(C, O)      at every input slot of every node: C matches the consumer, O the value it reads
template <class P>
struct each_output_t : guardable<each_output_t<P>> {
  using binds = typename P::binds;
  static std::string describe() { return devpass::concat({"each_output(", P::describe(), ")"}); }
};
template <class P>
constexpr each_output_t<P> each_output(P) {
  return {};
}

template <class C, class O>
struct on_use_t : guardable<on_use_t<C, O>> {
  using binds = join_t<typename C::binds, typename O::binds>;
  static_assert(unique<binds>::value, "devpass: a capture name is bound twice in one pattern");
  static std::string describe() { return devpass::concat({"on_use(", C::describe(), ", ", O::describe(), ")"}); }
};
template <class C, class O>
constexpr on_use_t<C, O> on_use(C, O) {
  return {};
}

// Explains why pattern P does not match `value`; nullopt when it matches. The same match() the
// driver runs, with a reason to fill (and scratch captures nobody reads).
template <class P, class G>
[[nodiscard]] std::optional<std::string> explain(P, const G& g, value_ref value) {
  static_assert(check_graph_model<G>());
  capture_set<typename P::binds> scratch;
  reason why;
  if (P{}.match(g, value, scratch, why)) return std::nullopt;
  return why.text.value_or("no match");
}
template <class P>
[[nodiscard]] std::string describe(P) {
  return P::describe();
}

}  // namespace devpass::pattern
