// What AllReduce<T> and Reduce<T> share: the public `val`, the regional combine of per-list
// partials in list-index order, the packing of user-operator messages, and the link to
// the type-erased ReductionCore.
#pragma once

#include <algorithm>
#include <array>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "tributary/context.hpp"
#include "tributary/datatype.hpp"
#include "tributary/detail/device_partials.hpp"
#include "tributary/detail/exact_kernels.hpp"
#include "tributary/detail/exactness.hpp"
#include "tributary/detail/op_holder.hpp"
#include "tributary/detail/reduction_core.hpp"
#include "tributary/detail/type_name.hpp"
#include "tributary/errors.hpp"
#include "tributary/exact_sum.hpp"
#include "tributary/ops.hpp"

namespace tributary::detail {

template <class T>
struct IsKokkosView : std::false_type {};
#if TRIBUTARY_HAVE_KOKKOS
template <class D, class... P>
struct IsKokkosView<Kokkos::View<D, P...>> : std::true_type {};
#endif

template <class T>
class ReductionBase {
  static_assert(kIsReducible<T>,
                "tributary: unsupported value type; supported are arithmetic types, "
                "std::complex, std::array, C arrays, std::vector, Kokkos::View<E*>, "
                "std::tuple/std::pair of such values and trivially copyable structs (with a "
                "user operator), or a type with a ValueTraits specialisation");
  using Traits = ValueTraits<T>;
  using E = typename Traits::element;
  static_assert(alignof(E) <= alignof(PackedHeader), "over-aligned elements are not supported");
  static constexpr bool kExactCapable = std::is_same_v<E, double> || std::is_same_v<E, float>;

 public:
  /// The value: the input of a hand-wired start and, once complete, the result.
  T val{};

  /// Poll from every list: complete once the result is in `val`, incomplete before. Throws
  /// UsageError when called before any start, and the generation's error when it failed
  /// (on every rank: a user operator that threw, a failure on another rank, a time-out).
  TaskStatus CheckReduce() { return core_->Check(); }
  /// CheckReduce for generation `generation` (a token: Generation() + 1 before the start
  /// it waits for): incomplete until that generation has started and completed; UsageError
  /// for an earlier generation (its result is gone) or a later one. For code outside an
  /// executor that may poll before the cycle's start (docs/reductions.md, "Cycles").
  TaskStatus CheckGeneration(std::uint64_t generation) { return core_->Check(generation); }

  /// The current state, generation and name ("AllReduce<double> 'dt' (object 3)").
  Phase State() const noexcept { return core_->State(); }
  std::uint64_t Generation() const noexcept { return core_->Generation(); }
  std::string Name() const { return core_->Name(); }
  /// True while this rank's network phase runs.
  bool InFlight() const noexcept { return core_->NetworkActive(); }
  /// The schedule that carries (or carried) the current or last generation.
  ScheduleKind ScheduleUsed() const noexcept { return core_->ScheduleUsed(); }

  /// Contributes list `list_index`'s partial value for the armed generation. The last
  /// contribution combines all partials in list-index order and starts the network phase.
  /// Returns TaskStatus::complete so it can be a task. Thread-safe across lists.
  /// A refused contribution (UsageError: a second one from the list, an index out of
  /// range, none armed) changes nothing.
  TaskStatus Contribute(int list_index, const T& partial) {
    ClaimHost(list_index);
    slots_[static_cast<std::size_t>(list_index)].value = partial;
    if (exact_) exact_used_[static_cast<std::size_t>(list_index)] = 0;
    if (core_->Commit()) CombineAndLaunch();
    return TaskStatus::complete;
  }

#if TRIBUTARY_HAVE_KOKKOS
  /// Contributes list `list_index`'s partial computed on the device from `data`, a
  /// Kokkos::View of rank 1 to 3 (any layout, a subview included) that `exec` can read,
  /// reduced with `op` (the generation's operator) into the list's slot in the memory of
  /// `exec`, without a host fence:
  ///  - a value of one element: every element of `data` is reduced to one (for MinLoc /
  ///    MaxLoc over a View of plain values, element i carries index `first_index` + i, i
  ///    counted row-major over the View's extents);
  ///  - a value of k elements (std::vector, std::array, a host View): `data` of rank 1
  ///    holds the list's k values; `data` of rank 2 (n x k) is reduced over its rows.
  /// The last list's contribution queues the list-order fold; the network phase starts when
  /// a CheckReduce finds that work done. All lists of a generation contribute on the
  /// device, in one execution space. The operator must commute (the backend joins partial
  /// results in its own order); UsageError for a different operator than the generation's.
  template <class Exec, class View, class Op,
            std::enable_if_t<Kokkos::is_execution_space<Exec>::value && Kokkos::is_view<View>::value, int> = 0>
  TaskStatus ContributeView(int list_index, const Exec& exec, const View& data, const Op& op,
                            std::int64_t first_index = 0) {
    using V = typename View::non_const_value_type;
    static_assert(View::rank >= 1 && View::rank <= 3, "ContributeView: a View of rank 1 to 3");
    static_assert(Kokkos::SpaceAccessibility<Exec, typename View::memory_space>::accessible,
                  "ContributeView: the execution space cannot read the View's memory");
    static_assert(kViewElementFits<E, V>,
                  "ContributeView: the View's elements must be the value's element type (or, "
                  "for ValueLoc<V>, plain V values whose index is their position)");
    static_assert(std::is_invocable_v<const Op&, const E&, E&>,
                  "ContributeView: the operator does not apply to the value's element type");
    static_assert(Op::commutative, "ContributeView: device reductions need a commutative operator");
    const bool one = !Traits::dynamic && Traits::Size(val) == 1;
    const std::string shape = ViewShapeError<E>(one ? 1 : 2, data);
    if (!shape.empty()) DeviceShapeError(list_index, shape);
    const std::size_t k = one ? 1 : data.extent(View::rank - 1);
    if constexpr (kExactCapable) {
      if (exact_) return ContributeExactView(list_index, exec, data, k);
    }
    return ContributeOnDevice(list_index, exec, op, k, [&](DeviceStage<E, Exec>& stage) {
      QueueViewKernel(stage, list_index, exec, data, op, op_->Identity(), first_index);
    });
  }

