// Tributary's Kokkos layer: everything public (tributary/tributary.hpp) and what takes
// Kokkos types: ContributeView and ContributeKernel on AllReduce, Reduce and Batch members,
// Kokkos::View as the value of an AllReduce or Reduce, StageThroughHost for Views in memory
// the host cannot read, and ExactSumReducer for exact sums in a user's own parallel_reduce. Include
// this header instead of tributary/tributary.hpp in a translation unit that uses any of these; the
// others then compile no Kokkos header beyond Kokkos_Macros.hpp. Needs a Tributary built with
// TRIBUTARY_ENABLE_KOKKOS=ON.
#pragma once

// Marks the internal headers below as included through a public one (detail/*: they refuse
// direct inclusion).
#ifndef TRIBUTARY_PUBLIC_INCLUDE
#define TRIBUTARY_PUBLIC_INCLUDE
#define TRIBUTARY_PUBLIC_INCLUDE_NOT_DEFINED_KOKKOS
#endif

#include "tributary/config.hpp"

#if !TRIBUTARY_HAVE_KOKKOS
#error "tributary/kokkos.hpp: this Tributary was built without Kokkos (TRIBUTARY_ENABLE_KOKKOS=OFF)"
#endif

#include <Kokkos_Core.hpp>

#include "tributary/detail/device/batch_kernels.hpp"
#include "tributary/detail/device/device_contributions.hpp"
#include "tributary/detail/device/staged_view.hpp"
#include "tributary/detail/device/view_values.hpp"
#include "tributary/exact_sum_reducer.hpp"
#include "tributary/tributary.hpp"

#ifdef TRIBUTARY_PUBLIC_INCLUDE_NOT_DEFINED_KOKKOS
#undef TRIBUTARY_PUBLIC_INCLUDE
#undef TRIBUTARY_PUBLIC_INCLUDE_NOT_DEFINED_KOKKOS
#endif
