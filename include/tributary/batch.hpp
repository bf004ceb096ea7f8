// Batch: several reductions of different types and operators that travel in one network
// message and complete together (e.g. dt by Min, mass by Sum, a cell count by Max).
#pragma once

// Marks the internal headers below as included through a public one (detail/*: they refuse
// direct inclusion).
#ifndef TRIBUTARY_PUBLIC_INCLUDE
#define TRIBUTARY_PUBLIC_INCLUDE
#define TRIBUTARY_PUBLIC_INCLUDE_NOT_DEFINED_BATCH
#endif

#include <atomic>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>

#include "tributary/context.hpp"
#include "tributary/datatype.hpp"
#include "tributary/detail/core/batch_message.hpp"
#include "tributary/detail/core/list_partials.hpp"
#include "tributary/detail/core/message_spec.hpp"
#include "tributary/detail/core/op_holder.hpp"
#include "tributary/detail/core/reduction_core.hpp"
#include "tributary/detail/core/type_name.hpp"
#include "tributary/detail/device/device_stage_base.hpp"
#include "tributary/detail/device/kokkos_hooks.hpp"
#include "tributary/detail/exact/exact_policy.hpp"
#include "tributary/errors.hpp"

namespace tributary {

class Batch;

/// One reduction inside a Batch; owned by the batch. Like AllReduce: `val` holds the result
/// once the batch completes, and partials computed on the device come through ContributeView
/// and ContributeKernel (with tributary/kokkos.hpp), folded in list order on the device.
template <class T>
class BatchMember final : public detail::BatchMemberBase,
                          public detail::DeviceContributionApi<BatchMember<T>> {
  static_assert(kIsReducible<T> && !ValueTraits<T>::dynamic,
                "batch members have a fixed size: scalars, std::array, trivially copyable "
                "structs, tuples");
  using Traits = ValueTraits<T>;
  using E = typename Traits::element;

 public:
  /// The result once the batch is complete (and the input of a hand-wired start).
  T val{};

  /// Contributes list `list_index`'s partial for this member (see Batch::Expect).
  TaskStatus Contribute(int list_index, const T& partial);
  /// rank_count_independent, Sum over a scalar float or double: the list's partial as an
  /// exact sum of its data (see AllReduce::Contribute).
  TaskStatus Contribute(int list_index, const ExactSum& partial);
  /// The same for a member of K float or double elements: one exact sum per element.
  template <std::size_t K>
  TaskStatus Contribute(int list_index, const ExactSums<K>& partials);
  /// Polls the whole batch.
  TaskStatus CheckReduce();
  // ContributeView and ContributeKernel (on the member's operator, folded in list order on
  // the device; the batch starts its message once every member's device work is done):
  // DeviceContributionApi.

  /// Made by Batch::Add.
  template <class Op>
  BatchMember(Batch& batch, const Op& op, const std::string& name, Determinism mode)
      : batch_(&batch) {
    detail::SetOperator<E>(op_, op);
    label = name;
    exact_ = detail::UsesExactSum<E, Op>(mode, detail::TypeName<E>::Get());
    stateless = std::is_empty_v<Op> || exact_;
  }

  /// \cond TRIBUTARY_INTERNAL
  // The member's side of the batch's message (detail::BatchMemberBase), not for users.
  std::size_t Bytes() const noexcept override { return Traits::Size(val) * sizeof(E); }
  std::size_t Align() const noexcept override { return alignof(E); }
  std::size_t Elements() const noexcept override { return Traits::Size(val); }
  bool Exact() const noexcept override { return exact_; }
  void MergeExact(int lists, bool from_val) override {
    if constexpr (kExactCapable) {
      const std::size_t n = Traits::Size(val);
      if (!from_val) {
        partials_.MergeExact(lists, n, &merged_);
        return;
      }
      merged_.assign(n, ExactSum());
      for (std::size_t k = 0; k < n; ++k) merged_[k].Add(static_cast<double>(Traits::Data(val)[k]));
      for (ExactSum& m : merged_) m.Normalize();
    } else {
      (void)lists, (void)from_val;
    }
  }
  const ExactSum* MergedSums() const noexcept override { return merged_.data(); }
  void UnpackRecords(const std::uint32_t* records, const detail::ExactWindow& w) override {
    if constexpr (kExactCapable) {
      for (std::size_t k = 0; k < Traits::Size(val); ++k)
        Traits::Data(val)[k] = detail::RoundWindow<E>(records + k * w.Words(), w);
    } else {
      (void)records, (void)w;
    }
  }
  void PrepareArm(int lists) override { partials_.Arm(lists, exact_); }
  void CombineInto(int lists, unsigned char* dst) override {
    const std::size_t n = Traits::Size(val);
#if TRIBUTARY_HAVE_KOKKOS
    if (partials_.OnDevice()) {  // folded on the device; the result is in host memory now
      std::memcpy(dst, partials_.DeviceValues(), n * sizeof(E));
      return;
    }
#endif
    if (lists == 0) {
      const E identity = op_->Identity();
      for (std::size_t k = 0; k < n; ++k) std::memcpy(dst + k * sizeof(E), &identity, sizeof(E));
      return;
    }
    std::memcpy(dst, Traits::Data(partials_.FoldHost(lists, *op_, n)), n * sizeof(E));
  }
  void PackValue(unsigned char* dst) const override {
    std::memcpy(dst, Traits::Data(val), Bytes());
  }
  void Unpack(const unsigned char* src) override {
    std::memcpy(static_cast<void*>(Traits::Data(val)), src, Bytes());
  }
  detail::PackedSegment Segment(std::size_t offset) const override {
    return detail::PackedSegment{offset, Traits::Size(val), sizeof(E), op_->combine, op_.get()};
  }
  bool Commutative() const noexcept override { return exact_ || op_->commutative; }
  std::uint64_t OpSignature() const noexcept override { return op_->Signature(); }
  bool HasFingerprint() const noexcept override { return op_->HasFingerprint(); }
  std::uint64_t OpFingerprint() const override { return op_->Fingerprint(); }
  std::uint64_t ElementKind() const noexcept override { return detail::ElementCode<E>(); }
  std::string OpName() const override { return op_->Describe(); }
  std::string ElementName() const override { return detail::TypeLabel<T>(); }
  bool OnDevice() const noexcept override { return partials_.OnDevice(); }
#if TRIBUTARY_HAVE_KOKKOS
  bool DeviceReady() override { return partials_.DeviceReady(exact_); }
#endif
  /// \endcond

 private:
  friend class Batch;
#if TRIBUTARY_HAVE_KOKKOS
  // Defined by the Kokkos layer (detail/device/device_contributions.hpp).
  friend class detail::DeviceContributionApi<BatchMember<T>>;
  template <class Exec, class View, class Op>
  void ContributeViewOnDevice(int list_index, const Exec& exec, const View& data, const Op& op,
                              std::int64_t first_index);
  template <class Policy, class F, class Op>
  void ContributeKernelOnDevice(int list_index, const Policy& policy, const F& f, const Op& op);
#endif
  static constexpr bool kExactCapable = std::is_same_v<E, double> || std::is_same_v<E, float>;
  bool exact_ = false;
  std::vector<ExactSum> merged_;  // exact members: this rank's sums (MergeExact)
  Batch* batch_;
  std::unique_ptr<detail::OpHolderBase<E>> op_;
  detail::ListPartials<T> partials_;  // the lists' partials, host and device
};

/// A group of reductions declared in the same order on every rank that travel in one
/// message: add members once, then each generation `Expect(lists)` (or fill each member's
/// `val` and `StartReduce()`), contribute to every member from every list, and poll
/// `CheckReduce()` (the batch's or any member's). The members keep their own operators and
/// types; the message is one allreduce whatever their number.
class Batch : private detail::ReductionClient {
 public:
  /// A batch on `ctx`, named `label` in messages. Takes one communicator of the Context's
  /// pool for its lifetime.
  explicit Batch(Context& ctx, std::string label = {})
      : core_(std::make_unique<detail::ReductionCore>(ctx, "Batch", std::move(label))) {
    core_->SetClient(this);
  }
  ~Batch() override {  // the core first: its network phase ends while the buffers exist
    core_->Retire();
    core_.reset();
  }
  Batch(const Batch&) = delete;
  Batch& operator=(const Batch&) = delete;

