// ContributeKernel's kernels: a user's functor run over a Kokkos policy — a RangePolicy, an
// MDRangePolicy of rank 2 to 6 or a TeamPolicy — and reduced into the list's device slot,
// with the generation's operator or (Determinism::rank_count_independent) into an ExactSum.
// The functor either gives the element (`f(i...)`, `f(member)` for a team's partial) or
// accumulates it as a Kokkos reduction functor does (`f(i..., acc)`, `f(member, acc)`).
// Part of the Kokkos layer: included through tributary/kokkos.hpp only.
#pragma once

#if !defined(TRIBUTARY_PUBLIC_INCLUDE) && !defined(TRIBUTARY_INTERNAL_INCLUDE)
#error \
    "<tributary/detail/device/device_policy_kernels.hpp> is internal to Tributary: include <tributary/kokkos.hpp> instead"
#endif

#include "tributary/config.hpp"

#if TRIBUTARY_HAVE_KOKKOS

#include <Kokkos_Core.hpp>
#include <cstddef>
#include <type_traits>
#include <utility>

#include "tributary/exact_sum.hpp"

// Kokkos before 3.7 calls join with volatile arguments; later versions without.
#if KOKKOS_VERSION < 30700
#define TRIBUTARY_POLICY_JOIN_CV volatile
#else
#define TRIBUTARY_POLICY_JOIN_CV
#endif

namespace tributary::detail {

template <class... A>
struct ArgList {};

/// What a policy passes to its functor: `Args` (the indices of a RangePolicy or an
/// MDRangePolicy, the team member of a TeamPolicy). `known` is false for other types.
template <class Policy>
struct PolicyArgs {
  static constexpr bool known = false;
  static constexpr bool team = false;
  using Args = ArgList<>;
};
template <class... P>
struct PolicyArgs<Kokkos::RangePolicy<P...>> {
  static constexpr bool known = true;
  static constexpr bool team = false;
  using Args = ArgList<typename Kokkos::RangePolicy<P...>::index_type>;
};
template <class I, std::size_t>
using IndexAt = I;
/// ArgList<I, ..., I>, one I per element of the sequence (declared only, for decltype).
template <class I, std::size_t... K>
ArgList<IndexAt<I, K>...> RepeatIndex(std::index_sequence<K...>);
template <class... P>
struct PolicyArgs<Kokkos::MDRangePolicy<P...>> {
  using Policy = Kokkos::MDRangePolicy<P...>;
  static constexpr bool known = true;
  static constexpr bool team = false;
  using Args = decltype(RepeatIndex<typename Policy::index_type>(
      std::make_index_sequence<static_cast<std::size_t>(Policy::rank)>()));
};
template <class... P>
struct PolicyArgs<Kokkos::TeamPolicy<P...>> {
  static constexpr bool known = true;
  static constexpr bool team = true;
  using Args = ArgList<typename Kokkos::TeamPolicy<P...>::member_type>;
};

/// How a functor F called with the arguments `Args` gives a list's partial of element E.
template <class F, class E, class Args>
struct FunctorForm;
template <class F, class E, class... A>
struct FunctorForm<F, E, ArgList<A...>> {
  /// f(args..., E& acc): accumulates like a Kokkos reduction functor. The accumulator is
  /// a reference (a functor that also takes one more index by value does not accumulate).
  static constexpr bool accumulates = std::is_invocable_v<const F&, const A&..., E&> &&
                                      !std::is_invocable_v<const F&, const A&..., E&&>;
  /// f(args..., ExactSum& acc): accumulates exactly.
  static constexpr bool accumulates_exact = std::is_invocable_v<const F&, const A&..., ExactSum&> &&
                                            !std::is_invocable_v<const F&, const A&..., ExactSum&&>;
  static constexpr bool gives = std::is_invocable_v<const F&, const A&...>;
  using Given = std::conditional_t<gives, std::invoke_result<const F&, const A&...>,
                                   std::enable_if<true, void>>;
  using R = std::decay_t<typename Given::type>;
  /// f(args...) returns the element, or an ExactSum (a partial summed exactly).
  static constexpr bool gives_exact_sum = gives && std::is_same_v<R, ExactSum>;
  static constexpr bool gives_element = gives && !gives_exact_sum && std::is_convertible_v<R, E>;
  /// The partial is rounded E values combined with the operator, or an exact sum.
  static constexpr bool plain = accumulates || gives_element;
  static constexpr bool exact = accumulates_exact || gives_exact_sum ||
                                (gives_element && std::is_floating_point_v<R> &&
                                 (std::is_same_v<E, double> || std::is_same_v<E, float>));
};

/// The calls shared by the kernels below, for the indices of a range (one to six) and the
/// member of a team. `Kernel::Apply(update, args...)` adds one call's part to `update`.
#define TRIBUTARY_POLICY_CALLS(Kernel)                                                      \
  template <class I>                                                                        \
  KOKKOS_INLINE_FUNCTION void operator()(const I& i0, value_type& u) const {                \
    if constexpr (std::is_integral_v<I>)                                                    \
      Apply(u, i0);                                                                         \
    else                                                                                    \
      ApplyTeam(u, i0);                                                                     \
  }                                                                                         \
  template <class I>                                                                        \
  KOKKOS_INLINE_FUNCTION void operator()(const I i0, const I i1, value_type& u) const {     \
    Apply(u, i0, i1);                                                                       \
  }                                                                                         \
  template <class I>                                                                        \
  KOKKOS_INLINE_FUNCTION void operator()(const I i0, const I i1, const I i2, value_type& u) \
      const {                                                                               \
    Apply(u, i0, i1, i2);                                                                   \
  }                                                                                         \
  template <class I>                                                                        \
  KOKKOS_INLINE_FUNCTION void operator()(const I i0, const I i1, const I i2, const I i3,    \
                                         value_type& u) const {                             \
    Apply(u, i0, i1, i2, i3);                                                               \
  }                                                                                         \
  template <class I>                                                                        \
  KOKKOS_INLINE_FUNCTION void operator()(const I i0, const I i1, const I i2, const I i3,    \
                                         const I i4, value_type& u) const {                 \
    Apply(u, i0, i1, i2, i3, i4);                                                           \
  }                                                                                         \
  template <class I>                                                                        \
  KOKKOS_INLINE_FUNCTION void operator()(const I i0, const I i1, const I i2, const I i3,    \
                                         const I i4, const I i5, value_type& u) const {     \
    Apply(u, i0, i1, i2, i3, i4, i5);                                                       \
  }                                                                                         \
  /* A team: the functor accumulates as Kokkos' team reductions do (each thread's value */  \
  /* is joined), or gives the team's partial, added once per team. */                       \
  template <class M>                                                                        \
  KOKKOS_INLINE_FUNCTION void ApplyTeam(value_type& u, const M& member) const {             \
    if constexpr (Kernel::kAccumulates) {                                                   \
      f(member, u);                                                                         \
    } else {                                                                                \
      const auto part = f(member);                                                          \
      Kokkos::single(Kokkos::PerTeam(member), [&]() { Add(u, part); });                     \
    }                                                                                       \
  }                                                                                         \
  template <class... I>                                                                     \
  KOKKOS_INLINE_FUNCTION void Apply(value_type& u, const I... i) const {                    \
    if constexpr (Kernel::kAccumulates)                                                     \
      f(i..., u);                                                                           \
    else                                                                                    \
      Add(u, f(i...));                                                                      \
  }

/// A user functor's partial combined with Op (the neutral element computed on the host).
/// Elements join as everywhere else in the device partials: `dst = dst ∘ src`.
template <class F, class E, class Op, class Args>
struct FunctorKernel {
  using value_type = E;
  static constexpr bool kAccumulates = FunctorForm<F, E, Args>::accumulates;
  Op op;
  E identity;
  F f;

