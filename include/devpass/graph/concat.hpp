// devpass/graph/concat.hpp — joins the parts of a message or a description in one call.
//
// Why not `a + b + c`: a chain of std::string operator+ expands inline wherever it is written
// (each temporary's allocation, copy and free), and devpass writes its descriptions and
// messages inside templates instantiated for every rule, guard and graph model a TU uses. One
// out-of-line join keeps that code small, and code is what a TU's compile time is made of
// (docs/performance.md, "Compile time").
#pragma once

#include <cstddef>
#include <initializer_list>
#include <string>
#include <string_view>

namespace devpass {

[[nodiscard]] inline std::string concat(std::initializer_list<std::string_view> parts) {
  std::size_t size = 0;
  for (const std::string_view part : parts) size += part.size();
  std::string text;
  text.reserve(size);
  for (const std::string_view part : parts) text += part;
  return text;
}

}  // namespace devpass
