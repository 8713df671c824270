// devpass/graph/compact_optional.hpp — an optional value kept in the value's own bytes: `None`, a
// value the field never holds, means "absent". std::optional<T> adds a flag, padded to T's
// alignment: 8 bytes on a 4-byte device, 8 on a std::int32_t, 16 on a std::int64_t. A tensor_spec
// holds three (its device, buffer and offset) and devpass::graph a spec in every node: with
// these it is 64 bytes, not 80 (docs/performance.md#what-each-design-choice-saves).
//
// The interface is std::optional's that devpass uses: has_value, bool, *, ->, value, value_or,
// reset, assignment from a T, std::nullopt or a std::optional<T>, comparison with the same three
// and conversion to std::optional<T>. Storing `None` itself is a precondition violation
// (asserted): the fields that use it say why it cannot occur (tensor_spec.hpp).
#pragma once

#include <cassert>
#include <optional>
#include <utility>

namespace devpass {

template <class T, T None>
class compact_optional {
 public:
  using value_type = T;

  constexpr compact_optional() noexcept = default;
  constexpr compact_optional(std::nullopt_t) noexcept {}                 // NOLINT: implicit, as std::optional's
  constexpr compact_optional(const T& value) noexcept : value_(value) {  // NOLINT: implicit, as std::optional's
    assert(!(value == None) && "compact_optional: the value that means absent was stored");
  }
  constexpr compact_optional(const std::optional<T>& value) noexcept  // NOLINT: implicit
      : compact_optional(value ? compact_optional(*value) : compact_optional()) {}

  constexpr compact_optional& operator=(std::nullopt_t) noexcept {
    reset();
    return *this;
  }

  [[nodiscard]] constexpr bool has_value() const noexcept { return !(value_ == None); }
  constexpr explicit operator bool() const noexcept { return has_value(); }

  constexpr const T& operator*() const noexcept {
    assert(has_value());
    return value_;
  }
  constexpr const T* operator->() const noexcept {
    assert(has_value());
    return &value_;
  }
  [[nodiscard]] constexpr const T& value() const {
    if (!has_value()) throw std::bad_optional_access();
    return value_;
  }
  template <class U>
  [[nodiscard]] constexpr T value_or(U&& otherwise) const {
    return has_value() ? value_ : static_cast<T>(std::forward<U>(otherwise));
  }
  constexpr void reset() noexcept { value_ = None; }

  constexpr operator std::optional<T>() const {  // NOLINT: implicit, where a std::optional is wanted
    return has_value() ? std::optional<T>(value_) : std::nullopt;
  }

  friend constexpr bool operator==(const compact_optional& a, const compact_optional& b) noexcept {
    return a.value_ == b.value_;
  }
  friend constexpr bool operator==(const compact_optional& a, std::nullopt_t) noexcept { return !a.has_value(); }
  friend constexpr bool operator==(const compact_optional& a, const T& b) noexcept {
    return a.has_value() && a.value_ == b;
  }
  friend constexpr bool operator==(const compact_optional& a, const std::optional<T>& b) noexcept {
    return b ? a == *b : !a.has_value();
  }

 private:
  T value_ = None;
};

}  // namespace devpass
