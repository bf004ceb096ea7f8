// AllReduce / Reduce of a Kokkos::View whose memory the host cannot read (CudaSpace,
// HIPSpace, or any space StageThroughHost names): the value reaches the network through a
// host copy, or, with device-aware MPI, goes to the MPI library as it is. Part of the
// Kokkos layer: included through tributary/kokkos.hpp only.
#pragma once

#if !defined(TRIBUTARY_PUBLIC_INCLUDE) && !defined(TRIBUTARY_INTERNAL_INCLUDE)
#error \
    "<tributary/detail/device/staged_view.hpp> is internal to Tributary: include <tributary/kokkos.hpp> instead"
#endif

#include "tributary/config.hpp"

#if TRIBUTARY_HAVE_KOKKOS
#include <Kokkos_Core.hpp>
#include <atomic>
#include <mutex>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "tributary/detail/core/reduction_for.hpp"
#include "tributary/detail/core/typed_reduction.hpp"
#include "tributary/detail/device/device_contributions.hpp"
#include "tributary/detail/device/view_values.hpp"

namespace tributary::detail {

/// A rank-1 View of plain elements that must be staged through host memory.
template <class E, class... P>
struct IsStagedView<Kokkos::View<E*, P...>>
    : std::bool_constant<kBitwise<E> && !std::is_const<E>::value &&
                         StageThroughHost<typename Kokkos::View<E*, P...>::memory_space>::value> {};

/// The operator can run in a device kernel: it declares that it commutes (as every builtin
/// operator does) and applies to the element type.
template <class Op, class E, class = void>
struct DeviceCombinable : std::false_type {};
template <class Op, class E>
struct DeviceCombinable<Op, E, std::enable_if_t<HasCommuteTag<Op>::value>>
    : std::bool_constant<Op::commutative && std::is_invocable_v<const Op&, const E&, E&>> {};

/// The MPI library can apply the operator itself (a builtin operator on builtin elements,
/// or a plain MPI_Op).
template <class Op, class E>
constexpr bool kLibraryCombines =
#if TRIBUTARY_HAVE_MPI
    (std::is_convertible_v<Op, MPI_Op> && !HasCommuteTag<Op>::value) ||
    (OpBuiltin<Op>::value != BuiltinOp::none && kBuiltinElement<E>);
#else
    false;
#endif

/// The reduction of a View `val` in device memory. Inside, a host std::vector of the same
/// elements does the work of a host value. Each generation, the value reaches it by one of:
///  - a device kernel: a hand-wired start with an operator that can run on the device is a
///    one-list ContributeView of `val` (copied on the View's execution space, staged
///    asynchronously, the network phase posted when a CheckReduce finds the copy done: no
///    host fence);
///  - a host copy: other operators, and Contribute with a device View, copy with
///    Kokkos::deep_copy, which waits for the device (a documented staging point);
///  - nothing: with device-aware MPI, builtin operators in Determinism::fast hand `val` to
///    the MPI library's schedule directly.
/// The first CheckReduce that finds the generation complete queues the copy of the result
/// into `val` on the View's default execution-space instance (asynchronously; kernels
/// queued there afterwards see it).
template <class T>
class StagedReduction : protected TypedReduction<std::vector<typename T::non_const_value_type>> {
 public:
  using E = typename T::non_const_value_type;

 private:
  using Base = TypedReduction<std::vector<E>>;
  using Exec = typename T::execution_space;
  using Host = Kokkos::View<E*, typename T::array_layout, Kokkos::HostSpace,
                            Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  using ConstHost = Kokkos::View<const E*, typename T::array_layout, Kokkos::HostSpace,
                                 Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  static_assert(!std::is_same_v<typename T::array_layout, Kokkos::LayoutStride>,
                "AllReduce / Reduce of a View in device memory: a contiguous View (LayoutLeft or "
                "LayoutRight), not LayoutStride");

 public:
  /// The value: the input of a hand-wired start and, once complete, the result.
  T val{};

  /// Poll from every list: complete once the result is in `val` (its copy queued on the
  /// View's default execution-space instance), incomplete before.
  TaskStatus CheckReduce() {
    const TaskStatus s = Base::CheckReduce();
    if (s == TaskStatus::complete) {
      const std::uint64_t g = Base::Generation();
      if (copied_.load(std::memory_order_acquire) != g) CopyBack(g);
    }
    return s;
  }

  using Base::ContributeView;
  using Base::DeterminismMode;
  using Base::Generation;
  using Base::InFlight;
  using Base::Name;
  using Base::ScheduleUsed;
  using Base::SetDeterminism;
  using Base::State;
  /// Host partials (std::vector of the elements, ExactSum) as for a host value.
  using Base::Contribute;

