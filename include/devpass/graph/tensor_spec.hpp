// devpass/graph/tensor_spec.hpp — the description of one value: dtype, shape, and what passes add
// (the device it lives on, and from memory planning its buffer id and byte offset).
// The byte size is derived, never stored; checked_byte_size reports overflow instead of wrapping.
#pragma once

#include <algorithm>
#include <boost/container/small_vector.hpp>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <vector>

#include "devpass/graph/device.hpp"
#include "devpass/graph/dtype.hpp"

namespace devpass {

// A tensor's dimensions. Up to four are stored inline, so the usual ranks cost no allocation of
// their own: a value is made for every copy a pass inserts, and a heap block per shape was a
// tenth of propagation's time (docs/performance.md, "A node without heap blocks"). A vector of
// dimensions converts implicitly, as the member was a std::vector before.
class tensor_shape : public boost::container::small_vector<std::int64_t, 4> {
  using base = boost::container::small_vector<std::int64_t, 4>;

 public:
  using base::base;
  tensor_shape() = default;
  tensor_shape(std::initializer_list<std::int64_t> dims) : base(dims) {}
  tensor_shape(const std::vector<std::int64_t>& dims) : base(dims.begin(), dims.end()) {}  // NOLINT: implicit
  [[nodiscard]] std::vector<std::int64_t> to_vector() const { return {begin(), end()}; }
  // Boost's iterators are not C++20 contiguous iterators, so std::span needs telling.
  operator std::span<const std::int64_t>() const noexcept { return {data(), size()}; }  // NOLINT: implicit
  friend bool operator==(const tensor_shape& a, const tensor_shape& b) noexcept { return std::ranges::equal(a, b); }
  friend bool operator==(const tensor_shape& a, const std::vector<std::int64_t>& b) noexcept {
    return std::ranges::equal(a, b);
  }
};

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

struct tensor_spec {
  devpass::dtype type = devpass::dtype::float32;
  tensor_shape shape;
  std::optional<devpass::device> device;  // where the value lives, once a pass has decided
  std::optional<std::int32_t> mem_id;     // planned buffer (memory planning)
  std::optional<std::int64_t> offset;     // planned byte offset inside mem_id

  // Valid for every spec the reader accepted (it rejects overflowing shapes).
  [[nodiscard]] std::uint64_t byte_size() const noexcept { return checked_byte_size(type, shape).value_or(0); }
  [[nodiscard]] std::uint64_t element_count() const noexcept { return byte_size() / element_size(type); }
  [[nodiscard]] bool same_layout(const tensor_spec& other) const noexcept {
    return type == other.type && shape == other.shape;
  }
  friend bool operator==(const tensor_spec&, const tensor_spec&) = default;
};

}  // namespace devpass
