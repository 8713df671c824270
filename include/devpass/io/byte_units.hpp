// devpass/io/byte_units.hpp — byte counts for people: "16 B", "3.1 MiB".
// Binary units (KiB = 1024 B), one decimal above bytes; the unit steps up before a value would
// print as "1024.0", so every text reads as a number below 1024 and its unit.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

namespace devpass {

[[nodiscard]] inline std::string format_bytes(std::uint64_t bytes) {
  if (bytes < 1024) return std::to_string(bytes) + " B";
  static constexpr const char* units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double value = static_cast<double>(bytes) / 1024.0;
  std::size_t unit = 0;
  while (value >= 1023.95 && unit + 1 < std::size(units)) {
    value /= 1024.0;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof text, "%.1f %s", value, units[unit]);
  return text;
}

}  // namespace devpass
