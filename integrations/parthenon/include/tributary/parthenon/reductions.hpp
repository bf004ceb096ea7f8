// Parthenon's reduction types on Tributary: parthenon::AllReduce<T>, parthenon::Reduce<T>
// and their base parthenon::ReductionBase<T>, with the members Parthenon's solvers and
// examples use (`val`, `StartReduce(MPI_Op)` / `StartReduce(root, MPI_Op)`,
// `CheckReduce()` returning Parthenon's own TaskStatus). utils/reductions.hpp (beside this
// folder) puts them in place of Parthenon's by include-path precedence; include this header
// after Parthenon's basic_types.hpp (parthenon::TaskStatus).
//
// What differs from Parthenon's own objects (docs/parthenon.md):
//  - A handle is copyable (Params stores copies); copies share one Tributary object, each
//    copy keeps its own `val`, and the result goes to the copy that checks.
//  - A second start while a generation is in flight, and a check before any start, are
//    UsageErrors naming the object and rank (Parthenon ignores the one and answers
//    "complete" to the other).
//  - MPI_SUM, MPI_PROD, MPI_MIN, MPI_MAX and the logical and bitwise operators map to
//    Tributary's operators, so the determinism mode applies; other MPI_Ops go as they are.
//  - T may be any contiguous container (data(), size()), Parthenon's summable arrays
//    included, reduced elementwise in place.
//  - `val` of a float or double reduction is a TrackedValue, of a container of them a
//    TrackedContainer (tracked_value.hpp): in Determinism::rank_count_independent an
//    MPI_SUM start reduces the exact sum of what was added to `val`, so per-partition
//    partials added with `val +=` give the same bits at every rank count; with ordered
//    terms (an opt-in, runtime.hpp) the other modes add the terms in their own order, so
//    the bits do not depend on the order the tasks added them in.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "tributary/config.hpp"
#if TRIBUTARY_HAVE_KOKKOS
#include "tributary/kokkos.hpp"
#else
#include "tributary/tributary.hpp"
#endif
#include "tributary/parthenon/runtime.hpp"
#include "tributary/parthenon/tracked_value.hpp"

#if !TRIBUTARY_HAVE_MPI
#error "Tributary's Parthenon layer needs a Tributary built with MPI"
#endif

/// Defined where Parthenon's reductions are Tributary's, for code that opts in to more.
#define TRIBUTARY_PARTHENON_LAYER 1

