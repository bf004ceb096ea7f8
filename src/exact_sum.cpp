#include "tributary/exact_sum.hpp"

#include <cmath>
#include <cstring>
#include <limits>

namespace tributary {

namespace {

__extension__ typedef unsigned __int128 U128;

constexpr std::int64_t kDigitMask = 0xffffffff;
// Digits change by less than 2^32 per addition, so 2^30 additions fit a 64-bit word.
constexpr std::int64_t kNormalizeAfter = std::int64_t(1) << 30;

std::uint64_t Bits(double x) noexcept {
  std::uint64_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}

int HighestBit(std::uint64_t v) noexcept { return 63 - __builtin_clzll(v); }

// The magnitude's digits (all in [0, 2^32) once normalized) and its sign.
struct Magnitude {
  std::int64_t d[ExactSum::kDigits];
  bool negative = false;
};

// The leading 64 bits of the magnitude with the MSB at bit 63, the rest folded into bit 0
// as a sticky bit, and the binary exponent of bit 0 of that word (in units of 2^-1074).
// Returns false for zero.
bool Leading64(const Magnitude& m, std::uint64_t* word, int* shift) noexcept {
  int h = ExactSum::kDigits - 1;
  while (h >= 0 && m.d[h] == 0) --h;
  if (h < 0) return false;
  const int msb = 32 * h + HighestBit(static_cast<std::uint64_t>(m.d[h]));
  if (msb < 64) {  // the whole value fits one word: no rounding below it
    std::uint64_t v = 0;
    for (int i = h; i >= 0; --i) v = (v << 32) | static_cast<std::uint64_t>(m.d[i]);
    *word = v;
    *shift = 0;
    return true;
  }
  // Bits [msb - 63, msb]: gather from the digits that hold them.
  const int low = msb - 63;
  U128 acc = 0;
  const int first = low / 32;
  for (int i = h; i >= first; --i) acc = (acc << 32) | static_cast<std::uint64_t>(m.d[i]);
  // acc holds the digits first..h: bits [32*first, 32*h + 31].
  std::uint64_t v = static_cast<std::uint64_t>(acc >> (low - 32 * first));
  bool sticky = (acc & ((static_cast<U128>(1) << (low - 32 * first)) - 1)) != 0;
  for (int i = first - 1; i >= 0 && !sticky; --i) sticky = m.d[i] != 0;
  *word = v | (sticky ? 1u : 0u);
  *shift = low;
  return true;
}

}  // namespace

void ExactSum::Add(double x) noexcept {
  const std::uint64_t b = Bits(x);
  const int field = static_cast<int>((b >> 52) & 0x7ff);
  if (field == 0x7ff) {
    if (b & ((std::uint64_t(1) << 52) - 1))
      ++nan_;
    else if (b >> 63)
      ++neg_inf_;
    else
      ++pos_inf_;
    return;
  }
  std::uint64_t mant = b & ((std::uint64_t(1) << 52) - 1);
  if (mant == 0 && field == 0) return;  // ±0
  int pos = 0;  // bit position of the mantissa's lowest bit, in units of 2^-1074
  if (field) {
    mant |= std::uint64_t(1) << 52;
    pos = field - 1;
  }
  const int k = pos / 32;
  const U128 v = static_cast<U128>(mant) << (pos % 32);
  const std::int64_t d0 = static_cast<std::int64_t>(static_cast<std::uint64_t>(v) & kDigitMask);
  const std::int64_t d1 =
      static_cast<std::int64_t>(static_cast<std::uint64_t>(v >> 32) & kDigitMask);
  const std::int64_t d2 = static_cast<std::int64_t>(static_cast<std::uint64_t>(v >> 64));
  if (b >> 63) {
    digit_[k] -= d0;
    digit_[k + 1] -= d1;
    digit_[k + 2] -= d2;
  } else {
    digit_[k] += d0;
    digit_[k + 1] += d1;
    digit_[k + 2] += d2;
  }
  if (++pending_ >= kNormalizeAfter) Normalize();
}

ExactSum& ExactSum::operator+=(const ExactSum& other) noexcept {
  // A merge adds less than (other's additions + 1) * 2^32 to a digit: counted in pending_.
  if (other.pending_ >= kNormalizeAfter / 2) {
    ExactSum o = other;
    o.Normalize();
    return *this += o;
  }
  if (pending_ + other.pending_ + 1 >= kNormalizeAfter) Normalize();
  for (int i = 0; i < kDigits; ++i) digit_[i] += other.digit_[i];
  pos_inf_ += other.pos_inf_;
  neg_inf_ += other.neg_inf_;
  nan_ += other.nan_;
  pending_ += other.pending_ + 1;
  return *this;
}

void ExactSum::Normalize() noexcept {
  for (int i = 0; i + 1 < kDigits; ++i) {
    const std::int64_t carry = digit_[i] >> 32;  // arithmetic: floor division by 2^32
    digit_[i] &= kDigitMask;
    digit_[i + 1] += carry;
  }
  pending_ = 0;
}

bool ExactSum::SameValue(const ExactSum& other) const noexcept {
  ExactSum a = *this, b = other;
  a.Normalize();
  b.Normalize();
  return std::memcmp(a.digit_, b.digit_, sizeof a.digit_) == 0 && a.pos_inf_ == b.pos_inf_ &&
         a.neg_inf_ == b.neg_inf_ && a.nan_ == b.nan_;
}

namespace {

template <class F>
F RoundTo(const std::int64_t (&digits)[ExactSum::kDigits], std::int64_t pos_inf,
          std::int64_t neg_inf, std::int64_t nan) noexcept {
  if (nan > 0 || (pos_inf > 0 && neg_inf > 0)) return std::numeric_limits<F>::quiet_NaN();
  if (pos_inf > 0) return std::numeric_limits<F>::infinity();
  if (neg_inf > 0) return -std::numeric_limits<F>::infinity();
  Magnitude m;
  std::memcpy(m.d, digits, sizeof m.d);
  // Canonical form: digits in [0, 2^32) below the top one, which carries the sign.
  for (int i = 0; i + 1 < ExactSum::kDigits; ++i) {
    const std::int64_t carry = m.d[i] >> 32;
    m.d[i] &= kDigitMask;
    m.d[i + 1] += carry;
  }
  if (m.d[ExactSum::kDigits - 1] < 0) {
    m.negative = true;
    for (auto& d : m.d) d = -d;
    for (int i = 0; i + 1 < ExactSum::kDigits; ++i) {
      const std::int64_t carry = m.d[i] >> 32;
      m.d[i] &= kDigitMask;
      m.d[i + 1] += carry;
    }
  }
  std::uint64_t word = 0;
  int shift = 0;
  if (!Leading64(m, &word, &shift)) return F(0);
  // One rounding: the conversion of the 64-bit word (its sticky bit decides ties), then an
  // exact scaling by a power of two (or an overflow to infinity, as IEEE rounding gives).
  const F r = std::ldexp(static_cast<F>(word), shift - 1074);
  return m.negative ? -r : r;
}

}  // namespace

double ExactSum::Round() const noexcept {
  return RoundTo<double>(digit_, pos_inf_, neg_inf_, nan_);
}
float ExactSum::RoundFloat() const noexcept {
  return RoundTo<float>(digit_, pos_inf_, neg_inf_, nan_);
}

}  // namespace tributary
