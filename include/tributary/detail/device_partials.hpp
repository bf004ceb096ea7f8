// Device partials: the kernels that reduce a list's View (or a policy and a functor) into
// that list's slot in device memory, the list-order fold of the slots on the device, the
// one staging copy to host memory, and the events that let CheckReduce test completion
// without blocking. Only ListPartials (detail/list_partials_device.hpp) queues this work.
// Part of the Kokkos layer: included through tributary/kokkos.hpp only.
#pragma once

#include "tributary/config.hpp"

#if TRIBUTARY_HAVE_KOKKOS

#include <Kokkos_Core.hpp>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

#include "tributary/detail/device_stage.hpp"
#include "tributary/errors.hpp"
#include "tributary/ops.hpp"

#if defined(KOKKOS_ENABLE_CUDA)
#include <cuda_runtime.h>
#endif
#if defined(KOKKOS_ENABLE_HIP) && KOKKOS_VERSION >= 40000
#include <hip/hip_runtime.h>
#endif

// Kokkos before 3.7 calls join with volatile arguments; later versions without.
#if KOKKOS_VERSION < 30700
#define TRIBUTARY_JOIN_CV volatile
#else
#define TRIBUTARY_JOIN_CV
#endif

namespace tributary::detail {

/// Execution spaces whose kernels have completed when the launching call returns.
template <class Exec>
constexpr bool kSynchronousSpace =
#if defined(KOKKOS_ENABLE_SERIAL)
    std::is_same_v<Exec, Kokkos::Serial> ||
#endif
#if defined(KOKKOS_ENABLE_OPENMP)
    std::is_same_v<Exec, Kokkos::OpenMP> ||
#endif
    false;

/// Completion of the work queued so far on an execution-space instance, tested without
/// blocking. Host backends: complete at once. Other backends without an event below: the
/// record fences that instance (the documented fallback).
template <class Exec>
class DeviceEvent {
 public:
  void Record(const Exec& exec) {
    if constexpr (!kSynchronousSpace<Exec>) exec.fence();  // tributary-fence-ok: no event API
    (void)exec;
  }
  bool Ready() const { return true; }
  /// Makes later work on `exec` wait for the recorded work.
  void OrderBefore(const Exec&) const {}
  void Wait() const {}
};

#if defined(KOKKOS_ENABLE_CUDA)
inline void CheckCuda(cudaError_t status, const char* what) {
  if (status != cudaSuccess)
    throw UsageError(std::string("tributary: ") + what + ": " + cudaGetErrorString(status));
}

/// CUDA: an event recorded on the instance's stream.
template <>
class DeviceEvent<Kokkos::Cuda> {
 public:
  DeviceEvent() = default;
  DeviceEvent(DeviceEvent&& o) noexcept : event_(std::exchange(o.event_, nullptr)) {}
  DeviceEvent& operator=(DeviceEvent&& o) noexcept {
    std::swap(event_, o.event_);
    return *this;
  }
  ~DeviceEvent() {
    if (event_) cudaEventDestroy(event_);
  }
  void Record(const Kokkos::Cuda& exec) {
    if (!event_)
      CheckCuda(cudaEventCreateWithFlags(&event_, cudaEventDisableTiming), "cudaEventCreate");
    CheckCuda(cudaEventRecord(event_, exec.cuda_stream()), "cudaEventRecord");
  }
  bool Ready() const {
    const cudaError_t status = cudaEventQuery(event_);
    if (status == cudaErrorNotReady) return false;
    CheckCuda(status, "cudaEventQuery");
    return true;
  }
  void OrderBefore(const Kokkos::Cuda& exec) const {
    CheckCuda(cudaStreamWaitEvent(exec.cuda_stream(), event_, 0), "cudaStreamWaitEvent");
  }
  void Wait() const {                                                 // failure paths only
    CheckCuda(cudaEventSynchronize(event_), "cudaEventSynchronize");  // tributary-fence-ok
  }