  /// ContributeView on the View's default execution-space instance.
  template <class View, class Op, std::enable_if_t<Kokkos::is_view<View>::value, int> = 0>
  TaskStatus ContributeView(int list_index, const View& data, const Op& op, std::int64_t first_index = 0) {
    return ContributeView(list_index, typename View::execution_space(), data, op, first_index);
  }

  /// Contributes list `list_index`'s partial as the reduction with `op` of `f(i)` (a
  /// RangePolicy) or `f(i, j)` / `f(i, j, k)` (an MDRangePolicy of rank 2 or 3) over the
  /// policy, on the policy's execution-space instance, into the list's device slot. `f`
  /// returns the element (for MinLoc / MaxLoc a ValueLoc with the user's global index).
  /// For values of one element.
  template <class Policy, class F, class Op>
  TaskStatus ContributeKernel(int list_index, const Policy& policy, const F& f, const Op& op) {
    static_assert(IsRangePolicy<Policy>::value || IsMDRangePolicy<Policy>::value,
                  "ContributeKernel: a Kokkos::RangePolicy or MDRangePolicy");
    static_assert(!Traits::dynamic, "ContributeKernel: for values of one element");
    static_assert(std::is_invocable_v<const Op&, const E&, E&>,
                  "ContributeKernel: the operator does not apply to the value's element type");
    static_assert(Op::commutative, "ContributeKernel: device reductions need a commutative operator");
    using Exec = typename Policy::execution_space;
    if (Traits::Size(val) != 1) DeviceShapeError(list_index, "a kernel for a value of several elements");
    return ContributeOnDevice(list_index, policy.space(), op, 1, [&](DeviceStage<E, Exec>& stage) {
      Kokkos::parallel_reduce("tributary::reduce_kernel", policy, FunctorKernel<F, E, Op>{op, op_->Identity(), f},
                              stage.ScalarOf(list_index));
    });
  }
#endif

  /// Determinism::rank_count_independent with Sum over float or double: list
  /// `list_index`'s partial as exact sums of its data (ExactSum; one per element of the
  /// value), so that the result does not depend on how the data is split into lists and
  /// ranks. Throws UsageError in other modes and for other types or operators.
  TaskStatus Contribute(int list_index, const ExactSum& partial) { return ContributeExact(list_index, &partial, 1); }
  TaskStatus Contribute(int list_index, const std::vector<ExactSum>& partials) {
    return ContributeExact(list_index, partials.data(), partials.size());
  }

  /// The determinism mode of the next generations: the Context's unless set here. Throws
  /// UsageError while a generation is collecting or in flight.
  void SetDeterminism(Determinism mode) {
    const Phase p = core_->State();
    if (p == Phase::collecting || p == Phase::in_flight)
      throw UsageError(core_->Where() + ": SetDeterminism while the generation is " + ToString(p));
    mode_ = mode;
  }
  Determinism DeterminismMode() const noexcept { return mode_; }

 protected:
  ReductionBase(Context& ctx, std::string what, std::string label)
      : core_(std::make_unique<ReductionCore>(ctx, std::move(what), std::move(label))) {
    core_->SetClient(this, &ReductionBase::FinishThunk, &ReductionBase::AbandonThunk, &ReductionBase::ReadyThunk);
    name_ = core_->Name();
    mode_ = ctx.Options().determinism;
  }
  ~ReductionBase() {
    // The core goes first: while it drains or reports, the buffers and the operator it
    // points to must still exist.
    [[maybe_unused]] Context* ctx = core_ ? core_->Ctx() : nullptr;
    core_.reset();
#if TRIBUTARY_HAVE_KOKKOS
    if constexpr (IsKokkosView<T>::value) {
      if (!Kokkos::is_initialized() && val.use_count() > 0 && ctx) {
        ctx->HandleError(name_ + ": destroyed after Kokkos::finalize; destroy objects that "
                                 "hold Views before finalising Kokkos");
        // Never touch Kokkos after finalize: leave the View's storage alone.
        new T(std::move(val));
      }
    }
    if (stage_ && !Kokkos::is_initialized()) {
      if (ctx)
        ctx->HandleError(name_ + ": destroyed after Kokkos::finalize while holding device partial "
                                 "slots; destroy reduction objects before finalising Kokkos");
      (void)stage_.release();  // its Views must not be freed now
    }
#endif
  }
  ReductionBase(ReductionBase&& other)
      : val(std::move(other.val)),
        core_(std::move(other.core_)),
        op_(std::move(other.op_)),
        slots_(std::move(other.slots_)),
        work_(std::move(other.work_)),
        packed_(std::move(other.packed_)),
        layout_(std::move(other.layout_)),
        op_error_(std::move(other.op_error_)),
        collective_(other.collective_),
        root_(other.root_),
        name_(std::move(other.name_)),
        mode_(other.mode_),
        exact_(other.exact_),
        exact_active_(other.exact_active_),
        exact_slots_(std::move(other.exact_slots_)),
        exact_used_(std::move(other.exact_used_))
#if TRIBUTARY_HAVE_KOKKOS
        ,
        stage_(std::move(other.stage_))
#endif
  {
    if (core_ && core_->NetworkActive())
      throw UsageError(core_->Where() + ": moved while its network phase is in flight");
    if (core_) core_->SetClient(this, &ReductionBase::FinishThunk, &ReductionBase::AbandonThunk, &ReductionBase::ReadyThunk);
    layout_.error_text = &op_error_;
  }
  ReductionBase& operator=(ReductionBase&&) = delete;
  ReductionBase(const ReductionBase&) = delete;
  ReductionBase& operator=(const ReductionBase&) = delete;

  TaskStatus ContributeExact(int list_index, const ExactSum* partials, std::size_t count) {
    if constexpr (!kExactCapable) {
      (void)partials;
      (void)count;
      throw UsageError(core_->Where() + ": ExactSum partials need float or double elements");
    } else {
      const bool mine = core_->State() == Phase::collecting && list_index >= 0 && list_index < core_->Expected();
      if (mine && !exact_)
        throw UsageError(core_->Where() +
                         ": ExactSum partials need Determinism::rank_count_independent and the Sum operator");
      ClaimHost(list_index);
      exact_slots_[static_cast<std::size_t>(list_index)].assign(partials, partials + count);
      exact_used_[static_cast<std::size_t>(list_index)] = 1;
      if (core_->Commit()) CombineAndLaunch();
      return TaskStatus::complete;
    }
  }

