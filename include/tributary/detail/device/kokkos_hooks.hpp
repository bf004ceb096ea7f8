// What the Kokkos-free facades know of Kokkos: a View and an execution space recognised by
// their member types (Kokkos's headers are not included), and whether the Kokkos layer
// (tributary/kokkos.hpp) is part of the translation unit, so that a View contributed
// without it stops at a static_assert that names the header rather than at the linker; and
// the device contributions' entry points that the reduction objects share.
#pragma once

#if !defined(TRIBUTARY_PUBLIC_INCLUDE) && !defined(TRIBUTARY_INTERNAL_INCLUDE)
#error \
    "<tributary/detail/device/kokkos_hooks.hpp> is internal to Tributary: include <tributary/kokkos.hpp> instead"
#endif

#include <cstdint>
#include <type_traits>
#include <utility>

#include "tributary/config.hpp"
#include "tributary/tasks/task_status.hpp"

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

namespace tributary::detail {

/// The device contributions of a reduction object (AllReduce, Reduce, a Batch member),
/// written once: `Object` derives from DeviceContributionApi<Object>, befriends it and
/// declares ContributeViewOnDevice and ContributeKernelOnDevice, which the Kokkos layer
/// defines (detail/device/device_contributions.hpp).
template <class Object>
class DeviceContributionApi {
 public:
#if TRIBUTARY_HAVE_KOKKOS
  /// Contributes list `list_index`'s partial computed on the device from `data`, a
  /// Kokkos::View of rank 1 to 3 (any layout, a subview included) that `exec` can read,
  /// reduced with `op` (the generation's operator) into the list's slot in the memory of
  /// `exec`, without a host fence:
  ///  - a value of one element: every element of `data` is reduced to one (for MinLoc /
  ///    MaxLoc over a View of plain values, element i carries index `first_index` + i, i
  ///    counted row-major over the View's extents);
  ///  - a value of k elements (std::vector, std::array, a host View): `data` of rank 1
  ///    holds the list's k values; `data` of rank 2 (n x k) is reduced over its rows.
  /// The last list's contribution queues the list-order fold; the network phase starts when
  /// a CheckReduce finds that work done (a Batch member: once every member's device work is
  /// done). All lists of a generation contribute on the device, in one execution space. The
  /// operator must commute (the backend joins partial results in its own order); UsageError
  /// for a different operator than the generation's.
  template <
      class Exec, class View, class Op,
      std::enable_if_t<LooksLikeExecutionSpace<Exec>::value && LooksLikeView<View>::value, int> = 0>
  TaskStatus ContributeView(int list_index, const Exec& exec, const View& data, const Op& op,
                            std::int64_t first_index = 0) {
    TRIBUTARY_REQUIRE_KOKKOS_LAYER(data);
    static_cast<Object*>(this)->ContributeViewOnDevice(list_index, exec, data, op, first_index);
    return TaskStatus::complete;
  }

  /// ContributeView on the View's default execution-space instance.
  template <class View, class Op, std::enable_if_t<LooksLikeView<View>::value, int> = 0>
  TaskStatus ContributeView(int list_index, const View& data, const Op& op,
                            std::int64_t first_index = 0) {
    return ContributeView(list_index, typename View::execution_space(), data, op, first_index);
  }

  /// Contributes list `list_index`'s partial as the reduction with `op` of a kernel over
  /// `policy` (a RangePolicy, an MDRangePolicy of rank 2 to 6, or a TeamPolicy), on the
  /// policy's execution-space instance, into the list's device slot, without a host fence.
  /// The functor gives the element (`f(i...)`; for MinLoc / MaxLoc a ValueLoc with the
  /// user's global index; a team: `f(member)`, the team's partial, added once per team) or
  /// accumulates it as a Kokkos reduction functor does (`f(i..., E& acc)`,
  /// `f(member, E& acc)`). With exact sums (Determinism::rank_count_independent, Sum over
  /// float or double) the values it gives are added exactly; one that accumulates takes
  /// `ExactSum& acc`. A value of K elements (std::array<E, K>, E[K], a contiguous
  /// container that consists of its K elements) takes all K from one pass: the functor
  /// accumulates into the value type (`f(i..., T& acc)`, `acc[0] += ...; acc[1] += ...;`)
  /// or into `E (&acc)[K]`, or gives them (`T f(i...)`, `std::array<E, K> f(i...)`); each
  /// element is combined with `op`, or summed exactly into `tributary::ExactSums<K>& acc`.
  template <class Policy, class F, class Op>
  TaskStatus ContributeKernel(int list_index, const Policy& policy, const F& f, const Op& op) {
    TRIBUTARY_REQUIRE_KOKKOS_LAYER(policy);
    static_cast<Object*>(this)->ContributeKernelOnDevice(list_index, policy, f, op);
    return TaskStatus::complete;
  }
#endif
};

}  // namespace tributary::detail
