// portable_math.hpp: the exp, erf, sin/cos and block-order sum that host and CUDA kernels share,
// checked for accuracy against the C library and for the exact summation order they promise.
#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "devpass/runtime/kernels/portable_math.hpp"

namespace portable = devpass::runtime::kernels::portable;

namespace {
// Distance in representable floats between a and b (same sign assumed by the callers' ranges).
std::int64_t ulps(float a, float b) {
  const auto ia = static_cast<std::int64_t>(std::bit_cast<std::int32_t>(a));
  const auto ib = static_cast<std::int64_t>(std::bit_cast<std::int32_t>(b));
  return ia > ib ? ia - ib : ib - ia;
}
std::int64_t ulps(double a, double b) {
  const auto ia = std::bit_cast<std::int64_t>(a);
  const auto ib = std::bit_cast<std::int64_t>(b);
  return ia > ib ? ia - ib : ib - ia;
}
}  // namespace

TEST_CASE("exp_f32 is within 1 ulp of the C library over the whole finite range, and exact at the edges") {
  std::int64_t worst = 0;
  for (float x = -103.9f; x < 88.7f; x += 0.000731f * (1 + std::abs(x))) {
    const float ours = portable::exp_f32(x), theirs = std::exp(x);
    if (theirs < std::numeric_limits<float>::min()) continue;  // denormal results: checked below
    worst = std::max(worst, ulps(ours, theirs));
  }
  MESSAGE("exp_f32: worst " << worst << " ulp");
  CHECK(worst <= 1);
  CHECK(portable::exp_f32(0.0f) == 1.0f);
  CHECK(portable::exp_f32(89.0f) == std::numeric_limits<float>::infinity());
  CHECK(portable::exp_f32(-1000.0f) == 0.0f);
  CHECK(portable::exp_f32(-std::numeric_limits<float>::infinity()) == 0.0f);
  CHECK(std::isnan(portable::exp_f32(std::numeric_limits<float>::quiet_NaN())));
  CHECK(std::abs(portable::exp_f32(-100.0f) - std::exp(-100.0f)) <= std::numeric_limits<float>::denorm_min());
}

TEST_CASE("exp_f64 is within 2 ulp of the C library") {
  std::int64_t worst = 0;
  for (double x = -700; x < 700; x += 0.01731) worst = std::max(worst, ulps(portable::exp_f64(x), std::exp(x)));
  MESSAGE("exp_f64: worst " << worst << " ulp");
  CHECK(worst <= 2);
}

TEST_CASE("erf_f32 is within 1 ulp of the C library, odd, and saturates at +-1") {
  std::int64_t worst = 0;
  for (float x = 1e-6f; x < 6.0f; x += 0.00037f) {
    worst = std::max(worst, ulps(portable::erf_f32(x), std::erf(x)));
    CHECK(portable::erf_f32(-x) == -portable::erf_f32(x));
  }
  MESSAGE("erf_f32: worst " << worst << " ulp");
  CHECK(worst <= 1);
  CHECK(portable::erf_f32(0.0f) == 0.0f);
  CHECK(portable::erf_f32(4.0f) == 1.0f);
  CHECK(portable::erf_f32(-50.0f) == -1.0f);
}

TEST_CASE("sin_cos_f64 is within 1e-15 of the C library for rotary-embedding angles") {
  double worst = 0;
  for (double x = -70000; x < 70000; x += 0.37) {
    const portable::sin_cos sc = portable::sin_cos_f64(x);
    worst = std::max({worst, std::abs(sc.sin - std::sin(x)), std::abs(sc.cos - std::cos(x))});
  }
  for (double x = -7; x < 7; x += 0.0001) {
    const portable::sin_cos sc = portable::sin_cos_f64(x);
    worst = std::max({worst, std::abs(sc.sin - std::sin(x)), std::abs(sc.cos - std::cos(x))});
  }
  MESSAGE("sin_cos_f64: worst absolute error " << worst);
  CHECK(worst <= 1e-15);
  CHECK(portable::sin_cos_f64(0.0).sin == 0.0);
  CHECK(portable::sin_cos_f64(0.0).cos == 1.0);
}

TEST_CASE("rope_angle is position * theta^(-2i/h)") {
  const double log_theta = std::log(10000.0);
  CHECK(portable::rope_angle(7, 0, 64, log_theta) == 7.0);
  const double expected = 123.0 * std::pow(10000.0, -2.0 * 5 / 64);
  CHECK(std::abs(portable::rope_angle(123, 5, 64, log_theta) - expected) <= 1e-13 * expected);
}

TEST_CASE("block_order_sum adds per lane in order, then pairs lanes as a CUDA block does") {
  // 1e8 + 1 - 1e8 loses the 1 in float when summed in one sequence, keeps it in lane order.
  std::vector<float> v(600, 0.0f);
  v[0] = 1e8f;
  v[1] = 1.0f;
  v[256] = -1e8f;  // lane 0 again: lane 0 = 1e8 - 1e8 = 0, lane 1 = 1
  float sequential = 0;
  for (const float x : v) sequential += x;
  CHECK(sequential == 0.0f);
  CHECK(portable::block_order_sum(v.size(), [&](std::size_t i) { return v[i]; }) == 1.0f);
  // The same order written out: lane sums, then the tree.
  std::vector<float> w(1000);
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>((i * 7919) % 1000) / 7.0f - 60.0f;
  float lanes[256] = {};
  for (std::size_t i = 0; i < w.size(); ++i) lanes[i % 256] += w[i];
  for (int width = 128; width > 0; width /= 2)
    for (int t = 0; t < width; ++t) lanes[t] += lanes[t + width];
  CHECK(portable::block_order_sum(w.size(), [&](std::size_t i) { return w[i]; }) == lanes[0]);
  CHECK(portable::block_order_sum(0, [&](std::size_t) { return 1.0f; }) == 0.0f);
}

TEST_CASE("lane_order_dots sums each column's products in dot_lanes lanes, as lane_order_sum does") {
  // 1e8 and -1e8 in one lane cancel before the small terms of the other lanes are added: a
  // sequential sum would lose them.
  constexpr std::size_t k = 21, n = 3;
  std::vector<float> x(k), b(k * n);
  for (std::size_t p = 0; p < k; ++p) {
    x[p] = p == 0 ? 1e8f : p == portable::dot_lanes ? -1e8f : 1.0f + static_cast<float>(p) / 8.0f;
    for (std::size_t j = 0; j < n; ++j) b[p * n + j] = static_cast<float>(j + 1);
  }
  std::vector<float> lanes(portable::dot_lanes * n), out(n);
  portable::lane_order_dots(
      k, n, [&](std::size_t p) { return x[p]; }, [&](std::size_t p) { return b.data() + p * n; }, lanes.data(),
      out.data());
  for (std::size_t j = 0; j < n; ++j) {
    CAPTURE(j);
    const float expected =
        portable::lane_order_sum<portable::dot_lanes>(k, [&](std::size_t p) { return x[p] * b[p * n + j]; });
    CHECK(out[j] == expected);
    float sequential = 0;
    for (std::size_t p = 0; p < k; ++p) sequential += x[p] * b[p * n + j];
    CHECK(out[j] != sequential);  // the order is observable, so it is pinned
    float exact_small = 0;        // the small terms alone, exactly representable here
    for (std::size_t p = 1; p < k; ++p)
      if (p != portable::dot_lanes) exact_small += x[p] * b[p * n + j];
    CHECK(out[j] == exact_small);
  }
}
