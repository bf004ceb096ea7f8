// AllGather<T>: every rank's value, in rank order, on every rank.
#pragma once

// Marks the internal headers below as included through a public one (detail/*: they refuse
// direct inclusion).
#ifndef TRIBUTARY_PUBLIC_INCLUDE
#define TRIBUTARY_PUBLIC_INCLUDE
#define TRIBUTARY_PUBLIC_INCLUDE_NOT_DEFINED_ALL_GATHER
#endif

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "tributary/context.hpp"
#include "tributary/datatype.hpp"
#include "tributary/detail/core/reduction_core.hpp"
#include "tributary/detail/core/typed_reduction.hpp"

namespace tributary {

/// A reusable non-blocking all-gather. Set `local`, call StartReduce() from one list and
/// CheckReduce() from every list; once complete, `val[r]` is rank r's `local`. For
/// variable-size T every rank must give the same length (checked at DebugLevel::basic).
template <class T>
class AllGather : private detail::ReductionClient {
  static_assert(kIsReducible<T>, "tributary: unsupported value type for AllGather");
  using Traits = ValueTraits<T>;
  using E = typename Traits::element;

 public:
  /// This rank's contribution.
  T local{};
  /// The result: one value per rank, in rank order.
  std::vector<T> val;

  /// An all-gather on `ctx`, named `label` in messages. Takes one communicator of the
  /// Context's pool for its lifetime.
  explicit AllGather(Context& ctx, std::string label = {})
      : core_(std::make_unique<detail::ReductionCore>(
            ctx, "AllGather<" + detail::TypeLabel<T>() + ">", std::move(label))) {
    core_->SetClient(this);
  }
  /// Moves the object; throws UsageError while its network phase is in flight (and then
  /// moves nothing).
  // NOLINTNEXTLINE(performance-noexcept-move-constructor,bugprone-exception-escape)
  AllGather(AllGather&& other)
      : local(std::move(Movable(other).local)),
        val(std::move(other.val)),
        core_(std::move(other.core_)),
        flat_(std::move(other.flat_)),
        count_(other.count_) {
    if (core_) core_->SetClient(this);
  }
  ~AllGather() override {  // the core first: its network phase ends while the buffers exist
    if (!core_) return;
    core_->Retire();
    core_.reset();
  }
  AllGather(const AllGather&) = delete;
  AllGather& operator=(const AllGather&) = delete;
  AllGather& operator=(AllGather&&) = delete;

  /// Starts a new generation gathering `local`. Returns TaskStatus::complete.
  TaskStatus StartReduce() {
    core_->Arm(1);
    core_->Arrive(0);
    Launch();
    return TaskStatus::complete;
  }
  /// The schedule that carries (or carried) the current or last generation.
  ScheduleKind ScheduleUsed() const noexcept { return core_->ScheduleUsed(); }
  /// Complete once `val` holds every rank's value; see AllReduce::CheckReduce.
  TaskStatus CheckReduce() { return core_->Check(); }

  /// Where the current generation is: idle, collecting, in flight, done or failed.
  Phase State() const noexcept { return core_->State(); }
  /// The number of generations started so far (the current one's number).
  std::uint64_t Generation() const noexcept { return core_->Generation(); }
  /// True while the network phase of the current generation runs.
  bool InFlight() const noexcept { return core_->NetworkActive(); }

 private:
  // Refuses to move an object whose network phase is in flight, before anything moves.
  static AllGather& Movable(AllGather& other) {
    if (other.core_ && other.core_->NetworkActive())
      throw UsageError(other.core_->Where() + ": moved while its network phase is in flight");
    return other;
  }
  void Launch() {
    Context& ctx = *core_->Ctx();
    count_ = Traits::Size(local);
    if (!flat_) flat_ = std::make_unique<Gathered>();  // the first, or the last was left
    flat_->values.resize(count_ * static_cast<std::size_t>(ctx.Size()));
    detail::LaunchSpec spec;
    spec.collective = Collective::allgather;
    spec.data = Traits::Data(local);
    spec.result = flat_->values.data();
    spec.length = count_;
    spec.check_length = Traits::dynamic && ctx.Options().debug != DebugLevel::none;
    spec.agreement.element = detail::ElementCode<E>();
    spec.agreement.elem_size = sizeof(E);
    spec.agreement.count = count_;
    spec.agreement.collective = static_cast<std::int32_t>(Collective::allgather);
    spec.agreement.determinism = static_cast<std::int32_t>(ctx.Options().determinism);
    spec.agreement.describe = [](const void*, std::string* op, std::string* element) {
      *op = "none";
      *element = detail::TypeLabel<E>();
    };
    spec.payload.count = count_;
    spec.payload.elem_size = sizeof(E);
#if TRIBUTARY_HAVE_MPI
    spec.payload.elem_type = MpiType<E>::Get();
#endif
    if (ctx.Size() == 1 && count_) std::copy_n(Traits::Data(local), count_, flat_->values.data());
    core_->Launch(spec);
  }
  void Finish() {
    val.resize(static_cast<std::size_t>(core_->Ctx()->Size()));
    for (std::size_t r = 0; r < val.size(); ++r) {
      if constexpr (Traits::dynamic) Traits::Resize(val[r], count_);
      std::copy_n(flat_->values.data() + r * count_, count_, Traits::Data(val[r]));
    }
  }
  void FinishGeneration() override { Finish(); }
  // The result buffer goes to a collective left pending on it; the next launch makes another.
  std::unique_ptr<detail::KeptBuffer> LeaveBuffer(const void* at) noexcept override {
    if (!flat_ || at != flat_->values.data()) return nullptr;
    return std::move(flat_);
  }

  // Every rank's elements, in rank order: where the network phase gathers them.
  struct Gathered final : detail::KeptBuffer {
    std::vector<E> values;
  };
  std::unique_ptr<detail::ReductionCore> core_;
  std::unique_ptr<Gathered> flat_;
  std::size_t count_ = 0;
};

}  // namespace tributary

#ifdef TRIBUTARY_PUBLIC_INCLUDE_NOT_DEFINED_ALL_GATHER
#undef TRIBUTARY_PUBLIC_INCLUDE
#undef TRIBUTARY_PUBLIC_INCLUDE_NOT_DEFINED_ALL_GATHER
#endif
