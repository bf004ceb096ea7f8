// The Kokkos half of the typed facades: ContributeView and ContributeKernel of AllReduce /
// Reduce (TypedReduction) and of Batch members, on top of the device list partials
// (detail/device/list_partials_device.hpp). Part of the Kokkos layer: included through
// tributary/kokkos.hpp, which a program includes to contribute Views or kernels.
#pragma once

#if !defined(TRIBUTARY_PUBLIC_INCLUDE) && !defined(TRIBUTARY_INTERNAL_INCLUDE)
#error \
    "<tributary/detail/device/device_contributions.hpp> is internal to Tributary: include <tributary/kokkos.hpp> instead"
#endif

#include "tributary/config.hpp"

#if TRIBUTARY_HAVE_KOKKOS

#include <Kokkos_Core.hpp>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

#include "tributary/batch.hpp"
#include "tributary/detail/core/typed_reduction.hpp"
#include "tributary/detail/device/device_policy_kernels.hpp"
#include "tributary/detail/device/device_stage.hpp"
#include "tributary/detail/device/kokkos_hooks.hpp"
#include "tributary/detail/device/list_partials_device.hpp"
#include "tributary/errors.hpp"

namespace tributary::detail {

/// Found by argument-dependent lookup from TRIBUTARY_REQUIRE_KOKKOS_LAYER: the device entry
/// points have their definitions below.
template <class Any>
std::true_type KokkosLayerIncluded(KokkosLayerTag, const Any&);

/// A container fed by a kernel of K elements (K from its size in bytes) must hold exactly
/// those, from its first byte on: UsageError naming the list otherwise.
template <class T, std::size_t K, class Partials>
void CheckKernelLayout(const Partials& partials, int list, const T& val) {
  if constexpr (kContiguousContainer<T>) {
    using E = typename ValueTraits<T>::element;
    const void* first = ValueTraits<T>::Data(val);
    if (ValueTraits<T>::Size(val) != K || first != static_cast<const void*>(&val))
      partials.DeviceShapeError(list,
                                "a kernel for a container that does not consist of its " +
                                    std::to_string(ValueTraits<T>::Size(val)) + " element(s) (" +
                                    std::to_string(sizeof(T)) + " bytes, " +
                                    std::to_string(sizeof(E)) + " per element)",
                                ValueTraits<T>::Size(val));
  } else {
    (void)partials, (void)list, (void)val;
  }
}

template <class T>
template <class Exec, class View, class Op>
void TypedReduction<T>::ContributeViewOnDevice(int list_index, const Exec& exec, const View& data,
                                               const Op& op, std::int64_t first_index) {
  CheckViewContribution<E, Exec, View, Op>();
  // ExactSums<K> partials carry K per item, whatever the View's rank.
  constexpr std::size_t sums = kSumsPerItem<typename View::non_const_value_type>;
  const bool one = sums == 0 && !Traits::dynamic && Traits::Size(val) == 1;
  const std::size_t value_size = sums == 0         ? (one ? 1 : 2)
                                 : Traits::dynamic ? sums
                                                   : Traits::Size(val);
  const std::string shape = ViewShapeError<E>(value_size, data);
  if (!shape.empty()) partials_.DeviceShapeError(list_index, shape, Traits::Size(val));
  const std::size_t k = sums != 0 ? sums : one ? 1 : LastExtent(data);
  // The last list's kernel queues the fold; DeviceReady launches once it is done.
  (void)partials_.ContributeView(list_index, exec, data, op, *op_, first_index, k, exact_,
                                 FixedSize());
}

template <class T>
template <class Policy, class F, class Op>
void TypedReduction<T>::ContributeKernelOnDevice(int list_index, const Policy& policy, const F& f,
                                                 const Op& op) {
  static_assert(!Traits::dynamic,
                "ContributeKernel: for values of a fixed number of elements (a std::vector or "
                "a View changes its length: contribute a View of its values instead)");
  if constexpr (std::is_same_v<T, E>) {  // one element
    CheckKernelContribution<E, Policy, F, Op>();
    (void)partials_.ContributeKernel(list_index, policy, f, op, *op_, exact_, 1);
  } else {  // K elements, one pass
    constexpr std::size_t K = FixedCount<T>::value;
    CheckMultiKernelContribution<T, E, K, Policy, F, Op>();
    CheckKernelLayout<T, K>(partials_, list_index, val);
    (void)partials_.template ContributeKernelValues<K>(list_index, policy, f, op, *op_, exact_,
                                                       Traits::Size(val));
  }
}

}  // namespace tributary::detail

namespace tributary {

template <class T>
template <class Exec, class View, class Op>
void BatchMember<T>::ContributeViewOnDevice(int list_index, const Exec& exec, const View& data,
                                            const Op& op, std::int64_t first_index) {
  detail::CheckViewContribution<E, Exec, View, Op>();
  const std::size_t k = Traits::Size(val);
  const std::string shape = detail::ViewShapeError<E>(k, data);
  if (!shape.empty())
    throw UsageError(batch_->core_->Where() + ": member '" + label + "': list " +
                     std::to_string(list_index) + " contributed " + shape);
  if (k > 1 && !detail::IsExactSums<typename View::non_const_value_type>::value &&
      detail::LastExtent(data) != k)
    throw UsageError(batch_->core_->Where() + ": member '" + label + "': list " +
                     std::to_string(list_index) + " gave " +
                     std::to_string(detail::LastExtent(data)) + " values for a member of " +
                     std::to_string(k));
  if (partials_.ContributeView(list_index, exec, data, op, *op_, first_index, k, exact_, k))
    batch_->LastArrived();
}

template <class T>
template <class Policy, class F, class Op>
void BatchMember<T>::ContributeKernelOnDevice(int list_index, const Policy& policy, const F& f,
                                              const Op& op) {
  bool last = false;
  if constexpr (std::is_same_v<T, E>) {  // one element
    detail::CheckKernelContribution<E, Policy, F, Op>();
    last = partials_.ContributeKernel(list_index, policy, f, op, *op_, exact_, 1);
  } else {  // K elements, one pass
    constexpr std::size_t K = detail::FixedCount<T>::value;
    detail::CheckMultiKernelContribution<T, E, K, Policy, F, Op>();
    detail::CheckKernelLayout<T, K>(partials_, list_index, val);
    last = partials_.template ContributeKernelValues<K>(list_index, policy, f, op, *op_, exact_,
                                                        Traits::Size(val));
  }
  if (last) batch_->LastArrived();
}

}  // namespace tributary

#endif  // TRIBUTARY_HAVE_KOKKOS
