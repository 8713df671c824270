// devpass/graph/device.hpp — where a node runs or a value lives.
//
// A device is a type (cpu or cuda) and an index. Text form: "cpu", "cuda:N"; on read the type is
// case-insensitive and "cuda" alone means cuda:0; on write it is always lower case with an index.
// Laws: parse_device(to_string(d)) == d; devices order by (type, index), cpu first.
#pragma once

#include <charconv>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

namespace devpass {

enum class device_type : std::uint8_t { cpu, cuda };

struct device {
  device_type type = device_type::cpu;
  std::uint16_t index = 0;

  [[nodiscard]] constexpr bool is_host() const noexcept { return type == device_type::cpu; }
  friend constexpr auto operator<=>(const device&, const device&) = default;
};

inline constexpr device cpu_device{};
[[nodiscard]] constexpr device cuda_device(std::uint16_t index) noexcept { return {device_type::cuda, index}; }

namespace detail {
[[nodiscard]] constexpr bool iequals(std::string_view a, std::string_view b) noexcept {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    char x = a[i], y = b[i];
    if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
    if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
    if (x != y) return false;
  }
  return true;
}
}  // namespace detail

// Returns nullopt for anything that is not a device: unknown type, bad or huge index.
[[nodiscard]] inline std::optional<device> parse_device(std::string_view text) noexcept {
  const auto colon = text.find(':');
  const std::string_view type = text.substr(0, colon);
  device d;
  if (detail::iequals(type, "cpu"))
    d.type = device_type::cpu;
  else if (detail::iequals(type, "cuda"))
    d.type = device_type::cuda;
  else
    return std::nullopt;
  if (colon == std::string_view::npos) return d;
  const std::string_view digits = text.substr(colon + 1);
  if (digits.empty() || digits.front() == '+' || digits.front() == '-') return std::nullopt;
  unsigned value = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (ec != std::errc{} || end != digits.data() + digits.size() || value > 0xFFFFu) return std::nullopt;
  d.index = static_cast<std::uint16_t>(value);
  if (d.type == device_type::cpu && d.index != 0) return std::nullopt;  // one host
  return d;
}

// The longest text form, "cuda:65535".
inline constexpr std::size_t device_name_size_max = 10;

// Writes the text form of `d` at `to`, which has room for device_name_size_max bytes; returns the
// end. The file writer calls it per node, into its buffer, with no string made.
inline char* write_device_name(char* to, device d) noexcept {
  if (d.is_host()) {
    std::memcpy(to, "cpu", 3);
    return to + 3;
  }
  std::memcpy(to, "cuda:", 5);
  return std::to_chars(to + 5, to + device_name_size_max, d.index).ptr;
}

[[nodiscard]] inline std::string to_string(device d) {
  char text[device_name_size_max];
  return std::string(text, write_device_name(text, d));
}

}  // namespace devpass
