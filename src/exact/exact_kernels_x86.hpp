// What the x86 kernels of exact sums share (src/exact_kernels*.cpp): the windows they take,
// the deposit modes, the extremes a measuring deposit keeps, the scalings and limits of a
// deposit, and the kernels each file defines (AVX2 in exact_kernels_avx2.cpp, AVX-512 in
// exact_kernels_avx512.cpp; exact_kernels.cpp picks one per call by what the CPU has).
// The AVX2 kernels of exact sums (exact_kernels.hpp). A value x of a window from digit
// `first` is the integer a = x · 2^(1074 − 32 first) (exact: a power-of-two scaling that
// neither overflows nor underflows for values that fit), split into three signed 32-bit
// digits by rounding to multiples of 2^64 and 2^32: each remainder is exact, so
// a = t2 2^64 + t1 2^32 + t0 with |t_i| <= 2^31, and the record is that sum modulo 2^96.
// Rounding a record back adds its digits as doubles with one rounding (see RoundShort).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>

#include "tributary/detail/exact/exact_window.hpp"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define TRIBUTARY_EXACT_AVX2 1
#else
#define TRIBUTARY_EXACT_AVX2 0
#endif

#if TRIBUTARY_EXACT_AVX2

#define TRIBUTARY_AVX2 __attribute__((target("avx2,fma")))
#define TRIBUTARY_AVX512 __attribute__((target("avx2,fma,avx512f,avx512dq,avx512vl")))

namespace tributary::detail::x86 {

// The windows the kernels take: three digits, and scalings that stay normal doubles.
inline bool KernelWindow(int first, int digits) { return digits == 3 && first >= 2 && first <= 60; }

// The 512-bit kernels start from this many values: the wide units take microseconds to
// start after a pause, which smaller messages do not earn back (CHANGELOG.md, 0.1.0).
constexpr std::size_t kWideFrom = 16384;

// What a deposit does besides writing: nothing, check the values against the window
// (WindowFit), or measure them (Extremes).
constexpr int kPlain = 0, kCheck = 1, kMeasure = 2;

// The smallest nonzero and the largest finite magnitude seen, and whether a NaN or an
// infinity was; the bit positions follow (a value's grow with its magnitude).
struct Extremes {
  double smallest = std::numeric_limits<double>::infinity();
  double largest = 0;
  bool special = false;
  void Add(double small, double large) {
    smallest = std::min(smallest, small);
    largest = std::max(largest, large);
  }
  void Widen(std::int64_t* lo, std::int64_t* hi, bool* any_special) const {
    if (special) *any_special = true;
    if (largest > 0) {
      bool unused = false;
      WidenRange(smallest, lo, hi, &unused);
      WidenRange(largest, lo, hi, &unused);
    }
  }
};

// 2^e from its bits (normal exponents; the kernels' windows keep them so), else ldexp.
inline double PowerOfTwo(int e) {
  if (e < -1022 || e > 1023) return std::ldexp(1.0, e);
  const std::uint64_t bits = static_cast<std::uint64_t>(e + 1023) << 52;
  double x;
  std::memcpy(&x, &bits, sizeof x);
  return x;
}

// Adding 1.5 · 2^52 rounds a double below 2^51 in magnitude to an integer, which is then
// the low bits of the sum's representation minus those of the constant.
constexpr double kMagic = 6755399441055744.0;
constexpr long long kMagicBits = 0x4338000000000000LL;
constexpr long long kMagnitudeBits = 0x7fffffffffffffffLL;

// The scalings and limits of a deposit into the window from digit `first`, computed once
// for whichever kernel runs: values times `scale` are the window's integers; a value that
// fits is below `top` in magnitude (with `fit`: below 2^(fit->hi + 1 - 1074)) and zero or
// at least `bottom`.
struct DepositBounds {
  DepositBounds(int first, const WindowFit* fit)
      : scale(PowerOfTwo(1074 - 32 * first)),
        top(!fit                    ? 0.0
            : fit->hi - 1073 > 1023 ? std::numeric_limits<double>::infinity()
                                    : PowerOfTwo(static_cast<int>(fit->hi) - 1073)),
        bottom(PowerOfTwo(32 * first - 1074)) {}
  double scale, top, bottom;
};

// The kernels: each handles whole vectors from the start of x (or of the records) and returns
// how many values it did; the caller does the rest one by one. Instantiated for the three
// modes (Deposit) and for Sum false and true (Round).
template <int Mode>
TRIBUTARY_AVX2 std::size_t Deposit3(const double* x, std::size_t n, const DepositBounds& bounds,
                                    std::uint32_t* records, WindowFit* fit, Extremes* seen);
template <bool Sum>
TRIBUTARY_AVX2 std::size_t Round3(const std::uint32_t* records, const std::uint32_t* more,
                                  std::size_t n, double unscale, double* out);
/// The extremes of x[0, n).
TRIBUTARY_AVX2 void Scan(const double* x, std::size_t n, Extremes* seen);
template <int Mode>
TRIBUTARY_AVX512 std::size_t Deposit3Wide(const double* x, std::size_t n,
                                          const DepositBounds& bounds, std::uint32_t* records,
                                          WindowFit* fit, Extremes* seen);
template <bool Sum>
TRIBUTARY_AVX512 std::size_t Round3Wide(const std::uint32_t* records, const std::uint32_t* more,
                                        std::size_t n, double unscale, double* out);
template <int Mode>
TRIBUTARY_AVX512 std::size_t Deposit3Narrow(const double* x, std::size_t n,
                                            const DepositBounds& bounds, std::uint32_t* records,
                                            WindowFit* fit, Extremes* seen);
template <bool Sum>
TRIBUTARY_AVX512 std::size_t Round3Narrow(const std::uint32_t* records, const std::uint32_t* more,
                                          std::size_t n, double unscale, double* out);

}  // namespace tributary::detail::x86

#endif  // TRIBUTARY_EXACT_AVX2