 private:
  cudaEvent_t event_ = nullptr;
};
#endif

#if defined(KOKKOS_ENABLE_HIP) && KOKKOS_VERSION >= 40000
inline void CheckHip(hipError_t status, const char* what) {
  if (status != hipSuccess)
    throw UsageError(std::string("tributary: ") + what + ": " + hipGetErrorString(status));
}

/// HIP (Kokkos 4): an event recorded on the instance's stream.
template <>
class DeviceEvent<Kokkos::HIP> {
 public:
  DeviceEvent() = default;
  DeviceEvent(DeviceEvent&& o) noexcept : event_(std::exchange(o.event_, nullptr)) {}
  DeviceEvent& operator=(DeviceEvent&& o) noexcept {
    std::swap(event_, o.event_);
    return *this;
  }
  ~DeviceEvent() {
    if (event_) (void)hipEventDestroy(event_);
  }
  void Record(const Kokkos::HIP& exec) {
    if (!event_)
      CheckHip(hipEventCreateWithFlags(&event_, hipEventDisableTiming), "hipEventCreate");
    CheckHip(hipEventRecord(event_, exec.hip_stream()), "hipEventRecord");
  }
  bool Ready() const {
    const hipError_t status = hipEventQuery(event_);
    if (status == hipErrorNotReady) return false;
    CheckHip(status, "hipEventQuery");
    return true;
  }
  void OrderBefore(const Kokkos::HIP& exec) const {
    CheckHip(hipStreamWaitEvent(exec.hip_stream(), event_, 0), "hipStreamWaitEvent");
  }
  void Wait() const {                                              // failure paths only
    CheckHip(hipEventSynchronize(event_), "hipEventSynchronize");  // tributary-fence-ok
  }

 private:
  hipEvent_t event_ = nullptr;
};
#endif

/// Host memory the staging copy goes to: pinned where the backend has it, so that the
/// copy is asynchronous.
template <class Mem>
struct StagingSpace {
  using type = Kokkos::HostSpace;
};
#if defined(KOKKOS_ENABLE_CUDA)
template <>
struct StagingSpace<Kokkos::CudaSpace> {
  using type = Kokkos::CudaHostPinnedSpace;
};
#endif
#if defined(KOKKOS_ENABLE_HIP) && KOKKOS_VERSION >= 40000
template <>
struct StagingSpace<Kokkos::HIPSpace> {
  using type = Kokkos::HIPHostPinnedSpace;
};
#endif

template <class T>
struct IsValueLoc : std::false_type {};
template <class T>
struct IsValueLoc<ValueLoc<T>> : std::true_type {};

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
  constexpr bool partials = std::is_same_v<V, ExactSum>;
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

/// Reduces every element of a rank 1-3 View to one value. Work item w is chunk w % cpr of
/// row w / cpr, where a row runs along the last index (rank 1: one row) and a chunk holds
/// kDeviceChunk elements of it. Inside a chunk element j goes to accumulator
/// (j - first) % 8; the 8 accumulators fold left, 0 to 7; chunks fold in work-item order
/// (on Serial; other backends join chunks in their own tree).
template <class View, class E, class Op>
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

/// Fills one list's slot with a value (a missing list's neutral element).
template <class Slot, class E>
struct FillKernel {
  Slot slot;
  E value;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t c) const { slot(c) = value; }
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

/// Per-list slots of k values in the memory of execution space Exec, the fold, and the
/// staging buffer. Grows, never shrinks: a steady run allocates nothing.
template <class E, class Exec>
class DeviceStage final : public DeviceStageBase<E> {
 public:
  using Mem = typename Exec::memory_space;
  using Slots = Kokkos::View<E*, Mem>;
  using Slot = Kokkos::View<E*, Mem, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  using Scalar = Kokkos::View<E, Mem, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  static constexpr bool kHostReadable =
      Kokkos::SpaceAccessibility<Kokkos::HostSpace, Mem>::accessible;

  /// Ready for a generation of `lists` lists of k values each; allocates on `exec` when it
  /// must grow.
  void Prepare(const Exec& exec, int lists, std::size_t k) {
    this->count = k;
    lists_ = lists;
    const std::size_t need = static_cast<std::size_t>(lists) * k;
    if (slots_.extent(0) < need)
      slots_ = Slots(
          Kokkos::view_alloc(exec, Kokkos::WithoutInitializing, "tributary::list_partials"), need);
    if (combined_.extent(0) < k) {
      combined_ =
          Slots(Kokkos::view_alloc(exec, Kokkos::WithoutInitializing, "tributary::combined"), k);
      if constexpr (!kHostReadable)
        staging_ =
            Staging(Kokkos::view_alloc(Kokkos::WithoutInitializing, "tributary::staging"), k);
    }
    if (exec_.size() < static_cast<std::size_t>(lists)) {
      exec_.resize(static_cast<std::size_t>(lists));
      events_.resize(static_cast<std::size_t>(lists));
    }
  }

  Slot SlotOf(int list) const {
    return Slot(slots_.data() + static_cast<std::size_t>(list) * this->count, this->count);
  }
  Scalar ScalarOf(int list) const {
    return Scalar(slots_.data() + static_cast<std::size_t>(list) * this->count);
  }

  /// List `list` queued its kernel on `exec`.
  void Launched(int list, const Exec& exec) {
    exec_[static_cast<std::size_t>(list)] = exec;
    events_[static_cast<std::size_t>(list)].Record(exec);
  }

