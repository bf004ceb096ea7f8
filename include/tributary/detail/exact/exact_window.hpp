// The wire form of exact sums on the host: the window of 32-bit digits the ranks agree on
// (ExactWindow), writing a rank's terms into window records (DepositWindow / StoreWindow,
// and the short forms of up to four digits), combining records (WindowCombineFor) and
// rounding a record once (RoundWindow). The vector kernels of the same operations are in
// exact_kernels.hpp; the encoding that uses both is exact_encoding.hpp.
#pragma once

#if !defined(TRIBUTARY_PUBLIC_INCLUDE) && !defined(TRIBUTARY_INTERNAL_INCLUDE)
#error \
    "<tributary/detail/exact/exact_window.hpp> is internal to Tributary: include <tributary/exact_sum.hpp> instead"
#endif

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "tributary/exact_sum.hpp"  // with its digits (detail/exact/exact_digits.hpp)

namespace tributary::detail {

/// The compact wire form of exact sums: the ranks first agree on the window of 32-bit
/// digits their data occupies (lowest and highest bit of any term, in units of 2^-1074,
/// plus room for the number of terms and a sign); each element then travels as `digits`
/// words, a two's complement number modulo 2^(32 digits) whose lowest digit is `first`,
/// and, where some rank has a NaN or an infinity, one word of flags (1 NaN, 2 +inf,
/// 4 -inf). Sums modulo 2^(32 digits) are exact because the true sum fits the window: the
/// combine is plain multiword addition.
struct ExactWindow {
  int first = 0;
  int digits = 1;
  bool flags = true;  ///< The records end with a word of flags.
  std::size_t Words() const noexcept { return static_cast<std::size_t>(digits) + (flags ? 1 : 0); }
  std::size_t RecordBytes() const noexcept { return 4 * Words(); }
};

/// What a window's records need to be exact for the values written into them: none of
/// them a NaN or an infinity, none below the window's lowest digit or with bits below it,
/// and every magnitude below 2^(hi + 1 - 1074) (hi: the highest bit the window was agreed
/// for, in units of 2^-1074). `fits` is false when one of them is not.
struct WindowFit {
  std::int64_t hi = 0;
  bool fits = true;
};

/// The window for terms whose magnitudes have their bits within [lo, hi] (hi < 0: none is
/// nonzero and finite): the sum of `terms` of them is below 2^(hi + 1 + ceil(lg terms)),
/// one bit more holds the sign. `special`: some term is a NaN or an infinity.
inline ExactWindow WindowFor(std::int64_t lo, std::int64_t hi, std::int64_t terms,
                             bool special) noexcept {
  ExactWindow w;
  w.flags = special;
  if (hi < 0) return w;  // no nonzero finite value anywhere
  int room = 0;
  while (room < 62 && (std::int64_t(1) << room) < terms) ++room;
  w.first = static_cast<int>(lo / 32);
  const int top =
      static_cast<int>(std::min<std::int64_t>(ExactSum::kDigits - 1, (hi + room + 1) / 32));
  w.digits = top - w.first + 1;
  return w;
}

/// Widens [lo, hi] by the bits of a finite nonzero double (units of 2^-1074); notes a NaN
/// or an infinity in `special`.
inline void WidenRange(double x, std::int64_t* lo, std::int64_t* hi, bool* special) noexcept {
  const DoubleParts d = Decompose(x);
  *special |= d.special != 0;
  if (d.mant == 0) return;
  *lo = std::min<std::int64_t>(*lo, d.pos);
  *hi = std::max<std::int64_t>(*hi, d.pos + 52);
}

/// Widens [lo, hi] by the digits an accumulator occupies; notes a NaN or an infinity.
inline void WidenRange(const ExactSum& s, std::int64_t* lo, std::int64_t* hi,
                       bool* special) noexcept {
  ExactSum c = s;
  c.Normalize();
  *special |= ExactAccess::Flags(c) != 0;
  std::int64_t* d = ExactAccess::Digits(c);
  if (d[ExactSum::kDigits - 1] < 0) {  // the magnitude's digits
    for (int i = 0; i < ExactSum::kDigits; ++i) d[i] = -d[i];
    c.Normalize();
  }
  int low = 0, high = ExactSum::kDigits - 1;
  while (low < ExactSum::kDigits && d[low] == 0) ++low;
  if (low == ExactSum::kDigits) return;
  while (d[high] == 0) --high;
  *lo = std::min<std::int64_t>(*lo, std::int64_t{32} * low);
  *hi = std::max<std::int64_t>(*hi, std::int64_t{32} * high + 31);
}

/// Adds a double to window digits `acc` (w.digits words, carried later by StoreWindow).
inline void DepositWindow(std::int64_t* acc, const ExactWindow& w, double x,
                          unsigned* flags) noexcept {
  const DoubleParts d = Decompose(x);
  *flags |= d.special;
  if (d.mant == 0) return;
  const std::uint64_t mant = d.mant;
  const int k = d.pos / 32 - w.first;
  const int shift = d.pos % 32;
  const std::int64_t d0 = static_cast<std::int64_t>((mant << shift) & 0xffffffffu);
  const std::int64_t d1 = static_cast<std::int64_t>((mant >> (32 - shift)) & 0xffffffffu);
  const std::int64_t d2 = static_cast<std::int64_t>(shift ? (mant >> (64 - shift)) : 0);
  const std::int64_t sign = d.negative ? -1 : 1;
  acc[k] += sign * d0;
  if (k + 1 < w.digits) acc[k + 1] += sign * d1;
  if (k + 2 < w.digits) acc[k + 2] += sign * d2;
}

/// Adds an accumulator's digits inside the window (those above it are its sign extension).
inline void DepositWindow(std::int64_t* acc, const ExactWindow& w, const ExactSum& s,
                          unsigned* flags) noexcept {
  ExactSum c = s;
  c.Normalize();
  const std::int64_t* d = ExactAccess::Digits(c);
  for (int j = 0; j < w.digits; ++j) acc[j] += d[w.first + j];
  *flags |= ExactAccess::Flags(c);
}

/// Carries `acc` and writes the record (digits modulo 2^(32 digits), then the flags).
inline void StoreWindow(std::uint32_t* record, std::int64_t* acc, const ExactWindow& w,
                        unsigned flags) noexcept {
  for (int j = 0; j + 1 < w.digits; ++j) {
    const std::int64_t carry = acc[j] >> 32;
    acc[j] -= carry * (std::int64_t(1) << 32);
    acc[j + 1] += carry;
  }
  for (int j = 0; j < w.digits; ++j)
    record[j] = static_cast<std::uint32_t>(static_cast<std::uint64_t>(acc[j]));
  if (w.flags) record[w.digits] = flags;
}

/// The CombineFn of window records; `state` is the ExactWindow.
inline void WindowCombine(const void* state, const void* in, void* inout,
                          std::size_t count) noexcept {
  const auto& w = *static_cast<const ExactWindow*>(state);
  const std::size_t words = w.Words();
  const auto* a = static_cast<const std::uint32_t*>(in);
  auto* b = static_cast<std::uint32_t*>(inout);
  for (std::size_t e = 0; e < count; ++e, a += words, b += words) {
    std::uint64_t carry = 0;
    for (int j = 0; j < w.digits; ++j) {
      const std::uint64_t t = std::uint64_t(a[j]) + b[j] + carry;
      b[j] = static_cast<std::uint32_t>(t);
      carry = t >> 32;
    }
    if (w.flags) b[w.digits] |= a[w.digits];
  }
}

/// Windows of up to 4 digits fit one 128-bit word: the sum of a list's values is kept
/// there modulo 2^128 (exact, since the true sum fits the window) and stored at once.
constexpr int kShortWindow = 4;

inline void DepositShort(WindowWord* acc, const ExactWindow& w, double x,
                         unsigned* flags) noexcept {
  const DoubleParts d = Decompose(x);
  *flags |= d.special;
  if (d.mant == 0) return;  // ±0 or a special: below the window, nothing to add
  const WindowWord v = static_cast<WindowWord>(d.mant) << (d.pos - 32 * w.first);
  *acc += d.negative ? WindowWord(0) - v : v;
}

/// The form of a short window's records known at compile time: D digits, and whether a
/// word of flags follows (so the stores, additions and roundings unroll: a third of the
/// time of a loop over the window's digit count, per element).
template <int D, bool Flags>
struct ShortForm {
  static_assert(D >= 1 && D <= kShortWindow, "a short window has 1 to 4 digits");
  static constexpr int kDigits = D;
  static constexpr bool kFlags = Flags;
  static constexpr int kWords = D + (Flags ? 1 : 0);
};

template <class Form>
inline void StoreShort(std::uint32_t* record, WindowWord acc, unsigned flags) noexcept {
  for (int j = 0; j < Form::kDigits; ++j) record[j] = static_cast<std::uint32_t>(acc >> (32 * j));
  if constexpr (Form::kFlags) record[Form::kDigits] = flags;
}

/// Calls f(ShortForm<D, Flags>{}) for the form of a short window (1..4 digits).
template <class Fn>
inline void WithShortForm(const ExactWindow& w, Fn&& f) {
  const auto with = [&](auto flags) {
    constexpr bool F = decltype(flags)::value;
    switch (w.digits) {
      case 1:
        f(ShortForm<1, F>{});
        break;
      case 2:
        f(ShortForm<2, F>{});
        break;
      case 3:
        f(ShortForm<3, F>{});
        break;
      default:
        f(ShortForm<4, F>{});
        break;
    }
  };
  if (w.flags)
    with(std::true_type{});
  else
    with(std::false_type{});
}

/// The CombineFn of short window records: the digits as one number modulo 2^(32 D), added
/// in 64- and 32-bit words (a 128-bit load of a 12-byte record would pass through memory).
template <class Form>
void ShortCombine(const void*, const void* in, void* inout, std::size_t count) noexcept {
  constexpr int D = Form::kDigits;
  constexpr std::size_t stride = 4 * Form::kWords;
  const auto* a = static_cast<const unsigned char*>(in);
  auto* b = static_cast<unsigned char*>(inout);
  for (std::size_t e = 0; e < count; ++e, a += stride, b += stride) {
    if constexpr (D == 1) {
      std::uint32_t x, y;
      std::memcpy(&x, a, 4);
      std::memcpy(&y, b, 4);
      y += x;
      std::memcpy(b, &y, 4);
    } else {
      std::uint64_t x, y;
      std::memcpy(&x, a, 8);
      std::memcpy(&y, b, 8);
      y += x;
      std::memcpy(b, &y, 8);
      if constexpr (D > 2) {
        constexpr std::size_t rest = 4 * static_cast<std::size_t>(D - 2);
        std::uint64_t xh = 0, yh = 0;
        std::memcpy(&xh, a + 8, rest);
        std::memcpy(&yh, b + 8, rest);
        yh += xh + (y < x ? 1 : 0);  // the carry out of the low 64 bits
        std::memcpy(b + 8, &yh, rest);
      }
    }
    if constexpr (Form::kFlags) {
      constexpr std::size_t f = 4 * static_cast<std::size_t>(D);
      std::uint32_t fa, fb;
      std::memcpy(&fa, a + f, 4);
      std::memcpy(&fb, b + f, 4);
      fb |= fa;
      std::memcpy(b + f, &fb, 4);
    }
  }
}

/// The combine of a window's records (a schedule's CombineFn).
using WindowCombineFn = void (*)(const void* state, const void* in, void* inout, std::size_t count);
inline WindowCombineFn WindowCombineFor(const ExactWindow& w) noexcept {
  if (w.digits > kShortWindow) return &WindowCombine;
  WindowCombineFn fn = nullptr;
  WithShortForm(w, [&](auto form) { fn = &ShortCombine<decltype(form)>; });
  return fn;
}

/// x · 2^e, exact unless the result is subnormal or overflows (then rounded as IEEE
/// rounding of the exact value would be): a normal power of two multiplies; the rest goes
/// through ldexp.
template <class F>
inline __attribute__((always_inline)) F TimesPowerOfTwo(F x, int e) noexcept {
  if constexpr (std::is_same_v<F, double>) {
    if (e >= -1022 && e <= 1023) {
      const std::uint64_t bits = static_cast<std::uint64_t>(e + 1023) << 52;
      double scale;
      std::memcpy(&scale, &bits, sizeof scale);
      return x * scale;
    }
  }
  return std::ldexp(x, e);
}

/// ±word · 2^e with one rounding: the conversion of `word` (below 2^63, so the signed
/// conversion instruction applies; its bit 0 carries the sticky bit of anything below it); scaling
/// by a power of two is then exact, or overflows to infinity as IEEE rounding of the exact value
/// does (TimesPowerOfTwo).
template <class F>
F ScaleWord(std::uint64_t word, int e, bool negative) noexcept {
  const F r = TimesPowerOfTwo(static_cast<F>(static_cast<std::int64_t>(word)), e);
  return negative ? -r : r;
}

/// The value of a record's flags word when it is not zero: NaN, or an infinity.
template <class F>
F SpecialOf(unsigned flags) noexcept {
  if ((flags & 1u) || (flags & 6u) == 6u) return std::numeric_limits<F>::quiet_NaN();
  if (flags & 2u) return std::numeric_limits<F>::infinity();
  return -std::numeric_limits<F>::infinity();
}

/// A short record (the whole record in one 128-bit word) rounded once to F. Up to two
/// digits the record is a signed 64-bit number below 2^63 in magnitude, which the
/// conversion instruction rounds once; wider ones are shifted to 63 bits with a sticky bit.
template <class F, class Form>
inline __attribute__((always_inline)) F RoundShort(const std::uint32_t* record,
                                                   int first) noexcept {
  constexpr int D = Form::kDigits;
  if constexpr (Form::kFlags)
    if (record[D] != 0) return SpecialOf<F>(record[D]);
  std::uint64_t lo64 = 0;
  std::memcpy(&lo64, record, D >= 2 ? 8 : 4);
  if constexpr (D <= 2) {
    const std::int64_t v =
        D == 1 ? static_cast<std::int32_t>(lo64) : static_cast<std::int64_t>(lo64);
    const bool negative = v < 0;
    return ScaleWord<F>(
        negative ? 0 - static_cast<std::uint64_t>(v) : static_cast<std::uint64_t>(v),
        32 * first - 1074, negative);
  } else {
    if constexpr (D == 3 && std::is_same_v<F, double>) {
      // v = T 2^32 + d0 with T the top 64 bits (signed) and 0 <= d0 < 2^32. t = RN(T)
      // differs from T by err, |err| <= 2^10, so v = t 2^32 + r with r = err 2^32 + d0
      // below 2^43: both terms are exact doubles and one addition rounds v once.
      const auto T = static_cast<std::int64_t>((std::uint64_t(record[2]) << 32) | record[1]);
      const double t = static_cast<double>(T);
      if (t < 9223372036854775808.0) {  // t converts back (2^63 would not)
        const std::int64_t err =
            static_cast<std::int64_t>(static_cast<std::uint64_t>(T) -
                                      static_cast<std::uint64_t>(static_cast<std::int64_t>(t)));
        const double r = static_cast<double>(err * (std::int64_t(1) << 32) +
                                             static_cast<std::int64_t>(record[0]));
        return TimesPowerOfTwo(t * 4294967296.0 + r, 32 * first - 1074);
      }
    }
    std::int64_t top = static_cast<std::int32_t>(record[2]);
    if constexpr (D == 4)
      top = static_cast<std::int64_t>((std::uint64_t(record[3]) << 32) | record[2]);
    // Two's complement over 128 bits: the top digit(s) sign-extended above the low 64 bits.
    const WindowWord v = (static_cast<WindowWord>(static_cast<std::uint64_t>(top)) << 64) | lo64;
    const bool negative = top < 0;
    const WindowWord m = negative ? WindowWord(0) - v : v;
    const auto hi64 = static_cast<std::uint64_t>(m >> 64);
    const auto low64 = static_cast<std::uint64_t>(m);
    const int msb = hi64 ? 127 - __builtin_clzll(hi64) : 63 - __builtin_clzll(low64 | 1);
    if (msb < 63) return ScaleWord<F>(low64, 32 * first - 1074, negative);
    const int low = msb - 62;
    std::uint64_t word = static_cast<std::uint64_t>(m >> low);
    if (m & ((WindowWord(1) << low) - 1)) word |= 1u;  // sticky
    return ScaleWord<F>(word, 32 * first + low - 1074, negative);
  }
}

/// A record rounded once to F (float or double), straight from its window digits, without
/// building the full accumulator.
template <class F>
F RoundWindow(const std::uint32_t* record, const ExactWindow& w) noexcept {
  if (w.digits <= kShortWindow) {
    F r = F(0);
    WithShortForm(w, [&](auto form) { r = RoundShort<F, decltype(form)>(record, w.first); });
    return r;
  }
  const unsigned flags = w.flags ? record[w.digits] : 0u;
  if (flags != 0) return SpecialOf<F>(flags);
  // The magnitude, in 32-bit digits (two's complement negated when the top bit is set).
  std::uint32_t m[ExactSum::kDigits];
  const int n = w.digits;
  const bool negative = (record[n - 1] >> 31) != 0;
  std::uint64_t carry = 1;
  for (int j = 0; j < n; ++j) {
    if (negative) {
      const std::uint64_t t = std::uint64_t(static_cast<std::uint32_t>(~record[j])) + carry;
      m[j] = static_cast<std::uint32_t>(t);
      carry = t >> 32;
    } else {
      m[j] = record[j];
    }
  }
  int h = n - 1;
  while (h >= 0 && m[h] == 0) --h;
  if (h < 0) return F(0);
  const int msb = 32 * h + (31 - __builtin_clz(m[h]));  // within the window
  std::uint64_t word = 0;
  int low = 0;  // window bit of the word's bit 0
  if (msb < 63) {
    for (int j = h; j >= 0; --j) word = (word << 32) | m[j];
  } else {
    low = msb - 62;
    const int d = low / 32, b = low % 32;
    // Bits [low, low + 63] (the top one zero) come from digits d .. d + 2.
    const std::uint64_t d0 = m[d], d1 = d + 1 <= h ? m[d + 1] : 0, d2 = d + 2 <= h ? m[d + 2] : 0;
    word = (d0 >> b) | (d1 << (32 - b)) | (b ? d2 << (64 - b) : 0);
    if (b == 0) word = d0 | (d1 << 32);
    bool sticky = b && (d0 & ((std::uint64_t(1) << b) - 1)) != 0;
    for (int j = d - 1; j >= 0 && !sticky; --j) sticky = m[j] != 0;
    word |= sticky ? 1u : 0u;
  }
  return ScaleWord<F>(word, 32 * w.first + low - 1074, negative);
}

}  // namespace tributary::detail
