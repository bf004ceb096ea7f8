// TrackedValue<T>: the `val` of Parthenon's AllReduce<float> / AllReduce<double> (and
// Reduce) on Tributary; TrackedContainer<T>: the same for a contiguous container of float or
// double that is a class of its own (Parthenon's summable arrays). They read and write like
// T, and keep beside the rounded value
//  - the exact sum (ExactSum, one per element) of what was assigned and added through them,
//    so that a start in Determinism::rank_count_independent can reduce the exact sum of
//    every partition's partial instead of this rank's rounded total (Parthenon's solvers add
//    each partition's partial with `val += partial`; the rank's rounded total depends on
//    which partitions the rank holds);
//  - the terms added since the last assignment, so that a start with ordered terms (the
//    layer's opt-in, OrderedTerms()) can add them in an order that does not depend on the
//    order the tasks added them in.
// `+=` is safe from several threads at once (Parthenon's thread pool runs the partitions'
// tasks on several threads; a plain `val += partial` there is a data race).
//
// Writes that bypass them (through the pointer that `&val` gives, as Parthenon's poisson
// example does, or through a container's data() and operator[]) are noticed: the value then
// no longer equals the one last written through the tracker, and the start reduces the
// rounded value as it is.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <type_traits>
#include <vector>

#include "tributary/datatype.hpp"
#include "tributary/exact_sum.hpp"

namespace tributary::parthenon_interop {

namespace detail {

template <class T>
using BitsOf = std::conditional_t<sizeof(T) == 8, std::uint64_t, std::uint32_t>;

/// A key whose integer order is a total order of float / double values by magnitude, then
/// sign (a NaN after every number): the order ordered terms are added in.
template <class T>
BitsOf<T> MagnitudeKey(T x) noexcept {
  BitsOf<T> b;
  std::memcpy(&b, &x, sizeof b);
  constexpr BitsOf<T> sign = BitsOf<T>(1) << (8 * sizeof(T) - 1);
  return static_cast<BitsOf<T>>(((b & ~sign) << 1) | (b >> (8 * sizeof(T) - 1)));
}

/// `base` plus the terms in [first, last) added smallest magnitude first (the terms are
/// reordered): the same bits whatever order they came in.
template <class T>
T SumInKeyOrder(T base, T* first, T* last) {
  std::sort(first, last, [](T a, T b) { return MagnitudeKey(a) < MagnitudeKey(b); });
  for (T* t = first; t != last; ++t) base += *t;
  return base;
}

template <class T>
bool SameBits(const T* a, const T* b, std::size_t n) noexcept {
  return n == 0 || std::memcmp(a, b, n * sizeof(T)) == 0;
}

}  // namespace detail

template <class T>
class TrackedValue {
  static_assert(std::is_same_v<T, double> || std::is_same_v<T, float>,
                "TrackedValue tracks float and double");

 public:
  TrackedValue() noexcept { Assign(T{}); }
  TrackedValue(T x) noexcept { Assign(x); }  // NOLINT: reads like T
  // User-provided, so that passing `val` through C varargs (printf) does not compile:
  // convert it to T first.
  TrackedValue(const TrackedValue& other) { CopyFrom(other); }
  TrackedValue& operator=(const TrackedValue& other) {
    if (this != std::addressof(other)) CopyFrom(other);
    return *this;
  }

  TrackedValue& operator=(T x) noexcept {
    Assign(x);
    return *this;
  }
  TrackedValue& operator+=(T x) {
    std::lock_guard<std::mutex> lock(mutex_);
    Resync();
    value_ += x;
    sum_.Add(static_cast<double>(x));
    terms_.push_back(x);
    written_ = value_;
    return *this;
  }
  TrackedValue& operator-=(T x) { return *this += -x; }
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
  bool Exact() const noexcept { return exact_ && detail::SameBits(&value_, &written_, 1); }
  /// The exact sum of what was assigned and added since the last assignment.
  const ExactSum& Sum() const noexcept { return sum_; }
  /// The value last assigned plus the terms added since, smallest magnitude first: the same
  /// bits whatever order `+=` came in (ordered terms; meaningful while Exact()).
  T OrderedSum() const {
    std::vector<T> terms = terms_;
    return detail::SumInKeyOrder(base_, terms.data(), terms.data() + terms.size());
  }

 private:
  void CopyFrom(const TrackedValue& other) {
    value_ = other.value_;
    written_ = other.written_;
    base_ = other.base_;
    exact_ = other.exact_;
    sum_ = other.sum_;
    terms_ = other.terms_;
  }
  void Assign(T x) noexcept {
    value_ = x;
    written_ = x;
    base_ = x;
    exact_ = true;
    sum_ = ExactSum(static_cast<double>(x));
    terms_.clear();
  }
  // A write through the pointer happened since the last tracked write: start tracking
  // again from the value as it is (it is no longer a sum of known terms).
  void Resync() noexcept {
    if (!detail::SameBits(&value_, &written_, 1)) {
      exact_ = false;
      sum_ = ExactSum(static_cast<double>(value_));
      written_ = value_;
      base_ = value_;
      terms_.clear();
    }
  }
  TrackedValue& Untracked(T x) noexcept {
    Assign(x);
    exact_ = false;
    return *this;
  }

