#include "tributary/exact_sum.hpp"

#include <cstdint>
#include <cstring>

#include "tributary/detail/exact/exact_window.hpp"

namespace tributary {

bool ExactSum::SameValue(const ExactSum& other) const noexcept {
  ExactSum a = *this, b = other;
  a.Normalize();
  b.Normalize();
  return std::memcmp(a.digit_, b.digit_, sizeof a.digit_) == 0 &&
         std::memcmp(a.special_, b.special_, sizeof a.special_) == 0;
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
