// devpass/graph/dtype.hpp — element types of tensors, with their byte sizes and names.
// Laws: parse_dtype(to_string(t)) == t for every t; element_size(t) > 0.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace devpass {

enum class dtype : std::uint8_t { float32, float16, bfloat16, float64, int64, int32, int16, int8, uint8, bool_ };

namespace detail {
struct dtype_info {
  std::string_view name;
  std::uint8_t size;
};
inline constexpr std::array<dtype_info, 10> dtype_table{{{"float32", 4},
                                                         {"float16", 2},
                                                         {"bfloat16", 2},
                                                         {"float64", 8},
                                                         {"int64", 8},
                                                         {"int32", 4},
                                                         {"int16", 2},
                                                         {"int8", 1},
                                                         {"uint8", 1},
                                                         {"bool", 1}}};
}  // namespace detail

[[nodiscard]] constexpr std::size_t element_size(dtype t) noexcept {
  return detail::dtype_table[static_cast<std::size_t>(t)].size;
}
[[nodiscard]] constexpr std::string_view to_string(dtype t) noexcept {
  return detail::dtype_table[static_cast<std::size_t>(t)].name;
}
[[nodiscard]] constexpr std::optional<dtype> parse_dtype(std::string_view name) noexcept {
  for (std::size_t i = 0; i < detail::dtype_table.size(); ++i)
    if (detail::dtype_table[i].name == name) return static_cast<dtype>(i);
  return std::nullopt;
}

}  // namespace devpass
