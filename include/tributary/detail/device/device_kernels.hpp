// The kernels of device partials: a list's View (every element, or its rows) reduced into
// the list's device slot, copies and fills of slots, the list-order fold of the slots, and
// their exact-sum forms (Determinism::rank_count_independent); with the compile-time rules
// a View must meet. Queued by DeviceStage (detail/device/device_stage.hpp). Part of the Kokkos
// layer.
#pragma once

#if !defined(TRIBUTARY_PUBLIC_INCLUDE) && !defined(TRIBUTARY_INTERNAL_INCLUDE)
#error \
    "<tributary/detail/device/device_kernels.hpp> is internal to Tributary: include <tributary/kokkos.hpp> instead"
#endif

#include "tributary/config.hpp"

#if TRIBUTARY_HAVE_KOKKOS

#include <Kokkos_Core.hpp>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "tributary/detail/device/exact_teams.hpp"
#include "tributary/exact_sum.hpp"
#include "tributary/ops.hpp"

// Kokkos before 3.7 calls join with volatile arguments; later versions without.
#if KOKKOS_VERSION < 30700
#define TRIBUTARY_JOIN_CV volatile
#else
#define TRIBUTARY_JOIN_CV
#endif

namespace tributary::detail {

template <class T>
struct IsValueLoc : std::false_type {};
template <class T>
struct IsValueLoc<ValueLoc<T>> : std::true_type {};

template <class T>
struct IsExactSums : std::false_type {};
template <std::size_t K>
struct IsExactSums<ExactSums<K>> : std::true_type {};
/// The sums an item of a View of ExactSums<K> carries (K), 0 for other Views.
template <class T>
constexpr std::size_t kSumsPerItem = 0;
template <std::size_t K>
constexpr std::size_t kSumsPerItem<ExactSums<K>> = K;

/// How a data element of type V becomes an element E of the reduction: E itself, or for
/// MinLoc / MaxLoc a ValueLoc<V> carrying the element's global index.
template <class E, class V>
constexpr bool kViewElementFits = std::is_same_v<E, V> || std::is_same_v<E, ValueLoc<V>>;

/// The compile-time rules of ContributeView (reductions and batch members alike) for a
/// value of element type E.
template <class E, class Exec, class View, class Op>
constexpr void CheckViewContribution() {
  static_assert(Kokkos::is_execution_space<Exec>::value && Kokkos::is_view<View>::value,
                "ContributeView: a Kokkos execution space and a Kokkos::View");
  using V = typename View::non_const_value_type;
  constexpr bool partials = std::is_same_v<V, ExactSum> || IsExactSums<V>::value;
  static_assert(partials || (View::rank >= 1 && View::rank <= 3),
                "ContributeView: a View of rank 1 to 3");
  static_assert(!partials || View::rank <= 1,
                "ContributeView: ExactSum partials in a View of rank 0 or 1");
  static_assert(Kokkos::SpaceAccessibility<Exec, typename View::memory_space>::accessible,
                "ContributeView: the execution space cannot read the View's memory");
  static_assert(kViewElementFits<E, V> ||
                    (partials && (std::is_same_v<E, double> || std::is_same_v<E, float>)),
                "ContributeView: the View's elements must be the value's element type (or, "
                "for ValueLoc<V>, plain V values whose index is their position; ExactSum "
                "partials for float or double)");
  static_assert(std::is_invocable_v<const Op&, const E&, E&>,
                "ContributeView: the operator does not apply to the value's element type");
  static_assert(Op::commutative, "ContributeView: device reductions need a commutative operator");
}

/// The reduction half of every scalar kernel: the neutral element (computed on the host)
/// and the join, `dst = dst ∘ src` with dst holding the lower indices. Written into each
/// kernel (not inherited) because Kokkos 3.4 detects init and join on the functor's own
/// type only.
#define TRIBUTARY_DEVICE_JOIN(E)                                                    \
  using value_type = E;                                                             \
  KOKKOS_INLINE_FUNCTION void init(value_type& v) const { v = identity; }           \
  KOKKOS_INLINE_FUNCTION void join(TRIBUTARY_JOIN_CV value_type& dst,               \
                                   const TRIBUTARY_JOIN_CV value_type& src) const { \
    E later = const_cast<const E&>(src);                                            \
    op(const_cast<const E&>(dst), later);                                           \
    const_cast<E&>(dst) = later;                                                    \
  }

/// Number of interleaved accumulators per chunk, and elements per chunk.
constexpr int kDeviceLanes = 8;
constexpr std::int64_t kDeviceChunk = 1024;

/// How a kernel over every element of a View splits a row into work items. Host backends
/// take contiguous chunks of kDeviceChunk elements (one core streams its chunk; on Serial
/// this is the documented order of a sum). GPU backends interleave: item c of a row takes
/// elements c, c + items, c + 2 items, ..., so that neighbouring threads read neighbouring
/// elements (coalesced loads) and every element has a thread near it; a chunk of 1024
/// contiguous elements per thread left an H200 at 5 % of its read bandwidth on 8 MiB.
template <class Exec>
constexpr bool kInterleavedItems =
    !Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename Exec::memory_space>::accessible;
/// Elements per interleaved item of a plain reduction.
constexpr std::int64_t kInterleavedElements = 8;

/// Reduces every element of a rank 1-3 View to one value. Work item w is item w % cpr of
/// row w / cpr, where a row runs along the last index (rank 1: one row). Contiguous
/// (Interleaved false): an item holds kDeviceChunk elements of the row; inside it element j
/// goes to accumulator (j - first) % 8; the 8 accumulators fold left, 0 to 7; chunks fold in
/// work-item order (on Serial; other backends join chunks in their own tree). Interleaved:
/// item c holds the elements c + i cpr of the row, folded in that order.
template <class View, class E, class Op, bool Interleaved = false>
struct ReduceAllKernel {
  TRIBUTARY_DEVICE_JOIN(E)
  using V = typename View::non_const_value_type;
  Op op;
  E identity;
  View data;
  std::int64_t first_index = 0;
  std::int64_t extent1 = 1;  // rank 3: the middle extent
  std::int64_t row_length = 0;
  std::int64_t chunks_per_row = 1;

