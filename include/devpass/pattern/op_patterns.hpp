// devpass/pattern/op_patterns.hpp — patterns over the model's own op vocabulary:
//
//   op<"aten.relu.default">              a node whose op is that name, any operands
//   op<"aten.add.Tensor">(p, q)          ... with operand patterns, slot by slot (as role patterns)
//   op<"aten.add.Tensor">(p, q).as(x)    bound, guarded and rooted as any pattern
//
// The vocabulary is the model's (graph_model.hpp): `static T op(const G&, vertex)` where T is
//   - devpass::op_name, names interned (devpass::graph: the kernel of delegates and calls): the
//     pattern interns its name once, and a match compares two ids;
//   - an enum of the model's own, with `static constexpr std::string_view op_names[]` giving each
//     enumerator's name (op_names[i] names the enumerator of value i): the name is looked up at
//     compile time, a name the vocabulary lacks is a compile error naming it, and a match
//     compares two enumerators;
//   - anything convertible to std::string_view: a match compares strings.
// A model without `op` has no vocabulary: a pattern naming an op does not compile for it, and
// role patterns (delegate, call, ...) work as before.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "devpass/graph/op_name.hpp"
#include "devpass/meta/diagnostic.hpp"
#include "devpass/pattern/patterns.hpp"

namespace devpass::diagnostic {
// A name as a pack of characters, which both compilers print as written.
template <char... Name>
struct op_named {};
template <class Name>
struct the_model_op_vocabulary_has_no_op_named;
template <class Graph>
struct this_graph_model_has_no_op_vocabulary;
}  // namespace devpass::diagnostic

namespace devpass::pattern {

// Whether graph model G has an op vocabulary, and its type.
template <class G>
concept has_op_vocabulary = requires(const G& g, vertex v) {
  graph_model<G>::op(g, v);
};
template <class G>
using op_type_t = std::remove_cvref_t<decltype(graph_model<G>::op(std::declval<const G&>(), vertex{}))>;

namespace detail {
template <fixed_string Name, std::size_t... I>
consteval auto spelled_name(std::index_sequence<I...>) -> diagnostic::op_named<Name.view()[I]...>;
template <fixed_string Name>
using spelled_name_t = decltype(spelled_name<Name>(std::make_index_sequence<Name.view().size()>{}));

// The enumerator an enum vocabulary names Name, or a compile error naming Name.
template <class G, fixed_string Name>
consteval op_type_t<G> enumerator_named() {
  constexpr auto& names = graph_model<G>::op_names;
  constexpr std::size_t count = std::size(names);
  constexpr std::size_t at = [&] {
    for (std::size_t i = 0; i < count; ++i)
      if (names[i] == Name.view()) return i;
    return count;
  }();
  if constexpr (at == count) {
    static_assert(diagnostic::report<diagnostic::the_model_op_vocabulary_has_no_op_named<spelled_name_t<Name>>>());
    return op_type_t<G>{};
  } else {
    return static_cast<op_type_t<G>>(at);
  }
}

// Name's interned id, made when the program starts: a plain load where a pattern reads it (a
// function-local static tested its guard on every node, and kept has_op out of line).
template <fixed_string Name>
inline const op_name interned_op = op_name::of(Name.view());
// The same id for a pattern that runs in another static's initialiser, before interned_op's.
template <fixed_string Name>
[[gnu::cold, gnu::noinline]] op_name interned_op_late() {
  return op_name::of(Name.view());
}

// Name's interned id, wherever it is asked for.
template <fixed_string Name>
op_name interned_name() {
  const op_name wanted = interned_op<Name>;  // empty only in another static's initialiser
  return wanted.empty() ? interned_op_late<Name>() : wanted;
}

// Whether node v's op is Name, in G's vocabulary (see the header comment).
template <fixed_string Name, class G>
bool has_op(const G& g, vertex v) {
  using T = op_type_t<G>;
  if constexpr (std::is_enum_v<T>) {
    constexpr T wanted = enumerator_named<G, Name>();
    return graph_model<G>::op(g, v) == wanted;
  } else if constexpr (std::is_same_v<T, op_name>) {
    return graph_model<G>::op(g, v) == interned_name<Name>();
  } else {
    return std::string_view(graph_model<G>::op(g, v)) == Name.view();
  }
}

// Node v's op as text, for explanations.
template <class G>
std::string op_text(const G& g, vertex v) {
  using T = op_type_t<G>;
  const T op = graph_model<G>::op(g, v);
  if constexpr (std::is_enum_v<T>) {
    const auto i = static_cast<std::size_t>(op);
    return i < std::size(graph_model<G>::op_names) ? std::string(graph_model<G>::op_names[i]) : "?";
  } else if constexpr (std::is_same_v<T, op_name>) {
    return op.empty() ? std::string("no op") : std::string(op.view());
  } else {
    return std::string(std::string_view(op));
  }
}
}  // namespace detail

template <fixed_string Name, bool HasOperands, class... Operands>
struct named_op_t : pattern_base<named_op_t<Name, HasOperands, Operands...>> {
  using binds = join_t<typename Operands::binds...>;
  static_assert(unique<binds>::value, "devpass: a capture name is bound twice in one pattern");

  // op<"...">(operands...): constrains the operands slot by slot.
  template <class... Ps>
  constexpr named_op_t<Name, true, Ps...> operator()(Ps...) const {
    static_assert(!HasOperands, "devpass: operands are already given for this op pattern");
    return {};
  }

  template <class G, class Caps, class Why = no_reason>
  bool match(const G& g, value_ref v, Caps& caps, Why&& why = {}) const {
    if constexpr (!has_op_vocabulary<G>) {
      static_assert(diagnostic::report<diagnostic::this_graph_model_has_no_op_vocabulary<G>>());
      static_assert(has_op_vocabulary<G>,
                    "devpass: op<\"...\"> patterns read the model's op vocabulary: graph_model<G> needs "
                    "`static T op(const G&, vertex)` (graph-concept.md)");
      return false;
    } else {
      if (is_erased(g, v.producer)) {
        why.set([&] { return "node '" + display_name(g, v.producer) + "' is erased"; });
        return false;
      }
      if (!detail::has_op<Name>(g, v.producer)) {
        why.set([&] {
          return devpass::concat({"node '", display_name(g, v.producer), "' is ", detail::op_text(g, v.producer),
                                  ", expected ", Name.view()});
        });
        return false;
      }
      if constexpr (HasOperands)
        return detail::match_operands<Operands...>(g, v.producer, caps, why, std::index_sequence_for<Operands...>{});
      else
        return true;
    }
  }

  static std::string describe() {
    return detail::describe_with_operands<HasOperands, Operands...>(devpass::concat({"op<\"", Name.view(), "\">"}));
  }
};

template <fixed_string Name, bool HasOperands, class... Operands>
struct named_op_alternative<named_op_t<Name, HasOperands, Operands...>> {
  static constexpr bool one_op = true;
  using rest = named_op_t<"", HasOperands, Operands...>;
  static std::string names() { return devpass::concat({"\"", Name.view(), "\""}); }
  static std::string describe(const std::string& names) {
    return detail::describe_with_operands<HasOperands, Operands...>(devpass::concat({"op<", names, ">"}));
  }
};

// op<"name">: see the header comment.
template <fixed_string Name>
inline constexpr named_op_t<Name, false> op{};

}  // namespace devpass::pattern