  /// Adds a member reduced with `op`. Members are added before the first start, in the
  /// same order on every rank. The reference stays valid for the batch's lifetime.
  template <class T, class Op>
  BatchMember<T>& Add(Op op, std::string label = {}) {
    if (core_->Generation() != 0)
      throw UsageError(core_->Name() + ": members must be added before the first start");
    std::unique_ptr<BatchMember<T>> member;
    try {
      member = std::make_unique<BatchMember<T>>(*this, op, std::move(label),
                                                core_->Ctx()->Options().determinism);
    } catch (const UsageError& e) {
      throw UsageError(core_->Name() + ": " + e.what());
    }
    BatchMember<T>& ref = *member;
    ref.partials_.Attach(core_.get(), &ref.label);
    members_.push_back(std::move(member));
    return ref;
  }

  /// Arms a new generation: every member expects `lists` contributions on this rank (zero:
  /// neutral elements at once).
  void Expect(int lists) {
    RequireMembers();
    core_->Arm(lists, static_cast<int>(members_.size()));
    for (auto& m : members_) m->PrepareArm(lists);
    lists_ = lists;
    if (lists == 0) CombineAndLaunch();
  }

  /// Starts a new generation from every member's `val` (the hand-wired pattern).
  TaskStatus StartReduce() {
    RequireMembers();
    core_->Arm(1, static_cast<int>(members_.size()));
    core_->Arrive(0, static_cast<int>(members_.size()));
    LayOut();
    unsigned char* body = message_.FixedPart();
    for (std::size_t k = 0; k < members_.size(); ++k) {
      if (members_[k]->Exact())
        members_[k]->MergeExact(0, true);
      else
        members_[k]->PackValue(message_.Slot(body, k));
    }
    Launch();
    return TaskStatus::complete;
  }

#if TRIBUTARY_HAVE_KOKKOS
  /// One kernel feeding several members: list `list_index`'s partials of `members` (of
  /// this batch, each declared with `op`, of one element type E) from one pass of `f` over
  /// `policy` on the policy's instance, without a host fence. The functor gives or
  /// accumulates K values, K the members' elements together, in the members' order (for
  /// members `ts` and `tt` of one element: `acc[0]` is ts's, `acc[1]` tt's): it accumulates
  /// into `E (&acc)[K]`, into `std::array<E, K>&` or, with `Acc` given, into `Acc&` (a
  /// contiguous container of K elements E), or gives them (std::array<E, K>, Acc); with
  /// exact sums (members of rank_count_independent Sum over float or double: all or none)
  /// into `tributary::ExactSums<K>&`. The members take the values as their own
  /// ContributeKernel would; each still needs its contribution from every list.
  template <class Acc = void, class Policy, class F, class Op, class... T>
  TaskStatus ContributeKernel(int list_index, const Policy& policy, const F& f, const Op& op,
                              BatchMember<T>&... members) {
    TRIBUTARY_REQUIRE_KOKKOS_LAYER(policy);
    ContributeSharedKernel<Acc>(list_index, policy, f, op, members...);
    return TaskStatus::complete;
  }
#endif

