// TrackedValue<T>: the `val` of Parthenon's AllReduce<float> / AllReduce<double> (and
// Reduce) on Tributary. It reads and writes like T, and keeps beside the rounded value the
// exact sum (ExactSum) of what was assigned and added through it, so that a start in
// Determinism::rank_count_independent can reduce the exact sum of every partition's
// partial instead of this rank's rounded total (Parthenon's solvers add each partition's
// partial with `val += partial`; the rank's rounded total depends on which partitions the
// rank holds).
//
// Writes that bypass it (through the pointer that `&val` gives, as Parthenon's poisson
// example does) are noticed: the value then no longer equals the one last written through
// the tracker, and the start reduces the rounded value as it is.
#pragma once

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "tributary/exact_sum.hpp"

namespace tributary::parthenon_interop {

template <class T>
class TrackedValue {
  static_assert(std::is_same_v<T, double> || std::is_same_v<T, float>,
                "TrackedValue tracks float and double");

 public:
  TrackedValue() noexcept = default;
  TrackedValue(T x) noexcept { Assign(x); }  // NOLINT: reads like T
  // User-provided, so that passing `val` through C varargs (printf) does not compile:
  // convert it to T first.
  TrackedValue(const TrackedValue& other) noexcept
      : value_(other.value_), written_(other.written_), exact_(other.exact_), sum_(other.sum_) {}
  TrackedValue& operator=(const TrackedValue& other) noexcept {
    value_ = other.value_;
    written_ = other.written_;
    exact_ = other.exact_;
    sum_ = other.sum_;
    return *this;
  }

  TrackedValue& operator=(T x) noexcept {
    Assign(x);
    return *this;
  }
  TrackedValue& operator+=(T x) noexcept {
    Resync();
    value_ += x;
    sum_.Add(static_cast<double>(x));
    written_ = value_;
    return *this;
  }
  TrackedValue& operator-=(T x) noexcept { return *this += -x; }
  TrackedValue& operator*=(T x) noexcept { return Untracked(value_ * x); }
  TrackedValue& operator/=(T x) noexcept { return Untracked(value_ / x); }

  operator const T&() const noexcept { return value_; }  // NOLINT: reads like T
  /// The address of the value itself, as `&val` gives for a plain T. Writes through it are
  /// not tracked (see the file comment).
  T* operator&() noexcept { return &value_; }
  const T* operator&() const noexcept { return &value_; }

  /// The rounded value.
  T Value() const noexcept { return value_; }
  /// True while the value is the one last written through the tracker, so that Sum()
  /// holds exactly what was assigned and added.
  bool Exact() const noexcept { return exact_ && SameBits(value_, written_); }
  /// The exact sum of what was assigned and added since the last assignment.
  const ExactSum& Sum() const noexcept { return sum_; }

 private:
  static bool SameBits(T a, T b) noexcept { return std::memcmp(&a, &b, sizeof(T)) == 0; }
  void Assign(T x) noexcept {
    value_ = x;
    written_ = x;
    exact_ = true;
    sum_ = ExactSum(static_cast<double>(x));
  }
  // A write through the pointer happened since the last tracked write: start tracking
  // again from the value as it is (it is no longer a sum of known terms).
  void Resync() noexcept {
    if (!SameBits(value_, written_)) {
      exact_ = false;
      sum_ = ExactSum(static_cast<double>(value_));
      written_ = value_;
    }
  }
  TrackedValue& Untracked(T x) noexcept {
    value_ = x;
    written_ = x;
    exact_ = false;
    sum_ = ExactSum(static_cast<double>(x));
    return *this;
  }

  T value_{};
  T written_{};
  bool exact_ = true;
  ExactSum sum_;
};

}  // namespace tributary::parthenon_interop

// Parthenon's GlobalMinLocal (solvers/solver_utils.hpp) writes `std::min(gmin, amin->val)`
// with a Real and the reduction's `val`: std::min deduces one type from both arguments, so
// it needs these overloads. Declaring them in namespace std is outside what the standard
// allows a program to add there; GCC and Clang accept it. Define
// TRIBUTARY_PARTHENON_PLAIN_VAL to get a plain T `val` (and none of this) instead.
namespace std {
template <class T>
const T& min(const T& a, const ::tributary::parthenon_interop::TrackedValue<T>& b) {
  return std::min(a, static_cast<const T&>(b));
}
template <class T>
const T& min(const ::tributary::parthenon_interop::TrackedValue<T>& a, const T& b) {
  return std::min(static_cast<const T&>(a), b);
}
template <class T>
const T& max(const T& a, const ::tributary::parthenon_interop::TrackedValue<T>& b) {
  return std::max(a, static_cast<const T&>(b));
}
template <class T>
const T& max(const ::tributary::parthenon_interop::TrackedValue<T>& a, const T& b) {
  return std::max(static_cast<const T&>(a), b);
}
}  // namespace std
