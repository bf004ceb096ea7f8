// The typed layer an AllReduce<T> or Reduce<T> is built on: ReductionBase<T>, or, for a
// View in memory the host cannot read, StagedReduction<T> (staged_view.hpp).
#pragma once

#include <type_traits>

#include "tributary/config.hpp"
#include "tributary/detail/reduction_base.hpp"
#if TRIBUTARY_HAVE_KOKKOS
#include "tributary/detail/staged_view.hpp"
#endif

namespace tributary::detail {

#if TRIBUTARY_HAVE_KOKKOS
template <class T>
using ReductionFor = std::conditional_t<IsStagedView<T>::value, StagedReduction<T>, ReductionBase<T>>;
#else
template <class T>
using ReductionFor = ReductionBase<T>;
#endif

}  // namespace tributary::detail
