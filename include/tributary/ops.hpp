// Reduction operators. Each says whether it commutes and what its neutral element is, and
// applies as `op(in, inout)`: inout = in ∘ inout, where `in` comes from the lower list
// index or rank (the MPI convention). Builtin operators map to the MPI library's own
// MPI_Op; user operators are called directly by Tributary's schedules and wrapped in an
// MPI_Op only on the MPI-library path.
#pragma once

#include <complex>
#include <cstdint>
#include <limits>
#include <tuple>
#include <type_traits>
#include <utility>

#include "tributary/config.hpp"

namespace tributary {

namespace detail {
/// The builtin operators that have an MPI_Op.
enum class BuiltinOp { none, sum, prod, min, max, land, lor, lxor, band, bor, bxor };

template <class T>
struct IsComplex : std::false_type {};
template <class T>
struct IsComplex<std::complex<T>> : std::true_type {};

template <class T>
constexpr bool kIsArithmeticOrComplex = std::is_arithmetic_v<T> || IsComplex<T>::value;
}  // namespace detail

/// Sum (commutative; exact commutativity of IEEE addition makes every rank's bits agree).
struct Sum {
  /// Contributions may combine in any order.
  static constexpr bool commutative = true;
  /// The MPI library's MPI_SUM on its path.
  static constexpr detail::BuiltinOp builtin = detail::BuiltinOp::sum;
  /// The neutral element: 0.
  template <class T>
  static T Identity() {
    static_assert(!std::is_same_v<T, bool>, "Sum of bool: use LOr or count with an integer");
    return T(0);
  }
  /// inout = in + inout.
  template <class T>
  TRIBUTARY_FUNCTION void operator()(const T& in, T& inout) const {
    inout = in + inout;
  }
};

/// Product.
struct Prod {
  /// Contributions may combine in any order.
  static constexpr bool commutative = true;
  /// The MPI library's MPI_PROD on its path.
  static constexpr detail::BuiltinOp builtin = detail::BuiltinOp::prod;
  /// The neutral element: 1.
  template <class T>
  static T Identity() {
    static_assert(!std::is_same_v<T, bool>, "Prod of bool: use LAnd");
    return T(1);
  }
  /// inout = in * inout.
  template <class T>
  TRIBUTARY_FUNCTION void operator()(const T& in, T& inout) const {
    inout = in * inout;
  }
};

/// Minimum.
struct Min {
  /// Contributions may combine in any order.
  static constexpr bool commutative = true;
  /// The MPI library's MPI_MIN on its path.
  static constexpr detail::BuiltinOp builtin = detail::BuiltinOp::min;
  /// The neutral element: +infinity, or the largest value of an integer type.
  template <class T>
  static T Identity() {
    static_assert(std::is_arithmetic_v<T>, "Min needs an ordered arithmetic type");
    if constexpr (std::numeric_limits<T>::has_infinity) return std::numeric_limits<T>::infinity();
    return std::numeric_limits<T>::max();
  }
  /// inout = the smaller of in and inout.
  template <class T>
  TRIBUTARY_FUNCTION void operator()(const T& in, T& inout) const {
    if (in < inout) inout = in;
  }
};

/// Maximum.
struct Max {
  /// Contributions may combine in any order.
  static constexpr bool commutative = true;
  /// The MPI library's MPI_MAX on its path.
  static constexpr detail::BuiltinOp builtin = detail::BuiltinOp::max;
  /// The neutral element: -infinity, or the lowest value of an integer type.
  template <class T>
  static T Identity() {
    static_assert(std::is_arithmetic_v<T>, "Max needs an ordered arithmetic type");
    if constexpr (std::numeric_limits<T>::has_infinity) return -std::numeric_limits<T>::infinity();
    return std::numeric_limits<T>::lowest();
  }
  /// inout = the larger of in and inout.
  template <class T>
  TRIBUTARY_FUNCTION void operator()(const T& in, T& inout) const {
    if (inout < in) inout = in;
  }
};

namespace detail {
template <class T>
constexpr void RequireIntegral(const char*) {
  static_assert(std::is_integral_v<T>,
                "logical and bitwise operators need integral or bool values");
}
}  // namespace detail

/// Logical and (bool or integers; the result is 0 or 1).
struct LAnd {
  /// Contributions may combine in any order.
  static constexpr bool commutative = true;
  /// The MPI library's MPI_LAND on its path.
  static constexpr detail::BuiltinOp builtin = detail::BuiltinOp::land;
  /// The neutral element: 1 (true).
  template <class T>
  static T Identity() {
    detail::RequireIntegral<T>("LAnd");
    return T(1);
  }
  /// inout = in && inout (0 or 1).
  template <class T>
  TRIBUTARY_FUNCTION void operator()(const T& in, T& inout) const {
    inout = static_cast<T>(in && inout);
  }
};

/// Logical or.
struct LOr {
  /// Contributions may combine in any order.
  static constexpr bool commutative = true;
  /// The MPI library's MPI_LOR on its path.
  static constexpr detail::BuiltinOp builtin = detail::BuiltinOp::lor;
  /// The neutral element: 0 (false).
  template <class T>
  static T Identity() {
    detail::RequireIntegral<T>("LOr");
    return T(0);
  }
  /// inout = in || inout (0 or 1).
  template <class T>
  TRIBUTARY_FUNCTION void operator()(const T& in, T& inout) const {
    inout = static_cast<T>(in || inout);
  }
};

/// Logical exclusive or.
struct LXor {
  /// Contributions may combine in any order.
  static constexpr bool commutative = true;
  /// The MPI library's MPI_LXOR on its path.
  static constexpr detail::BuiltinOp builtin = detail::BuiltinOp::lxor;
  /// The neutral element: 0 (false).
  template <class T>
  static T Identity() {
    detail::RequireIntegral<T>("LXor");
    return T(0);
  }
  /// inout = in != inout as truth values (0 or 1).
  template <class T>
  TRIBUTARY_FUNCTION void operator()(const T& in, T& inout) const {
    inout = static_cast<T>(static_cast<bool>(in) != static_cast<bool>(inout));
  }
};

/// Bitwise and (integers).
struct BAnd {
  /// Contributions may combine in any order.
  static constexpr bool commutative = true;
  /// The MPI library's MPI_BAND on its path.
  static constexpr detail::BuiltinOp builtin = detail::BuiltinOp::band;
  /// The neutral element: all bits set.
  template <class T>
  static T Identity() {
    detail::RequireIntegral<T>("BAnd");
    return static_cast<T>(~T(0));
  }
  /// inout = in & inout.
  template <class T>
  TRIBUTARY_FUNCTION void operator()(const T& in, T& inout) const {
    inout = static_cast<T>(in & inout);
  }
};

/// Bitwise or.
struct BOr {
  /// Contributions may combine in any order.
  static constexpr bool commutative = true;
  /// The MPI library's MPI_BOR on its path.
  static constexpr detail::BuiltinOp builtin = detail::BuiltinOp::bor;
  /// The neutral element: 0.
  template <class T>
  static T Identity() {
    detail::RequireIntegral<T>("BOr");
    return T(0);
  }
  /// inout = in | inout.
  template <class T>
  TRIBUTARY_FUNCTION void operator()(const T& in, T& inout) const {
    inout = static_cast<T>(in | inout);
  }
};

/// Bitwise exclusive or.
struct BXor {
  /// Contributions may combine in any order.
  static constexpr bool commutative = true;
  /// The MPI library's MPI_BXOR on its path.
  static constexpr detail::BuiltinOp builtin = detail::BuiltinOp::bxor;
  /// The neutral element: 0.
  template <class T>
  static T Identity() {
    detail::RequireIntegral<T>("BXor");
    return T(0);
  }
  /// inout = in ^ inout.
  template <class T>
  TRIBUTARY_FUNCTION void operator()(const T& in, T& inout) const {
    inout = static_cast<T>(in ^ inout);
  }
};

/// A value with the user's 64-bit global index, reduced by MinLoc / MaxLoc.
template <class T>
struct ValueLoc {
  T value;             ///< The value compared.
  std::int64_t index;  ///< Its global index (the lowest wins among equal values).
  /// Equal when both the value and the index are.
  friend bool operator==(const ValueLoc& a, const ValueLoc& b) {
    return a.value == b.value && a.index == b.index;
  }
};

/// The smallest value and its index; among equal values the lowest index wins.
struct MinLoc {
  /// Contributions may combine in any order.
  static constexpr bool commutative = true;
  /// No MPI_Op of the MPI library: it is called as a user operator.
  static constexpr detail::BuiltinOp builtin = detail::BuiltinOp::none;
  /// The neutral element: Min's neutral element with the largest index.
  template <class V>
  static V Identity() {
    using T = decltype(V::value);
    return V{Min::Identity<T>(), std::numeric_limits<std::int64_t>::max()};
  }
  /// inout = in when its value is smaller, or equal with a lower index.
  template <class T>
  TRIBUTARY_FUNCTION void operator()(const ValueLoc<T>& in, ValueLoc<T>& inout) const {
    if (in.value < inout.value || (in.value == inout.value && in.index < inout.index)) inout = in;
  }
};

/// The largest value and its index; among equal values the lowest index wins.
struct MaxLoc {
  /// Contributions may combine in any order.
  static constexpr bool commutative = true;
  /// No MPI_Op of the MPI library: it is called as a user operator.
  static constexpr detail::BuiltinOp builtin = detail::BuiltinOp::none;
  /// The neutral element: Max's neutral element with the largest index.
  template <class V>
  static V Identity() {
    using T = decltype(V::value);
    return V{Max::Identity<T>(), std::numeric_limits<std::int64_t>::max()};
  }
  /// inout = in when its value is larger, or equal with a lower index.
  template <class T>
  TRIBUTARY_FUNCTION void operator()(const ValueLoc<T>& in, ValueLoc<T>& inout) const {
    if (inout.value < in.value || (in.value == inout.value && in.index < inout.index)) inout = in;
  }
};

/// A range [min, max], reduced by MinMax. Contribute {x, x} for a single value.
template <class T>
struct MinMaxPair {
  T min;  ///< The smallest value.
  T max;  ///< The largest value.
  /// Equal when both bounds are.
  friend bool operator==(const MinMaxPair& a, const MinMaxPair& b) {
    return a.min == b.min && a.max == b.max;
  }
};

/// The smallest of the minima and the largest of the maxima.
struct MinMax {
  /// Contributions may combine in any order.
  static constexpr bool commutative = true;
  /// No MPI_Op of the MPI library: it is called as a user operator.
  static constexpr detail::BuiltinOp builtin = detail::BuiltinOp::none;
  /// The neutral element: {Min's neutral element, Max's neutral element}.
  template <class V>
  static V Identity() {
    using T = decltype(V::min);
    return V{Min::Identity<T>(), Max::Identity<T>()};
  }
  /// inout.min = the smaller minimum, inout.max = the larger maximum.
  template <class T>
  TRIBUTARY_FUNCTION void operator()(const MinMaxPair<T>& in, MinMaxPair<T>& inout) const {
    if (in.min < inout.min) inout.min = in.min;
    if (inout.max < in.max) inout.max = in.max;
  }
};

/// One operator per element of a std::tuple (or std::pair) value:
/// `AllReduce<std::tuple<double, long>> r(ctx); r.StartReduce(Each(Sum{}, Max{}));`.
template <class... Ops>
struct EachOp {
  /// The operators, in the order of the tuple's elements.
  std::tuple<Ops...> ops;
  /// Commutes when every element's operator commutes.
  static constexpr bool commutative = (Ops::commutative && ...);
  /// No MPI_Op of the MPI library: it is called as a user operator.
  static constexpr detail::BuiltinOp builtin = detail::BuiltinOp::none;
  /// The neutral element: each element's operator's neutral element.
  template <class Tuple>
  static Tuple Identity() {
    return IdentityImpl<Tuple>(std::index_sequence_for<Ops...>{});
  }
  /// Applies each operator to its element of the tuple.
  template <class Tuple>
  TRIBUTARY_FUNCTION void operator()(const Tuple& in, Tuple& inout) const {
    static_assert(std::tuple_size_v<Tuple> == sizeof...(Ops),
                  "Each: one operator per tuple element");
    Apply(in, inout, std::index_sequence_for<Ops...>{});
  }

