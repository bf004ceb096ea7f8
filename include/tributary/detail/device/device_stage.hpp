// DeviceStage: the per-list slots of one reduction in device memory, the
// list-order fold queued after the last list's kernel, the one staging copy to host memory
// and the events that let CheckReduce test completion without blocking; and the queueing of
// a list's View kernel into its slot. Only ListPartials (detail/device/list_partials_device.hpp)
// queues this work. The kernels are detail/device/device_kernels.hpp, the events
// detail/device/device_events.hpp. Part of the Kokkos layer: included through tributary/kokkos.hpp
// only.
#pragma once

#if !defined(TRIBUTARY_PUBLIC_INCLUDE) && !defined(TRIBUTARY_INTERNAL_INCLUDE)
#error \
    "<tributary/detail/device/device_stage.hpp> is internal to Tributary: include <tributary/kokkos.hpp> instead"
#endif

#include "tributary/config.hpp"

#if TRIBUTARY_HAVE_KOKKOS

#include <Kokkos_Core.hpp>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

#include "tributary/detail/device/device_events.hpp"
#include "tributary/detail/device/device_kernels.hpp"
#include "tributary/detail/device/device_stage_base.hpp"
#include "tributary/errors.hpp"
#include "tributary/exact_sum.hpp"

namespace tributary::detail {

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
    retired_.clear();  // the last generation's kernels are done
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
  /// Scratch of `elements` per list (a batch kernel's value before its final step hands each
  /// member its part, detail/device/batch_kernels.hpp). Grows, never shrinks; a scratch it
  /// replaces stays alive until the next generation, since this one's kernels may use it.
  void EnsureScratch(const Exec& exec, std::size_t elements) {
    if (elements <= scratch_stride_ && scratch_.extent(0) >= lists_ * scratch_stride_) return;
    if (scratch_.extent(0) != 0) retired_.push_back(scratch_);
    scratch_stride_ = elements > scratch_stride_ ? elements : scratch_stride_;
    scratch_ = Slots(Kokkos::view_alloc(exec, Kokkos::WithoutInitializing, "tributary::scratch"),
                     static_cast<std::size_t>(lists_) * scratch_stride_);
  }
  template <class V>
  Kokkos::View<V, Mem, Kokkos::MemoryTraits<Kokkos::Unmanaged>> ScratchOf(int list) const {
    static_assert(alignof(V) <= alignof(E), "a value of elements aligned as its elements");
    return Kokkos::View<V, Mem, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(
        reinterpret_cast<V*>(scratch_.data() + static_cast<std::size_t>(list) * scratch_stride_));
  }

  /// List `list`'s slot as one value V laid out as its `count` elements (a kernel's value of
  /// several elements: Lanes, a std::array, a user's container, ExactSums).
  template <class V>
  Kokkos::View<V, Mem, Kokkos::MemoryTraits<Kokkos::Unmanaged>> ValuesOf(int list) const {
    static_assert(alignof(V) <= alignof(E), "a value of elements aligned as its elements");
    return Kokkos::View<V, Mem, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(
        reinterpret_cast<V*>(slots_.data() + static_cast<std::size_t>(list) * this->count));
  }

  /// List `list` queued its kernel on `exec`.
  void Launched(int list, const Exec& exec) {
    exec_[static_cast<std::size_t>(list)] = exec;
    events_[static_cast<std::size_t>(list)].Record(exec);
  }

