// ExactSumReducer: a Kokkos reducer whose value is an ExactSum, for a user's own
// Kokkos::parallel_reduce (any policy: RangePolicy, MDRangePolicy of any rank, TeamPolicy)
// and for the nested reductions inside a team (TeamThreadRange, ThreadVectorRange). Every
// join is an exact merge, so the result does not depend on the backend's order of joins,
// the launch shape or the thread count: the ExactSum partial it gives feeds
// Determinism::rank_count_independent (Contribute(list, sum) on the host, or
// ContributeView(list, exec, view, Sum{}) with the sum left in device memory).
//
//   tributary::ExactSum part;                                  // or a View<ExactSum, Mem>
//   Kokkos::parallel_reduce(policy, KOKKOS_LAMBDA(int b, int k, int j, int i,
//                                                 tributary::ExactSum& s) { s += u(b, k, j, i); },
//                           tributary::ExactSumReducer<>(part));
//
// Part of the Kokkos layer: included through tributary/kokkos.hpp.
#pragma once

#include "tributary/config.hpp"

#if !TRIBUTARY_HAVE_KOKKOS
#error "tributary/exact_sum_reducer.hpp: this Tributary was built without Kokkos"
#endif

#include <Kokkos_Core.hpp>

#include "tributary/exact_sum.hpp"

namespace tributary {

/// A Kokkos reducer summing exactly into an ExactSum: a host scalar (Space = HostSpace,
/// the default: the reduction then completes before parallel_reduce returns, as with
/// Kokkos::Sum into a scalar) or a rank-0 View in `Space` (asynchronous on the policy's
/// instance). The value a functor receives is an ExactSum: add a double with `s += x`
/// (exact), another accumulator with `s += other`.
template <class Space = Kokkos::HostSpace>
struct ExactSumReducer {
  using reducer = ExactSumReducer<Space>;  ///< Kokkos' reducer concept: the reducer itself.
  using value_type = ExactSum;             ///< The value a functor accumulates into.
  using result_view_type = Kokkos::View<value_type, Space>;  ///< Where the result goes.

  /// Reduces into a scalar (Space = HostSpace: parallel_reduce waits for the result).
  KOKKOS_INLINE_FUNCTION ExactSumReducer(value_type& value)
      : value_(&value), references_scalar_(true) {}
  /// Reduces into a rank-0 View in `Space` (asynchronous on the policy's instance).
  KOKKOS_INLINE_FUNCTION ExactSumReducer(const result_view_type& value)
      : value_(value), references_scalar_(false) {}

  /// dest += src, exactly.
  KOKKOS_INLINE_FUNCTION void join(value_type& dest, const value_type& src) const { dest += src; }
#if KOKKOS_VERSION < 30700
  /// dest += src, exactly, through the volatile references Kokkos before 3.7 joins with.
  KOKKOS_INLINE_FUNCTION void join(volatile value_type& dest,
                                   const volatile value_type& src) const {
    const_cast<value_type&>(dest) += const_cast<const value_type&>(src);
  }
#endif
  /// The empty sum.
  KOKKOS_INLINE_FUNCTION void init(value_type& value) const { value = value_type(); }
  /// The result.
  KOKKOS_INLINE_FUNCTION value_type& reference() const { return *value_.data(); }
  /// The result as a View.
  KOKKOS_INLINE_FUNCTION result_view_type view() const { return value_; }
  /// True when constructed from a scalar.
  KOKKOS_INLINE_FUNCTION bool references_scalar() const { return references_scalar_; }

 private:
  result_view_type value_;
  bool references_scalar_;
};

/// ExactSumReducer(view) takes the View's memory space (ExactSumReducer(sum): HostSpace).
template <class... P>
ExactSumReducer(const Kokkos::View<ExactSum, P...>&)
    -> ExactSumReducer<typename Kokkos::View<ExactSum, P...>::memory_space>;

}  // namespace tributary
