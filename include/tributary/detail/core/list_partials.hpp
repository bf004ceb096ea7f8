// The list partials of one reduction (an AllReduce or Reduce, or one member of
// a Batch): each list's host value or ExactSum partials, whether this generation's lists
// contribute on the host or on the device, the device slots with each list's kernel and the
// list-order fold after the last one, the neutral elements of a failing generation's
// missing lists, and the list-order fold on the host. The typed facades (TypedReduction,
// BatchMember) check what is theirs, forward here and launch.
#pragma once

#if !defined(TRIBUTARY_PUBLIC_INCLUDE) && !defined(TRIBUTARY_INTERNAL_INCLUDE)
#error \
    "<tributary/detail/core/list_partials.hpp> is internal to Tributary: include <tributary/tributary.hpp> instead"
#endif

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "tributary/datatype.hpp"
#include "tributary/detail/core/op_holder.hpp"
#include "tributary/detail/core/reduction_core.hpp"
#include "tributary/detail/core/type_name.hpp"
#include "tributary/detail/device/device_stage_base.hpp"
#include "tributary/errors.hpp"
#include "tributary/exact_sum.hpp"

namespace tributary::detail {

template <class T>
class ListPartials {
  using Traits = ValueTraits<T>;
  using E = typename Traits::element;

 public:
  /// How a list contributed in this generation (0: not yet).
  static constexpr std::uint8_t kHost = 1, kExact = 2, kDevice = 3;

  ListPartials() = default;
  ListPartials(ListPartials&& other) noexcept
      : core_(other.core_),
        member_(other.member_),
        slots_(std::move(other.slots_)),
        exact_slots_(std::move(other.exact_slots_)),
        marks_(std::move(other.marks_)),
        capacity_(other.capacity_),
        lists_(other.lists_),
        where_(other.where_.load())
#if TRIBUTARY_HAVE_KOKKOS
        ,
        stage_(std::move(other.stage_)),
        exact_stage_(std::move(other.exact_stage_)),
        device_generation_(other.device_generation_),
        device_launched_(other.device_launched_.load())
#endif
  {
  }
  ListPartials& operator=(ListPartials&&) = delete;
  ~ListPartials() {
#if TRIBUTARY_HAVE_KOKKOS
    if (!DeviceRuntimeAlive()) {  // their Views must not be freed now
      (void)stage_.release();
      (void)exact_stage_.release();
      return;
    }
    // Kernels and copies of a generation that failed, or was never polled to its end, may
    // still write the slots: the slots go once they are done.
    if (stage_) stage_->Wait();
    if (exact_stage_) exact_stage_->Wait();
#endif
  }

  /// The core that counts this object's arrivals and names it in errors; `member` (a batch
  /// member's label) when the core counts every member of a batch, so that duplicates are
  /// refused here, per list.
  void Attach(ReductionCore* core, const std::string* member) noexcept {
    core_ = core;
    member_ = member;
  }

  /// A new generation of `lists` lists; `exact`: they may give ExactSum partials.
  void Arm(int lists, bool exact) {
    const auto n = static_cast<std::size_t>(lists);
    if (slots_.size() < n) slots_.resize(n);
    if (exact && exact_slots_.size() < n) exact_slots_.resize(n);
    if (capacity_ < n) {
      marks_ = std::make_unique<std::atomic<std::uint8_t>[]>(n);
      capacity_ = n;
    }
    for (std::size_t i = 0; i < n; ++i) marks_[i].store(0, std::memory_order_relaxed);
    lists_ = lists;
    where_.store(kUndecided, std::memory_order_relaxed);
#if TRIBUTARY_HAVE_KOKKOS
    device_launched_.store(0, std::memory_order_relaxed);
#endif
  }
  /// A hand-wired generation: the value itself, on the host.
  void ArmHandWired() { where_.store(kOnHost, std::memory_order_relaxed); }

