// devpass/runtime/kernels/portable_math.hpp — exp, erf, sin/cos, the activations built on them and
// the block-order sum, computed bit for bit the same by the host kernels and the CUDA kernels.
//
// Why: a placed program must compute exactly what the host program computes (devpass-run and the
// demo compare them by checksum and by token). CUDA's expf/erff/sin/cos and glibc's differ in the
// last bit, and a CUDA block sums in another order than a loop. So both sides use these functions:
// each is a fixed sequence of IEEE-754 additions, multiplications and divisions in double, which
// both sides round correctly, then one rounding to float.
//
// Bit-identity assumes no contraction of a*b+c into a fused multiply-add: devpass::cuda compiles
// its kernels with --fmad=false; host compilers on x86-64 cannot contract without FMA in -march
// (where it is enabled, compile with -ffp-contract=off to keep host and GPU results equal).
//
// Accuracy (pinned by tests/test_portable_math.cpp against the C library): exp_f32 and erf_f32
// within 1 ulp, exp_f64 within 2 ulp, sin/cos within 1e-15 absolute for |x| < 2^20.
//
// Included by .cu files: no Boost, no doctest, no other devpass header.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define DEVPASS_HOST_DEVICE __host__ __device__
#else
#define DEVPASS_HOST_DEVICE
#endif

