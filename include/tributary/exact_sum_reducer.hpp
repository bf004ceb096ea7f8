// ExactSumReducer: a Kokkos reducer whose value is an ExactSum, for a user's own
// Kokkos::parallel_reduce (any policy: RangePolicy, MDRangePolicy of any rank, TeamPolicy)
// and for the nested reductions inside a team (TeamThreadRange, ThreadVectorRange). Every
// join is an exact merge, so the result does not depend on the backend's order of joins,
// the launch shape or the thread count: the ExactSum partial it gives feeds
// Determinism::rank_count_independent (Contribute(list, sum) on the host, or
// ContributeView(list, exec, view, Sum{}) with the sum left in device memory). With
// ExactSums<K> as its value it sums K values in one pass, each exactly, for a value of K
// elements (std::array, a C array, a contiguous container). On a GPU backend an exact
// reduction over an MDRangePolicy runs on FitTiles(policy): Kokkos' default tiles do not fit
// a value of 576 bytes per thread in shared memory.
//
//   tributary::ExactSum part;                                  // or a View<ExactSum, Mem>
//   Kokkos::parallel_reduce(tributary::FitTiles(policy),
//                           KOKKOS_LAMBDA(int b, int k, int j, int i, tributary::ExactSum& s) {
//                             s += u(b, k, j, i);
//                           },
//                           tributary::ExactSumReducer<>(part));
//
// Part of the Kokkos layer: included through tributary/kokkos.hpp.
#pragma once

#include "tributary/config.hpp"

#if !TRIBUTARY_HAVE_KOKKOS
#error "tributary/exact_sum_reducer.hpp: this Tributary was built without Kokkos"
#endif

#include <Kokkos_Core.hpp>
#include <cstddef>
#include <type_traits>

#include "tributary/exact_sum.hpp"

namespace tributary {

namespace detail {
/// T itself, in a context where a constructor argument does not deduce it (the deduction
/// guides below decide the reducer's type).
template <class T>
struct NotDeduced {
  using type = T;
};
}  // namespace detail

/// A Kokkos reducer summing exactly into an ExactSum (Value, the default) or into K sums at
/// once (Value = ExactSums<K>: a functor that sums K values in one pass, `s[0] += x; s[1] +=
/// y;`): a host value (Space = HostSpace, the default: the reduction then completes before
/// parallel_reduce returns, as with Kokkos::Sum into a scalar) or a rank-0 View in `Space`
/// (asynchronous on the policy's instance). The value a functor receives is the
/// accumulator: add a double with `s += x` (exact), another accumulator with `s += other`.
template <class Space = Kokkos::HostSpace, class Value = ExactSum>
struct ExactSumReducer {
  using reducer = ExactSumReducer<Space, Value>;  ///< Kokkos' reducer concept: the reducer itself.
  using value_type = Value;                       ///< The value a functor accumulates into.
  using result_view_type = Kokkos::View<value_type, Space>;  ///< Where the result goes.

  /// Reduces into a host value (Space = HostSpace: parallel_reduce waits for the result).
  KOKKOS_INLINE_FUNCTION ExactSumReducer(typename detail::NotDeduced<Value>::type& value)
      : value_(&value), references_scalar_(true) {}
  /// Reduces into a rank-0 View in `Space` (asynchronous on the policy's instance).
  KOKKOS_INLINE_FUNCTION ExactSumReducer(
      const typename detail::NotDeduced<result_view_type>::type& value)
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
  /// True when constructed from a host value.
  KOKKOS_INLINE_FUNCTION bool references_scalar() const { return references_scalar_; }