namespace tributary::parthenon_interop {

/// The type of `val` for a reduction of T: a TrackedValue for float and double, a
/// TrackedContainer for a container of them that is a class of its own (Parthenon's summable
/// arrays) (unless TRIBUTARY_PARTHENON_PLAIN_VAL is defined), T otherwise.
template <class T, class = void>
struct ValueFor {
  using type = T;
};
#ifndef TRIBUTARY_PARTHENON_PLAIN_VAL
template <>
struct ValueFor<double> {
  using type = TrackedValue<double>;
};
template <>
struct ValueFor<float> {
  using type = TrackedValue<float>;
};
template <class T>
struct ValueFor<T, std::enable_if_t<kTrackedContainer<T>>> {
  using type = TrackedContainer<T>;
};
#endif

namespace detail {

template <class T>
struct IsTracked : std::false_type {};
template <class T>
struct IsTracked<TrackedValue<T>> : std::true_type {};
template <class T>
struct IsTracked<TrackedContainer<T>> : std::true_type {};

/// What the Tributary object reduces for a `val` of type T: T itself, or, for Parthenon's
/// array wrappers (ParArrayGeneric: HostArray1D and friends, a View with a state), their
/// View (KokkosView()).
template <class T, class = void>
struct Underlying {
  using type = T;
  static T& Of(T& v) noexcept { return v; }
  static const T& Of(const T& v) noexcept { return v; }
};
template <class T>
struct Underlying<T, std::void_t<decltype(std::declval<T&>().KokkosView())>> {
  using type = std::decay_t<decltype(std::declval<T&>().KokkosView())>;
  static type& Of(T& v) noexcept { return v.KokkosView(); }
  static const type& Of(const T& v) noexcept { return v.KokkosView(); }
};

/// The handle's `val` into the Tributary object's (a View: the same memory, as Parthenon
/// reduces in place).
template <class U, class V>
void Load(U& into, const V& from) {
  if constexpr (IsTracked<V>::value)
    into = from.Value();
  else
    into = Underlying<V>::Of(from);
}

/// The result into the handle's `val`; the object lets go of a View it was lent.
template <class U, class V>
void Store(V& into, U& result) {
#if TRIBUTARY_HAVE_KOKKOS
  if constexpr (tributary::detail::LooksLikeView<U>::value) {
    auto& view = Underlying<V>::Of(into);
    if (view.data() != result.data()) Kokkos::deep_copy(view, result);
    result = U();
  } else
#endif
  {
    into = result;
  }
}

/// Calls `f` with Tributary's operator for `op` (so the determinism mode and the neutral
/// element apply), or with `op` itself when it has none for the element type E.
template <class E, class F>
decltype(auto) WithOperator(MPI_Op op, F&& f) {
  if constexpr (std::is_arithmetic_v<E>) {
    if (op == MPI_SUM) return f(tributary::Sum{});
    if (op == MPI_PROD) return f(tributary::Prod{});
    if (op == MPI_MIN) return f(tributary::Min{});
    if (op == MPI_MAX) return f(tributary::Max{});
  }
  if constexpr (std::is_integral_v<E>) {
    if (op == MPI_LAND) return f(tributary::LAnd{});
    if (op == MPI_LOR) return f(tributary::LOr{});
    if (op == MPI_LXOR) return f(tributary::LXor{});
    if (op == MPI_BAND) return f(tributary::BAnd{});
    if (op == MPI_BOR) return f(tributary::BOr{});
    if (op == MPI_BXOR) return f(tributary::BXor{});
  }
  return f(op);
}

/// A group of scalar AllReduce handles that travel in one Batch (Fuse).
template <class E>
class Fused final : public Slot {
 public:
  Fused(int members, MPI_Op op) : op_(op), started_(static_cast<std::size_t>(members), 0) {
    batch_ = std::make_unique<Batch>(SharedContext(), "parthenon fused");
    for (int k = 0; k < members; ++k)
      WithOperator<E>(op, [&](auto o) {
        members_.push_back(&batch_->Add<E>(o, "member " + std::to_string(k)));
        return 0;
      });
    Register(this);
  }
  ~Fused() {
    Unregister(this);
    Release();
  }
  Fused(const Fused&) = delete;
  Fused& operator=(const Fused&) = delete;
  void Release() noexcept override {
    members_.clear();
    batch_.reset();
  }

  /// Member k's start: its value (or exact sum) into the batch; the last member's start of
  /// a generation sends the one message.
  template <class V>
  void Start(int k, const V& val) {
    Require();
    if (pending_ == 0) {  // the first start of a new generation
      batch_->Expect(1);
      std::fill(started_.begin(), started_.end(), 0);
      pending_ = static_cast<int>(started_.size());
    }
    if (started_[static_cast<std::size_t>(k)])
      throw UsageError("a fused Parthenon reduction (member " + std::to_string(k) +
                       ") was started twice in one generation of its batch");
    auto& member = *members_[static_cast<std::size_t>(k)];
    if constexpr (IsTracked<V>::value) {
      if (val.Exact() && member.Exact())
        member.Contribute(0, val.Sum());
      else if (val.Exact() && op_ == MPI_SUM && OrderedTerms())
        member.Contribute(0, val.OrderedSum());
      else
        member.Contribute(0, val.Value());
    } else {
      member.Contribute(0, val);
    }
    started_[static_cast<std::size_t>(k)] = 1;
    --pending_;
  }
  /// Complete once every member has started and the batch's message has come back.
  bool Check(int k, E* result) {
    Require();
    if (pending_ != 0 || batch_->CheckReduce() != TaskStatus::complete) return false;
    *result = members_[static_cast<std::size_t>(k)]->val;
    return true;
  }
  std::uint64_t Generation() const { return batch_ ? batch_->Generation() : 0; }
  MPI_Op Op() const noexcept { return op_; }