 private:
  /// The neutral element: each element's operator's neutral element.
  template <class Tuple, std::size_t... I>
  static Tuple IdentityImpl(std::index_sequence<I...>) {
    return Tuple{std::tuple_element_t<I, std::tuple<Ops...>>::template Identity<
        std::tuple_element_t<I, Tuple>>()...};
  }
  template <class Tuple, std::size_t... I>
  void Apply(const Tuple& in, Tuple& inout, std::index_sequence<I...>) const {
    (std::get<I>(ops)(std::get<I>(in), std::get<I>(inout)), ...);
  }
};

/// Builds an EachOp: a different operator for each tuple element.
template <class... Ops>
EachOp<Ops...> Each(Ops... ops) {
  return EachOp<Ops...>{std::tuple<Ops...>(ops...)};
}

/// A user operator from a callable `f(const T& in, T& inout)` (inout = in ∘ inout), its
/// neutral element, and whether it commutes: `MakeOp<Commutes::no>(f, identity)`.
enum class Commutes { no, yes };

/// A user operator made by MakeOp: the callable, its neutral element, and whether it
/// commutes.
template <Commutes C, class T, class F>
struct LambdaOp {
  F f;         ///< Called as f(in, inout): inout = in ∘ inout.
  T identity;  ///< The neutral element.
  /// Commutes::yes allows any order of combination; Commutes::no keeps list and rank order.
  static constexpr bool commutative = (C == Commutes::yes);
  /// No MPI_Op of the MPI library: Tributary calls `f` itself.
  static constexpr detail::BuiltinOp builtin = detail::BuiltinOp::none;
  /// inout = in ∘ inout.
  TRIBUTARY_FUNCTION void operator()(const T& in, T& inout) const { f(in, inout); }
  /// The neutral element given at construction.
  const T& IdentityValue() const { return identity; }
};

/// Makes a user operator from a callable and its neutral element.
template <Commutes C, class T, class F>
LambdaOp<C, T, F> MakeOp(F f, T identity) {
  return LambdaOp<C, T, F>{std::move(f), std::move(identity)};
}

namespace detail {

template <class Op, class = void>
struct HasCommuteTag : std::false_type {};
template <class Op>
struct HasCommuteTag<Op, std::void_t<decltype(Op::commutative)>> : std::true_type {};

template <class Op, class = void>
struct OpBuiltin {
  static constexpr BuiltinOp value = BuiltinOp::none;
};
template <class Op>
struct OpBuiltin<Op, std::void_t<decltype(Op::builtin)>> {
  static constexpr BuiltinOp value = Op::builtin;
};

template <class Op, class E, class = void>
struct HasStaticIdentity : std::false_type {};
template <class Op, class E>
struct HasStaticIdentity<Op, E, std::void_t<decltype(Op::template Identity<E>())>>
    : std::true_type {};

template <class Op, class = void>
struct HasIdentityValue : std::false_type {};
template <class Op>
struct HasIdentityValue<Op, std::void_t<decltype(std::declval<const Op&>().IdentityValue())>>
    : std::true_type {};

template <class Op, class E, class = void>
struct HasPlainIdentity : std::false_type {};
template <class Op, class E>
struct HasPlainIdentity<Op, E, std::enable_if_t<std::is_convertible_v<decltype(Op::identity()), E>>>
    : std::true_type {};

/// True when Op can tell its neutral element for elements of type E.
template <class Op, class E>
constexpr bool kHasIdentity = HasStaticIdentity<Op, E>::value || HasIdentityValue<Op>::value ||
                              HasPlainIdentity<Op, E>::value;

/// The neutral element of `op` for elements of type E.
template <class E, class Op>
E IdentityOf(const Op& op) {
  if constexpr (HasIdentityValue<Op>::value) {
    return op.IdentityValue();
  } else if constexpr (HasStaticIdentity<Op, E>::value) {
    return Op::template Identity<E>();
  } else {
    static_assert(HasPlainIdentity<Op, E>::value,
                  "this operator declares no neutral element: add `static T identity()`");
    return Op::identity();
  }
}

/// Compile-time checks every operator passes: it must say whether it commutes.
template <class Op>
constexpr void CheckOperator() {
  static_assert(HasCommuteTag<Op>::value,
                "a user operator must declare `static constexpr bool commutative = ...;`");
}

}  // namespace detail
}  // namespace tributary