  /// Queues the list-order fold and the staging copy on the instance of list `last`, after
  /// every list's kernel. One list's slot is the result as it is: no fold kernel (a launch
  /// fewer per generation, the common case of one list per rank).
  template <class Op>
  void Combine(const Op& op, int last) {
    const Exec& exec = exec_[static_cast<std::size_t>(last)];
    for (int i = 0; i < lists_; ++i)
      if (i != last) events_[static_cast<std::size_t>(i)].OrderBefore(exec);
    Kokkos::Profiling::pushRegion("tributary::combine_lists");
    if (lists_ > 1) {
      ListFoldKernel<Slots, Slots, E, Op> fold{slots_, combined_, op, lists_,
                                               static_cast<std::int64_t>(this->count)};
      Kokkos::parallel_for("tributary::combine_lists",
                           Kokkos::RangePolicy<Exec, Kokkos::IndexType<std::int64_t>>(
                               exec, 0, static_cast<std::int64_t>(this->count)),
                           fold);
    }
    if constexpr (!kHostReadable) {
      // The one staging point: the k combined values to host memory, asynchronously.
      const auto first_k = std::make_pair(std::size_t(0), this->count);
      // tributary-fence-ok: asynchronous on exec, into pinned memory where the backend has it
      const auto to = Kokkos::subview(staging_, first_k);
      const auto from = Kokkos::subview(Folded(), first_k);
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
  const E* Result() const override { return kHostReadable ? Folded().data() : staging_.data(); }
  const std::type_info& Space() const noexcept override { return typeid(Exec); }

 private:
  using Staging = Kokkos::View<E*, typename StagingSpace<Mem>::type>;
  /// The folded values in the space's memory: one list's slot, or the fold of several.
  const Slots& Folded() const { return lists_ > 1 ? combined_ : slots_; }

  int lists_ = 0;
  Slots slots_;
  Slots combined_;
  Slots scratch_;  // batch kernels: a value per list, scratch_stride_ elements
  std::size_t scratch_stride_ = 0;
  std::vector<Slots> retired_;  // scratch replaced in this generation
  Staging staging_;
  std::vector<Exec> exec_;
  std::vector<DeviceEvent<Exec>> events_;
  DeviceEvent<Exec> done_;
  std::function<void(DeviceStage&, int)> fold_;
};

/// Sets the row split of a kernel over every element of `data` (ReduceAllKernel,
/// ExactAllKernel: rows of the last extent, cut into items of `per_item` elements each) and
/// returns the number of work items.
template <class Kernel, class View>
std::int64_t ShapeAllElements(Kernel& kernel, const View& data,
                              std::int64_t per_item = kDeviceChunk) {
  std::int64_t rows = 1;
  kernel.row_length = static_cast<std::int64_t>(data.extent(View::rank - 1));
  if constexpr (View::rank == 2) rows = static_cast<std::int64_t>(data.extent(0));
  if constexpr (View::rank == 3) {
    kernel.extent1 = static_cast<std::int64_t>(data.extent(1));
    rows = static_cast<std::int64_t>(data.extent(0)) * kernel.extent1;
  }
  kernel.chunks_per_row = (kernel.row_length + per_item - 1) / per_item;
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
    constexpr bool interleaved = kInterleavedItems<Exec>;
    ReduceAllKernel<View, E, Op, interleaved> kernel{op, identity, data, first_index};
    const std::int64_t items =
        ShapeAllElements(kernel, data, interleaved ? kInterleavedElements : kDeviceChunk);
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
  if constexpr (IsExactSums<V>::value) {
    if (V::size() != size)
      return "ExactSums<" + std::to_string(V::size()) + "> partials for a value of " +
             std::to_string(size) + " element(s)";
    return {};
  }
  if (size == 1) return {};
  if constexpr (std::is_same_v<V, ExactSum>)
    return View::rank == 0 ? "one ExactSum for a value of several elements" : "";
  if (!std::is_same_v<E, V>)
    return "ValueLoc elements from plain values for a value of several elements";
  if (View::rank == 3) return "a rank-3 View for a value of several elements";
  return {};
}

/// The plan of QueueExactViewKernel for `data` and `k` values: the team kernels over every
/// element on GPU backends (its `teams` are the ExactSums of scratch a list needs), none
/// elsewhere.
template <class Exec, class View>
ExactTeamsPlan PlanExactView(const Exec& exec, const View& data, std::size_t k) {
  using V = typename View::non_const_value_type;
  if constexpr (kExactTeams<Exec> && !IsExactSums<V>::value && !std::is_same_v<V, ExactSum>) {
    if (k == 1) return PlanExactTeams(exec, ExactViewSource<View>(data));
  }
  (void)exec;
  (void)data;
  (void)k;
  return {};
}

/// Queues on `exec` the kernel that writes list `list`'s exact partial(s) from `data`
/// (the shapes of QueueViewKernel: k == 1 every element, else a rank-1 View's k values or
/// a rank-2 View's columns; a View of ExactSum partials: merged for k == 1, else one per
/// value).
template <class Exec, class View>
void QueueExactViewKernel(DeviceStage<ExactSum, Exec>& stage, int list, const Exec& exec,
                          const View& data, const ExactTeamsPlan& plan) {
  using Range = Kokkos::RangePolicy<Exec, Kokkos::IndexType<std::int64_t>>;
  const std::size_t k = stage.count;
  if constexpr (IsExactSums<typename View::non_const_value_type>::value) {
    using Slot = typename DeviceStage<ExactSum, Exec>::Slot;
    Kokkos::parallel_for("tributary::merge_sums", Range(exec, 0, static_cast<std::int64_t>(k)),
                         ExactSumsColumnsKernel<View, Slot>{data, stage.SlotOf(list)});
  } else if constexpr (std::is_same_v<typename View::non_const_value_type, ExactSum>) {
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
    if constexpr (kExactTeams<Exec>) {  // GPU backends: a thread's own ExactSum, teams
      const ExactViewSource<View> source(data);
      using Partials = Kokkos::View<ExactSum*, typename Exec::memory_space,
                                    Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
      QueueExactTeams(exec, source, source.Total(),
                      Partials(stage.template ScratchOf<ExactSum>(list).data(), plan.teams),
                      stage.ScalarOf(list), plan.team);
    } else {  // host backends: a core streams its chunks
      ExactAllKernel<View> kernel{data};
      const std::int64_t items = ShapeAllElements(kernel, data);
      Kokkos::parallel_reduce("tributary::exact_view", Range(exec, 0, items), kernel,
                              stage.ScalarOf(list));
    }
  } else if constexpr (View::rank <= 2) {
    using Slot = typename DeviceStage<ExactSum, Exec>::Slot;
    Kokkos::parallel_for("tributary::exact_columns", Range(exec, 0, static_cast<std::int64_t>(k)),
                         ExactColumnsKernel<View, Slot>{data, stage.SlotOf(list)});
  }
}

}  // namespace tributary::detail

#endif  // TRIBUTARY_HAVE_KOKKOS
