// devpass/meta/type_list.hpp — compile-time lists of types: captures, guard reads, pipeline
// capabilities. Plain C++20 templates, no Boost.Hana: these are small lists tested for membership,
// where Hana's generality costs compile time and buys nothing.
#pragma once

#include <cstddef>
#include <type_traits>

namespace devpass::meta {

// A compile-time list of types, for captures, requirements and provisions.
template <class... Ts>
struct type_list {
  static constexpr std::size_t size = sizeof...(Ts);
};

template <class T>
inline constexpr bool is_type_list_v = false;
template <class... Ts>
inline constexpr bool is_type_list_v<type_list<Ts...>> = true;

template <class T, class List>
struct contains;
template <class T, class... Ts>
struct contains<T, type_list<Ts...>> : std::bool_constant<(std::is_same_v<T, Ts> || ...)> {};
template <class T, class List>
inline constexpr bool contains_v = contains<T, List>::value;

// The lists one after the other (`join`, not `concat`: devpass::concat joins strings).
template <class... Lists>
struct join;
template <>
struct join<> {
  using type = type_list<>;
};
template <class... As>
struct join<type_list<As...>> {
  using type = type_list<As...>;
};
template <class... As, class... Bs, class... Rest>
struct join<type_list<As...>, type_list<Bs...>, Rest...> {
  using type = typename join<type_list<As..., Bs...>, Rest...>::type;
};
template <class... Lists>
using join_t = typename join<Lists...>::type;

// Position of T in the list (the list must contain it).
template <class T, class List>
struct index_of;
template <class T, class... Ts>
struct index_of<T, type_list<T, Ts...>> : std::integral_constant<std::size_t, 0> {};
template <class T, class U, class... Ts>
struct index_of<T, type_list<U, Ts...>>
    : std::integral_constant<std::size_t, 1 + index_of<T, type_list<Ts...>>::value> {};

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

}  // namespace devpass::meta
