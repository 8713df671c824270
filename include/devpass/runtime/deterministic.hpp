// devpass/runtime/deterministic.hpp — reproducible tensor contents: a 64-bit hash over bytes and
// names, and fills that turn a hash into element values.
//
// Laws: the same (seed, name, spec) always gives the same bytes, on every machine and for every
// device the tensor will live on (fills run on the host and never look at a pointer); floating
// values are finite and lie in [-1, 1) and are exactly representable in their dtype, integers lie
// in [0, 16), bools are 0 or 1. Inputs and constants are filled this way, and the opaque kernel
// (opaque_kernel.hpp) writes its outputs with the same fill, so any graph executes reproducibly.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>

#include "devpass/graph/tensor_spec.hpp"

namespace devpass::runtime {

// splitmix64's finaliser: a bijective mix with good avalanche. Always inlined: the fills below
// call it once per element of every tensor an emulated run makes, at -Og (the test build) too.
[[nodiscard, gnu::always_inline]] constexpr std::uint64_t mix64(std::uint64_t x) noexcept {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// A streaming hash: 8 bytes at a time through mix64, the tail padded with its length. Not
// cryptographic; only stable and fast (one multiply chain per word).
class hasher {
 public:
  explicit constexpr hasher(std::uint64_t seed = 0) noexcept : state_(mix64(seed ^ 0x6A09E667F3BCC908ull)) {}

  constexpr hasher& add(std::uint64_t word) noexcept {
    state_ = mix64(state_ ^ word) * 0x9FB21C651E98DF25ull + 0x2545F4914F6CDD1Dull;
    return *this;
  }
  hasher& add(std::span<const std::byte> bytes) noexcept {
    const std::size_t words = bytes.size() / 8;
    const std::byte* p = bytes.data();
    for (std::size_t i = 0; i < words; ++i, p += 8) {
      std::uint64_t w;
      std::memcpy(&w, p, 8);
      add(w);
    }
    std::uint64_t tail = 0;
    if (const std::size_t rest = bytes.size() % 8; rest != 0) std::memcpy(&tail, p, rest);  // p may be null when empty
    return add(tail).add(bytes.size());
  }
  constexpr hasher& add(std::string_view text) noexcept {
    for (const char c : text) add(static_cast<std::uint64_t>(static_cast<unsigned char>(c)));
    return add(text.size());
  }
  hasher& add(const tensor_spec& spec) noexcept {
    add(static_cast<std::uint64_t>(spec.type)).add(spec.shape.size());
    for (const std::int64_t d : spec.shape) add(static_cast<std::uint64_t>(d));
    return *this;
  }
  [[nodiscard]] constexpr std::uint64_t value() const noexcept { return mix64(state_); }

 private:
  std::uint64_t state_;
};

// The checksum devpass-run prints for an output: the hash of its bytes.
[[nodiscard]] inline std::uint64_t checksum(std::span<const std::byte> bytes) noexcept {
  return hasher{}.add(bytes).value();
}

namespace detail {
// Bits of the binary16 value m / 1024 for m in [-1024, 1024): always a normal number or zero,
// so the conversion is exact.
[[nodiscard]] constexpr std::uint16_t half_from_1024ths(std::int32_t m) noexcept {
  if (m == 0) return 0;
  const std::uint16_t sign = m < 0 ? std::uint16_t{0x8000} : std::uint16_t{0};
  const auto a = static_cast<std::uint32_t>(m < 0 ? -m : m);  // 1..1024
  const int e = static_cast<int>(std::bit_width(a)) - 1;      // 2^e <= a < 2^(e+1)
  const auto exponent = static_cast<std::uint16_t>(e + 5);    // (e - 10) + bias 15
  const auto mantissa = static_cast<std::uint16_t>((a << (10 - e)) & 0x3FFu);
  return static_cast<std::uint16_t>(sign | (exponent << 10) | mantissa);
}

// Element values from a mixed word r, one function per dtype (see the laws above).
[[nodiscard, gnu::always_inline]] inline float float32_element(std::uint64_t r) noexcept {
  return static_cast<float>(static_cast<std::int32_t>(r >> 40) - (1 << 23)) * 0x1p-23f;
}
[[nodiscard, gnu::always_inline]] inline double float64_element(std::uint64_t r) noexcept {
  return static_cast<double>(static_cast<std::int64_t>(r >> 11) - (std::int64_t{1} << 52)) * 0x1p-52;
}
[[nodiscard, gnu::always_inline]] inline std::uint16_t float16_element(std::uint64_t r) noexcept {
  return half_from_1024ths(static_cast<std::int32_t>(r >> 53) - 1024);
}
// k/128 has at most 8 significant bits: its float32 pattern's top half is exact bfloat16.
[[nodiscard, gnu::always_inline]] inline std::uint16_t bfloat16_element(std::uint64_t r) noexcept {
  const float v = static_cast<float>(static_cast<std::int32_t>(r >> 56) - 128) * 0x1p-7f;
  return static_cast<std::uint16_t>(std::bit_cast<std::uint32_t>(v) >> 16);
}
template <class Int>
[[nodiscard, gnu::always_inline]] inline Int small_int_element(std::uint64_t r) noexcept {
  return static_cast<Int>(r >> 60);
}
[[nodiscard, gnu::always_inline]] inline std::uint8_t bool_element(std::uint64_t r) noexcept {
  return static_cast<std::uint8_t>(r >> 63);
}

// Element i is element(mix64(key + i * constant)): one loop per dtype, so that the dtype is not
// decided again for every element.
template <auto element>
void fill_elements(std::byte* out, std::uint64_t count, std::uint64_t key) noexcept {
  for (std::uint64_t i = 0; i < count; ++i) {
    const auto v = element(mix64(key + i * 0xD1B54A32D192ED03ull));
    std::memcpy(out + i * sizeof(v), &v, sizeof(v));
  }
}
}  // namespace detail

// Writes spec.byte_size() bytes at `data`: element i is a function of (key, i) alone.
inline void fill_from_key(void* data, const tensor_spec& spec, std::uint64_t key) noexcept {
  const std::uint64_t count = spec.element_count();
  auto* out = static_cast<std::byte*>(data);
  switch (spec.type) {
    case dtype::float32: return detail::fill_elements<detail::float32_element>(out, count, key);
    case dtype::float64: return detail::fill_elements<detail::float64_element>(out, count, key);
    case dtype::float16: return detail::fill_elements<detail::float16_element>(out, count, key);
    case dtype::bfloat16: return detail::fill_elements<detail::bfloat16_element>(out, count, key);
    case dtype::int64: return detail::fill_elements<detail::small_int_element<std::int64_t>>(out, count, key);
    case dtype::int32: return detail::fill_elements<detail::small_int_element<std::int32_t>>(out, count, key);
    case dtype::int16: return detail::fill_elements<detail::small_int_element<std::int16_t>>(out, count, key);
    case dtype::int8:
    case dtype::uint8: return detail::fill_elements<detail::small_int_element<std::uint8_t>>(out, count, key);
    case dtype::bool_: return detail::fill_elements<detail::bool_element>(out, count, key);
  }
}

// The values of an input or constant named `name` under `seed`: independent of the device the
// tensor lives on, so every placement of a graph sees the same data.
inline void fill_deterministic(void* data, const tensor_spec& spec, std::uint64_t seed,
                               std::string_view name) noexcept {
  fill_from_key(data, spec, hasher{seed}.add(name).add(spec).value());
}

}  // namespace devpass::runtime