namespace devpass::runtime::kernels::portable {

// Lanes of the CUDA row reductions: one block of this many threads per row (kernels_common.cuh).
inline constexpr int block_lanes = 256;
// Lanes of the dot products of matmul and the MoE experts: each output's sum is split into this
// many partial sums, so a one-row product (decode) still has many threads loading at once.
inline constexpr int dot_lanes = 8;

DEVPASS_HOST_DEVICE inline double round_to_integer(double x) {
#if defined(__CUDA_ARCH__)
  return ::rint(x);
#else
  return std::rint(x);
#endif
}

// 2^n for n in [-1022, 1023], exactly.
DEVPASS_HOST_DEVICE inline double power_of_two(int n) {
  const auto bits = static_cast<std::uint64_t>(n + 1023) << 52;
#if defined(__CUDA_ARCH__)
  return __longlong_as_double(static_cast<long long>(bits));
#else
  double value;  // memcpy, not std::bit_cast: nvcc's host front end does not see the latter
  std::memcpy(&value, &bits, sizeof value);
  return value;
#endif
}

// e^x in double. Cody-Waite reduction x = n ln2 + r (ln2_hi has trailing zero bits, so n * ln2_hi
// is exact), |r| <= ln2 / 2, then Taylor to degree 13 (truncation below 1e-18).
DEVPASS_HOST_DEVICE inline double exp_f64(double x) {
  if (x != x) return x;
  if (x > 709.78) return HUGE_VAL;
  if (x < -745.2) return 0.0;
  const double n = round_to_integer(x * 1.44269504088896338700e+00);
  const double r = (x - n * 6.93147180369123816490e-01) - n * 1.90821492927058770002e-10;
  double p = 1.0 / 6227020800.0;  // 1/13!
  p = p * r + 1.0 / 479001600.0;
  p = p * r + 1.0 / 39916800.0;
  p = p * r + 1.0 / 3628800.0;
  p = p * r + 1.0 / 362880.0;
  p = p * r + 1.0 / 40320.0;
  p = p * r + 1.0 / 5040.0;
  p = p * r + 1.0 / 720.0;
  p = p * r + 1.0 / 120.0;
  p = p * r + 1.0 / 24.0;
  p = p * r + 1.0 / 6.0;
  p = p * r + 0.5;
  p = p * r + 1.0;
  p = p * r + 1.0;
  const int k = static_cast<int>(n);
  if (k > 1023) return p * power_of_two(1023) * power_of_two(k - 1023);
  if (k < -1022) return p * power_of_two(k + 600) * power_of_two(-600);
  return p * power_of_two(k);
}

DEVPASS_HOST_DEVICE inline float exp_f32(float x) { return static_cast<float>(exp_f64(static_cast<double>(x))); }

// erf(x) = 2/sqrt(pi) e^(-x^2) sum_n 2^n x^(2n+1) / (1*3*...*(2n+1)): every term positive, so no
// cancellation. |x| >= 4 rounds to +-1 in float (erf(4) = 1 - 1.5e-8).
DEVPASS_HOST_DEVICE inline float erf_f32(float x) {
  const double a = x < 0 ? -static_cast<double>(x) : static_cast<double>(x);
  if (x != x) return x;
  if (a >= 4.0) return x < 0 ? -1.0f : 1.0f;
  const double two_a2 = 2.0 * a * a;
  double term = a, sum = a;
  for (int n = 1; n < 200 && term > sum * 1e-17; ++n) {
    term = term * two_a2 / static_cast<double>(2 * n + 1);
    sum = sum + term;
  }
  const double value = 1.12837916709551257390e+00 * exp_f64(-(a * a)) * sum;
  return static_cast<float>(x < 0 ? -value : value);
}

// sin(x) and cos(x) in double: x = k pi/2 + r with pi/2 in three 33-bit parts (each k * part is
// exact for |k| < 2^20), |r| <= pi/4, then Taylor to degree 19 (sin) and 20 (cos).
struct sin_cos {
  double sin, cos;
};
DEVPASS_HOST_DEVICE inline sin_cos sin_cos_f64(double x) {
  const double k = round_to_integer(x * 6.36619772367581382433e-01);
  const double r =
      ((x - k * 1.57079632673412561417e+00) - k * 6.07710050630396597660e-11) - k * 2.02226624871116645580e-21;
  const double r2 = r * r;
  double s = -1.0 / 121645100408832000.0;  // -1/19!
  s = s * r2 + 1.0 / 355687428096000.0;    // 1/17!
  s = s * r2 - 1.0 / 1307674368000.0;      // 1/15!
  s = s * r2 + 1.0 / 6227020800.0;
  s = s * r2 - 1.0 / 39916800.0;
  s = s * r2 + 1.0 / 362880.0;
  s = s * r2 - 1.0 / 5040.0;
  s = s * r2 + 1.0 / 120.0;
  s = s * r2 - 1.0 / 6.0;
  s = s * r2 + 1.0;
  s = s * r;
  double c = 1.0 / 2432902008176640000.0;  // 1/20!
  c = c * r2 - 1.0 / 6402373705728000.0;   // 1/18!
  c = c * r2 + 1.0 / 20922789888000.0;     // 1/16!
  c = c * r2 - 1.0 / 87178291200.0;
  c = c * r2 + 1.0 / 479001600.0;
  c = c * r2 - 1.0 / 3628800.0;
  c = c * r2 + 1.0 / 40320.0;
  c = c * r2 - 1.0 / 720.0;
  c = c * r2 + 1.0 / 24.0;
  c = c * r2 - 0.5;
  c = c * r2 + 1.0;
  const auto quadrant = static_cast<long long>(k) & 3;  // two's complement: also right for k < 0
  switch (quadrant) {
    case 0: return {s, c};
    case 1: return {c, -s};
    case 2: return {-s, -c};
    default: return {-c, s};
  }
}

// The activations of the elementwise and MoE kernels.
DEVPASS_HOST_DEVICE inline float silu_f32(float x) { return x / (1.0f + exp_f32(-x)); }
DEVPASS_HOST_DEVICE inline float gelu_f32(float x) { return 0.5f * x * (1.0f + erf_f32(x * 0.70710678118654752f)); }

// Rotary embedding's angle for position `position` and pair i of a head of `head_dim` values:
// position * theta^(-2i/head_dim), with log_theta = log(theta) computed once by the caller.
DEVPASS_HOST_DEVICE inline double rope_angle(std::int64_t position, std::size_t i, std::size_t head_dim,
                                             double log_theta) {
  return static_cast<double>(position) *
         exp_f64(-2.0 * static_cast<double>(i) / static_cast<double>(head_dim) * log_theta);
}

#if !defined(__CUDA_ARCH__)
// The float sum that Lanes cooperating CUDA threads compute over element(0..n): lane t adds
// elements t, t + Lanes, ... in order, starting from 0; then lanes combine pairwise,
// lane t += lane t + w for w = Lanes/2, ..., 1. Lanes is a power of two.
template <int Lanes, class Element>
[[nodiscard]] inline float lane_order_sum(std::size_t n, Element&& element) {
  static_assert(Lanes > 0 && (Lanes & (Lanes - 1)) == 0, "Lanes must be a power of two");
  float lanes[static_cast<std::size_t>(Lanes)] = {};
  for (std::size_t i = 0; i < n; ++i) lanes[i % static_cast<std::size_t>(Lanes)] += element(i);
  for (int width = Lanes / 2; width > 0; width /= 2)
    for (int t = 0; t < width; ++t) lanes[t] += lanes[t + width];
  return lanes[0];
}
// A row reduction's order: one block of block_lanes threads (kernels_common.cuh's block_reduce).
template <class Element>
[[nodiscard]] inline float block_order_sum(std::size_t n, Element&& element) {
  return lane_order_sum<block_lanes>(n, static_cast<Element&&>(element));
}

// Many dot products at once in dot_lanes order: out[j] = sum over p < k of x(p) * column(p)[j]
// for j < n, with term p in lane p % dot_lanes (the order of lane_order_sum<dot_lanes>), for
// every j in one sweep over p, so the host reads each column row once and contiguously.
// `lanes` is scratch of dot_lanes * n floats.
template <class X, class Column>
inline void lane_order_dots(std::size_t k, std::size_t n, X&& x, Column&& column, float* lanes, float* out) {
  for (std::size_t i = 0; i < dot_lanes * n; ++i) lanes[i] = 0.0f;
  for (std::size_t p = 0; p < k; ++p) {
    const float xp = x(p);
    const float* col = column(p);
    float* lane = lanes + (p % dot_lanes) * n;
    for (std::size_t j = 0; j < n; ++j) lane[j] += xp * col[j];
  }
  for (std::size_t width = dot_lanes / 2; width > 0; width /= 2)
    for (std::size_t t = 0; t < width; ++t)
      for (std::size_t j = 0; j < n; ++j) lanes[t * n + j] += lanes[(t + width) * n + j];
  for (std::size_t j = 0; j < n; ++j) out[j] = lanes[j];
}
#endif

}  // namespace devpass::runtime::kernels::portable