  KOKKOS_INLINE_FUNCTION V At(std::int64_t row, std::int64_t j) const {
    if constexpr (View::rank == 1) {
      (void)row;
      return data(j);
    } else if constexpr (View::rank == 2) {
      return data(row, j);
    } else {
      return data(row / extent1, row % extent1, j);
    }
  }
  KOKKOS_INLINE_FUNCTION E Element(std::int64_t row, std::int64_t j) const {
    if constexpr (std::is_same_v<E, V>) {
      return At(row, j);
    } else {
      return E{At(row, j), first_index + row * row_length + j};
    }
  }

  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t w, E& update) const {
    const std::int64_t row = w / chunks_per_row;
    if constexpr (Interleaved) {
      E acc = identity;
      for (std::int64_t j = w % chunks_per_row; j < row_length; j += chunks_per_row)
        op(Element(row, j), acc);
      op(update, acc);
      update = acc;
      return;
    }
    const std::int64_t begin = (w % chunks_per_row) * kDeviceChunk;
    const std::int64_t end = begin + kDeviceChunk < row_length ? begin + kDeviceChunk : row_length;
    E acc[kDeviceLanes];
    for (int u = 0; u < kDeviceLanes; ++u) acc[u] = identity;
    std::int64_t j = begin;
    for (; j + kDeviceLanes <= end; j += kDeviceLanes)
      for (int u = 0; u < kDeviceLanes; ++u) op(Element(row, j + u), acc[u]);
    for (int u = 0; j < end; ++j, ++u) op(Element(row, j), acc[u]);
    for (int u = 1; u < kDeviceLanes; ++u) op(acc[u - 1], acc[u]);
    E chunk = acc[kDeviceLanes - 1];
    op(update, chunk);
    update = chunk;
  }
};