  KOKKOS_INLINE_FUNCTION void init(value_type& v) const { v = identity; }
  KOKKOS_INLINE_FUNCTION void join(TRIBUTARY_POLICY_JOIN_CV value_type& dst,
                                   const TRIBUTARY_POLICY_JOIN_CV value_type& src) const {
    E later = const_cast<const E&>(src);
    op(const_cast<const E&>(dst), later);
    const_cast<E&>(dst) = later;
  }
  template <class V>
  KOKKOS_INLINE_FUNCTION void Add(value_type& u, const V& element) const {
    E later = static_cast<E>(element);
    op(u, later);
    u = later;
  }
  TRIBUTARY_POLICY_CALLS(FunctorKernel)
};

/// A user functor's partial summed exactly: values it gives are added exactly, ExactSums it
/// gives are merged, and one that accumulates receives the ExactSum itself.
template <class F, class Args>
struct ExactFunctorKernel {
  using value_type = ExactSum;
  static constexpr bool kAccumulates = FunctorForm<F, double, Args>::accumulates_exact;
  F f;

  KOKKOS_INLINE_FUNCTION void init(value_type& v) const { v = ExactSum(); }
  KOKKOS_INLINE_FUNCTION void join(TRIBUTARY_POLICY_JOIN_CV value_type& dst,
                                   const TRIBUTARY_POLICY_JOIN_CV value_type& src) const {
    const_cast<ExactSum&>(dst) += const_cast<const ExactSum&>(src);
  }
  template <class V>
  KOKKOS_INLINE_FUNCTION void Add(value_type& u, const V& part) const {
    if constexpr (std::is_same_v<V, ExactSum>)
      u += part;
    else
      u += static_cast<double>(part);
  }
  TRIBUTARY_POLICY_CALLS(ExactFunctorKernel)
};

#undef TRIBUTARY_POLICY_CALLS

/// The compile-time rules of ContributeKernel (reductions and batch members alike).
template <class E, class Policy, class F, class Op>
constexpr void CheckKernelContribution() {
  using P = PolicyArgs<Policy>;
  static_assert(P::known,
                "ContributeKernel: a Kokkos::RangePolicy, MDRangePolicy (rank 2 to 6) or "
                "TeamPolicy");
  using Form = FunctorForm<F, E, typename P::Args>;
  static_assert(Form::plain || Form::exact,
                "ContributeKernel: the functor must give the element (f(i...) -> E; a team: "
                "f(member) -> the team's E) or accumulate it (f(i..., E& acc), f(member, E& "
                "acc)); for exact sums f(i..., tributary::ExactSum& acc) or -> ExactSum");
  static_assert(std::is_invocable_v<const Op&, const E&, E&>,
                "ContributeKernel: the operator does not apply to the value's element type");
  static_assert(Op::commutative, "ContributeKernel: device reductions need a commutative operator");
}

}  // namespace tributary::detail

#undef TRIBUTARY_POLICY_JOIN_CV

#endif  // TRIBUTARY_HAVE_KOKKOS
