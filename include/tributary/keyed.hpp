// Data-driven collectives: a reduction identified by a global key and described by its data
// (how many contributions in total, optionally how many on this rank) rather than by a fixed
// set of participants. Any task on any rank contributes values with an order index
// 0..count-1; reducer ranks combine them; the result goes to the consumer ranks.
#pragma once

// Marks the internal headers below as included through a public one (detail/*: they refuse
// direct inclusion).
#ifndef TRIBUTARY_PUBLIC_INCLUDE
#define TRIBUTARY_PUBLIC_INCLUDE
#define TRIBUTARY_PUBLIC_INCLUDE_NOT_DEFINED_KEYED
#endif

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "tributary/context.hpp"
#include "tributary/detail/core/op_holder.hpp"
#include "tributary/detail/core/type_name.hpp"
#include "tributary/detail/keyed/keyed_engine.hpp"
#include "tributary/errors.hpp"
#include "tributary/ops.hpp"
#include "tributary/tasks/task_status.hpp"

namespace tributary {

/// How a key is declared. Every rank that takes part declares the key with the same
/// operator, count, reducers and consumers (checked: a message whose declaration differs
/// fails the key).
struct KeyOptions {
  /// The global number of contributions (required, >= 0).
  std::int64_t count = -1;
  /// How many contributions this rank will make, when known (-1: unknown). When known, the
  /// rank combines them first and sends one message; when not, each contribution is sent
  /// as it comes and the head reducer counts them.
  std::int64_t local = -1;
  /// The ranks that combine (empty: rank 0). The first is the head: it counts to `count`
  /// and sends the result. A reducer may contribute nothing.
  std::vector<int> reducers;
  /// The ranks that receive the result (empty: every rank).
  std::vector<int> consumers;
};

/// The layout of a value as its basic elements, in order: `std::tuple<double, int>` for a
/// struct of a double and an int. Arithmetic types map to `std::tuple<T>`; specialise it
/// for your structs. Values of different C++ types with the same type map (and size) reduce
/// into one KeyedReduction; a mismatch does not compile.
template <class T, class Enable = void>
struct TypeMap {};
/// An arithmetic type is its own single element.
template <class T>
struct TypeMap<T, std::enable_if_t<std::is_arithmetic_v<T>>> {
  using type = std::tuple<T>;  ///< The basic elements, in order.
};

namespace detail {
template <class T, class = void>
struct HasTypeMap : std::false_type {};
template <class T>
struct HasTypeMap<T, std::void_t<typename TypeMap<T>::type>> : std::true_type {};

/// The operator of a key's generation for the engine: the typed holder, erased.
template <class T>
KeyedOp MakeKeyedOp(std::unique_ptr<OpHolderBase<T>> holder) {
  KeyedOp op;
  op.signature = holder->Signature();
  op.commutative = holder->commutative;
  op.combine = [](const void* state, const void* in, void* inout) {
    static_cast<const OpHolderBase<T>*>(state)->Combine(static_cast<const T*>(in),
                                                        static_cast<T*>(inout), 1);
  };
  op.identity = [](const void* state, void* out) {
    const T identity = static_cast<const OpHolderBase<T>*>(state)->Identity();
    std::memcpy(out, &identity, sizeof(T));
  };
  op.state = {holder.release(),
              [](const void* state) { delete static_cast<const OpHolderBase<T>*>(state); }};
  return op;
}

}  // namespace detail

/// Keyed reductions of values of type T (one trivially copyable element: arithmetic,
/// ValueLoc, a struct with a user operator). One object serves many keys at once; a key is
/// reused after completion as a new generation. Create the object on every rank, in the
/// same order as the Context's other objects (it takes one communicator for its lifetime).
///
///   KeyedReduction<long> totals(ctx);
///   totals.Declare(region, Sum{}, {.count = n, .local = mine});   // every rank that takes part
///   totals.Contribute(region, index, value);                       // any task, any rank
///   if (totals.Check(region) == TaskStatus::complete) use(totals.Result(region));
///
/// Commutative operators combine in any order, local first: within the NUMA domain (from
/// hwloc) of the thread that contributes, then the rank, then the reducers;
/// non-commutative ones, and every operator under Determinism::run_to_run, fold left over
/// the order index at the head reducer: the same bits every run.
template <class T>
class KeyedReduction {
  static_assert(std::is_trivially_copyable_v<T>, "KeyedReduction: a trivially copyable value");