  /// Complete once every member's `val` holds its result.
  TaskStatus CheckReduce() { return core_->Check(); }
  /// CheckReduce for generation `generation` (see AllReduce::CheckGeneration).
  TaskStatus CheckGeneration(std::uint64_t generation) { return core_->Check(generation); }
  /// Where the current generation is: idle, collecting, in flight, done or failed.
  Phase State() const noexcept { return core_->State(); }
  /// The number of generations started so far (the current one's number).
  std::uint64_t Generation() const noexcept { return core_->Generation(); }
  /// True while the network phase of the current generation runs.
  bool InFlight() const noexcept { return core_->NetworkActive(); }
  /// The number of members.
  std::size_t Size() const noexcept { return members_.size(); }

 private:
  template <class T>
  friend class BatchMember;

#if TRIBUTARY_HAVE_KOKKOS
  // Defined by the Kokkos layer (detail/device/batch_kernels.hpp).
  template <class Acc, class Policy, class F, class Op, class... T>
  void ContributeSharedKernel(int list, const Policy& policy, const F& f, const Op& op,
                              BatchMember<T>&... members);
#endif

  void RequireMembers() const {
    if (members_.empty()) throw UsageError(core_->Name() + ": started with no members");
  }

  template <class T>
  TaskStatus ContributeMember(BatchMember<T>& m, int list, const T& partial) {
    if (m.partials_.ContributeHost(list, partial)) LastArrived();
    return TaskStatus::complete;
  }

