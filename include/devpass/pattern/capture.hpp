// devpass/pattern/capture.hpp — named captures.
//
// `cap<"x">` names a capture; a pattern `p.as(x)` binds the value p matched to it. A
// capture_set<type_list<cap<...>...>> holds one value_ref per name, looked up at compile time:
// reading a name the set does not hold does not compile.
#pragma once

#include <array>
#include <optional>
#include <utility>

#include "devpass/graph/graph_model.hpp"
#include "devpass/meta/type_list.hpp"
#include "devpass/pattern/fixed_string.hpp"

namespace devpass::pattern {

// The type lists patterns, guards and actions are made of (meta/type_list.hpp), by their old names.
using meta::all_in;
using meta::contains;
using meta::contains_v;
using meta::index_of;
using meta::join_t;
using meta::type_list;
using meta::unique;
template <class... Lists>
using concat_t [[deprecated("devpass: pattern::concat_t is meta::join_t (devpass::concat joins strings)")]] =
    meta::join_t<Lists...>;

template <fixed_string Name>
struct cap {
  static constexpr std::string_view name() { return Name.view(); }
};

// A capture's name as a pack of characters, for compile errors that name it: both compilers
// print capture_name<'x'> as written, where cap<"x"> may print as its bytes.
template <char... Name>
struct capture_name {};
namespace detail {
template <class Cap, class Indices>
struct spelled;
template <fixed_string Name, std::size_t... I>
struct spelled<cap<Name>, std::index_sequence<I...>> {
  using type = capture_name<Name.view()[I]...>;
};
}  // namespace detail
template <class Cap>
using spelled_t = typename detail::spelled<Cap, std::make_index_sequence<Cap::name().size()>>::type;

inline namespace literals {
// "x"_c is cap<"x">{}: a capture name usable in patterns, guards and actions.
template <fixed_string Name>
constexpr cap<Name> operator""_c() {
  return {};
}
}  // namespace literals

template <class Names>
struct capture_set;

template <class... Caps>
struct capture_set<type_list<Caps...>> {
  using names = type_list<Caps...>;
  std::array<value_ref, sizeof...(Caps)> values{};
  std::optional<devpass::use> site;  // the matched use, for rules rooted at a use (on_use)

  template <class C>
  [[nodiscard]] value_ref get(C) const {
    static_assert(contains_v<C, names>, "devpass: this capture is not bound by the rule's pattern");
    return values[index_of<C, names>::value];
  }
  template <class C>
  void set(C, value_ref v) {
    if constexpr (contains_v<C, names>) values[index_of<C, names>::value] = v;
  }
};

}  // namespace devpass::pattern