  /// Arms a generation expecting `expected` contributions combined with `op`.
  template <class Op>
  void Arm(int expected, const Op& op, Collective collective, int root) {
    ValidateRoot(root);
    core_->Arm(expected);
    where_.store(kUndecided, std::memory_order_relaxed);
#if TRIBUTARY_HAVE_KOKKOS
    device_launched_.store(0, std::memory_order_relaxed);
#endif
    SetGenerationOperator(op);
    collective_ = collective;
    root_ = root;
    if (slots_.size() < static_cast<std::size_t>(expected))
      slots_.resize(static_cast<std::size_t>(expected));
    if (exact_ && exact_slots_.size() < static_cast<std::size_t>(expected)) {
      exact_slots_.resize(static_cast<std::size_t>(expected));
      exact_used_.resize(static_cast<std::size_t>(expected));
    }
    if (expected == 0) CombineAndLaunch();
  }

  /// Starts the network phase on `val` directly (the hand-wired pattern); with `input`, a
  /// reduce takes this rank's contribution from there instead (left unchanged; it must
  /// stay so until the generation completes) and `val` receives the root's result only.
  template <class Op>
  void StartOnValue(const Op& op, Collective collective, int root, const T* input = nullptr) {
    if (input == &val) input = nullptr;  // the usual in-place start
    ArmHandWired(op, collective, root);
    const T& source = input ? *input : val;
    if constexpr (kExactCapable) {
      if (exact_) {  // the source is read when the window is agreed (in flight until then)
        exact_source_ = &source;
        LaunchExact(Traits::Size(source), 1);
        return;
      }
    }
    // A Reduce's other ranks keep val unchanged (the core copies it where the schedule
    // would write it); so does a separate input on every rank.
    if (!input) {
      LaunchFrom(val, std::string(), NotRoot());
    } else if (NotRoot()) {
      LaunchFrom(const_cast<T&>(*input), std::string(), true);
    } else {
      LaunchFrom(val, std::string(), false, input);
    }
  }

  /// Device-aware MPI (ContextOptions::device_aware_mpi): a hand-wired generation on `count`
  /// elements at `data` in device memory, which the MPI library reads and writes itself
  /// (`input`: a reduce's separate contribution, also device memory). The caller has checked
  /// that the library combines the operator (kLibraryCombines) and the mode is
  /// Determinism::fast.
  template <class Op>
  void StartOnDeviceMemory(const Op& op, Collective collective, int root, E* data, const E* input,
                           std::size_t count) {
    ArmHandWired(op, collective, root);
    LaunchSpec spec = SpecOf(count);
    spec.device_memory = true;
    op_error_.clear();
    if (NotRoot())  // sends from the input (or val), which stays unchanged
      SetDirect(&spec, const_cast<E*>(input ? input : data), nullptr, count, true);
    else
      SetDirect(&spec, data, input, count, false);
    core_->Launch(spec);
  }

  /// This rank receives the result (an allreduce, or the root of a reduce).
  bool ReceivesResult() const { return !NotRoot(); }

  std::unique_ptr<ReductionCore> core_;

 private:
  // A hand-wired generation: one contribution, this rank's, arrived at once.
  template <class Op>
  void ArmHandWired(const Op& op, Collective collective, int root) {
    ValidateRoot(root);
    core_->Arm(1);
    where_.store(kOnHost, std::memory_order_relaxed);
    SetGenerationOperator(op);
    collective_ = collective;
    root_ = root;
    core_->Arrive(0);
  }

  void ValidateRoot(int root) const {
    Context* ctx = core_->Ctx();
    if (ctx && (root < 0 || root >= ctx->Size()))
      throw UsageError(core_->Where() + ": root " + std::to_string(root) +
                       " is not a rank of the Context (size " + std::to_string(ctx->Size()) +
                       ")");
  }

  // A Reduce's ranks other than the root keep `val` unchanged. The root (and every rank of
  // an AllReduce) works in `val`, which receives the result: no copy back.
  bool NotRoot() const { return collective_ == Collective::reduce && core_->Ctx()->Rank() != root_; }

  // The operator of the generation just armed, and whether it sums exactly; an operator
  // the mode cannot take fails the generation here (CheckReduce then throws the same).
  template <class Op>
  void SetGenerationOperator(const Op& op) {
    exact_device_ = nullptr;  // a new generation: no device partials yet
    try {
      SetOperator<E>(op_, op);
      exact_ = UsesExactSum<Op>();
    } catch (const UsageError& e) {
      const std::string msg = core_->Where() + ": " + e.what();
      core_->FailLocally(msg);
      throw UsageError(msg);
    } catch (const std::exception& e) {
      core_->FailLocally(core_->Where() + ": " + e.what());
      throw;
    }
  }

  template <class Op>
  bool UsesExactSum() const {
    return detail::UsesExactSum<E, Op>(mode_, TypeLabel<E>());
  }

  [[noreturn]] void LengthMismatch(std::size_t len, int i, std::size_t len_i) {
    std::string msg = core_->Where() + ": lists contributed values of different lengths (" +
                      std::to_string(len) + " from list 0, " + std::to_string(len_i) + " from list " +
                      std::to_string(i) + ")";
    core_->FailLocally(msg);
    throw UsageError(msg);
  }

  // What a rank with no nonzero finite term needs of the window, `terms` per element.
  static WindowNeeds NoBits(int terms) {
    WindowNeeds needs;
    needs.lo = std::int64_t(1) << 40;  // above any bit
    needs.terms = std::max(1, terms);
    return needs;
  }