  /// List `list`'s host value; true for the object's last arrival (the caller combines).
  /// A refused contribution changes nothing: every UsageError comes before the slot is written.
  bool ContributeHost(int list, const T& partial) {
    Claim(list, kHost);
    slots_[static_cast<std::size_t>(list)].value = partial;
    return Commit(list);
  }
  /// List `list`'s ExactSum partials (one per element), as ContributeHost.
  bool ContributeExact(int list, const ExactSum* partials, std::size_t count) {
    Claim(list, kExact);
    exact_slots_[static_cast<std::size_t>(list)].assign(partials, partials + count);
    return Commit(list);
  }

  bool IsExact(int list) const noexcept {
    return marks_[static_cast<std::size_t>(list)].load(std::memory_order_relaxed) == kExact;
  }
  const std::vector<ExactSum>& ExactOf(int list) const {
    return exact_slots_[static_cast<std::size_t>(list)];
  }
  T& ValueOf(int list) { return slots_[static_cast<std::size_t>(list)].value; }
  /// The host slots there are (at least the lists of every generation so far).
  int Slots() const noexcept { return static_cast<int>(slots_.size()); }
  std::size_t LengthOf(int list) const {
    const auto u = static_cast<std::size_t>(list);
    return IsExact(list) ? exact_slots_[u].size() : Traits::Size(slots_[u].value);
  }

  /// UsageError (and the generation failed locally) unless the first `lists` lists gave
  /// values of one length, which is returned (`fallback` for none).
  std::size_t CommonLength(int lists, std::size_t fallback) {
    if (lists == 0) return fallback;
    const std::size_t len = LengthOf(0);
    for (int i = 1; i < lists; ++i)
      if (LengthOf(i) != len) LengthMismatch(len, i, LengthOf(i));
    return len;
  }

  /// The left fold in list order of the first `lists` (at least one) host values:
  /// slot[i] = slot[i-1] ∘ slot[i]; returns the last slot, the combined partial. The
  /// operator may throw (the slots are then partly combined).
  T& FoldHost(int lists, const OpHolderBase<E>& op, std::size_t len) {
    for (int i = 1; i < lists; ++i)
      op.Combine(Traits::Data(slots_[static_cast<std::size_t>(i - 1)].value),
                 Traits::Data(slots_[static_cast<std::size_t>(i)].value), len);
    return slots_[static_cast<std::size_t>(lists - 1)].value;
  }

  /// This rank's sum per element of the first `lists` lists (values added exactly, ExactSum
  /// partials merged), normalised, into `merged` (`count` elements); from the device when
  /// the lists contributed there.
  void MergeExact(int lists, std::size_t count, std::vector<ExactSum>* merged) const {
    merged->assign(count, ExactSum());
#if TRIBUTARY_HAVE_KOKKOS
    if (OnDevice() && exact_stage_) {  // merged on the device; in host memory now
      std::copy_n(exact_stage_->Result(), count, merged->begin());
      return;
    }
#endif
    if constexpr (std::is_same_v<E, double> || std::is_same_v<E, float>) {
      for (int i = 0; i < lists; ++i) {
        const auto u = static_cast<std::size_t>(i);
        if (IsExact(i)) {
          const std::vector<ExactSum>& p = exact_slots_[u];
          for (std::size_t k = 0; k < count && k < p.size(); ++k) (*merged)[k] += p[k];
        } else {
          for (std::size_t k = 0; k < count; ++k)
            (*merged)[k].Add(static_cast<double>(Traits::Data(slots_[u].value)[k]));
        }
      }
    } else {
      (void)lists;
    }
    for (ExactSum& m : *merged) m.Normalize();
  }

