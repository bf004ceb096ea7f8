// How Tributary sees a value: as `count` elements of one trivially copyable element type,
// stored contiguously. ValueTraits<T> decides this at compile time for every supported T;
// an unsupported T does not compile. MpiType<E> names the MPI datatype of one element.
#pragma once

// Marks the internal headers below as included through a public one (detail/*: they refuse
// direct inclusion).
#ifndef TRIBUTARY_PUBLIC_INCLUDE
#define TRIBUTARY_PUBLIC_INCLUDE
#define TRIBUTARY_PUBLIC_INCLUDE_NOT_DEFINED_DATATYPE
#endif

#include <array>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "tributary/config.hpp"
#include "tributary/detail/device/kokkos_hooks.hpp"

#if TRIBUTARY_HAVE_MPI
#include <mpi.h>
#endif

namespace tributary {

namespace detail {
/// Values Tributary copies as bytes: trivially copy-constructible and destructible (this
/// admits std::tuple and std::pair of such values, which are not trivially copyable).
template <class T>
constexpr bool kBitwise =
    std::is_trivially_copy_constructible_v<T>&& std::is_trivially_destructible_v<T>;

template <class E>
constexpr bool kBuiltinElement =
    std::is_arithmetic_v<E> || std::is_same_v<E, std::complex<float>> ||
    std::is_same_v<E, std::complex<double>> || std::is_same_v<E, std::complex<long double>>;

template <class T>
struct IsStdArrayOfBuiltin : std::false_type {};
template <class E, std::size_t N>
struct IsStdArrayOfBuiltin<std::array<E, N>> : std::bool_constant<kBuiltinElement<E>> {};

// The standard types that have their own traits below (or are not values: text).
template <class T>
struct IsStandardSequence : std::false_type {};
template <class E, std::size_t N>
struct IsStandardSequence<std::array<E, N>> : std::true_type {};
template <class E, class A>
struct IsStandardSequence<std::vector<E, A>> : std::true_type {};
template <class C, class Tr, class A>
struct IsStandardSequence<std::basic_string<C, Tr, A>> : std::true_type {};

/// The element of a class with `data()` (a pointer to its elements) and `size()`, or void.
template <class T, class = void>
struct ContainerElement {
  using type = void;
};
template <class T>
struct ContainerElement<T, std::void_t<decltype(std::declval<T&>().data()),
                                       decltype(std::declval<const T&>().size())>> {
  using Pointer = decltype(std::declval<T&>().data());
  using type = std::conditional_t<std::is_pointer_v<Pointer>, std::remove_pointer_t<Pointer>, void>;
};

/// A user's contiguous container, as Parthenon's `contiguous_container` concept has it: a
/// class with `data()` and `size()` whose elements are trivially copyable (and not bool),
/// other than the standard types and Kokkos Views, which have traits of their own. Its
/// copy constructor may be the user's own (Parthenon's summable arrays write one).
template <class T, class E = typename ContainerElement<T>::type>
constexpr bool kContiguousContainer =
    std::is_class_v<T> && !std::is_void_v<E> && !std::is_const_v<E> && kBitwise<E> &&
    !std::is_same_v<E, bool> && !IsStandardSequence<T>::value && !LooksLikeView<T>::value;

/// Whether a container can change its element count (a `resize(n)` member).
template <class T, class = void>
struct HasResize : std::false_type {};
template <class T>
struct HasResize<T, std::void_t<decltype(std::declval<T&>().resize(std::size_t{}))>>
    : std::true_type {};
}  // namespace detail

/// The layout of a value of type T, specialisable for user containers. Members:
/// `element` (trivially copyable), `dynamic` (the element count can change at run time),
/// `Data(v)`, `Size(v)`, and for dynamic types `Resize(v, n)`.
template <class T, class Enable = void>
struct ValueTraits {
  /// False: T is not a value type Tributary can reduce (it does not compile).
  static constexpr bool supported = false;
};

/// A single element: arithmetic, std::complex, or any trivially copyable struct (which then
/// needs a user operator; builtin arithmetic operators do not apply to it).
template <class T>
struct ValueTraits<
    T,
    std::enable_if_t<detail::kBitwise<T> && !std::is_array_v<T> && !std::is_pointer_v<T> &&
                     !detail::IsStdArrayOfBuiltin<T>::value && !detail::kContiguousContainer<T>>> {
  static constexpr bool supported = true;
  static constexpr bool dynamic = false;
  using element = T;
  static T* Data(T& v) noexcept { return &v; }
  static const T* Data(const T& v) noexcept { return &v; }
  static constexpr std::size_t Size(const T&) noexcept { return 1; }
};

/// std::array of elements (a std::array of a trivially copyable struct is one element).
template <class E, std::size_t N>
struct ValueTraits<std::array<E, N>, std::enable_if_t<detail::kBuiltinElement<E>>> {
  static constexpr bool supported = true;
  static constexpr bool dynamic = false;
  using element = E;
  static E* Data(std::array<E, N>& v) noexcept { return v.data(); }
  static const E* Data(const std::array<E, N>& v) noexcept { return v.data(); }
  static constexpr std::size_t Size(const std::array<E, N>&) noexcept { return N; }
};

/// C arrays.
template <class E, std::size_t N>
struct ValueTraits<E[N], std::enable_if_t<detail::kBitwise<E>>> {
  static constexpr bool supported = true;
  static constexpr bool dynamic = false;
  using element = E;
  static E* Data(E (&v)[N]) noexcept { return v; }
  static const E* Data(const E (&v)[N]) noexcept { return v; }
  static constexpr std::size_t Size(const E (&)[N]) noexcept { return N; }
};

/// std::vector: reduced elementwise; every rank must have the same length.
template <class E>
struct ValueTraits<std::vector<E>,
                   std::enable_if_t<detail::kBitwise<E> && !std::is_same_v<E, bool>>> {
  static constexpr bool supported = true;
  static constexpr bool dynamic = true;
  using element = E;
  static E* Data(std::vector<E>& v) noexcept { return v.data(); }
  static const E* Data(const std::vector<E>& v) noexcept { return v.data(); }
  static std::size_t Size(const std::vector<E>& v) noexcept { return v.size(); }
  static void Resize(std::vector<E>& v, std::size_t n) { v.resize(n); }
};

/// A user's contiguous container (`data()`, `size()`, trivially copyable elements; e.g. a
/// struct holding `E data_[N]` on the pattern of Parthenon's summable arrays, whose copy
/// constructor is user-written): reduced elementwise in place, each element in the
/// determinism mode of the object. With `resize(n)` its length may change as a
/// std::vector's does; without, every object of the type must hold the same number of
/// elements (a different one is a UsageError at the start).
template <class T>
struct ValueTraits<T, std::enable_if_t<detail::kContiguousContainer<T>>> {
  static constexpr bool supported = true;
  static constexpr bool dynamic = detail::HasResize<T>::value;
  using element = typename detail::ContainerElement<T>::type;
  static element* Data(T& v) noexcept(noexcept(v.data())) { return v.data(); }
  // A container may declare data() for non-const objects only.
  static const element* Data(const T& v) noexcept(noexcept(const_cast<T&>(v).data())) {
    return const_cast<T&>(v).data();
  }
  static std::size_t Size(const T& v) noexcept(noexcept(v.size())) {
    return static_cast<std::size_t>(v.size());
  }
  template <class U = T, std::enable_if_t<detail::HasResize<U>::value, int> = 0>
  static void Resize(U& v, std::size_t n) {
    v.resize(n);
  }
};

/// True when T can be reduced by Tributary.
template <class T>
constexpr bool kIsReducible = ValueTraits<T>::supported;

#if TRIBUTARY_HAVE_MPI
namespace detail {
/// A contiguous datatype of `bytes` bytes, committed once per process and freed when MPI
/// finalises (through an attribute on MPI_COMM_SELF), never by a static destructor.
MPI_Datatype ByteBlockType(std::size_t bytes);
}  // namespace detail

/// The MPI datatype of one element of type E, decided at compile time. Builtins map to the
/// library's predefined types: the C integer types to their own names (`int` is `MPI_INT`,
/// `long` `MPI_LONG`, ...; so does `std::int64_t`, an alias of one of them), other integer
/// types such as `char` by size and signedness (`MPI_INT8_T`, ...); anything else
/// trivially copyable is a contiguous block of sizeof(E) bytes. Specialise it for your own
/// element types if they need another layout.
template <class E, class Enable = void>
struct MpiType {
  static_assert(detail::kBitwise<E>, "MpiType: the element must be copyable as bytes");
  /// The datatype: a predefined one, or a contiguous type committed once per size and
  /// freed at MPI_Finalize.
  static MPI_Datatype Get() {
    if constexpr (std::is_same_v<E, bool>) {
      return MPI_C_BOOL;
    } else if constexpr (std::is_same_v<E, signed char>) {  // the C names first: a user
      return MPI_SIGNED_CHAR;                               // MPI_Op sees MPI_INT for int
    } else if constexpr (std::is_same_v<E, unsigned char>) {
      return MPI_UNSIGNED_CHAR;
    } else if constexpr (std::is_same_v<E, short>) {
      return MPI_SHORT;
    } else if constexpr (std::is_same_v<E, unsigned short>) {
      return MPI_UNSIGNED_SHORT;
    } else if constexpr (std::is_same_v<E, int>) {
      return MPI_INT;
    } else if constexpr (std::is_same_v<E, unsigned>) {
      return MPI_UNSIGNED;
    } else if constexpr (std::is_same_v<E, long>) {
      return MPI_LONG;
    } else if constexpr (std::is_same_v<E, unsigned long>) {
      return MPI_UNSIGNED_LONG;
    } else if constexpr (std::is_same_v<E, long long>) {
      return MPI_LONG_LONG;
    } else if constexpr (std::is_same_v<E, unsigned long long>) {
      return MPI_UNSIGNED_LONG_LONG;
    } else if constexpr (std::is_integral_v<E>) {
      // char (MPI_CHAR is not for arithmetic), wchar_t, char16_t, ...: by size and sign.
      constexpr bool s = std::is_signed_v<E>;
      if constexpr (sizeof(E) == 1) return s ? MPI_INT8_T : MPI_UINT8_T;
      if constexpr (sizeof(E) == 2) return s ? MPI_INT16_T : MPI_UINT16_T;
      if constexpr (sizeof(E) == 4) return s ? MPI_INT32_T : MPI_UINT32_T;
      if constexpr (sizeof(E) == 8) return s ? MPI_INT64_T : MPI_UINT64_T;
      return detail::ByteBlockType(sizeof(E));
    } else if constexpr (std::is_same_v<E, float>) {
      return MPI_FLOAT;
    } else if constexpr (std::is_same_v<E, double>) {
      return MPI_DOUBLE;
    } else if constexpr (std::is_same_v<E, long double>) {
      return MPI_LONG_DOUBLE;
    } else if constexpr (std::is_same_v<E, std::complex<float>>) {
      return MPI_C_FLOAT_COMPLEX;
    } else if constexpr (std::is_same_v<E, std::complex<double>>) {
      return MPI_C_DOUBLE_COMPLEX;
    } else if constexpr (std::is_same_v<E, std::complex<long double>>) {
      return MPI_C_LONG_DOUBLE_COMPLEX;
    } else {
      return detail::ByteBlockType(sizeof(E));
    }
  }
};

#endif

}  // namespace tributary

#ifdef TRIBUTARY_PUBLIC_INCLUDE_NOT_DEFINED_DATATYPE
#undef TRIBUTARY_PUBLIC_INCLUDE
#undef TRIBUTARY_PUBLIC_INCLUDE_NOT_DEFINED_DATATYPE
#endif