 private:
  result_view_type value_;
  bool references_scalar_;
};

/// ExactSumReducer(sum) reduces into host memory.
ExactSumReducer(ExactSum&)->ExactSumReducer<Kokkos::HostSpace>;
/// ExactSumReducer(sums) with ExactSums<K> sums: K sums in host memory.
template <std::size_t K>
ExactSumReducer(ExactSums<K>&) -> ExactSumReducer<Kokkos::HostSpace, ExactSums<K>>;
/// ExactSumReducer(view) takes the View's memory space and value.
template <class... P>
ExactSumReducer(const Kokkos::View<ExactSum, P...>&)
    -> ExactSumReducer<typename Kokkos::View<ExactSum, P...>::memory_space>;
/// ExactSumReducer(view) over a View of ExactSums<K>: K sums in the View's memory space.
template <std::size_t K, class... P>
ExactSumReducer(const Kokkos::View<ExactSums<K>, P...>&)
    -> ExactSumReducer<typename Kokkos::View<ExactSums<K>, P...>::memory_space, ExactSums<K>>;

namespace detail {

/// Kokkos' MDRange reduction on a GPU backend runs a block per tile, of the tile's size
/// rounded up to a power of two, and keeps one value per thread in shared memory:
/// (threads + 2) values must fit a block's shared memory, and Kokkos does not shrink the
/// tiles itself. Returns `tiles` (of `rank` dimensions) halved, the largest first, until
/// values of `value_bytes` fit `shared_bytes`; unchanged where they fit.
template <class Tiles>
Tiles TilesFittingSharedMemory(Tiles tiles, int rank, std::size_t value_bytes,
                               std::size_t shared_bytes) {
  const auto threads = [&tiles, rank] {
    std::size_t product = 1, block = 1;
    for (int d = 0; d < rank; ++d) product *= static_cast<std::size_t>(tiles[d] > 0 ? tiles[d] : 1);
    while (block < product) block *= 2;
    return block;
  };
  while ((threads() + 2) * value_bytes > shared_bytes) {
    int largest = 0;
    for (int d = 1; d < rank; ++d)
      if (tiles[d] > tiles[largest]) largest = d;
    if (tiles[largest] <= 1) break;
    tiles[largest] = (tiles[largest] + 1) / 2;
  }
  return tiles;
}

template <class Policy>
struct IsMDRange : std::false_type {};
template <class... P>
struct IsMDRange<Kokkos::MDRangePolicy<P...>> : std::true_type {};

}  // namespace detail

/// The policy a `parallel_reduce` whose value is a `Value` (an ExactSum by default, or
/// ExactSums<K>) can launch on. On a GPU backend Kokkos reduces an MDRangePolicy with one
/// value per thread of a tile in shared memory, and its default tiles (256 threads) do not
/// fit 576-byte ExactSums: the launch fails ("shared memory request is too large"). This
/// returns the policy with its tiles halved, the largest first, until the values fit 48 KiB
/// (CUDA's limit without opting in; HIP has 64). Other policies, host backends and values
/// that fit: the policy unchanged. Tributary's own kernels need none of this (on a GPU its
/// exact MDRange kernels do not reduce through Kokkos, or fit their tiles); a user's own
/// exact MDRange reduction passes its policy through it:
///
///   Kokkos::parallel_reduce(tributary::FitTiles(policy), functor,
///   tributary::ExactSumReducer<>(s));
template <class Value = ExactSum, class Policy>
Policy FitTiles(const Policy& policy) {
  if constexpr (detail::IsMDRange<Policy>::value) {
    using Space = typename Policy::execution_space::memory_space;
    if constexpr (!Kokkos::SpaceAccessibility<Kokkos::HostSpace, Space>::accessible) {
      const auto tiles = detail::TilesFittingSharedMemory(
          policy.m_tile, static_cast<int>(Policy::rank), sizeof(Value), 48 * 1024);
      bool same = true;
      for (int d = 0; d < static_cast<int>(Policy::rank); ++d)
        same = same && tiles[d] == policy.m_tile[d];
      if (!same) return Policy(policy.space(), policy.m_lower, policy.m_upper, tiles);
    }
  }
  return policy;
}

}  // namespace tributary