  /// True when this generation's lists contribute on the device.
  bool OnDevice() const noexcept { return where_.load(std::memory_order_acquire) == kOnDevice; }

#if TRIBUTARY_HAVE_KOKKOS
  /// (Defined in detail/device/list_partials_device.hpp, the Kokkos layer.)
  /// List `list`'s partial reduced on the device from the View `data` (k values per list;
  /// `exact`: summed exactly), or, with Policy, from a kernel's functor. `size`: the
  /// elements of the value, or 0 where values of any length are allowed. Returns true for
  /// the object's last arrival, as ContributeHost; an object that counts its own arrivals
  /// launches once the fold is done (the core's AwaitClient and PollClient).
  template <class Exec, class View, class Op>
  bool ContributeView(int list, const Exec& exec, const View& data, const Op& op,
                      const OpHolderBase<E>& holder, std::int64_t first_index, std::size_t k,
                      bool exact, std::size_t size);
  template <class Policy, class F, class Op>
  bool ContributeKernel(int list, const Policy& policy, const F& f, const Op& op,
                        const OpHolderBase<E>& holder, bool exact, std::size_t size);
  /// The same for a value of K elements that the functor gives or accumulates in one pass.
  template <std::size_t K, class Policy, class F, class Op>
  bool ContributeKernelValues(int list, const Policy& policy, const F& f, const Op& op,
                              const OpHolderBase<E>& holder, bool exact, std::size_t size);

  /// A batch kernel that feeds several members from one pass (Batch::ContributeKernel), in
  /// three steps per member: CheckShared throws what the contribution would be refused
  /// with and changes nothing (so that no member is claimed when another refuses), then
  /// BeginShared claims the list's slot of `k` values and returns where they go (E*, or
  /// ExactSum* when `exact`), growing the stage's scratch to `scratch` elements per list
  /// where it is non-zero; after the kernel, EndShared records it and queues the fold
  /// after the last list's (true when the batch's last contribution arrived).
  template <class Exec, class Op>
  void CheckShared(int list, std::size_t k, bool exact, const OpHolderBase<E>& holder);
  template <class Exec, class Op>
  void* BeginShared(int list, const Exec& exec, std::size_t k, bool exact, const Op& op,
                    const OpHolderBase<E>& holder, std::size_t scratch);
  template <class Exec>
  bool EndShared(int list, const Exec& exec, bool exact);
  /// The scratch value V of list `list` in the stage BeginShared grew (see there): in the
  /// exact stage for V = ExactSums<K>.
  template <class V, class Exec>
  auto SharedScratch(int list);

  /// The device partials of this generation: the combined values (or merged sums) in host
  /// memory once ready, null before.
  const E* DeviceResult() {
    if (!stage_ || !stage_->Ready()) return nullptr;
    return stage_->Result();
  }
  /// The combined values without the test: for callers that saw DeviceReady or waited.
  const E* DeviceValues() const noexcept { return stage_->Result(); }
  const ExactSum* DeviceExactResult() {
    if (!exact_stage_ || !exact_stage_->Ready()) return nullptr;
    return exact_stage_->Result();
  }
  /// Values (or sums) per list in this generation's device slots.
  std::size_t DeviceCount(bool exact) const { return exact ? exact_stage_->count : stage_->count; }
  /// True when no device work of this generation is pending. Never blocks.
  bool DeviceReady(bool exact) {
    if (!OnDevice() || (exact ? !exact_stage_ : !stage_)) return true;
    return exact ? exact_stage_->Ready() : stage_->Ready();
  }
  /// True while device slots exist (they must go before Kokkos is finalised).
  bool HoldsDeviceSlots() const noexcept { return stage_ || exact_stage_; }

  [[noreturn]] void DeviceShapeError(int list, const std::string& what, std::size_t size) const {
    throw UsageError(Where() + ": list " + std::to_string(list) + " contributed " + what +
                     " (the value holds " + std::to_string(size) + " element(s))");
  }
#endif

  /// "AllReduce<double> 'dt' (object 3), generation 7, rank 1", with ": member 'm'" for a
  /// batch member.
  std::string Where() const {
    return member_ ? core_->Where() + ": member '" + *member_ + "'" : core_->Where();
  }

 private:
  // Where this generation's lists contribute: decided by the first, the same for all.
  static constexpr int kUndecided = 0, kOnHost = 1, kOnDevice = 2;

  bool Mine(int list) const {
    return core_->State() == Phase::collecting && list >= 0 && list < core_->Expected();
  }

