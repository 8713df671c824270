// devpass/pattern/fixed_string.hpp — compile-time strings, so capture names can be template
// arguments (`cap<"x">`) and compile-time diagnostics can quote them.
#pragma once

#include <algorithm>
#include <cstddef>
#include <string_view>

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

}  // namespace devpass::pattern
