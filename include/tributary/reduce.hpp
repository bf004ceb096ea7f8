// Reduce<T>: a non-blocking reduction whose result only the root receives.
#pragma once

// Marks the internal headers below as included through a public one (detail/*: they refuse
// direct inclusion).
#ifndef TRIBUTARY_PUBLIC_INCLUDE
#define TRIBUTARY_PUBLIC_INCLUDE
#define TRIBUTARY_PUBLIC_INCLUDE_NOT_DEFINED_REDUCE
#endif

#include <string>

#include "tributary/detail/core/reduction_for.hpp"

namespace tributary {

/// A reusable non-blocking reduce of a value of type T to a root rank given at each start.
/// After CheckReduce returns complete, `val` holds the result on the root; the other
/// ranks' `val` is unchanged (it is sent from where it is: do not write it while in
/// flight). See AllReduce for the two ways to use it.
template <class T>
class Reduce : public detail::ReductionFor<T> {
  using Base = detail::ReductionFor<T>;

 public:
  /// A reduce on `ctx`, named `label` in messages. Takes one communicator of the Context's
  /// pool for its lifetime.
  explicit Reduce(Context& ctx, std::string label = {})
      : Base(ctx, "Reduce<" + detail::TypeLabel<T>() + ">", std::move(label)) {}
  /// Moves the object (not while its network phase is in flight: UsageError).
  Reduce(Reduce&&) = default;  // NOLINT(performance-noexcept-move-constructor)

  /// Arms a new generation to `root` expecting `contributions` on this rank.
  template <class Op>
  void Expect(int contributions, int root, Op op) {
    this->Arm(contributions, op, Collective::reduce, root);
  }

  /// Starts a new generation reducing `val` to `root` with `op`.
  template <class Op>
  TaskStatus StartReduce(int root, Op op) {
    this->StartOnValue(op, Collective::reduce, root);
    return TaskStatus::complete;
  }
  /// Starts a new generation reducing `input` (this rank's contribution) to `root` with
  /// `op`: the root's result goes to `val` (resized to `input` for vectors and Views),
  /// every rank's `input` is left unchanged, and the other ranks' `val` is not touched.
  /// The separate buffers of MPI_Reduce: a root that keeps its input saves the copy of
  /// refilling `val` before each start, and Tributary's reduce schedules combine the input
  /// where the first incoming data lands. `input` must stay alive and unchanged until
  /// CheckReduce returns complete; passing `val` itself is the in-place start above.
  template <class Op>
  TaskStatus StartReduce(int root, Op op, const T& input) {
    this->StartOnValue(op, Collective::reduce, root, &input);
    return TaskStatus::complete;
  }
};

}  // namespace tributary

#ifdef TRIBUTARY_PUBLIC_INCLUDE_NOT_DEFINED_REDUCE
#undef TRIBUTARY_PUBLIC_INCLUDE
#undef TRIBUTARY_PUBLIC_INCLUDE_NOT_DEFINED_REDUCE
#endif