  // Every list's partial is added exactly once the ranks agree on the window of digits
  // their data occupies (see Measure and Pack); here only the lengths are checked.
  void CombineExactAndLaunch() {
    exact_source_ = nullptr;
    if (exact_device_) {  // one exact partial per element, merged on the device
      LaunchExact(exact_device_count_, 1);
      return;
    }
    const int n = core_->Expected();
    const auto length_of = [&](int i) {
      const auto u = static_cast<std::size_t>(i);
      return exact_used_[u] ? exact_slots_[u].size() : Traits::Size(slots_[u].value);
    };
    const std::size_t len = n == 0 ? Traits::Size(val) : length_of(0);
    for (int i = 1; i < n; ++i)
      if (length_of(i) != len) LengthMismatch(len, i, length_of(i));
    LaunchExact(len, n);  // one term per list
  }

  // What this rank's partials need of the window: the bits of every value and partial.
  WindowNeeds Measure() const {
    WindowNeeds needs = NoBits(exact_terms_);
    const auto widen = [&needs](const E* in, std::size_t count) {
      if constexpr (kExactCapable) {
        if constexpr (std::is_same_v<E, double>)
          if (WidenRangeKernel(in, count, &needs.lo, &needs.hi, &needs.special)) return;
        for (std::size_t k = 0; k < count; ++k)
          WidenRange(static_cast<double>(in[k]), &needs.lo, &needs.hi, &needs.special);
      } else {
        (void)in, (void)count;
      }
    };
    if (exact_device_) {
      for (std::size_t k = 0; k < exact_device_count_; ++k)
        WidenRange(exact_device_[k], &needs.lo, &needs.hi, &needs.special);
    } else if (exact_source_) {
      widen(Traits::Data(*exact_source_), exact_count_);
    } else {
      for (int i = 0; i < core_->Expected(); ++i) {
        const auto u = static_cast<std::size_t>(i);
        if (exact_used_[u])
          for (const ExactSum& part : exact_slots_[u]) WidenRange(part, &needs.lo, &needs.hi, &needs.special);
        else
          widen(Traits::Data(slots_[u].value), exact_count_);
      }
    }
    return needs;
  }
  static WindowNeeds MeasureThunk(void* self) { return static_cast<ReductionBase*>(self)->Measure(); }

  // The sums travel in the compact window form (ExactWindow), packed: the combine is exact,
  // so every schedule and every order gives the same value; Finish rounds once.
  void LaunchExact(std::size_t count, int terms) {
    LaunchSpec spec = SpecOf(count);
    if (spec.signature != 0) spec.signature += 7;  // exact records: another message than the values'
    spec.payload.commutative = true;
    spec.builtin_op = false;
    spec.window = true;
    spec.measure = &MeasureThunk;
    exact_terms_ = terms;
    // A window agreed before, for an allreduce whose data still fits it: no agreement.
    spec.window_guess = have_agreed_ && collective_ == Collective::allreduce ? &agreed_ : nullptr;
    spec.pack = &PackThunk;
    exact_count_ = count;
    prepacked_ = false;
    if constexpr (std::is_same_v<E, double>)
      if (count >= kPrepackFrom && SingleSource()) spec.prepack = &PrepackThunk;
    if constexpr (kExactCapable) {
      // The records are rounded where they are complete: by Rabenseifner and the ring on
      // each rank's share before their allgather, else by the core on the whole message;
      // into `val`, or into rounded_ when the records speculate (see Pack).
      spec.finisher.fn = &RoundThunk;
      spec.finisher.combine_fn = &RoundSumThunk;
      spec.finisher.state = this;
      spec.finisher.out_size = sizeof(E);
    }
    layout_.rank = core_->Ctx()->Rank();
    layout_.error_text = &op_error_;
    op_error_.clear();
    spec.packed = &layout_;
    packed_active_ = false;
    exact_active_ = true;
    core_->Launch(spec);
  }

  // Writes the message for the agreed window: per element the exact sum of this rank's
  // partials (values added exactly, ExactSum partials merged) as a window record.
  // `speculative`: the window was agreed for an earlier generation; one more record
  // follows, 1 where this rank's data does not fit it (its records are then zero).
  PackedRecords Pack(const WindowNeeds& agreed, bool speculative) {
    if (!speculative) {
      agreed_ = agreed;
      have_agreed_ = true;
    }
    const ExactWindow w = WindowFor(agreed.lo, agreed.hi, agreed.terms, agreed.special);
    const bool kept = prepacked_ && !speculative && w.first == window_.first && w.digits == window_.digits &&
                      w.flags == window_.flags;
    prepacked_ = false;
    if (kept) return {packed_.data(), RoundedTarget(false)};  // written in this window already
    const std::size_t n = exact_count_, words = w.Words();
    std::uint32_t* records = RecordsFor(w, n + (speculative ? 1 : 0));
    std::uint32_t* trailer = records + n * words;
    if (speculative) std::fill(trailer, trailer + words, 0u);
    const PackedRecords done{packed_.data(), RoundedTarget(speculative)};
    const auto misfit = [&] {
      trailer[0] = 1;
      std::fill(records, trailer, 0u);
      return done;
    };
    const std::int64_t ranks = core_->Ctx()->Size();
    if (speculative && std::max(1, exact_terms_) * ranks > agreed.terms) return misfit();
    if constexpr (std::is_same_v<E, double>) {
      // One value per element: written (and checked) four at a time where the CPU can.
      if (const E* single = SingleSource()) {
        WindowFit fit;
        fit.hi = agreed.hi;
        if (DepositKernel(single, n, window_.first, window_.flags ? 0 : window_.digits, records,
                          speculative ? &fit : nullptr)) {
          if (!fit.fits) return misfit();
          return done;
        }
      }
    }
    if (speculative) {
      const WindowNeeds mine = Measure();
      const bool fits = (!mine.special || agreed.special) &&
                        (mine.hi < 0 || (mine.lo >= agreed.lo && mine.hi <= agreed.hi));
      if (!fits) return misfit();
    }
    PackRecords(records);
    return done;
  }