  template <class T>
  TaskStatus ContributeExact(BatchMember<T>& m, int list, const ExactSum* partials,
                             std::size_t count) {
    if (!m.exact_)
      throw UsageError(core_->Where() + ": member '" + m.label +
                       "': an ExactSum partial needs "
                       "Determinism::rank_count_independent and Sum over float or double");
    if (count != m.Elements())
      throw UsageError(core_->Where() + ": member '" + m.label + "': list " + std::to_string(list) +
                       " gave " + std::to_string(count) + " exact sum(s) for a member of " +
                       std::to_string(m.Elements()));
    if (m.partials_.ContributeExact(list, partials, count)) LastArrived();
    return TaskStatus::complete;
  }

  // The last contribution: members contributed on the device have queued their folds; the
  // message is packed once that work is done (at once on host backends, else from
  // CheckReduce).
  void LastArrived() {
    bool device = false;
    for (auto& m : members_) device = device || m->OnDevice();
    if (!device) {
      CombineAndLaunch();
      return;
    }
    core_->AwaitClient();
    core_->PollClient();
  }
  bool Ready() {
    for (auto& m : members_)
      if (!m->DeviceReady()) return false;
    CombineAndLaunch();
    return true;
  }

  void CombineAndLaunch() {
    LayOut();
    unsigned char* body = message_.FixedPart();
    for (std::size_t k = 0; k < members_.size(); ++k) {
      try {
        if (members_[k]->Exact())
          members_[k]->MergeExact(lists_, false);
        else
          members_[k]->CombineInto(lists_, message_.Slot(body, k));
      } catch (const std::exception& e) {
        message_.FailFixedPart("member '" + members_[k]->label + "': " + e.what());
      }
    }
    Launch();
  }

  // The message's layout, made at the first start (members are fixed from then on).
  void LayOut() {
    const Context& ctx = *core_->Ctx();
    message_.LayOut(ctx.Options().determinism, ctx.Rank(), ctx.Size());
  }

  void Launch() {
    const ContextOptions& o = core_->Ctx()->Options();
    core_->Launch(message_.Spec(o.determinism, o.debug));
  }

  void Finish() {
    message_.Unpack([this] { return core_->Where(); });
  }

  void FinishGeneration() override { Finish(); }
  bool LaunchWhenReady() override { return Ready(); }
  std::unique_ptr<detail::KeptBuffer> LeaveBuffer(const void* at) noexcept override {
    return message_.Leave(at);
  }

  std::unique_ptr<detail::ReductionCore> core_;
  std::vector<std::unique_ptr<detail::BatchMemberBase>> members_;
  detail::BatchMessage message_{members_};  // the members' values in one message
  int lists_ = 0;
};

template <class T>
TaskStatus BatchMember<T>::Contribute(int list_index, const T& partial) {
  return batch_->ContributeMember(*this, list_index, partial);
}

template <class T>
TaskStatus BatchMember<T>::Contribute(int list_index, const ExactSum& partial) {
  if constexpr (!std::is_floating_point_v<T>) {
    (void)list_index;
    (void)partial;
    throw UsageError("member '" + label +
                     "': an ExactSum partial needs a scalar float or double member");
  } else {
    return batch_->ContributeExact(*this, list_index, &partial, 1);
  }
}

template <class T>
template <std::size_t K>
TaskStatus BatchMember<T>::Contribute(int list_index, const ExactSums<K>& partials) {
  if constexpr (!kExactCapable) {
    (void)list_index;
    (void)partials;
    throw UsageError("member '" + label + "': ExactSums partials need float or double elements");
  } else {
    return batch_->ContributeExact(*this, list_index, partials.data(), K);
  }
}

template <class T>
TaskStatus BatchMember<T>::CheckReduce() {
  return batch_->CheckReduce();
}

}  // namespace tributary

#ifdef TRIBUTARY_PUBLIC_INCLUDE_NOT_DEFINED_BATCH
#undef TRIBUTARY_PUBLIC_INCLUDE
#undef TRIBUTARY_PUBLIC_INCLUDE_NOT_DEFINED_BATCH
#endif
