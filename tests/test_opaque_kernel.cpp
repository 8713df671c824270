#include <doctest/doctest.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "devpass/runtime/deterministic.hpp"
#include "devpass/runtime/opaque_kernel.hpp"

using namespace devpass;
using namespace devpass::runtime;

namespace {
std::vector<std::byte> filled(const tensor_spec& spec, std::uint64_t seed, std::string_view name) {
  std::vector<std::byte> bytes(spec.byte_size());
  fill_deterministic(bytes.data(), spec, seed, name);
  return bytes;
}
template <class T>
std::vector<T> as(const std::vector<std::byte>& bytes) {
  std::vector<T> v(bytes.size() / sizeof(T));
  std::memcpy(v.data(), bytes.data(), v.size() * sizeof(T));
  return v;
}
}  // namespace

TEST_CASE("opaque kernel: fill_deterministic depends on seed, name and spec only") {
  const tensor_spec f32{dtype::float32, {4, 8}};
  CHECK(filled(f32, 1, "w") == filled(f32, 1, "w"));
  CHECK(filled(f32, 1, "w") != filled(f32, 2, "w"));
  CHECK(filled(f32, 1, "w") != filled(f32, 1, "v"));
  tensor_spec placed = f32;
  placed.device = cuda_device(1);
  placed.mem_id = 3;
  placed.offset = 256;
  CHECK(filled(placed, 1, "w") == filled(f32, 1, "w"));  // where the tensor lives does not matter
}

TEST_CASE("opaque kernel: floating fills are finite, at least -1 and below 1, and exact in their dtype") {
  const auto f32 = as<float>(filled({dtype::float32, {1000}}, 5, "x"));
  const auto f64 = as<double>(filled({dtype::float64, {1000}}, 5, "x"));
  bool all_in_range = true;
  for (const float v : f32) all_in_range = all_in_range && std::isfinite(v) && v >= -1.0f && v < 1.0f;
  for (const double v : f64) all_in_range = all_in_range && std::isfinite(v) && v >= -1.0 && v < 1.0;
  CHECK(all_in_range);
  CHECK(f32[0] != f32[1]);

  // binary16 bits of m / 1024
  CHECK(runtime::detail::half_from_1024ths(0) == 0x0000);
  CHECK(runtime::detail::half_from_1024ths(512) == 0x3800);    // 0.5
  CHECK(runtime::detail::half_from_1024ths(-1024) == 0xBC00);  // -1.0
  CHECK(runtime::detail::half_from_1024ths(1) == 0x1400);      // 2^-10
  CHECK(runtime::detail::half_from_1024ths(1023) == 0x3BFE);   // 1023/1024

  bool halves_finite = true;
  for (const std::uint16_t h : as<std::uint16_t>(filled({dtype::float16, {1000}}, 5, "x")))
    halves_finite = halves_finite && (h & 0x7C00) != 0x7C00 && (h & 0x7FFF) <= 0x3C00;
  CHECK(halves_finite);
  bool bf16_in_range = true;
  for (const std::uint16_t h : as<std::uint16_t>(filled({dtype::bfloat16, {1000}}, 5, "x"))) {
    float v;
    const std::uint32_t bits = std::uint32_t{h} << 16;
    std::memcpy(&v, &bits, 4);
    bf16_in_range = bf16_in_range && v >= -1.0f && v < 1.0f;
  }
  CHECK(bf16_in_range);
}

TEST_CASE("opaque kernel: integer fills are small and bools are 0 or 1") {
  bool ok = true;
  for (const std::int64_t v : as<std::int64_t>(filled({dtype::int64, {500}}, 9, "i"))) ok = ok && v >= 0 && v < 16;
  for (const std::int32_t v : as<std::int32_t>(filled({dtype::int32, {500}}, 9, "i"))) ok = ok && v >= 0 && v < 16;
  std::size_t ones = 0;
  for (const std::byte b : filled({dtype::bool_, {500}}, 9, "b")) {
    ok = ok && (b == std::byte{0} || b == std::byte{1});
    ones += b == std::byte{1};
  }
  CHECK(ok);
  CHECK(ones > 0);
  CHECK(ones < 500);
}

TEST_CASE("opaque kernel: outputs depend on kernel, output index, output spec and input bytes, not on pointers") {
  const tensor_spec in_spec{dtype::float32, {16}};
  const tensor_spec out_spec{dtype::float32, {8}};
  std::vector<std::byte> a = filled(in_spec, 1, "a"), a_copy = a;
  std::vector<std::byte> o1(out_spec.byte_size()), o2(out_spec.byte_size()), o3(out_spec.byte_size());

  const auto run = [&](std::string_view kernel, std::vector<std::byte>& input, std::vector<std::byte>& out0,
                       std::vector<std::byte>& out1) {
    const tensor_view in[] = {{input.data(), &in_spec}};
    const tensor_view out[] = {{out0.data(), &out_spec}, {out1.data(), &out_spec}};
    run_opaque_kernel(kernel, in, out);
  };
  std::vector<std::byte> p0(out_spec.byte_size()), p1(out_spec.byte_size());
  run("k", a, o1, o2);
  run("k", a_copy, p0, p1);  // the same bytes elsewhere
  CHECK(o1 == p0);
  CHECK(o2 == p1);
  CHECK(o1 != o2);  // the output index enters

  run("other", a, p0, p1);
  CHECK(p0 != o1);

  a_copy[13] ^= std::byte{1};
  run("k", a_copy, p0, o3);
  CHECK(p0 != o1);

  const tensor_spec wider{dtype::float32, {2, 4}};
  std::vector<std::byte> w(wider.byte_size());
  const tensor_view in[] = {{a.data(), &in_spec}};
  const tensor_view out[] = {{w.data(), &wider}};
  run_opaque_kernel("k", in, out);
  CHECK(w != o1);  // same bytes count, other shape
}

TEST_CASE("opaque kernel: checksum is the hash of the bytes") {
  const std::vector<std::byte> a = filled({dtype::uint8, {33}}, 3, "a");
  std::vector<std::byte> b = a;
  CHECK(checksum(a) == checksum(b));
  b.back() ^= std::byte{0x80};
  CHECK(checksum(a) != checksum(b));
  CHECK(checksum(std::span<const std::byte>{}) != checksum(std::vector<std::byte>(1)));
}
