// devpass/graph/tensor_shape.hpp — a tensor's dimensions, up to four stored inline.
//
// Every value of a graph has one, and a pass makes a value for every copy it inserts: a heap block
// per shape was a large share of propagation's allocations
// (docs/performance.md#what-each-design-choice-saves). 40 bytes (inline_vector.hpp). A contiguous range and a std::span; a std::vector of
// dimensions converts implicitly and compares equal, as the member was a std::vector before.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "devpass/graph/inline_vector.hpp"

namespace devpass {

class tensor_shape : public inline_vector<std::int64_t, 4> {
  using base = inline_vector<std::int64_t, 4>;

 public:
  using base::base;
  tensor_shape() noexcept = default;
  tensor_shape(const std::vector<std::int64_t>& dims) : base(dims.begin(), dims.end()) {}  // NOLINT: implicit
  tensor_shape(std::span<const std::int64_t> dims) : base(dims.begin(), dims.end()) {}     // NOLINT: implicit

  // A std::span<const std::int64_t> converts from it by span's range constructor (a conversion
  // operator beside it made -Wconversion warn at every such conversion in the caller's code).
  [[nodiscard]] std::vector<std::int64_t> to_vector() const { return {begin(), end()}; }
  friend bool operator==(const tensor_shape& a, const std::vector<std::int64_t>& b) noexcept {
    return std::ranges::equal(a, b);
  }
};

}  // namespace devpass
