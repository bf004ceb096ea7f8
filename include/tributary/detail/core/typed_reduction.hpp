// TypedReduction<T>: what AllReduce<T> and Reduce<T> share on top of the
// type-erased ReductionCore (the state machine every reduction object has, whatever T):
// the public `val`, the list partials (ListPartials) folded in list-index order, and the
// encoding of the combined partial into the generation's message (plain, packed user
// operator, exact window).
#pragma once

#if !defined(TRIBUTARY_PUBLIC_INCLUDE) && !defined(TRIBUTARY_INTERNAL_INCLUDE)
#error \
    "<tributary/detail/core/typed_reduction.hpp> is internal to Tributary: include <tributary/tributary.hpp> instead"
#endif

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
#include "tributary/detail/core/list_partials.hpp"
#include "tributary/detail/core/op_holder.hpp"
#include "tributary/detail/core/reduction_core.hpp"
#include "tributary/detail/core/type_name.hpp"
#include "tributary/detail/core/typed_message.hpp"
#include "tributary/detail/device/device_stage_base.hpp"
#include "tributary/detail/device/kokkos_hooks.hpp"
#include "tributary/detail/exact/exact_kernels.hpp"
#include "tributary/detail/exact/exact_policy.hpp"
#include "tributary/errors.hpp"
#include "tributary/exact_sum.hpp"
#include "tributary/ops.hpp"

namespace tributary::detail {

template <class T>
class TypedReduction : private ReductionClient, public DeviceContributionApi<TypedReduction<T>> {
  static_assert(kIsReducible<T>,
                "tributary: unsupported value type; supported are arithmetic types, "
                "std::complex, std::array, C arrays, std::vector, Kokkos::View<E*> (with "
                "tributary/kokkos.hpp), contiguous containers (data() and size() over "
                "trivially copyable elements), "
                "std::tuple/std::pair of such values and trivially copyable structs (with a "
                "user operator), or a type with a ValueTraits specialisation");
  using Traits = ValueTraits<T>;
  using E = typename Traits::element;
  static_assert(alignof(E) <= alignof(PackedHeader), "over-aligned elements are not supported");
  static constexpr bool kExactCapable = std::is_same_v<E, double> || std::is_same_v<E, float>;

 public:
  TypedReduction& operator=(TypedReduction&&) = delete;
  TypedReduction(const TypedReduction&) = delete;
  TypedReduction& operator=(const TypedReduction&) = delete;

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
    if (partials_.ContributeHost(list_index, partial)) CombineAndLaunch();
    return TaskStatus::complete;
  }

  // ContributeView and ContributeKernel: DeviceContributionApi.

