// ExactSum: the exact sum of floating-point values, rounded once.
//
// The accumulator holds the sum as a fixed-point integer with its lowest bit at 2^-1074
// (the smallest subnormal double) and room for 2^31 maximal values, in 32-bit digits kept
// in 64-bit words, plus counts of infinities and NaNs. Adding a value or merging another
// accumulator is exact, so the sum does not depend on the order, the grouping, or how the
// values were split among lists and ranks: Determinism::rank_count_independent carries it
// from each list's partial through the regional combine and the network.
#pragma once

// Marks the internal headers below as included through a public one (detail/*: they refuse
// direct inclusion).
#ifndef TRIBUTARY_PUBLIC_INCLUDE
#define TRIBUTARY_PUBLIC_INCLUDE
#define TRIBUTARY_PUBLIC_INCLUDE_NOT_DEFINED_EXACT_SUM
#endif

#include <cstddef>
#include <cstdint>

#include "tributary/config.hpp"

namespace tributary {

namespace detail {
struct ExactAccess;
}

/// The exact sum of doubles, rounded once by Round(): the result depends neither on the
/// order of the additions nor on how the values were split among lists and ranks.
class ExactSum {
 public:
  /// 32-bit digits from 2^-1074 up to 2^1102: any 2^31 finite doubles sum without overflow.
  static constexpr int kDigits = 68;

  /// The empty sum (exactly zero).
  ExactSum() = default;
  /// The sum of `x` alone.
  TRIBUTARY_FUNCTION explicit ExactSum(double x) noexcept { Add(x); }

  /// Adds `x` exactly. An infinity or NaN is counted; it decides the result (see Round).
  /// The additions run in device kernels too (a Kokkos reducer's value: ExactSumReducer in
  /// tributary/kokkos.hpp); rounding and comparing run on the host.
  TRIBUTARY_FUNCTION void Add(double x) noexcept;
  /// Add(x).
  TRIBUTARY_FUNCTION ExactSum& operator+=(double x) noexcept {
    Add(x);
    return *this;
  }
  /// Adds another accumulator exactly.
  TRIBUTARY_FUNCTION ExactSum& operator+=(const ExactSum& other) noexcept;

  /// The sum rounded to the nearest double (ties to even): NaN when a NaN was added or both
  /// infinities were; ±inf when one infinity was, or when the exact sum is beyond the
  /// largest double. An exact zero is +0.
  double Round() const noexcept;
  /// The same, rounded to float. Correctly rounded when the values added were floats (the
  /// case of a float reduction); values below float's subnormal step may round twice.
  float RoundFloat() const noexcept;

  /// True when both hold the same exact value (and the same infinity and NaN counts).
  bool SameValue(const ExactSum& other) const noexcept;

  /// Carries every digit into [0, 2^32) but the top one (which holds the sign). Add and
  /// merge keep the words from overflowing on their own; this makes the form canonical.
  TRIBUTARY_FUNCTION void Normalize() noexcept;

 private:
  friend struct detail::ExactAccess;
  std::int64_t digit_[kDigits] = {};
  std::int64_t special_[3] = {};  // counts of +inf, -inf and NaN added
  std::int64_t pending_ = 0;      // additions since the last Normalize
};

/// K exact sums side by side: what a kernel that sums K values in one pass accumulates into
/// in Determinism::rank_count_independent (`acc[0] += x * y; acc[1] += x * x;`), on the host
/// and in device kernels, and the value of ExactSumReducer<Space, ExactSums<K>> in a user's
/// own parallel_reduce. Element c is the exact sum of element c of a value of K elements.
template <std::size_t K>
struct ExactSums {
  static_assert(K > 0, "ExactSums: at least one sum");
  /// The sums, element by element.
  ExactSum sums[K];

  /// Sum c.
  TRIBUTARY_FUNCTION ExactSum& operator[](std::size_t c) noexcept { return sums[c]; }
  /// Sum c.
  TRIBUTARY_FUNCTION const ExactSum& operator[](std::size_t c) const noexcept { return sums[c]; }
  /// The first sum (K of them, contiguous).
  TRIBUTARY_FUNCTION ExactSum* data() noexcept { return sums; }
  /// The first sum (K of them, contiguous).
  TRIBUTARY_FUNCTION const ExactSum* data() const noexcept { return sums; }
  /// K.
  TRIBUTARY_FUNCTION static constexpr std::size_t size() noexcept { return K; }
  /// Merges `other` exactly, element by element.
  TRIBUTARY_FUNCTION ExactSums& operator+=(const ExactSums& other) noexcept {
    for (std::size_t c = 0; c < K; ++c) sums[c] += other.sums[c];
    return *this;
  }
};

}  // namespace tributary

// The additions (callable in device kernels): defined with the digit arithmetic.
#include "tributary/detail/exact/exact_digits.hpp"

#ifdef TRIBUTARY_PUBLIC_INCLUDE_NOT_DEFINED_EXACT_SUM
#undef TRIBUTARY_PUBLIC_INCLUDE
#undef TRIBUTARY_PUBLIC_INCLUDE_NOT_DEFINED_EXACT_SUM
#endif