  /// Contributes list `list_index`'s partial held in device memory. It is copied to the
  /// host first, which waits for the device; ContributeView does the same without waiting.
  TaskStatus Contribute(int list_index, const T& partial) {
    std::vector<E> host(partial.extent(0));
    // tributary-fence-ok: a device partial given as a value is copied to the host here
    Kokkos::deep_copy(Host(host.data(), host.size()), partial);  // tributary-fence-ok
    return Base::Contribute(list_index, host);
  }

  /// True when the current (or last) generation handed `val` to the MPI library directly.
  bool PassedDeviceMemory() const noexcept { return direct_; }

 protected:
  StagedReduction(Context& ctx, std::string what, std::string label)
      : Base(ctx, std::move(what), std::move(label)) {}
  StagedReduction(StagedReduction&& other)
      : Base(std::move(other)),
        val(std::move(other.val)),
        direct_(other.direct_),
        copied_(other.copied_.load(std::memory_order_acquire)) {}
  ~StagedReduction() {
    // The network phase may still write into `val` (device-aware MPI): the core goes first.
    Context* ctx = Base::ContextOrNull();
    const std::string name = ctx ? Base::Name() : std::string();
    this->ReleaseCore();
    if (!Kokkos::is_initialized() && val.use_count() > 0) {
      if (ctx)
        ctx->HandleError(name +
                         ": destroyed after Kokkos::finalize; destroy objects that hold "
                         "Views before finalising Kokkos");
      new T(std::move(val));  // never touch Kokkos after finalize: leave the storage alone
    }
  }

  /// Expect(n, op): the host value gets `val`'s length (the neutral elements of a rank
  /// without contributions).
  template <class Op>
  void Arm(int expected, const Op& op, Collective collective, int root) {
    if (Idle()) {
      direct_ = false;
      Base::val.resize(val.extent(0));
    }
    Base::Arm(expected, op, collective, root);
  }

  /// A hand-wired start on `val`, or on `input` for a reduce.
  template <class Op>
  void StartOnValue(const Op& op, Collective collective, int root, const T* input = nullptr) {
    if (input && input->data() == val.data()) input = nullptr;
    const T& source = input ? *input : val;
    if (!Idle()) {  // the usual error for a start while the generation runs
      Base::StartOnValue(op, collective, root);
      return;
    }
    if constexpr (kLibraryCombines<Op, E>) {
      if (Base::ContextOrNull()->MpiReadsDeviceMemory() && Base::HasLibraryLane() &&
          Base::DeterminismMode() == Determinism::fast) {
        const bool receives =
            collective != Collective::reduce || Base::ContextOrNull()->Rank() == root;
        // tributary-fence-ok: only when the root's result has another length than `val`
        if (receives && input && val.extent(0) != input->extent(0))
          Kokkos::resize(val, input->extent(0));  // tributary-fence-ok
        direct_ = true;
        Base::StartOnDeviceMemory(op, collective, root, val.data(), input ? input->data() : nullptr,
                                  source.extent(0));
        return;
      }
    }
    direct_ = false;
    if constexpr (DeviceCombinable<Op, E>::value) {
      Base::Arm(1, op, collective, root);
      Base::ContributeView(0, Exec(), source, op);
    } else {
      Base::val.resize(source.extent(0));
      // tributary-fence-ok: an operator that cannot run on the device stages the value here
      Kokkos::deep_copy(Host(Base::val.data(), Base::val.size()), source);  // tributary-fence-ok
      Base::StartOnValue(op, collective, root);
    }
  }

 private:
  bool Idle() const noexcept {
    const Phase p = Base::State();
    return p != Phase::collecting && p != Phase::in_flight;
  }

  // Once per generation, by the first CheckReduce that finds it complete.
  void CopyBack(std::uint64_t generation) {
    std::lock_guard<std::mutex> lock(copy_mutex_);
    if (copied_.load(std::memory_order_relaxed) == generation) return;
    if (!direct_ && this->ReceivesResult()) {
      const std::size_t n = Base::val.size();
      // tributary-fence-ok: only when the result's length differs from `val`'s
      if (val.extent(0) != n) Kokkos::resize(val, n);  // tributary-fence-ok
      // tributary-fence-ok: asynchronous on the View's default execution-space instance
      Kokkos::deep_copy(Exec(), val, ConstHost(Base::val.data(), n));  // tributary-fence-ok
    }
    copied_.store(generation, std::memory_order_release);
  }

  bool direct_ = false;
  std::atomic<std::uint64_t> copied_{0};  // the generation whose result is in `val`
  std::mutex copy_mutex_;
};

}  // namespace tributary::detail

#endif