  // Large messages of one value per element: the records in the window agreed before,
  // written while the data is measured for the agreement that follows (Pack keeps them
  // when it agrees on the same window). No data where the kernels do not take the window.
  PackedRecords Prepack(const WindowNeeds& guess, WindowNeeds* measured) {
    if constexpr (std::is_same_v<E, double>) {
      const ExactWindow w = WindowFor(guess.lo, guess.hi, guess.terms, guess.special);
      const E* single = SingleSource();
      if (w.flags || !single) return {};
      const std::size_t n = exact_count_;
      std::uint32_t* records = RecordsFor(w, n);
      WindowNeeds mine = NoBits(exact_terms_);
      if (!DepositMeasuringKernel(single, n, w.first, w.digits, records, &mine.lo, &mine.hi, &mine.special))
        return {};
      prepacked_ = true;
      *measured = mine;
      return {packed_.data(), RoundedTarget(false)};
    } else {
      (void)guess, (void)measured;
      return {};
    }
  }
  static PackedRecords PrepackThunk(void* self, const WindowNeeds& guess, WindowNeeds* measured) {
    return static_cast<ReductionBase*>(self)->Prepack(guess, measured);
  }

  // Sizes the message for `count` records of window `w` (after the header) and describes
  // it; returns where the records go.
  std::uint32_t* RecordsFor(const ExactWindow& w, std::size_t count) {
    window_ = w;
    packed_.resize(sizeof(PackedHeader) + count * window_.RecordBytes());
    PackedHeader header;
    std::memcpy(packed_.data(), &header, sizeof header);
    layout_.segments.assign(1, PackedSegment{0, count, window_.RecordBytes(), WindowCombineFor(window_), &window_});
    layout_.bytes = packed_.size();
    return reinterpret_cast<std::uint32_t*>(packed_.data() + sizeof(PackedHeader));
  }

  // The values of an exact generation that contributes one per element (a hand-wired start,
  // or one list of values); null otherwise.
  const E* SingleSource() const {
    if (exact_source_) return Traits::Data(*exact_source_);
    if (exact_device_ || core_->Expected() != 1 || exact_used_[0]) return nullptr;
    return Traits::Data(slots_[0].value);
  }

  // Where an exact generation's rounded values go: `val` itself where it receives them and
  // the records are final once written; otherwise (a speculative generation, which may be
  // packed again from `val`, or a reduce's other ranks) rounded_, with room for the count of
  // misfits.
  void* RoundedTarget(bool speculative) {
    if constexpr (kExactCapable) {
      rounded_in_val_ = !speculative && !NotRoot();
      if (rounded_in_val_) {
        if constexpr (Traits::dynamic) Traits::Resize(val, exact_count_);
        return Traits::Data(val);
      }
      rounded_.resize(exact_count_ + 1);
      return rounded_.data();
    } else {
      (void)speculative;
      return nullptr;
    }
  }

  // The records of this rank's partials in window_ (which they fit).
  void PackRecords(std::uint32_t* records) {
    const std::size_t n = exact_count_, words = window_.Words();
    const int lists = core_->Expected();
    if constexpr (kExactCapable) {
      const bool values_only =
          !exact_device_ && (exact_source_ || std::none_of(exact_used_.begin(), exact_used_.begin() + lists,
                                          [](unsigned char used) { return used != 0; }));
      if (window_.digits <= kShortWindow && values_only) {  // one 128-bit word per element
        // Locals, not members: the records' stores could otherwise alias the window.
        const ExactWindow win = window_;
        const E* source = exact_source_ ? Traits::Data(*exact_source_) : nullptr;
        WithShortForm(win, [&](auto form) {
          using Form = decltype(form);
          for (std::size_t k = 0; k < n; ++k) {
            WindowWord sum = 0;
            unsigned flags = 0;
            if (source) {
              DepositShort(&sum, win, static_cast<double>(source[k]), &flags);
            } else {
              for (int i = 0; i < lists; ++i)
                DepositShort(&sum, win, static_cast<double>(Traits::Data(slots_[static_cast<std::size_t>(i)].value)[k]),
                             &flags);
            }
            StoreShort<Form>(records + k * Form::kWords, sum, flags);
          }
        });
        return;
      }
      std::vector<std::int64_t> acc(static_cast<std::size_t>(window_.digits));
      for (std::size_t k = 0; k < n; ++k) {
        std::fill(acc.begin(), acc.end(), 0);
        unsigned flags = 0;
        if (exact_device_) {
          DepositWindow(acc.data(), window_, exact_device_[k], &flags);
        } else if (exact_source_) {
          DepositWindow(acc.data(), window_, static_cast<double>(Traits::Data(*exact_source_)[k]), &flags);
        } else {
          for (int i = 0; i < lists; ++i) {
            const auto u = static_cast<std::size_t>(i);
            if (exact_used_[u])
              DepositWindow(acc.data(), window_, exact_slots_[u][k], &flags);
            else
              DepositWindow(acc.data(), window_, static_cast<double>(Traits::Data(slots_[u].value)[k]), &flags);
          }
        }
        StoreWindow(records + k * words, acc.data(), window_, flags);
      }
    } else {
      (void)records, (void)n, (void)words, (void)lists;
    }
  }
  static PackedRecords PackThunk(void* self, const WindowNeeds& agreed, bool speculative) {
    return static_cast<ReductionBase*>(self)->Pack(agreed, speculative);
  }

  // The Finisher's combine and rounding in one pass (three-digit records of doubles, where the
  // CPU has the kernels); false otherwise, before writing anything.
  static bool RoundSumThunk(const void* self, const void* in, const void* inout, void* out, std::size_t first,
                            std::size_t count) noexcept {
    if constexpr (std::is_same_v<E, double>) {
      const auto& me = *static_cast<const ReductionBase*>(self);
      const ExactWindow w = me.window_;
      const auto* a = static_cast<const std::uint32_t*>(in);
      const auto* b = static_cast<const std::uint32_t*>(inout);
      const bool trailer = first + count > me.exact_count_;
      if (trailer) --count;
      if (!RoundSumKernel(a, b, count, w.first, w.flags ? 0 : w.digits, static_cast<E*>(out))) return false;
      if (trailer) {  // the count of misfits: the low digits' sum
        const std::uint32_t misfits = a[count * w.Words()] + b[count * w.Words()];
        std::memcpy(static_cast<E*>(out) + count, &misfits, sizeof misfits);
      }
      return true;
    } else {
      (void)self, (void)in, (void)inout, (void)out, (void)first, (void)count;
      return false;
    }
  }