/// Reduces the rows of a rank-2 View (n x k) elementwise into k values, row by row.
template <class View, class E, class Op>
struct ReduceRowsKernel {
  using value_type = E[];
  Op op;
  E identity;
  View data;
  unsigned value_count = 0;

  KOKKOS_INLINE_FUNCTION void init(value_type v) const {
    for (unsigned c = 0; c < value_count; ++c) v[c] = identity;
  }
  KOKKOS_INLINE_FUNCTION void join(TRIBUTARY_JOIN_CV E* dst, const TRIBUTARY_JOIN_CV E* src) const {
    for (unsigned c = 0; c < value_count; ++c) {
      E later = const_cast<const E&>(src[c]);
      op(const_cast<const E&>(dst[c]), later);
      const_cast<E&>(dst[c]) = later;
    }
  }
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t row, value_type update) const {
    for (unsigned c = 0; c < value_count; ++c) {
      E later = data(row, c);
      op(update[c], later);
      update[c] = later;
    }
  }
};

/// Copies a rank-1 View of k values into a list's slot (the list's partial is the View).
template <class View, class Slot>
struct CopyKernel {
  View data;
  Slot slot;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t c) const { slot(c) = data(c); }
};

/// Folds the per-list slots in list order: out[c] = slot_0[c] ∘ slot_1[c] ∘ ... ∘ slot_{n-1}[c].
template <class Slots, class Out, class E, class Op>
struct ListFoldKernel {
  Slots slots;  // lists * k, list-major
  Out out;
  Op op;
  int lists = 0;
  std::int64_t k = 0;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t c) const {
    E acc = slots(c);
    for (int i = 1; i < lists; ++i) {
      E later = slots(i * k + c);
      op(acc, later);
      acc = later;
    }
    out(c) = acc;
  }
};

// Exact sums on the device (Determinism::rank_count_independent): every float or double
// value is added into an ExactSum, so neither the backend's join order, nor the chunks,
// nor the list fold change a bit of the result.

/// The list fold of exact partials: later = lower + later, exactly.
struct ExactMergeOp {
  TRIBUTARY_FUNCTION void operator()(const ExactSum& lower, ExactSum& later) const noexcept {
    ExactMerge(later, lower);
  }
};

/// The exact sum of every element of a rank 1-3 View on host backends (work items as the
/// contiguous chunks of ReduceAllKernel: a core streams its chunk); GPU backends take the
/// team kernels below.
template <class View>
struct ExactAllKernel {
  using value_type = ExactSum;
  View data;
  std::int64_t extent1 = 1;  // rank 3: the middle extent
  std::int64_t row_length = 0;
  std::int64_t chunks_per_row = 1;
  KOKKOS_INLINE_FUNCTION void init(value_type& v) const { v = ExactSum(); }
  KOKKOS_INLINE_FUNCTION void join(TRIBUTARY_JOIN_CV value_type& dst,
                                   const TRIBUTARY_JOIN_CV value_type& src) const {
    ExactMerge(const_cast<ExactSum&>(dst), const_cast<const ExactSum&>(src));
  }
  KOKKOS_INLINE_FUNCTION double At(std::int64_t row, std::int64_t j) const {
    if constexpr (View::rank == 1) {
      (void)row;
      return static_cast<double>(data(j));
    } else if constexpr (View::rank == 2) {
      return static_cast<double>(data(row, j));
    } else {
      return static_cast<double>(data(row / extent1, row % extent1, j));
    }
  }
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t w, ExactSum& update) const {
    const std::int64_t row = w / chunks_per_row;
    const std::int64_t begin = (w % chunks_per_row) * kDeviceChunk;
    const std::int64_t end = begin + kDeviceChunk < row_length ? begin + kDeviceChunk : row_length;
    for (std::int64_t j = begin; j < end; ++j) ExactAdd(update, At(row, j));
  }
};