 private:
  void Require() const {
    if (!batch_)
      throw UsageError(
          "a fused Parthenon reduction was used after Kokkos::finalize or MPI_Finalize");
  }
  MPI_Op op_;
  std::unique_ptr<Batch> batch_;
  std::vector<BatchMember<E>*> members_;
  std::vector<char> started_;
  int pending_ = 0;  // members not started yet in the current generation
};

/// The Tributary object that a handle and its copies share.
template <class Object>
class Shared final : public Slot {
 public:
  Shared() {
    object_ = std::make_unique<Object>(SharedContext());
    Register(this);
  }
  ~Shared() {
    Unregister(this);
    object_.reset();
  }
  Shared(const Shared&) = delete;
  Shared& operator=(const Shared&) = delete;

  void Release() noexcept override { object_.reset(); }

  /// Fused handles (Fuse): the group and this handle's member index; the object goes.
  std::shared_ptr<Slot> fused;
  int fused_index = -1;
  void FuseInto(std::shared_ptr<Slot> group, int index) {
    fused = std::move(group);
    fused_index = index;
    object_.reset();
  }

  /// The object; UsageError once the teardown released it.
  Object& Get() const {
    if (!object_ && fused)
      throw UsageError(
          "this Parthenon reduction is fused into a batch (Fuse): it has no "
          "Tributary object of its own");
    if (!object_)
      throw UsageError(
          "a Parthenon reduction was used after Kokkos::finalize or MPI_Finalize released "
          "its Tributary object");
    return *object_;
  }

 private:
  std::unique_ptr<Object> object_;
};

}  // namespace detail

/// What Parthenon's AllReduce and Reduce share: the value, the check, and the Tributary
/// object that the handle and its copies share. (Parthenon's own base, ReductionBase<T>,
/// is not provided: its members are an MPI request and communicator.)
template <typename T, template <class> class Object>
struct Handle {
  using value_type = T;
  /// The type the Tributary object reduces (T, or the View of a Parthenon array wrapper).
  using reduced_type = typename detail::Underlying<T>::type;
  /// The input of a start and, once CheckReduce answers complete, the result.
  typename ValueFor<T>::type val{};

  /// Complete once this generation's result is in `val` (on every rank for AllReduce, on
  /// the root for Reduce). UsageError before the first start; a failure on another rank
  /// arrives as tributary::RemoteError.
  ::parthenon::TaskStatus CheckReduce() {
    if constexpr (std::is_arithmetic_v<reduced_type>) {
      if (auto* group = FusedGroup()) {
        reduced_type result{};
        if (!group->Check(shared_->fused_index, &result))
          return ::parthenon::TaskStatus::incomplete;
        if (stored_ != group->Generation()) {
          stored_ = group->Generation();
          val = result;
        }
        return ::parthenon::TaskStatus::complete;
      }
    }
    auto& object = shared_->Get();
    if (object.CheckReduce() != ::tributary::TaskStatus::complete)
      return ::parthenon::TaskStatus::incomplete;
    if (stored_ != object.Generation()) {  // once per generation: `val` is the user's again
      stored_ = object.Generation();
      if (keeps_result_) detail::Store(val, object.val);
    }
    return ::parthenon::TaskStatus::complete;
  }

  /// The Tributary object behind this handle and its copies (its name, state, generation,
  /// determinism mode).
  Object<reduced_type>& Tributary() const { return shared_->Get(); }

 protected:
  Handle() : shared_(std::make_shared<detail::Shared<Object<reduced_type>>>()) {}