  // The Finisher of window records: records [first, first + count) rounded once to E; a
  // speculative generation's last record (its count of misfits) is copied as it is.
  static void RoundThunk(const void* self, const void* in, void* out, std::size_t first,
                         std::size_t count) noexcept {
    if constexpr (kExactCapable) {
      const auto& me = *static_cast<const ReductionBase*>(self);
      const ExactWindow w = me.window_;
      const auto* records = static_cast<const std::uint32_t*>(in);
      E* values = static_cast<E*>(out);
      if (first + count > me.exact_count_) {
        --count;
        std::memcpy(values + count, records + count * w.Words(), sizeof(std::uint32_t));
      }
      if constexpr (std::is_same_v<E, double>)
        if (RoundKernel(records, count, w.first, w.flags ? 0 : w.digits, values)) return;
      if (w.digits <= kShortWindow) {
        WithShortForm(w, [&](auto form) {
          using Form = decltype(form);
          for (std::size_t k = 0; k < count; ++k) values[k] = RoundShort<E, Form>(records + k * Form::kWords, w.first);
        });
      } else {
        for (std::size_t k = 0; k < count; ++k) values[k] = RoundWindow<E>(records + k * w.Words(), w);
      }
    } else {
      (void)self, (void)in, (void)out, (void)first, (void)count;
    }
  }

  // The combined partial goes into `val`; on a Reduce's other ranks the last list's slot
  // (the object's own scratch) goes to the network as it is, or the work buffer holds the
  // neutral element when no list contributes here.
  void CombineAndLaunch() {
    if (exact_) {
      CombineExactAndLaunch();
      return;
    }
    const int n = core_->Expected();
    T& target = NotRoot() ? work_ : val;
    std::string combine_error;
    if (n == 0) {
      if constexpr (Traits::dynamic) {
        if (NotRoot()) Traits::Resize(work_, Traits::Size(val));
      }
      try {
        const E identity = op_->Identity();
        std::fill_n(Traits::Data(target), Traits::Size(target), identity);
      } catch (const std::exception& e) {
        core_->FailLocally(core_->Where() + ": " + e.what());
        throw;
      }
    } else {
      const std::size_t len = Traits::Size(slots_[0].value);
      for (int i = 1; i < n; ++i)
        if (Traits::Size(slots_[static_cast<std::size_t>(i)].value) != len)
          LengthMismatch(len, i, Traits::Size(slots_[static_cast<std::size_t>(i)].value));
      // Left fold in list order: slot[i] = slot[i-1] ∘ slot[i].
      try {
        for (int i = 1; i < n; ++i)
          op_->Combine(Traits::Data(slots_[static_cast<std::size_t>(i - 1)].value),
                       Traits::Data(slots_[static_cast<std::size_t>(i)].value), len);
      } catch (const std::exception& e) {
        combine_error = e.what();
      }
      T& combined = slots_[static_cast<std::size_t>(n - 1)].value;
      if (NotRoot()) {
        LaunchFrom(combined, combine_error);
        return;
      }
      if constexpr (Traits::dynamic) Traits::Resize(target, len);
      std::copy_n(Traits::Data(combined), len, Traits::Data(target));
    }
    LaunchFrom(target, combine_error);
  }

  // Launches the network phase on `source`; with `input` (a reduce's root) the contribution
  // is read from there and `source` (val) receives the result.
  void LaunchFrom(T& source, const std::string& combine_error = std::string(), bool read_only = false,
                  const T* input = nullptr) {
    Context& ctx = *core_->Ctx();
    const std::size_t count = Traits::Size(input ? *input : source);
    if constexpr (Traits::dynamic)
      if (input) Traits::Resize(source, count);
    LaunchSpec spec = SpecOf(count);
    op_error_ = combine_error;
    if (op_->direct && combine_error.empty()) {
      SetDirect(&spec, Traits::Data(source), input ? Traits::Data(*input) : nullptr, count, read_only);
    } else {
      // User operators travel packed behind a header that carries a failure to every rank.
      // A packed Reduce runs as an allreduce so that every rank learns of a failure.
      if (spec.collective == Collective::reduce) spec.collective = Collective::allreduce;
      layout_.segments.assign(1, PackedSegment{0, count, sizeof(E), op_->combine, op_.get()});
      layout_.bytes = sizeof(PackedHeader) + count * sizeof(E);
      layout_.rank = ctx.Rank();
      layout_.error_text = &op_error_;
      packed_.resize(layout_.bytes);
      PackedHeader header;
      if (!combine_error.empty()) header.error_rank = ctx.Rank();
      std::memcpy(packed_.data(), &header, sizeof header);
      if (count)
        std::memcpy(packed_.data() + sizeof header, Traits::Data(input ? *input : source), count * sizeof(E));
      spec.data = packed_.data();
      spec.packed = &layout_;
      packed_active_ = true;
    }
    core_->Launch(spec);
  }

  // What every launch of this generation shares.
  LaunchSpec SpecOf(std::size_t count) {
    const ContextOptions& o = core_->Ctx()->Options();
    LaunchSpec spec;
    spec.collective = collective_;
    spec.root = root_;
    spec.length = count;
    spec.check_length = Traits::dynamic && o.debug != DebugLevel::none;
    if (o.debug == DebugLevel::full)
      spec.signature = (op_->Signature() * 31 + static_cast<std::uint64_t>(collective_)) * 131 +
                       static_cast<std::uint64_t>(root_);
    spec.payload.commutative = op_->commutative;
    spec.builtin_op = op_->direct;
    spec.determinism = static_cast<int>(mode_);
    exact_active_ = false;
    return spec;
  }

  // The unpacked message of a builtin operator: the elements themselves.
  void SetDirect(LaunchSpec* spec, E* data, const E* input, std::size_t count, bool read_only) {
    spec->data = data;
    spec->input = input;
    spec->data_read_only = read_only;
    spec->payload.count = count;
    spec->payload.elem_size = sizeof(E);
    spec->payload.combine = op_->combine;
    spec->payload.combine_state = op_.get();
#if TRIBUTARY_HAVE_MPI
    spec->payload.elem_type = MpiType<E>::Get();
    spec->payload.op = op_->mpi_op;
#endif
    packed_active_ = false;
  }

