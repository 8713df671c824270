// devpass/pattern/fixed_string.hpp — compile-time strings, so capture names can be template
// arguments (`cap<"x">`) and compile-time diagnostics can quote them.
#pragma once

#include <algorithm>
#include <cstddef>
#include <string_view>
#include <type_traits>

namespace devpass::pattern {

template <std::size_t N>
struct fixed_string {
  char chars[N]{};
  constexpr fixed_string(const char (&text)[N]) { std::copy_n(text, N, chars); }  // NOLINT: implicit by design
  [[nodiscard]] constexpr std::string_view view() const { return {chars, N - 1}; }
  template <std::size_t M>
  [[nodiscard]] constexpr bool operator==(const fixed_string<M>& other) const {
    return view() == other.view();
  }
};

// A compile-time list of types, for captures, requirements and provisions.
template <class... Ts>
struct type_list {
  static constexpr std::size_t size = sizeof...(Ts);
};

template <class T, class List>
struct contains;
template <class T, class... Ts>
struct contains<T, type_list<Ts...>> : std::bool_constant<(std::is_same_v<T, Ts> || ...)> {};
template <class T, class List>
inline constexpr bool contains_v = contains<T, List>::value;

template <class... Lists>
struct concat;
template <>
struct concat<> {
  using type = type_list<>;
};
template <class... As>
struct concat<type_list<As...>> {
  using type = type_list<As...>;
};
template <class... As, class... Bs, class... Rest>
struct concat<type_list<As...>, type_list<Bs...>, Rest...> {
  using type = typename concat<type_list<As..., Bs...>, Rest...>::type;
};
template <class... Lists>
using concat_t = typename concat<Lists...>::type;

// Position of T in the list (the list must contain it).
template <class T, class List>
struct index_of;
template <class T, class... Ts>
struct index_of<T, type_list<T, Ts...>> : std::integral_constant<std::size_t, 0> {};
template <class T, class U, class... Ts>
struct index_of<T, type_list<U, Ts...>> : std::integral_constant<std::size_t, 1 + index_of<T, type_list<Ts...>>::value> {};

// True when every element of Sub is in Super.
template <class Sub, class Super>
struct all_in;
template <class... Ts, class Super>
struct all_in<type_list<Ts...>, Super> : std::bool_constant<(contains_v<Ts, Super> && ...)> {};

// True when no element occurs twice.
template <class List>
struct unique;
template <>
struct unique<type_list<>> : std::true_type {};
template <class T, class... Ts>
struct unique<type_list<T, Ts...>>
    : std::bool_constant<!contains_v<T, type_list<Ts...>> && unique<type_list<Ts...>>::value> {};

}  // namespace devpass::pattern