/// The elements of a rank 1-3 View as the exact team kernels (detail/device/exact_teams.hpp)
/// read them: element f row-major over the extents.
template <class View>
struct ExactViewSource {
  using value_type = ExactSum;
  View data;
  std::int64_t extent1 = 1;     // rank 3: the middle extent
  std::int64_t row_length = 1;  // the last extent (1 when it is 0)

  explicit ExactViewSource(const View& v) : data(v) {
    const auto last = static_cast<std::int64_t>(v.extent(View::rank - 1));
    row_length = last > 0 ? last : 1;
    if constexpr (View::rank == 3) extent1 = static_cast<std::int64_t>(v.extent(1));
  }
  std::int64_t Total() const { return static_cast<std::int64_t>(data.size()); }
  KOKKOS_INLINE_FUNCTION double At(std::int64_t f) const {
    if constexpr (View::rank == 1) {
      return static_cast<double>(data(f));
    } else if constexpr (View::rank == 2) {
      return static_cast<double>(data(f / row_length, f % row_length));
    } else {
      const std::int64_t row = f / row_length;
      return static_cast<double>(data(row / extent1, row % extent1, f % row_length));
    }
  }
  KOKKOS_INLINE_FUNCTION void Add(ExactSum& acc, std::int64_t f) const { ExactAdd(acc, At(f)); }
  /// Elements f, f + step, ..., f + 7 step: the eight loads first, in flight together.
  KOKKOS_INLINE_FUNCTION void Add8(ExactSum& acc, std::int64_t f, std::int64_t step) const {
    double x[8];
    for (int u = 0; u < 8; ++u) x[u] = At(f + u * step);
    for (int u = 0; u < 8; ++u) ExactAdd(acc, x[u]);
  }
};

/// k values per list, each its own exact sum: a rank-1 View's values, or the columns of a
/// rank-2 View (rows added one after the other: the order does not matter).
template <class View, class Slot>
struct ExactColumnsKernel {
  View data;
  Slot slot;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t c) const {
    ExactSum acc;
    if constexpr (View::rank == 1) {
      ExactAdd(acc, static_cast<double>(data(c)));
    } else {
      for (std::int64_t r = 0; r < static_cast<std::int64_t>(data.extent(0)); ++r)
        ExactAdd(acc, static_cast<double>(data(r, c)));
    }
    slot(c) = acc;
  }
};

/// K sums per list from a rank 0-1 View of ExactSums<K> (a user's own reductions of K values
/// in one pass, one or several of them): sum c of the slot is the merge of every item's c.
template <class View, class Slot>
struct ExactSumsColumnsKernel {
  View data;
  Slot slot;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t c) const {
    ExactSum acc;
    if constexpr (View::rank == 0) {
      acc += data()[static_cast<std::size_t>(c)];
    } else {
      for (std::int64_t i = 0; i < static_cast<std::int64_t>(data.extent(0)); ++i)
        acc += data(i)[static_cast<std::size_t>(c)];
    }
    slot(c) = acc;
  }
};

/// The merge of a rank 0-1 View of ExactSum partials (a user's own reductions) into one.
template <class View>
struct ExactPartialsKernel {
  using value_type = ExactSum;
  View data;
  KOKKOS_INLINE_FUNCTION void init(value_type& v) const { v = ExactSum(); }
  KOKKOS_INLINE_FUNCTION void join(TRIBUTARY_JOIN_CV value_type& dst,
                                   const TRIBUTARY_JOIN_CV value_type& src) const {
    ExactMerge(const_cast<ExactSum&>(dst), const_cast<const ExactSum&>(src));
  }
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t i, ExactSum& update) const {
    if constexpr (View::rank == 0) {
      (void)i;
      ExactMerge(update, data());
    } else {
      ExactMerge(update, data(i));
    }
  }
};

}  // namespace tributary::detail

#undef TRIBUTARY_DEVICE_JOIN

#endif  // TRIBUTARY_HAVE_KOKKOS
