#include "tributary/exact_sum.hpp"

#include <cstdint>
#include <cstring>

#include "tributary/detail/exactness.hpp"

namespace tributary {

namespace {

constexpr std::int64_t kDigitMask = 0xffffffff;
// Digits change by less than 2^32 per addition, so 2^30 additions fit a 64-bit word.
constexpr std::int64_t kNormalizeAfter = std::int64_t(1) << 30;

}  // namespace

void ExactSum::Add(double x) noexcept {
  const detail::DoubleParts d = detail::Decompose(x);
  if (d.special) {
    if (d.special & 1u)
      ++nan_;
    else if (d.special & 4u)
      ++neg_inf_;
    else
      ++pos_inf_;
    return;
  }
  if (d.mant == 0) return;  // ±0
  const int k = d.pos / 32;
  const detail::WindowWord v = static_cast<detail::WindowWord>(d.mant) << (d.pos % 32);
  const std::int64_t d0 = static_cast<std::int64_t>(static_cast<std::uint64_t>(v) & kDigitMask);
  const std::int64_t d1 =
      static_cast<std::int64_t>(static_cast<std::uint64_t>(v >> 32) & kDigitMask);
  const std::int64_t d2 = static_cast<std::int64_t>(static_cast<std::uint64_t>(v >> 64));
  const std::int64_t sign = d.negative ? -1 : 1;
  digit_[k] += sign * d0;
  digit_[k + 1] += sign * d1;
  digit_[k + 2] += sign * d2;
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

// The accumulator as a record over the whole range (the wire form's window at its widest)
// and rounded by the same code that rounds the wire form: one rounding for both.
template <class F>
F RoundAll(const ExactSum& s) noexcept {
  ExactSum c = s;
  c.Normalize();  // digits in [0, 2^32), the top one (0 or -1 here) carrying the sign
  constexpr detail::ExactWindow whole{0, ExactSum::kDigits};
  std::uint32_t record[ExactSum::kDigits + 1];
  const std::int64_t* d = detail::ExactAccess::Digits(c);
  for (int j = 0; j < ExactSum::kDigits; ++j)
    record[j] = static_cast<std::uint32_t>(static_cast<std::uint64_t>(d[j]));
  record[ExactSum::kDigits] = detail::ExactAccess::Flags(c);
  return detail::RoundWindow<F>(record, whole);
}

}  // namespace

double ExactSum::Round() const noexcept { return RoundAll<double>(*this); }
float ExactSum::RoundFloat() const noexcept { return RoundAll<float>(*this); }

}  // namespace tributary