  void Finish() {
    Context& ctx = *core_->Ctx();
    const bool to_val = collective_ != Collective::reduce || ctx.Rank() == root_;
    if (exact_active_) {
      if (!to_val) return;
      const std::size_t count = exact_count_;  // rounded by the schedule or the core
      if constexpr (kExactCapable) {
        if (rounded_in_val_) return;
        if constexpr (Traits::dynamic) Traits::Resize(val, count);
        if (count) std::memcpy(Traits::Data(val), rounded_.data(), count * sizeof(E));
      }
      return;
    }
    if (packed_active_) {
      PackedHeader header;
      std::memcpy(&header, packed_.data(), sizeof header);
      if (header.error_rank >= 0) {
        std::string msg = core_->Where() + ": the reduction operator threw on rank " +
                          std::to_string(header.error_rank);
        if (header.error_rank == ctx.Rank() && !op_error_.empty()) msg += ": " + op_error_;
        throw RemoteError(header.error_rank, msg);
      }
      if (to_val) {
        const std::size_t count = (layout_.bytes - sizeof(PackedHeader)) / sizeof(E);
        if constexpr (Traits::dynamic) Traits::Resize(val, count);
        if (count) std::memcpy(static_cast<void*>(Traits::Data(val)), packed_.data() + sizeof header,
                               count * sizeof(E));
      }
      return;
    }
    // Unpacked: the root's result is already in `val`.
  }

  void Abandon() {
#if TRIBUTARY_HAVE_KOKKOS
    if (where_.load(std::memory_order_acquire) == kOnDevice) {
      AbandonOnDevice();
      return;
    }
#endif
    // Missing lists count as neutral elements where the operator has one.
    std::vector<int> missing = core_->MissingLists();
    for (int i : missing) {
      if (exact_) exact_used_[static_cast<std::size_t>(i)] = 0;
      T& slot = slots_[static_cast<std::size_t>(i)].value;
      if constexpr (Traits::dynamic) Traits::Resize(slot, Traits::Size(val));
      try {
        std::fill_n(Traits::Data(slot), Traits::Size(slot), op_->Identity());
      } catch (...) {
      }
    }
    for (int i : missing) core_->Arrive(i);
    if (!missing.empty()) CombineAndLaunch();
  }

  // Where this generation's lists contribute: decided by the first, the same for all.
  static constexpr int kUndecided = 0, kOnHost = 1, kOnDevice = 2;
  // Checks and reserves a host contribution of list `list_index` before its slot is
  // written: every UsageError comes first, so a refused contribution changes nothing.
  void ClaimHost(int list_index) {
    if (core_->State() == Phase::collecting && list_index >= 0 && list_index < core_->Expected())
      ClaimWhere(list_index, kOnHost);
    core_->Claim(list_index);
  }

  void ClaimWhere(int list_index, int where) {
    int seen = kUndecided;
    if (where_.compare_exchange_strong(seen, where, std::memory_order_acq_rel) || seen == where) return;
    throw UsageError(core_->Where() + ": list " + std::to_string(list_index) + " contributed " +
                     (where == kOnDevice ? "on the device" : "a host value") + " in a generation whose lists contribute " +
                     (seen == kOnDevice ? "on the device" : "host values") + "; all lists of a generation contribute the same way");
  }

#if TRIBUTARY_HAVE_KOKKOS
  [[noreturn]] void DeviceShapeError(int list_index, const std::string& what) const {
    throw UsageError(core_->Where() + ": list " + std::to_string(list_index) + " contributed " + what +
                     " (the value holds " + std::to_string(Traits::Size(val)) + " element(s))");
  }

  // Checks the contribution, queues the list's kernel (`launch`) on `exec` into its slot,
  // and queues the list-order fold after the last list's kernel.
  template <class Exec, class Op, class Launch>
  TaskStatus ContributeOnDevice(int list_index, const Exec& exec, const Op& op, std::size_t k, Launch&& launch) {
    const bool mine = core_->State() == Phase::collecting && list_index >= 0 && list_index < core_->Expected();
    if (!mine) core_->Arrive(list_index);  // throws the error for this state or index
    if (exact_)
      throw UsageError(core_->Where() + ": a kernel's functor gives rounded values, which cannot sum exactly "
                                        "(Determinism::rank_count_independent); contribute the values as a View "
                                        "(ContributeView sums them exactly on the device) or ExactSum partials");
    if (op_->Type() != typeid(Op))
      throw UsageError(core_->Where() + ": list " + std::to_string(list_index) + " contributed with operator " +
                       TypeLabel<Op>() + ", but the generation was armed with another operator");
    return ContributeToStage(list_index, exec, k, stage_, op, std::forward<Launch>(launch));
  }

  // Determinism::rank_count_independent: list `list_index`'s values summed exactly on the
  // device (ExactSum partials in its slot), the slots merged on the device after the last
  // list, and the k merged sums staged to the host (DeviceReady).
  template <class Exec, class View>
  TaskStatus ContributeExactView(int list_index, const Exec& exec, const View& data, std::size_t k) {
    const bool mine = core_->State() == Phase::collecting && list_index >= 0 && list_index < core_->Expected();
    if (!mine) core_->Arrive(list_index);  // throws the error for this state or index
    return ContributeToStage(list_index, exec, k, exact_stage_, ExactMergeOp{},
                             [&](DeviceStage<ExactSum, Exec>& stage) {
                               QueueExactViewKernel(stage, list_index, exec, data);
                             });
  }

