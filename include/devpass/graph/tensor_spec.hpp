// devpass/graph/tensor_spec.hpp — the description of one value: dtype, shape, and what passes add
// (the device it lives on, and from memory planning its buffer id and byte offset).
// The byte size is derived, never stored; checked_byte_size reports overflow instead of wrapping.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>

#include "devpass/graph/compact_optional.hpp"

#include "devpass/graph/device.hpp"
#include "devpass/graph/dtype.hpp"
#include "devpass/graph/tensor_shape.hpp"

namespace devpass {

// Number of bytes of a dense tensor, or nullopt when it does not fit in 63 bits.
[[nodiscard]] inline std::optional<std::uint64_t> checked_byte_size(dtype t, const tensor_shape& shape) noexcept {
  constexpr std::uint64_t limit = std::uint64_t{1} << 63;
  std::uint64_t bytes = element_size(t);
  for (const std::int64_t dim : shape) {
    if (dim < 0) return std::nullopt;
    const auto d = static_cast<std::uint64_t>(dim);
    if (d != 0 && bytes > (limit - 1) / d) return std::nullopt;
    bytes *= d;
  }
  return bytes;
}

// The values the optional fields below never hold, which mean "absent": no device type is 0xFF,
// and a buffer id or offset is never negative (the reader refuses one; the planner makes none).
inline constexpr devpass::device no_device{static_cast<device_type>(0xFF), 0xFFFF};
inline constexpr std::int32_t no_mem_id = std::numeric_limits<std::int32_t>::min();
inline constexpr std::int64_t no_offset = std::numeric_limits<std::int64_t>::min();

// 64 bytes: with std::optional fields it was 80 (compact_optional.hpp).
struct tensor_spec {
  devpass::dtype type = devpass::dtype::float32;
  tensor_shape shape{};
  compact_optional<devpass::device, no_device> device{};  // where the value lives, once a pass has decided
  compact_optional<std::int32_t, no_mem_id> mem_id{};     // planned buffer (memory planning)
  compact_optional<std::int64_t, no_offset> offset{};     // planned byte offset inside mem_id

  // Valid for every spec the reader accepted (it rejects overflowing shapes).
  [[nodiscard]] std::uint64_t byte_size() const noexcept { return checked_byte_size(type, shape).value_or(0); }
  [[nodiscard]] std::uint64_t element_count() const noexcept { return byte_size() / element_size(type); }
  [[nodiscard]] bool same_layout(const tensor_spec& other) const noexcept {
    return type == other.type && shape == other.shape;
  }
  friend bool operator==(const tensor_spec&, const tensor_spec&) = default;
};

}  // namespace devpass