  /// Starts a generation from `val`: in rank_count_independent with MPI_SUM over a tracked
  /// `val` that holds exactly what was added, the exact sum is this rank's one contribution
  /// (`arm` arms the object for it); with ordered terms (OrderedTerms()) in the other modes
  /// the terms in their own order are; otherwise `start` starts on `val` with the operator.
  template <class Arm, class Start>
  void StartFromVal(MPI_Op op, Arm&& arm, Start&& start) {
    if constexpr (std::is_arithmetic_v<reduced_type>) {
      if (auto* group = FusedGroup()) {
        if (op != group->Op())
          throw UsageError(
              "a fused Parthenon reduction was started with another operator "
              "than the one given to Fuse");
        group->Start(shared_->fused_index, val);
        return;
      }
    }
    auto& object = shared_->Get();
    if constexpr (detail::IsTracked<decltype(val)>::value) {
      if (op == MPI_SUM && val.Exact()) {
        if (object.DeterminismMode() == Determinism::rank_count_independent) {
          arm(object);
          object.Contribute(0, val.Sum());
          return;
        }
        if (OrderedTerms()) {
          object.val = val.OrderedSum();
          start(object, ::tributary::Sum{});
          return;
        }
      }
    }
    detail::Load(object.val, val);
    using E = typename ValueTraits<reduced_type>::element;
    detail::WithOperator<E>(op, [&](auto o) { return start(object, o); });
  }

  detail::Fused<reduced_type>* FusedGroup() const {
    return static_cast<detail::Fused<reduced_type>*>(shared_->fused.get());
  }

  template <class H0, class... H>
  friend void Fuse(MPI_Op op, H0& first, H&... rest);

  std::shared_ptr<detail::Shared<Object<reduced_type>>> shared_;
  std::uint64_t stored_ = 0;  // the generation whose result `val` received
  bool keeps_result_ = true;  // Reduce: only the root's `val` receives the result
};

/// Opt-in: the AllReduce handles given (scalars of one type, all with `op`) travel in one
/// message from now on, as members of a tributary::Batch: each generation, their starts may
/// come in any order; the message goes with the last start and every check completes once
/// it has come back. For reductions that are always started together in each cycle (in
/// Parthenon's BiCGSTAB: `ts` and `tt`); a member started alone never completes. Call on
/// every rank in the same order, before any of them starts (UsageError after), with the
/// Parthenon handles themselves or any copy (copies share the fusion).
template <class H0, class... H>
void Fuse(MPI_Op op, H0& first, H&... rest) {
  using E = typename H0::reduced_type;
  static_assert(std::is_arithmetic_v<E> && (std::is_same_v<typename H::reduced_type, E> && ...),
                "Fuse takes AllReduce handles of one arithmetic type");
  const bool free = !first.shared_->fused && first.shared_->Get().Generation() == 0 &&
                    ((!rest.shared_->fused && rest.shared_->Get().Generation() == 0) && ...);
  if (!free) throw UsageError("Fuse: a handle was already fused or started");
  auto group = std::make_shared<detail::Fused<E>>(static_cast<int>(1 + sizeof...(H)), op);
  int index = 0;
  first.shared_->FuseInto(group, index++);
  (rest.shared_->FuseInto(group, index++), ...);
}

}  // namespace tributary::parthenon_interop

namespace parthenon {

/// Parthenon's AllReduce<T> on Tributary: every rank receives the result in `val`.
template <typename T>
struct AllReduce : public ::tributary::parthenon_interop::Handle<T, ::tributary::AllReduce> {
  /// Starts reducing `val` with `op` (Parthenon's signature). Returns complete; UsageError
  /// while the previous generation is in flight.
  TaskStatus StartReduce(MPI_Op op) {
    this->StartFromVal(
        op, [](auto& object) { object.Expect(1, ::tributary::Sum{}); },
        [](auto& object, auto o) { return object.StartReduce(o); });
    return TaskStatus::complete;
  }
};

/// Parthenon's Reduce<T> on Tributary: the root receives the result in `val`; the other
/// ranks' `val` is left as it is.
template <typename T>
struct Reduce : public ::tributary::parthenon_interop::Handle<T, ::tributary::Reduce> {
  /// Starts reducing `val` to rank `n` with `op` (Parthenon's signature).
  TaskStatus StartReduce(const int n, MPI_Op op) {
    this->StartFromVal(
        op, [n](auto& object) { object.Expect(1, n, ::tributary::Sum{}); },
        [n](auto& object, auto o) { return object.StartReduce(n, o); });
    this->keeps_result_ = n == ::tributary::parthenon_interop::SharedContext().Rank();
    return TaskStatus::complete;
  }
};

}  // namespace parthenon