  /// Determinism::rank_count_independent with Sum over float or double: list
  /// `list_index`'s partial as exact sums of its data (ExactSum; one per element of the
  /// value), so that the result does not depend on how the data is split into lists and
  /// ranks. Throws UsageError in other modes and for other types or operators.
  TaskStatus Contribute(int list_index, const ExactSum& partial) {
    return ContributeExact(list_index, &partial, 1);
  }
  TaskStatus Contribute(int list_index, const std::vector<ExactSum>& partials) {
    return ContributeExact(list_index, partials.data(), partials.size());
  }
  /// The same from K sums of one pass (a kernel reduced with ExactSumReducer over
  /// ExactSums<K>), one per element.
  template <std::size_t K>
  TaskStatus Contribute(int list_index, const ExactSums<K>& partials) {
    return ContributeExact(list_index, partials.data(), K);
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
  TypedReduction(Context& ctx, std::string what, std::string label)
      : core_(std::make_unique<ReductionCore>(ctx, std::move(what), std::move(label))) {
    partials_.Attach(core_.get(), nullptr);
    core_->SetClient(this);
    name_ = core_->Name();
    mode_ = ctx.Options().determinism;
  }
  ~TypedReduction() override {
    [[maybe_unused]] Context* ctx = core_ ? core_->Ctx() : nullptr;
    ReleaseCore();
#if TRIBUTARY_HAVE_KOKKOS
    if constexpr (LooksLikeView<T>::value) {
      if (!DeviceRuntimeAlive() && val.use_count() > 0 && ctx) {
        ctx->HandleError(name_ +
                         ": destroyed after Kokkos::finalize; destroy objects that "
                         "hold Views before finalising Kokkos");
        // Never touch Kokkos after finalize: leave the View's storage alone.
        new T(std::move(val));
      }
    }
    if (partials_.HoldsDeviceSlots() && !DeviceRuntimeAlive() && ctx)  // ~ListPartials keeps them
      ctx->HandleError(name_ +
                       ": destroyed after Kokkos::finalize while holding device partial "
                       "slots; destroy reduction objects before finalising Kokkos");
#endif
  }
  // A move in flight throws, by design (the schedule writes into the buffers).
  // NOLINTNEXTLINE(performance-noexcept-move-constructor,bugprone-exception-escape)
  TypedReduction(TypedReduction&& other)
      : val(std::move(Movable(other).val)),
        core_(std::move(other.core_)),
        op_(std::move(other.op_)),
        work_(std::move(other.work_)),
        message_(std::move(other.message_)),
        collective_(other.collective_),
        root_(other.root_),
        name_(std::move(other.name_)),
        mode_(other.mode_),
        exact_(other.exact_),
        partials_(std::move(other.partials_)) {
    if (core_) core_->SetClient(this);
  }

  // The core goes first, its network phase ended while the buffers and the operator it
  // points to still exist (ReductionCore::Retire); it calls nothing here after that.
  void ReleaseCore() noexcept {
    if (!core_) return;
    core_->Retire();
    core_.reset();
  }

  // Refuses to move an object whose network phase is in flight, before anything moves: the
  // object stays whole and usable.
  static TypedReduction& Movable(TypedReduction& other) {
    if (other.core_ && other.core_->NetworkActive())
      throw UsageError(other.core_->Where() + ": moved while its network phase is in flight");
    return other;
  }

  TaskStatus ContributeExact(int list_index, const ExactSum* partials, std::size_t count) {
    if constexpr (!kExactCapable) {
      (void)partials;
      (void)count;
      throw UsageError(core_->Where() + ": ExactSum partials need float or double elements");
    } else {
      const bool mine =
          core_->State() == Phase::collecting && list_index >= 0 && list_index < core_->Expected();
      if (mine && !exact_)
        throw UsageError(
            core_->Where() +
            ": ExactSum partials need Determinism::rank_count_independent and the Sum operator");
      if (partials_.ContributeExact(list_index, partials, count)) CombineAndLaunch();
      return TaskStatus::complete;
    }
  }

  /// Arms a generation expecting `expected` contributions combined with `op`.
  template <class Op>
  void Arm(int expected, const Op& op, Collective collective, int root) {
    CheckContainerLength();
    ValidateRoot(root);
    core_->Arm(expected);
    SetGenerationOperator(op);
    collective_ = collective;
    root_ = root;
    partials_.Arm(expected, exact_);
    if (expected == 0) CombineAndLaunch();
  }

  /// Starts the network phase on `val` directly (the hand-wired pattern); with `input`, a
  /// reduce takes this rank's contribution from there instead (left unchanged; it must
  /// stay so until the generation completes) and `val` receives the root's result only.
  template <class Op>
  void StartOnValue(const Op& op, Collective collective, int root, const T* input = nullptr) {
    if (input == &val) input = nullptr;  // the usual in-place start
    ArmHandWired(op, collective, root);
    const T& source = InputOr(val, input);
    if constexpr (kExactCapable) {
      if (exact_) {  // the source is read when the window is agreed (in flight until then)
        message_.BeginExact(Traits::Size(source)).single = Traits::Data(source);
        LaunchExact();
        return;
      }
    }
    // A Reduce's other ranks keep val unchanged (the core copies it where the schedule
    // would write it); so does a separate input on every rank.
    if (!input) {
      LaunchFrom(val, std::string(), NotRoot());
    } else if (NotRoot()) {
      LaunchFrom(const_cast<T&>(*input), std::string(), true, nullptr, true);
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
    spec.length_in_header = false;  // device memory goes to the library as it is: no header
    if (NotRoot())                  // sends from the input (or val), which stays unchanged
      message_.SetPlain(&spec, const_cast<E*>(input ? input : data), nullptr, count, true, *op_);
    else
      message_.SetPlain(&spec, data, input, count, false, *op_);
    core_->Launch(spec);
  }

  /// This rank receives the result (an allreduce, or the root of a reduce).
  bool ReceivesResult() const { return !NotRoot(); }

  /// The Context of this object, null once it is gone (or the object moved from).
  Context* ContextOrNull() const noexcept { return core_ ? core_->Ctx() : nullptr; }
  /// Whether this object has its own lane of the MPI library (its communicator).
  bool HasLibraryLane() const noexcept { return core_ && core_->HasLibraryLane(); }

 private:
  std::unique_ptr<ReductionCore> core_;
#if TRIBUTARY_HAVE_KOKKOS
  // The device contributions behind ContributeView and ContributeKernel, defined by the
  // Kokkos layer (detail/device/device_contributions.hpp).
  friend class DeviceContributionApi<TypedReduction<T>>;
  template <class Exec, class View, class Op>
  void ContributeViewOnDevice(int list_index, const Exec& exec, const View& data, const Op& op,
                              std::int64_t first_index);
  template <class Policy, class F, class Op>
  void ContributeKernelOnDevice(int list_index, const Policy& policy, const F& f, const Op& op);
#endif

  // A hand-wired generation: one contribution, this rank's, arrived at once.
  template <class Op>
  void ArmHandWired(const Op& op, Collective collective, int root) {
    CheckContainerLength();
    ValidateRoot(root);
    core_->Arm(1);
    partials_.ArmHandWired();
    SetGenerationOperator(op);
    collective_ = collective;
    root_ = root;
    core_->Arrive(0);
  }

  // A container without resize(n) (kFixedContainer) has no length of its own to agree on:
  // every object must hold as many elements as a default-constructed one (work_, the same
  // on every rank), or `val` could not receive the result.
  static constexpr bool kFixedContainer = kContiguousContainer<T> && !Traits::dynamic;
  void CheckContainerLength() const {
    if constexpr (kFixedContainer) {
      if (Traits::Size(val) != Traits::Size(work_))
        throw UsageError(core_->Where() + ": val holds " + std::to_string(Traits::Size(val)) +
                         " elements, a default-constructed value " +
                         std::to_string(Traits::Size(work_)) +
                         "; a container without resize(n) must hold the same number in every "
                         "object");
    }
  }
  void CheckPartialLength(std::size_t len) {
    if constexpr (kFixedContainer) {
      if (len != Traits::Size(val)) {
        const std::string msg = core_->Where() + ": lists contributed values of " +
                                std::to_string(len) + " elements to a value of " +
                                std::to_string(Traits::Size(val));
        core_->FailLocally(msg);
        throw UsageError(msg);
      }
    } else {
      (void)len;
    }
  }

  void ValidateRoot(int root) const {
    Context* ctx = core_->Ctx();
    if (ctx && (root < 0 || root >= ctx->Size()))
      throw UsageError(core_->Where() + ": root " + std::to_string(root) +
                       " is not a rank of the Context (size " + std::to_string(ctx->Size()) + ")");
  }

  // A Reduce's ranks other than the root keep `val` unchanged. The root (and every rank of
  // an AllReduce) works in `val`, which receives the result: no copy back.
  bool NotRoot() const {
    return collective_ == Collective::reduce && core_->Ctx()->Rank() != root_;
  }

  // The operator of the generation just armed, and whether it sums exactly; an operator
  // the mode cannot take fails the generation here (CheckReduce then throws the same).
  template <class Op>
  void SetGenerationOperator(const Op& op) {
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

  // The elements every list's value has, or 0 where values of any length are allowed.
  std::size_t FixedSize() const { return Traits::dynamic ? 0 : Traits::Size(val); }

  // Exact generations: every list's partial is added exactly once the ranks agree on
  // the window of digits their data occupies (ExactEncoding); here the lengths are checked
  // and the encoding is told where the terms are.
  void CombineExactAndLaunch() {
    if constexpr (kExactCapable) {
      const int n = core_->Expected();
      const std::size_t len = partials_.CommonLength(n, Traits::Size(val));
      CheckPartialLength(len);
      ExactTerms<E>& terms = message_.BeginExact(len);
      for (int i = 0; i < n; ++i) {  // one term per list
        const bool exact = partials_.IsExact(i);
        terms.values.push_back(exact ? nullptr : Traits::Data(partials_.ValueOf(i)));
        terms.partials.push_back(exact ? partials_.ExactOf(i).data() : nullptr);
      }
      LaunchExact();
    }
  }

  // Launches the terms given to the encoding; the rounded values go straight into `val`
  // where it receives the result.
  void LaunchExact() {
    if constexpr (kExactCapable) {
      const std::size_t count = message_.ExactCount();
      LaunchSpec spec = SpecOf(count);
      E* result = nullptr;
      if (!NotRoot()) {
        if constexpr (Traits::dynamic) Traits::Resize(val, count);
        result = Traits::Data(val);
      }
      const Context& ctx = *core_->Ctx();
      message_.SetExact(&spec, result, collective_ == Collective::allreduce, ctx.Rank(),
                        ctx.Size());
      core_->Launch(spec);
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
      const std::size_t len = partials_.CommonLength(n, 0);
      CheckPartialLength(len);
      T& combined = partials_.ValueOf(n - 1);
      try {  // the left fold in list order, into the last list's slot
        partials_.FoldHost(n, *op_, len);
      } catch (const std::exception& e) {
        combine_error = e.what();
      }
      if (NotRoot()) {
        LaunchFrom(combined, combine_error);
        return;
      }
      if constexpr (Traits::dynamic) Traits::Resize(target, len);
      std::copy_n(Traits::Data(combined), len, Traits::Data(target));
    }
    LaunchFrom(target, combine_error);
  }

  // `*input` where given, else `fallback`, both as const T: a conditional between a
  // `const E[N]` and an `E[N]` lvalue decays both to pointers in nvcc's front end.
  static const T& InputOr(const T& fallback, const T* input) noexcept {
    return input ? *input : fallback;
  }

  // Launches the network phase on `source`; with `input` (a reduce's root) the contribution
  // is read from there and `source` (val) receives the result. `callers`: `source` is the
  // caller's memory (a reduce's separate input), which the object cannot give up.
  void LaunchFrom(T& source, const std::string& combine_error = std::string(),
                  bool read_only = false, const T* input = nullptr, bool callers = false) {
    Context& ctx = *core_->Ctx();
    const std::size_t count = Traits::Size(InputOr(source, input));
    if constexpr (Traits::dynamic)
      if (input) Traits::Resize(source, count);
    LaunchSpec spec = SpecOf(count);
    if (op_->direct && combine_error.empty()) {
      message_.SetPlain(&spec, Traits::Data(source), input ? Traits::Data(*input) : nullptr, count,
                        read_only, *op_);
      // Only a value with storage of its own can be given up (LeaveBuffer).
      spec.fixed_storage = !Traits::dynamic || input || callers;
    } else {
      message_.SetPacked(&spec, Traits::Data(InputOr(source, input)), count, ctx.Rank(), *op_,
                         combine_error);
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
    // An allreduce only: a reduce's other ranks would not learn what the root's header says.
    // The message unit speculates only on plain elements (a builtin operator).
    spec.length_in_header =
        Traits::dynamic && o.debug == DebugLevel::basic && collective_ == Collective::allreduce;
    if (o.debug != DebugLevel::none) {
      AgreementRecord& a = spec.agreement;
      a.op = op_->Signature();
      a.element = ElementCode<E>();
      a.elem_size = sizeof(E);
      a.count = count;
      a.collective = static_cast<std::int32_t>(collective_);
      a.root = collective_ == Collective::reduce ? root_ : -1;
      a.determinism = static_cast<std::int32_t>(mode_);
      a.client = this;
      a.describe = &DescribeThunk;
      if (op_->HasFingerprint()) a.fingerprint = &FingerprintThunk;
    }
    spec.payload.commutative = op_->commutative;
    spec.builtin_op = op_->direct;
    spec.determinism = static_cast<int>(mode_);
    return spec;
  }

  void Finish() {
    Context& ctx = *core_->Ctx();
    message_.Unpack(
        &val, collective_ != Collective::reduce || ctx.Rank() == root_,
        [this] { return core_->Where(); }, ctx.Rank());
  }

#if TRIBUTARY_HAVE_KOKKOS
  // The combined partial is in host memory: into the target, then the network phase.
  bool DeviceReady() {
    if (exact_) {
      const ExactSum* merged = partials_.DeviceExactResult();
      if (merged == nullptr) return false;
      if constexpr (kExactCapable) {  // one merged partial per element
        message_.BeginExact(partials_.DeviceCount(true)).merged = merged;
        LaunchExact();
      }
      return true;
    }
    const E* combined = partials_.DeviceResult();
    if (combined == nullptr) return false;
    T& target = NotRoot() ? work_ : val;
    const std::size_t k = partials_.DeviceCount(false);
    if constexpr (Traits::dynamic) Traits::Resize(target, k);
    std::copy_n(combined, k, Traits::Data(target));
    LaunchFrom(target);
    return true;
  }

#endif
  void FinishGeneration() override { Finish(); }

  // A collective left pending after a failure: the buffer at `at` is the message's (packed,
  // exact records) or, for a value with storage of its own, `val`, the work buffer or a
  // list's slot. A copy takes its place: the object holds what it held.
  std::unique_ptr<KeptBuffer> LeaveBuffer(const void* at) noexcept override {
    if (auto kept = message_.LeaveBuffer(at)) return kept;
    if constexpr (Traits::dynamic) {
      if (auto kept = LeaveValue(val, at)) return kept;
      if (auto kept = LeaveValue(work_, at)) return kept;
      for (int i = 0; i < partials_.Slots(); ++i)
        if (auto kept = LeaveValue(partials_.ValueOf(i), at)) return kept;
    }
    return nullptr;
  }
  // A value's storage, kept. A View's goes with the process, after Kokkos::finalize: it is
  // then left alone.
  struct KeptStorage final : KeptBuffer {
    explicit KeptStorage(T&& v) : value(std::move(v)) {}
    KeptStorage(const KeptStorage&) = delete;
    KeptStorage& operator=(const KeptStorage&) = delete;
    ~KeptStorage() override {
#if TRIBUTARY_HAVE_KOKKOS
      if constexpr (LooksLikeView<T>::value)
        if (!DeviceRuntimeAlive()) new T(std::move(value));
#endif
    }
    T value;
  };
  static std::unique_ptr<KeptBuffer> LeaveValue(T& value, const void* at) noexcept {
    const std::size_t n = Traits::Size(value);
    if (n == 0 || static_cast<const void*>(Traits::Data(value)) != at) return nullptr;
    try {
      T copy{};
      Traits::Resize(copy, n);
      std::copy_n(Traits::Data(value), n, Traits::Data(copy));
      auto kept = std::make_unique<KeptStorage>(std::move(value));
      value = std::move(copy);
      if (static_cast<const void*>(Traits::Data(kept->value)) == at) return kept;
      value = std::move(kept->value);  // the elements did not move with it (stored inline)
    } catch (...) {                    // no memory for the copy: not given up
    }
    return nullptr;
  }

  bool LaunchWhenReady() override {
#if TRIBUTARY_HAVE_KOKKOS
    return DeviceReady();
#else
    return true;
#endif
  }
  static void DescribeThunk(const void* self, std::string* op, std::string* element) {
    *op = static_cast<const TypedReduction*>(self)->op_->Describe();
    *element = TypeLabel<E>();
  }
  static std::uint64_t FingerprintThunk(const void* self) {
    return static_cast<const TypedReduction*>(self)->op_->Fingerprint();
  }

  std::unique_ptr<OpHolderBase<E>> op_;
  T work_{};
  TypedMessage<T> message_;  // this generation's message: plain, packed or exact records
  Collective collective_ = Collective::allreduce;
  int root_ = 0;
  std::string name_;
  Determinism mode_ = Determinism::fast;
  bool exact_ = false;        // this generation sums through ExactSum
  ListPartials<T> partials_;  // the lists' partials, host and device
};

}  // namespace tributary::detail