 public:
  /// A keyed reduction on `ctx`, named `label` in messages (collective: created in the
  /// same order on every rank).
  explicit KeyedReduction(Context& ctx, std::string label = {})
      : engine_(ctx, sizeof(T), alignof(T),
                "KeyedReduction<" + detail::TypeLabel<T>() + ">" +
                    (label.empty() ? std::string() : " '" + label + "'")) {}
  KeyedReduction(const KeyedReduction&) = delete;
  KeyedReduction& operator=(const KeyedReduction&) = delete;

  /// Declares (a new generation of) `key` on this rank. UsageError for a count below 0, a
  /// reducer or consumer that is not a rank, a local count above the count, count 0 with
  /// an operator without a neutral element, or while the key's previous generation has not
  /// completed here.
  template <class Op>
  void Declare(std::uint64_t key, const Op& op, const KeyOptions& options) {
    std::unique_ptr<detail::OpHolderBase<T>> holder;
    detail::SetOperator<T>(holder, op);
    engine_.Declare(key, detail::MakeKeyedOp<T>(std::move(holder)), options.count, options.local,
                    options.reducers, options.consumers);
  }

  /// Contributes `value` with order index `index` to the current generation of `key`
  /// (declared on this rank). UsageError for an index outside 0..count-1, an index this rank
  /// already contributed, more contributions than the declared local count, or a key not
  /// declared here; a refused contribution changes nothing. Returns TaskStatus::complete so
  /// it can be a task. With a known local count the rank's combined value leaves with its
  /// last contribution; otherwise this rank's contributions since the last poll leave
  /// together at the next Check or Progress (one message per key).
  TaskStatus Contribute(std::uint64_t key, std::int64_t index, const T& value) {
    return engine_.Contribute(key, index, &value);
  }

  /// Contributes a value of another type U with the same type map as T (e.g. two structs of
  /// a double and an int); it is reduced as the T with the same bytes. A different type map
  /// does not compile.
  template <class U, std::enable_if_t<!std::is_convertible_v<const U&, T>, int> = 0>
  TaskStatus Contribute(std::uint64_t key, std::int64_t index, const U& value) {
    static_assert(detail::HasTypeMap<U>::value && detail::HasTypeMap<T>::value,
                  "KeyedReduction: a value of another type needs a TypeMap for both types");
    static_assert(std::is_same_v<typename TypeMap<U>::type, typename TypeMap<T>::type>,
                  "KeyedReduction: the contribution's type map differs from the reduction's");
    static_assert(sizeof(U) == sizeof(T) && std::is_trivially_copyable_v<U>,
                  "KeyedReduction: a value of another type must have the same size and be "
                  "trivially copyable");
    return engine_.Contribute(key, index, &value);  // the engine copies sizeof(T) bytes
  }

  /// Polls `key`: complete once this rank's part of the current generation is done — a
  /// consumer holds the result, the head has sent it, another reducer has been told, a
  /// producer with a known local count has sent its contributions (with an unknown one:
  /// whenever its messages have left). Throws the generation's error (a mismatched
  /// declaration, a count exceeded, a repeated order index at the head) on the ranks that
  /// receive it, and a UsageError naming the key and the count reached so far once the
  /// Context's watchdog time has passed (or reports it once, per the Context's
  /// WatchdogAction). An incomplete poll also advances the Context's other operations.
  TaskStatus Check(std::uint64_t key) { return engine_.Check(key); }

  /// The result of the current generation on a consumer (UsageError before it arrived).
  const T& Result(std::uint64_t key) const { return *static_cast<const T*>(engine_.Result(key)); }

  /// Receives and handles whatever has arrived (Check and Contribute do this too).
  void Progress() { engine_.Progress(); }

  /// How many per-domain accumulators this rank's contributions to the current generation
  /// of `key` filled so far (commutative keys; one per hwloc NUMA domain that contributed,
  /// per message).
  std::int64_t DomainsUsed(std::uint64_t key) const { return engine_.DomainsUsed(key); }

  /// Messages this object sent through MPI so far.
  std::uint64_t RemoteMessages() const noexcept { return engine_.RemoteMessages(); }

 private:
  detail::KeyedEngine engine_;  // the protocol, compiled once in src/keyed/keyed.cpp
};

}  // namespace tributary

#ifdef TRIBUTARY_PUBLIC_INCLUDE_NOT_DEFINED_KEYED
#undef TRIBUTARY_PUBLIC_INCLUDE
#undef TRIBUTARY_PUBLIC_INCLUDE_NOT_DEFINED_KEYED
#endif