  // What both device contributions share: the shape check, the stage of this generation
  // (prepared by the first list, in `holder`, folding with `fold`), the arrival, the
  // list's kernel, and the fold after the last list's.
  template <class S, class Exec, class Fold, class Launch>
  TaskStatus ContributeToStage(int list_index, const Exec& exec, std::size_t k,
                               std::unique_ptr<DeviceStageBase<S>>& holder, const Fold& fold, Launch&& launch) {
    if (!Traits::dynamic && k != Traits::Size(val))
      DeviceShapeError(list_index, std::to_string(k) + " value(s)");
    ClaimWhere(list_index, kOnDevice);
    DeviceStage<S, Exec>* stage = nullptr;
    {
      std::lock_guard<std::mutex> lock(device_mutex_);
      const bool first = device_generation_ != core_->Generation();
      if (!first && holder->Space() != typeid(Exec))
        throw UsageError(core_->Where() + ": list " + std::to_string(list_index) +
                         " contributed from another execution space than the lists before it");
      if (!holder || holder->Space() != typeid(Exec)) holder = std::make_unique<DeviceStage<S, Exec>>();
      stage = static_cast<DeviceStage<S, Exec>*>(holder.get());
      if (first) {
        device_generation_ = core_->Generation();
        stage->Prepare(exec, core_->Expected(), k);
        stage->SetFold(fold);
      } else if (stage->count != k) {
        LengthMismatch(stage->count, list_index, k);
      }
    }
    core_->Arrive(list_index);  // duplicates are refused before the slot is written
    Kokkos::Profiling::pushRegion("tributary::contribute");
    launch(*stage);
    stage->Launched(list_index, exec);
    Kokkos::Profiling::popRegion();
    if (device_launched_.fetch_add(1, std::memory_order_acq_rel) + 1 == core_->Expected()) {
      stage->Fold(list_index);
      core_->AwaitClient();
      core_->PollClient();  // host backends: the result is there already
    }
    return TaskStatus::complete;
  }

  // The combined partial is in host memory: into the target, then the network phase.
  bool DeviceReady() {
    if (exact_) {
      DeviceStageBase<ExactSum>* stage = exact_stage_.get();
      if (stage == nullptr || !stage->Ready()) return false;
      exact_device_ = stage->Result();
      exact_device_count_ = stage->count;
      CombineExactAndLaunch();
      return true;
    }
    DeviceStageBase<E>* stage = stage_.get();
    if (stage == nullptr) return false;
    if (!stage->Ready()) return false;
    T& target = NotRoot() ? work_ : val;
    const std::size_t k = stage->count;
    if constexpr (Traits::dynamic) Traits::Resize(target, k);
    std::copy_n(stage->Result(), k, Traits::Data(target));
    LaunchFrom(target);
    return true;
  }

  // A failing generation launches with neutral elements for the missing lists.
  void AbandonOnDevice() {
    if (exact_)
      AbandonStage(exact_stage_.get(), ExactSum());
    else
      AbandonStage(stage_.get(), op_->Identity());
  }
  template <class Stage, class Identity>
  void AbandonStage(Stage* stage, const Identity& identity) {
    std::vector<int> missing = core_->MissingLists();
    if (!stage) return;
    if (missing.empty()) {  // the fold is queued: wait for it and launch now
      if (core_->AwaitingClient()) {
        stage->Wait();
        core_->PollClient();
      }
      return;
    }
    for (int i : missing) core_->Arrive(i);
    stage->FillMissing(missing, identity);
    // A list still queuing its kernel folds itself; otherwise fold here. The failure path
    // may block on the device.
    if (device_launched_.fetch_add(static_cast<int>(missing.size()), std::memory_order_acq_rel) +
            static_cast<int>(missing.size()) ==
        core_->Expected()) {
      stage->Fold(missing.back());
      core_->AwaitClient();
      stage->Wait();
      core_->PollClient();
    }
  }
#endif
  static bool ReadyThunk(void* self) {
#if TRIBUTARY_HAVE_KOKKOS
    return static_cast<ReductionBase*>(self)->DeviceReady();
#else
    (void)self;
    return true;
#endif
  }

  static void FinishThunk(void* self) { static_cast<ReductionBase*>(self)->Finish(); }
  static void AbandonThunk(void* self) { static_cast<ReductionBase*>(self)->Abandon(); }

  std::unique_ptr<OpHolderBase<E>> op_;
  // A wrapper keeps std::vector<bool>'s bit packing away from per-list slots.
  struct Slot {
    T value{};
  };
  std::vector<Slot> slots_;
  T work_{};
  std::vector<unsigned char> packed_;
  std::vector<E> rounded_;  // an exact generation's rounded result where not val (RoundedTarget)
  PackedLayout layout_;
  std::string op_error_;
  Collective collective_ = Collective::allreduce;
  int root_ = 0;
  bool packed_active_ = false;
  std::string name_;
  Determinism mode_ = Determinism::fast;
  bool exact_ = false;         // this generation sums through ExactSum
  bool exact_active_ = false;  // the message in flight holds exact sums (window records)
  const T* exact_source_ = nullptr;  // a hand-wired exact generation: its values (val or input)
  const ExactSum* exact_device_ = nullptr;  // exact partials folded on the device: count of them
  std::size_t exact_device_count_ = 0;
  std::size_t exact_count_ = 0;
  int exact_terms_ = 1;  // terms per element on this rank: lists, or 1 (one value or device partial)
  bool prepacked_ = false;      // the records were written in window_ before the agreement
  bool rounded_in_val_ = false;  // the finisher writes the rounded values into val
  // From this many values, an exact allreduce writes and measures its records before the
  // agreement (Prepack) instead of speculating, and rounds straight into val.
  static constexpr std::size_t kPrepackFrom = 8192;
  ExactWindow window_;
  WindowNeeds agreed_;       // the last window the ranks agreed on (have_agreed_)
  bool have_agreed_ = false;
  std::vector<std::vector<ExactSum>> exact_slots_;  // per list: ExactSum partials ...
  std::vector<unsigned char> exact_used_;            // ... given instead of a value
  std::atomic<int> where_{kUndecided};  // host or device contributions this generation
#if TRIBUTARY_HAVE_KOKKOS
  std::unique_ptr<DeviceStageBase<E>> stage_;  // device slots, kept across generations
  std::unique_ptr<DeviceStageBase<ExactSum>> exact_stage_;  // the same for exact sums
  std::mutex device_mutex_;
  std::uint64_t device_generation_ = 0;  // the generation the stage was prepared for
  std::atomic<int> device_launched_{0};       // lists whose kernel is queued
#endif
};

}  // namespace tributary::detail
