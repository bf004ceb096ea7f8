// The additions of ExactSum on its digits (adding a double, merging two accumulators,
// carrying), callable on the host and in device kernels alike (TRIBUTARY_FUNCTION), with
// ExactSum's own additions defined on them, so that a user's kernel can add into an
// ExactSum (`s += x`) on any backend; and Tributary's access to the digits, which the exact
// wire form (detail/exact/exact_window.hpp) reads too. Included at the end of
// tributary/exact_sum.hpp, where ExactSum is complete (include that header, not this one);
// free of Kokkos headers beyond Kokkos_Macros.hpp and of MPI.
#pragma once

#if !defined(TRIBUTARY_PUBLIC_INCLUDE) && !defined(TRIBUTARY_INTERNAL_INCLUDE)
#error \
    "<tributary/detail/exact/exact_digits.hpp> is internal to Tributary: include <tributary/exact_sum.hpp> instead"
#endif

#include <cstdint>
#include <cstring>

#include "tributary/config.hpp"

namespace tributary::detail {

/// Tributary's access to an ExactSum's digits, for the additions below and the wire form.
struct ExactAccess {
  TRIBUTARY_FUNCTION static const std::int64_t* Digits(const ExactSum& s) noexcept {
    return s.digit_;
  }
  TRIBUTARY_FUNCTION static std::int64_t* Digits(ExactSum& s) noexcept { return s.digit_; }
  TRIBUTARY_FUNCTION static std::int64_t& Pending(ExactSum& s) noexcept { return s.pending_; }
  TRIBUTARY_FUNCTION static std::int64_t Pending(const ExactSum& s) noexcept { return s.pending_; }
  /// The counts of NaNs, +infinities and -infinities added.
  TRIBUTARY_FUNCTION static std::int64_t* Specials(ExactSum& s) noexcept { return s.special_; }
  TRIBUTARY_FUNCTION static const std::int64_t* Specials(const ExactSum& s) noexcept {
    return s.special_;
  }
  static unsigned Flags(const ExactSum& s) noexcept {
    return (s.special_[2] ? 1u : 0u) | (s.special_[0] ? 2u : 0u) | (s.special_[1] ? 4u : 0u);
  }
  static void SetFlags(ExactSum& s, unsigned f) noexcept {
    s.special_[2] = f & 1u;
    s.special_[0] = (f >> 1) & 1u;
    s.special_[1] = (f >> 2) & 1u;
    s.pending_ = 1;
  }
};

/// A double as the exact sums see it: x = ±mant · 2^(pos - 1074) with an integer mantissa
/// (53 bits for normal values), or a special value given as a flag (1 NaN, 2 +inf, 4 -inf).
struct DoubleParts {
  std::uint64_t mant = 0;  // zero for ±0 and for specials
  int pos = 0;
  bool negative = false;
  unsigned special = 0;
};

TRIBUTARY_FUNCTION DoubleParts Decompose(double x) noexcept {
  std::uint64_t b;
  std::memcpy(&b, &x, sizeof b);
  DoubleParts d;
  const int field = static_cast<int>((b >> 52) & 0x7ff);
  const std::uint64_t frac = b & ((std::uint64_t(1) << 52) - 1);
  d.negative = (b >> 63) != 0;
  if (field == 0x7ff) {
    d.special = frac ? 1u : d.negative ? 4u : 2u;
    return d;
  }
  d.mant = field ? frac | (std::uint64_t(1) << 52) : frac;
  d.pos = field ? field - 1 : 0;
  return d;
}

/// 128 bits: a double's mantissa shifted within a 32-bit digit, and short windows below.
__extension__ typedef unsigned __int128 WindowWord;

// The additions of ExactSum, callable on the host and in device kernels alike.
constexpr std::int64_t kExactDigitMask = 0xffffffff;
// Digits change by less than 2^32 per addition, so 2^30 additions fit a 64-bit word.
constexpr std::int64_t kExactNormalizeAfter = std::int64_t(1) << 30;

/// Carries every digit into [0, 2^32) but the top one (which holds the sign).
TRIBUTARY_FUNCTION void ExactNormalize(ExactSum& s) noexcept {
  std::int64_t* digit = ExactAccess::Digits(s);
  for (int i = 0; i + 1 < ExactSum::kDigits; ++i) {
    const std::int64_t carry = digit[i] >> 32;  // arithmetic: floor division by 2^32
    digit[i] &= kExactDigitMask;
    digit[i + 1] += carry;
  }
  ExactAccess::Pending(s) = 0;
}

/// s += x, exactly. An infinity or NaN is counted.
TRIBUTARY_FUNCTION void ExactAdd(ExactSum& s, double x) noexcept {
  const DoubleParts d = Decompose(x);
  std::int64_t* specials = ExactAccess::Specials(s);  // +inf, -inf, NaN
  if (d.special) {
    ++specials[(d.special & 1u) ? 2 : (d.special & 4u) ? 1 : 0];
    return;
  }
  if (d.mant == 0) return;  // ±0
  const int k = d.pos / 32;
  const WindowWord v = static_cast<WindowWord>(d.mant) << (d.pos % 32);
  const auto d0 = static_cast<std::int64_t>(static_cast<std::uint64_t>(v) & kExactDigitMask);
  const auto d1 = static_cast<std::int64_t>(static_cast<std::uint64_t>(v >> 32) & kExactDigitMask);
  const auto d2 = static_cast<std::int64_t>(static_cast<std::uint64_t>(v >> 64));
  const std::int64_t sign = d.negative ? -1 : 1;
  std::int64_t* digit = ExactAccess::Digits(s);
  digit[k] += sign * d0;
  digit[k + 1] += sign * d1;
  digit[k + 2] += sign * d2;
  if (++ExactAccess::Pending(s) >= kExactNormalizeAfter) ExactNormalize(s);
}

/// s += other, exactly. A merge adds less than (other's additions + 1) * 2^32 to a digit:
/// counted in the pending additions.
TRIBUTARY_FUNCTION void ExactMerge(ExactSum& s, const ExactSum& other) noexcept {
  const ExactSum* from = &other;
  ExactSum normalized;
  if (ExactAccess::Pending(other) >= kExactNormalizeAfter / 2) {
    normalized = other;
    ExactNormalize(normalized);
    from = &normalized;
  }
  if (ExactAccess::Pending(s) + ExactAccess::Pending(*from) + 1 >= kExactNormalizeAfter)
    ExactNormalize(s);
  std::int64_t* digit = ExactAccess::Digits(s);
  const std::int64_t* add = ExactAccess::Digits(*from);
  for (int i = 0; i < ExactSum::kDigits; ++i) digit[i] += add[i];
  for (int i = 0; i < 3; ++i) ExactAccess::Specials(s)[i] += ExactAccess::Specials(*from)[i];
  ExactAccess::Pending(s) += ExactAccess::Pending(*from) + 1;
}

}  // namespace tributary::detail

namespace tributary {

TRIBUTARY_FUNCTION void ExactSum::Add(double x) noexcept { detail::ExactAdd(*this, x); }
TRIBUTARY_FUNCTION ExactSum& ExactSum::operator+=(const ExactSum& other) noexcept {
  detail::ExactMerge(*this, other);
  return *this;
}
TRIBUTARY_FUNCTION void ExactSum::Normalize() noexcept { detail::ExactNormalize(*this); }

}  // namespace tributary
