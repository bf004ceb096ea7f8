// Kokkos::View as a value of AllReduce / Reduce: rank-1 Views in host-readable memory are
// values like std::vector; StageThroughHost names the memory spaces whose Views are staged
// through host memory instead (detail/device/staged_view.hpp). Part of the Kokkos layer: included
// through tributary/kokkos.hpp.
#pragma once

#if !defined(TRIBUTARY_PUBLIC_INCLUDE) && !defined(TRIBUTARY_INTERNAL_INCLUDE)
#error \
    "<tributary/detail/device/view_values.hpp> is internal to Tributary: include <tributary/kokkos.hpp> instead"
#endif

#include "tributary/config.hpp"

#if TRIBUTARY_HAVE_KOKKOS

#include <Kokkos_Core.hpp>
#include <cstddef>
#include <type_traits>

#include "tributary/datatype.hpp"

namespace tributary {

/// Whether AllReduce / Reduce values in memory space M reach the network through a copy in
/// host memory (true where the host cannot read M, e.g. CudaSpace, HIPSpace). Specialise it
/// to std::true_type for a space the host can read but should not touch element by element
/// (managed memory whose pages would migrate). Such values are handled by
/// detail::StagedReduction: see docs/device.md, "Values in device memory".
template <class M>
struct StageThroughHost
    : std::bool_constant<!Kokkos::SpaceAccessibility<Kokkos::HostSpace, M>::accessible> {};

/// A contiguous rank-1 Kokkos::View in host-accessible memory (a View that must be staged,
/// see StageThroughHost, is reduced through a host copy instead).
template <class E, class... P>
struct ValueTraits<Kokkos::View<E*, P...>,
                   std::enable_if_t<detail::kBitwise<E> && !std::is_const<E>::value>> {
  using View = Kokkos::View<E*, P...>;
  static constexpr bool supported =
      Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename View::memory_space>::accessible &&
      !StageThroughHost<typename View::memory_space>::value;
  static constexpr bool dynamic = true;
  using element = E;
  static E* Data(const View& v) noexcept { return v.data(); }
  static std::size_t Size(const View& v) noexcept { return v.extent(0); }
  static void Resize(View& v, std::size_t n) {
    // tributary-fence-ok: only when a host View's length changes, never in steady state
    if (v.extent(0) != n) Kokkos::resize(v, n);  // tributary-fence-ok
  }
};

}  // namespace tributary

#endif  // TRIBUTARY_HAVE_KOKKOS
