// AllReduce<T>: a non-blocking reduction whose result every rank receives.
#pragma once

// Marks the internal headers below as included through a public one (detail/*: they refuse
// direct inclusion).
#ifndef TRIBUTARY_PUBLIC_INCLUDE
#define TRIBUTARY_PUBLIC_INCLUDE
#define TRIBUTARY_PUBLIC_INCLUDE_NOT_DEFINED_ALL_REDUCE
#endif

#include <string>

#include "tributary/detail/core/reduction_for.hpp"

namespace tributary {

/// A reusable non-blocking all-reduce of a value of type T.
///
/// Two ways to use it each generation:
///  - regional combine: `Expect(n, op)` on every rank (n = lists on this rank, may be 0),
///    `Contribute(i, partial)` from each list i, `CheckReduce()` from every list;
///  - hand-wired (the familiar shape): accumulate into `val`, `StartReduce(op)` from one
///    list, `CheckReduce()` from every list.
/// After CheckReduce returns complete, `val` holds the result on every rank, identical in
/// every bit. Objects must be created in the same order on every rank; their starts may
/// come in any order. Move-only; not movable while in flight.
template <class T>
class AllReduce : public detail::ReductionFor<T> {
  using Base = detail::ReductionFor<T>;

 public:
  /// An all-reduce on `ctx`, named `label` in messages. Takes a slot of the Context for its
  /// lifetime (no communicator of its own; docs/reductions.md, "The ordering contract").
  explicit AllReduce(Context& ctx, std::string label = {})
      : Base(ctx, "AllReduce<" + detail::TypeLabel<T>() + ">", std::move(label)) {}
  /// Moves the object (not while its network phase is in flight: UsageError).
  AllReduce(AllReduce&&) = default;  // NOLINT(performance-noexcept-move-constructor)

  /// Arms a new generation expecting `contributions` calls of Contribute on this rank,
  /// combined with `op`. With zero contributions the rank takes part with the operator's
  /// neutral element at once (for variable-size T, `val` must already have the length).
  template <class Op>
  void Expect(int contributions, Op op) {
    this->Arm(contributions, op, Collective::allreduce, 0);
  }

  /// Starts a new generation reducing `val` with `op`. Returns TaskStatus::complete.
  /// Throws UsageError while the previous generation is not done.
  template <class Op>
  TaskStatus StartReduce(Op op) {
    this->StartOnValue(op, Collective::allreduce, 0);
    return TaskStatus::complete;
  }
};

}  // namespace tributary

#ifdef TRIBUTARY_PUBLIC_INCLUDE_NOT_DEFINED_ALL_REDUCE
#undef TRIBUTARY_PUBLIC_INCLUDE
#undef TRIBUTARY_PUBLIC_INCLUDE_NOT_DEFINED_ALL_REDUCE
#endif