  /// Queues the list-order fold and the staging copy on the instance of list `last`, after
  /// every list's kernel.
  template <class Op>
  void Combine(const Op& op, int last) {
    const Exec& exec = exec_[static_cast<std::size_t>(last)];
    for (int i = 0; i < lists_; ++i)
      if (i != last) events_[static_cast<std::size_t>(i)].OrderBefore(exec);
    Kokkos::Profiling::pushRegion("tributary::combine_lists");
    ListFoldKernel<Slots, Slots, E, Op> fold{slots_, combined_, op, lists_,
                                             static_cast<std::int64_t>(this->count)};
    Kokkos::parallel_for("tributary::combine_lists",
                         Kokkos::RangePolicy<Exec, Kokkos::IndexType<std::int64_t>>(
                             exec, 0, static_cast<std::int64_t>(this->count)),
                         fold);
    if constexpr (!kHostReadable) {
      // The one staging point: the k combined values to host memory, asynchronously.
      const auto first_k = std::make_pair(std::size_t(0), this->count);
      // tributary-fence-ok: asynchronous on exec, into pinned memory where the backend has it
      const auto to = Kokkos::subview(staging_, first_k);
      const auto from = Kokkos::subview(combined_, first_k);
      Kokkos::deep_copy(exec, to, from);  // tributary-fence-ok
    }
    done_.Record(exec);
    Kokkos::Profiling::popRegion();
  }

  /// The operator the next Fold uses.
  template <class Op>
  void SetFold(const Op& op) {
    fold_ = [op](DeviceStage& stage, int last) { stage.Combine(op, last); };
  }
  void Fold(int last) override { fold_(*this, last); }

  bool Ready() override { return done_.Ready(); }
  void Wait() override {
    for (int i = 0; i < lists_; ++i) events_[static_cast<std::size_t>(i)].Wait();
    done_.Wait();
  }
  const E* Result() const override { return kHostReadable ? combined_.data() : staging_.data(); }
  void FillMissing(const std::vector<int>& lists, const E& identity) override {
    for (int i : lists) {
      const Exec exec = exec_[static_cast<std::size_t>(i)];
      Kokkos::parallel_for("tributary::fill_missing",
                           Kokkos::RangePolicy<Exec, Kokkos::IndexType<std::int64_t>>(
                               exec, 0, static_cast<std::int64_t>(this->count)),
                           FillKernel<Slot, E>{SlotOf(i), identity});
      events_[static_cast<std::size_t>(i)].Record(exec);
    }
  }
  const std::type_info& Space() const noexcept override { return typeid(Exec); }

