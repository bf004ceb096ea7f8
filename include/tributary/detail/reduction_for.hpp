// The typed layer an AllReduce<T> or Reduce<T> is built on: TypedReduction<T>, or, for a
// View in memory the host cannot read, StagedReduction<T> (staged_view.hpp).
#pragma once

#include <type_traits>

#include "tributary/config.hpp"
#include "tributary/detail/typed_reduction.hpp"
#if TRIBUTARY_HAVE_KOKKOS
#include "tributary/detail/staged_view.hpp"
#endif

namespace tributary::detail {

#if TRIBUTARY_HAVE_KOKKOS
template <class T>
using ReductionFor = std::conditional_t<IsStagedView<T>::value, StagedReduction<T>, TypedReduction<T>>;
#else
template <class T>
using ReductionFor = TypedReduction<T>;
#endif

}  // namespace tributary::detail
