// The Kokkos half of the typed facades: ContributeView and ContributeKernel of AllReduce /
// Reduce (TypedReduction) and of Batch members, on top of the device list partials
// (detail/list_partials_device.hpp). Part of the Kokkos layer: included through
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
#include "tributary/detail/device/device_partials.hpp"
#include "tributary/detail/device/device_policy_kernels.hpp"
#include "tributary/detail/device/kokkos_hooks.hpp"
#include "tributary/detail/device/list_partials_device.hpp"
#include "tributary/errors.hpp"

namespace tributary::detail {

/// Found by argument-dependent lookup from TRIBUTARY_REQUIRE_KOKKOS_LAYER: the device entry
/// points have their definitions below.
template <class Any>
std::true_type KokkosLayerIncluded(KokkosLayerTag, const Any&);

template <class T>
template <class Exec, class View, class Op>
void TypedReduction<T>::ContributeViewOnDevice(int list_index, const Exec& exec, const View& data,
                                               const Op& op, std::int64_t first_index) {
  CheckViewContribution<E, Exec, View, Op>();
  const bool one = !Traits::dynamic && Traits::Size(val) == 1;
  const std::string shape = ViewShapeError<E>(one ? 1 : 2, data);
  if (!shape.empty()) partials_.DeviceShapeError(list_index, shape, Traits::Size(val));
  const std::size_t k = one ? 1 : LastExtent(data);
  // The last list's kernel queues the fold; DeviceReady launches once it is done.
  (void)partials_.ContributeView(list_index, exec, data, op, *op_, first_index, k, exact_,
                                 FixedSize());
}

template <class T>
template <class Policy, class F, class Op>
void TypedReduction<T>::ContributeKernelOnDevice(int list_index, const Policy& policy, const F& f,
                                                 const Op& op) {
  static_assert(!Traits::dynamic, "ContributeKernel: for values of one element");
  CheckKernelContribution<E, Policy, F, Op>();
  if (Traits::Size(val) != 1)
    partials_.DeviceShapeError(list_index, "a kernel for a value of several elements",
                               Traits::Size(val));
  (void)partials_.ContributeKernel(list_index, policy, f, op, *op_, exact_, 1);
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
  if (k > 1 && detail::LastExtent(data) != k)
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
  detail::CheckKernelContribution<E, Policy, F, Op>();
  if (Traits::Size(val) != 1)
    throw UsageError(batch_->core_->Where() + ": member '" + label +
                     "': ContributeKernel needs a member of one element");
  if (partials_.ContributeKernel(list_index, policy, f, op, *op_, exact_, 1)) batch_->LastArrived();
}

}  // namespace tributary

#endif  // TRIBUTARY_HAVE_KOKKOS