 private:
  using Staging = Kokkos::View<E*, typename StagingSpace<Mem>::type>;
  int lists_ = 0;
  Slots slots_;
  Slots combined_;
  Staging staging_;
  std::vector<Exec> exec_;
  std::vector<DeviceEvent<Exec>> events_;
  DeviceEvent<Exec> done_;
  std::function<void(DeviceStage&, int)> fold_;
};

/// Sets the row split of a kernel over every element of `data` (ReduceAllKernel,
/// ExactAllKernel: rows of the last extent, cut into chunks of kDeviceChunk) and returns
/// the number of work items.
template <class Kernel, class View>
std::int64_t ShapeAllElements(Kernel& kernel, const View& data) {
  std::int64_t rows = 1;
  kernel.row_length = static_cast<std::int64_t>(data.extent(View::rank - 1));
  if constexpr (View::rank == 2) rows = static_cast<std::int64_t>(data.extent(0));
  if constexpr (View::rank == 3) {
    kernel.extent1 = static_cast<std::int64_t>(data.extent(1));
    rows = static_cast<std::int64_t>(data.extent(0)) * kernel.extent1;
  }
  kernel.chunks_per_row = (kernel.row_length + kDeviceChunk - 1) / kDeviceChunk;
  return kernel.row_length == 0 ? 0 : rows * kernel.chunks_per_row;
}

/// Queues on `exec` the kernel that writes list `list`'s slot of `stage` from `data`: with
/// k == 1 every element reduced to one (ReduceAllKernel); with k > 1 a rank-1 View's k
/// values copied, or a rank-2 View's rows reduced elementwise. The caller checked the shape.
template <class Exec, class View, class E, class Op>
void QueueViewKernel(DeviceStage<E, Exec>& stage, int list, const Exec& exec, const View& data,
                     const Op& op, const E& identity, std::int64_t first_index) {
  using V = typename View::non_const_value_type;
  using Range = Kokkos::RangePolicy<Exec, Kokkos::IndexType<std::int64_t>>;
  const std::size_t k = stage.count;
  if (k == 1) {
    ReduceAllKernel<View, E, Op> kernel{op, identity, data, first_index};
    const std::int64_t items = ShapeAllElements(kernel, data);
    Kokkos::parallel_reduce("tributary::reduce_view", Range(exec, 0, items), kernel,
                            stage.ScalarOf(list));
  } else if constexpr (std::is_same_v<E, V> && View::rank == 1) {
    using Slot = typename DeviceStage<E, Exec>::Slot;
    Kokkos::parallel_for("tributary::copy_view", Range(exec, 0, static_cast<std::int64_t>(k)),
                         CopyKernel<View, Slot>{data, stage.SlotOf(list)});
  } else if constexpr (std::is_same_v<E, V> && View::rank == 2) {
    ReduceRowsKernel<View, E, Op> kernel{op, identity, data, static_cast<unsigned>(k)};
    Kokkos::parallel_reduce("tributary::reduce_rows",
                            Range(exec, 0, static_cast<std::int64_t>(data.extent(0))), kernel,
                            stage.SlotOf(list));
  }
}

/// The extent of a View's last index (1 for a rank-0 View).
template <class View>
std::size_t LastExtent(const View& data) {
  if constexpr (View::rank == 0) {
    (void)data;
    return 1;
  } else {
    return data.extent(View::rank - 1);
  }
}

/// The number of values a View contributes to a value of `size` elements, or an error
/// text when its shape does not fit: a value of one element takes any View (reduced); one
/// of several takes a rank-1 View of its values or the rows of a rank-2 View.
template <class E, class View>
std::string ViewShapeError(std::size_t size, const View&) {
  using V = typename View::non_const_value_type;
  if (size == 1) return {};
  if constexpr (std::is_same_v<V, ExactSum>)
    return View::rank == 0 ? "one ExactSum for a value of several elements" : "";
  if (!std::is_same_v<E, V>)
    return "ValueLoc elements from plain values for a value of several elements";
  if (View::rank == 3) return "a rank-3 View for a value of several elements";
  return {};
}

// ---------------------------------------------------------------------------------------
// Exact sums on the device (Determinism::rank_count_independent): every float or double
// value is added into an ExactSum, so neither the backend's join order, nor the chunks,
// nor the list fold change a bit of the result.

/// The list fold of exact partials: later = lower + later, exactly.
struct ExactMergeOp {
  TRIBUTARY_FUNCTION void operator()(const ExactSum& lower, ExactSum& later) const noexcept {
    ExactMerge(later, lower);
  }
};

/// The exact sum of every element of a rank 1-3 View (work items as in ReduceAllKernel).
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

/// Queues on `exec` the kernel that writes list `list`'s exact partial(s) from `data`
/// (the shapes of QueueViewKernel: k == 1 every element, else a rank-1 View's k values or
/// a rank-2 View's columns; a View of ExactSum partials: merged for k == 1, else one per
/// value).
template <class Exec, class View>
void QueueExactViewKernel(DeviceStage<ExactSum, Exec>& stage, int list, const Exec& exec,
                          const View& data) {
  using Range = Kokkos::RangePolicy<Exec, Kokkos::IndexType<std::int64_t>>;
  const std::size_t k = stage.count;
  if constexpr (std::is_same_v<typename View::non_const_value_type, ExactSum>) {
    if (k == 1) {
      Kokkos::parallel_reduce("tributary::exact_partials",
                              Range(exec, 0, static_cast<std::int64_t>(LastExtent(data))),
                              ExactPartialsKernel<View>{data}, stage.ScalarOf(list));
    } else if constexpr (View::rank == 1) {
      using Slot = typename DeviceStage<ExactSum, Exec>::Slot;
      Kokkos::parallel_for("tributary::copy_partials", Range(exec, 0, static_cast<std::int64_t>(k)),
                           CopyKernel<View, Slot>{data, stage.SlotOf(list)});
    }
  } else if (k == 1) {
    ExactAllKernel<View> kernel{data};
    const std::int64_t items = ShapeAllElements(kernel, data);
    Kokkos::parallel_reduce("tributary::exact_view", Range(exec, 0, items), kernel,
                            stage.ScalarOf(list));
  } else if constexpr (View::rank <= 2) {
    using Slot = typename DeviceStage<ExactSum, Exec>::Slot;
    Kokkos::parallel_for("tributary::exact_columns", Range(exec, 0, static_cast<std::int64_t>(k)),
                         ExactColumnsKernel<View, Slot>{data, stage.SlotOf(list)});
  }
}

}  // namespace tributary::detail

#undef TRIBUTARY_DEVICE_JOIN

#endif  // TRIBUTARY_HAVE_KOKKOS