  // Checks and reserves list `list`'s contribution (`how`) before its slot is written:
  // every UsageError comes first, so a refused contribution changes nothing.
  void Claim(int list, std::uint8_t how) {
    core_->CheckCaller();
    if (!Mine(list)) core_->Claim(list);  // throws the error for this state or index
    ClaimWhere(list, how == kDevice ? kOnDevice : kOnHost);
    auto& mark = marks_[static_cast<std::size_t>(list)];
    if (member_) {  // the core counts every member: duplicates are refused here
      std::uint8_t none = 0;
      if (!mark.compare_exchange_strong(none, how, std::memory_order_acq_rel))
        throw UsageError(Where() + ": list " + std::to_string(list) +
                         " contributed twice in one generation");
    } else {
      core_->Claim(list);
      mark.store(how, std::memory_order_relaxed);  // read after the last Commit
    }
  }
  // Counts the claimed contribution; true for the object's last one.
  bool Commit(int list) { return member_ ? core_->Arrive(list) : core_->Commit(); }

  void ClaimWhere(int list, int where) {
    int seen = where_.load(std::memory_order_acquire);
    if (seen == where) return;
    if (seen == kUndecided &&
        where_.compare_exchange_strong(seen, where, std::memory_order_acq_rel))
      return;
    if (seen == where) return;
    throw UsageError(Where() + ": list " + std::to_string(list) + " contributed " +
                     (where == kOnDevice ? "on the device" : "a host value") +
                     " in a generation whose lists contribute " +
                     (seen == kOnDevice ? "on the device" : "host values") +
                     "; all lists of a generation contribute the same way");
  }

  [[noreturn]] void LengthMismatch(std::size_t len, int i, std::size_t len_i) {
    std::string msg = Where() + ": lists contributed values of different lengths (" +
                      std::to_string(len) + " from list 0, " + std::to_string(len_i) +
                      " from list " + std::to_string(i) + ")";
    core_->FailLocally(msg);
    throw UsageError(msg);
  }

#if TRIBUTARY_HAVE_KOKKOS
  template <class Op>
  void CheckDeviceOperator(int list, const OpHolderBase<E>& holder);
  template <class S, class Exec, class Fold, class Launch>
  bool ContributeToStage(int list, const Exec& exec, std::size_t k, std::size_t size,
                         std::unique_ptr<DeviceStageBase<S>>& holder, const Fold& fold,
                         Launch&& launch, std::size_t scratch = 0);
  template <class S, class Exec>
  void CheckStage(int list, std::size_t k, std::size_t size,
                  const std::unique_ptr<DeviceStageBase<S>>& holder);
  template <class S, class Exec, class Fold>
  DeviceStage<S, Exec>* BeginStage(int list, const Exec& exec, std::size_t k, std::size_t size,
                                   std::unique_ptr<DeviceStageBase<S>>& holder, const Fold& fold,
                                   std::size_t scratch);
  template <class S, class Exec>
  bool EndStage(int list, const Exec& exec, DeviceStage<S, Exec>* stage);
#endif

  ReductionCore* core_ = nullptr;
  const std::string* member_ = nullptr;
  // A wrapper keeps std::vector<bool>'s bit packing away from per-list slots.
  struct Slot {
    T value{};
  };
  std::vector<Slot> slots_;
  std::vector<std::vector<ExactSum>> exact_slots_;      // per list: ExactSum partials
  std::unique_ptr<std::atomic<std::uint8_t>[]> marks_;  // per list: 0, kHost, kExact or kDevice
  std::size_t capacity_ = 0;
  int lists_ = 0;
  std::atomic<int> where_{kUndecided};  // host or device contributions this generation
#if TRIBUTARY_HAVE_KOKKOS
  std::unique_ptr<DeviceStageBase<E>> stage_;               // device slots, kept across generations
  std::unique_ptr<DeviceStageBase<ExactSum>> exact_stage_;  // the same for exact sums
  std::mutex device_mutex_;
  std::uint64_t device_generation_ = 0;  // the generation the stage was prepared for
  std::atomic<int> device_launched_{0};  // lists whose kernel is queued
#endif
};

}  // namespace tributary::detail
