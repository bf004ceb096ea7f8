// Short names of value types for messages ("double", "std::vector<int32>", "T").
#pragma once

#if !defined(TRIBUTARY_PUBLIC_INCLUDE) && !defined(TRIBUTARY_INTERNAL_INCLUDE)
#error \
    "<tributary/detail/core/type_name.hpp> is internal to Tributary: include <tributary/tributary.hpp> instead"
#endif

#include <array>
#include <string>
#include <type_traits>
#include <vector>

#include "tributary/config.hpp"
#include "tributary/datatype.hpp"
#include "tributary/detail/device/kokkos_hooks.hpp"

namespace tributary::detail {

template <class T>
struct TypeName {
  static std::string Get() {
    if constexpr (std::is_same_v<T, double>)
      return "double";
    else if constexpr (std::is_same_v<T, float>)
      return "float";
    else if constexpr (std::is_same_v<T, long double>)
      return "long double";
    else if constexpr (std::is_same_v<T, bool>)
      return "bool";
    else if constexpr (std::is_integral_v<T>)
      return std::string(std::is_signed_v<T> ? "int" : "uint") + std::to_string(8 * sizeof(T));
    else if constexpr (LooksLikeView<T>::value)
      return "Kokkos::View";
    else if constexpr (kContiguousContainer<T>)
      return "container<" + TypeName<typename ContainerElement<T>::type>::Get() + ">";
    else
      return "T";
  }
};
template <class E>
struct TypeName<std::vector<E>> {
  static std::string Get() { return "std::vector<" + TypeName<E>::Get() + ">"; }
};
template <class E, std::size_t N>
struct TypeName<std::array<E, N>> {
  static std::string Get() {
    return "std::array<" + TypeName<E>::Get() + ", " + std::to_string(N) + ">";
  }
};
template <class E, std::size_t N>
struct TypeName<E[N]> {
  static std::string Get() { return TypeName<E>::Get() + "[" + std::to_string(N) + "]"; }
};

/// A short name of T for messages ("double", "std::vector<int32>", "T" for user types).
template <class T>
std::string TypeLabel() {
  return TypeName<T>::Get();
}

}  // namespace tributary::detail