  T value_{};
  T written_{};
  T base_{};
  bool exact_ = true;
  ExactSum sum_;
  std::vector<T> terms_;
  std::mutex mutex_;  // `+=` from several threads
};

/// Whether the layer tracks a container value: a class of its own (a contiguous container
/// that is not a standard type) of float or double, default-constructible and not final.
template <class T, class = void>
constexpr bool kTrackedContainer = false;
template <class T>
constexpr bool kTrackedContainer<T, std::enable_if_t<tributary::detail::kContiguousContainer<T>>> =
    (std::is_same_v<typename ValueTraits<T>::element, double> ||
     std::is_same_v<typename ValueTraits<T>::element, float>)&&std::is_default_constructible_v<T> &&
    !std::is_final_v<T>;

/// A container T (Parthenon's summable arrays) that is still a T (its members, `val[0]`,
/// `val.data()`), with the exact sum per element and the terms of what was assigned and
/// added through `=` and `+=` (see the file comment).
template <class T>
class TrackedContainer : public T {
  using Traits = ValueTraits<T>;
  using E = typename Traits::element;

 public:
  TrackedContainer() : T() { Assign(); }
  TrackedContainer(const T& v) : T(v) { Assign(); }  // NOLINT: reads like T
  TrackedContainer(const TrackedContainer& other) : T(other) { CopyFrom(other); }
  TrackedContainer& operator=(const TrackedContainer& other) {
    if (this != &other) {
      T::operator=(other);
      CopyFrom(other);
    }
    return *this;
  }
  TrackedContainer& operator=(const T& v) {
    T::operator=(v);
    Assign();
    return *this;
  }
  /// Adds `v` elementwise (what a summable array's += does), tracked.
  TrackedContainer& operator+=(const T& v) {
    std::lock_guard<std::mutex> lock(mutex_);
    Resync();
    const std::size_t n = Traits::Size(*this);
    E* d = Traits::Data(*this);
    const E* s = Traits::Data(v);
    if (Traits::Size(v) != n) {  // not a sum of terms of this length: untracked
      exact_ = false;
      return *this;
    }
    for (std::size_t c = 0; c < n; ++c) {
      d[c] += s[c];
      sums_[c].Add(static_cast<double>(s[c]));
    }
    terms_.insert(terms_.end(), s, s + n);
    written_.assign(d, d + n);
    return *this;
  }

  /// The value as a T.
  const T& Value() const noexcept { return *this; }
  /// True while every element is the one last written through the tracker.
  bool Exact() const noexcept {
    return exact_ && written_.size() == Traits::Size(*this) &&
           detail::SameBits(Traits::Data(*this), written_.data(), written_.size());
  }
  /// The exact sum per element of what was assigned and added since the last assignment.
  const std::vector<ExactSum>& Sum() const noexcept { return sums_; }
  /// Per element, the value last assigned plus the terms added since, smallest magnitude
  /// first (ordered terms; meaningful while Exact()).
  T OrderedSum() const {
    T out(*this);
    const std::size_t n = Traits::Size(*this);
    E* d = Traits::Data(out);
    std::vector<E> column(n == 0 ? 0 : terms_.size() / n);
    for (std::size_t c = 0; c < n; ++c) {
      for (std::size_t t = 0; t < column.size(); ++t) column[t] = terms_[t * n + c];
      d[c] = detail::SumInKeyOrder(base_[c], column.data(), column.data() + column.size());
    }
    return out;
  }

 private:
  void CopyFrom(const TrackedContainer& other) {
    written_ = other.written_;
    base_ = other.base_;
    exact_ = other.exact_;
    sums_ = other.sums_;
    terms_ = other.terms_;
  }
  void Assign() {
    const std::size_t n = Traits::Size(*this);
    const E* d = Traits::Data(*this);
    written_.assign(d, d + n);
    base_.assign(d, d + n);
    sums_.assign(n, ExactSum());
    for (std::size_t c = 0; c < n; ++c) sums_[c].Add(static_cast<double>(d[c]));
    exact_ = true;
    terms_.clear();
  }
  // Elements written past the tracker since the last tracked write: track again from the
  // values as they are (no longer sums of known terms).
  void Resync() {
    if (written_.size() != Traits::Size(*this) ||
        !detail::SameBits(Traits::Data(*this), written_.data(), written_.size())) {
      Assign();
      exact_ = false;
    }
  }

  std::vector<E> written_;
  std::vector<E> base_;
  bool exact_ = true;
  std::vector<ExactSum> sums_;
  std::vector<E> terms_;  // k per term, in the order they came
  std::mutex mutex_;      // `+=` from several threads
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
