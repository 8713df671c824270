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

// Whether every value of `from` converts to `to` and back unchanged: a cast to `to` and back to
// `from` is the identity (f16 -> f32 -> f16, int8 -> int32 -> int8), so a pass may drop the pair.
// Not for a dtype to itself (no cast), nor for a lossy pair (f32 -> f16, int32 -> float32: 2^24 + 1).
[[nodiscard]] constexpr bool widens_exactly(dtype from, dtype to) noexcept {
  switch (from) {
    case dtype::float16:
    case dtype::bfloat16: return to == dtype::float32 || to == dtype::float64;
    case dtype::float32: return to == dtype::float64;
    case dtype::int8:
      return to == dtype::int16 || to == dtype::int32 || to == dtype::int64 || to == dtype::float16 ||
             to == dtype::bfloat16 || to == dtype::float32 || to == dtype::float64;
    case dtype::uint8:
      return to == dtype::int16 || to == dtype::int32 || to == dtype::int64 || to == dtype::float16 ||
             to == dtype::bfloat16 || to == dtype::float32 || to == dtype::float64;
    case dtype::int16: return to == dtype::int32 || to == dtype::int64 || to == dtype::float32 || to == dtype::float64;
    case dtype::int32: return to == dtype::int64 || to == dtype::float64;
    case dtype::bool_: return to != dtype::bool_;
    default: return false;
  }
}

}  // namespace devpass
