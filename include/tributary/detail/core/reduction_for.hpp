// The typed layer an AllReduce<T> or Reduce<T> is built on: TypedReduction<T>, or, for a
// View in memory the host cannot read, StagedReduction<T> (detail/device/staged_view.hpp, part
// of the Kokkos layer that tributary/kokkos.hpp brings in).
#pragma once

#if !defined(TRIBUTARY_PUBLIC_INCLUDE) && !defined(TRIBUTARY_INTERNAL_INCLUDE)
#error \
    "<tributary/detail/core/reduction_for.hpp> is internal to Tributary: include <tributary/tributary.hpp> instead"
#endif

#include <type_traits>

#include "tributary/config.hpp"
#include "tributary/detail/core/typed_reduction.hpp"

namespace tributary::detail {

/// A rank-1 View of plain elements that must be staged through host memory: true only by
/// the specialisation in detail/device/staged_view.hpp.
template <class T>
struct IsStagedView : std::false_type {};

template <class T>
class StagedReduction;

template <class T>
using ReductionFor =
    std::conditional_t<IsStagedView<T>::value, StagedReduction<T>, TypedReduction<T>>;

}  // namespace tributary::detail
