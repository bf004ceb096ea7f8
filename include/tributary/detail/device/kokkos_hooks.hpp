// What the Kokkos-free facades know of Kokkos: a View and an execution space recognised by
// their member types (Kokkos's headers are not included), and whether the Kokkos layer
// (tributary/kokkos.hpp) is part of the translation unit, so that a View contributed
// without it stops at a static_assert that names the header rather than at the linker.
#pragma once

#if !defined(TRIBUTARY_PUBLIC_INCLUDE) && !defined(TRIBUTARY_INTERNAL_INCLUDE)
#error \
    "<tributary/detail/device/kokkos_hooks.hpp> is internal to Tributary: include <tributary/kokkos.hpp> instead"
#endif

#include <type_traits>
#include <utility>

namespace tributary::detail {

/// A Kokkos::View (or a subview): a layout, a memory space, an execution space, data().
template <class V, class = void>
struct LooksLikeView : std::false_type {};
template <class V>
struct LooksLikeView<
    V, std::void_t<typename V::array_layout, typename V::memory_space, typename V::execution_space,
                   decltype(std::declval<const V&>().data())>>
    : std::bool_constant<!std::is_same_v<typename V::execution_space, V>> {};

/// A Kokkos execution space: its own execution_space, and a memory space.
template <class X, class = void>
struct LooksLikeExecutionSpace : std::false_type {};
template <class X>
struct LooksLikeExecutionSpace<X,
                               std::void_t<typename X::execution_space, typename X::memory_space>>
    : std::is_same<typename X::execution_space, X> {};

/// The probe: the overload for KokkosLayerTag is declared by tributary/kokkos.hpp and found
/// by argument-dependent lookup where a device contribution is instantiated; without that
/// header only this fallback exists.
struct KokkosLayerFallback {};
struct KokkosLayerTag : KokkosLayerFallback {};
template <class Any>
std::false_type KokkosLayerIncluded(KokkosLayerFallback, const Any&);

}  // namespace tributary::detail

/// The message of every device entry point used without the Kokkos layer.
#define TRIBUTARY_REQUIRE_KOKKOS_LAYER(arg)                                                       \
  static_assert(decltype(KokkosLayerIncluded(::tributary::detail::KokkosLayerTag{}, arg))::value, \
                "tributary: Kokkos Views and kernels need #include \"tributary/kokkos.hpp\"")
