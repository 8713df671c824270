// devpass/graph/op_kind.hpp — what a node is. Names match the devpass.graph/1 format.
// d2d_copy is devpass's own copy kind (a direct device-to-device copy, see docs/file-format.md).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

namespace devpass {

enum class op_kind : std::uint8_t { input, constant, delegate, call, h2d_copy, d2h_copy, d2d_copy, output };

namespace detail {
inline constexpr std::array<std::string_view, 8> op_names{"input",    "constant", "delegate", "call",
                                                          "h2d_copy", "d2h_copy", "d2d_copy", "output"};
}

[[nodiscard]] constexpr std::string_view to_string(op_kind k) noexcept {
  return detail::op_names[static_cast<std::size_t>(k)];
}
[[nodiscard]] constexpr std::optional<op_kind> parse_op_kind(std::string_view name) noexcept {
  for (std::size_t i = 0; i < detail::op_names.size(); ++i)
    if (detail::op_names[i] == name) return static_cast<op_kind>(i);
  return std::nullopt;
}
[[nodiscard]] constexpr bool is_copy(op_kind k) noexcept {
  return k == op_kind::h2d_copy || k == op_kind::d2h_copy || k == op_kind::d2d_copy;
}
// Ops that run a kernel: the only ones with an op name (a copy's kernel is the copy itself).
[[nodiscard]] constexpr bool runs_kernel(op_kind k) noexcept { return k == op_kind::delegate || k == op_kind::call; }
// Ops that produce values without reading any.
[[nodiscard]] constexpr bool is_source(op_kind k) noexcept { return k == op_kind::input || k == op_kind::constant; }

}  // namespace devpass
