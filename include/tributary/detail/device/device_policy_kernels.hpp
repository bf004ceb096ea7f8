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
#include <array>
#include <cstddef>
#include <type_traits>
#include <utility>

#include "tributary/datatype.hpp"
#include "tributary/detail/device/exact_teams.hpp"
#include "tributary/exact_sum.hpp"
#include "tributary/exact_sum_reducer.hpp"

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
      f(member, Acc(u));                                                                    \
    } else {                                                                                \
      const auto part = f(member);                                                          \
      Kokkos::single(Kokkos::PerTeam(member), [&]() { Add(u, part); });                     \
    }                                                                                       \
  }                                                                                         \
  template <class... I>                                                                     \
  KOKKOS_INLINE_FUNCTION void Apply(value_type& u, const I... i) const {                    \
    if constexpr (Kernel::kAccumulates)                                                     \
      f(i..., Acc(u));                                                                      \
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
  KOKKOS_INLINE_FUNCTION static value_type& Acc(value_type& u) { return u; }
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
  KOKKOS_INLINE_FUNCTION static value_type& Acc(value_type& u) { return u; }
  template <class V>
  KOKKOS_INLINE_FUNCTION void Add(value_type& u, const V& part) const {
    if constexpr (std::is_same_v<V, ExactSum>)
      u += part;
    else
      u += static_cast<double>(part);
  }
  TRIBUTARY_POLICY_CALLS(ExactFunctorKernel)
};

// Values of K elements (std::array<E, K>, E[K], a contiguous container): one kernel over the
// policy accumulates all K in one pass, into the value type itself (`f(i..., T& acc)`, as a
// Kokkos::Sum<T> reduction takes it), into a C array (`f(i..., E (&acc)[K])`), or, summing
// exactly, into tributary::ExactSums<K> (or `ExactSum (&acc)[K]`); or it gives the K values
// (`T f(i...)`, `std::array<E, K> f(i...)`).

/// K elements side by side: the value a kernel reduces when its functor accumulates into a
/// C array or gives its values.
template <class E, std::size_t K>
struct Lanes {
  E v[K];
};

/// The elements of a kernel's value on the device. A std::array is read through its storage
/// (its members are host functions to nvcc without relaxed constexpr); a contiguous container
/// through its data(), which its type must make callable in kernels (as Kokkos::Sum over it
/// needs its operator+= to be).
template <class E, std::size_t K>
KOKKOS_INLINE_FUNCTION E* LanesOf(Lanes<E, K>& v) {
  return v.v;
}
template <class E, std::size_t K>
KOKKOS_INLINE_FUNCTION E* LanesOf(std::array<E, K>& v) {
  static_assert(sizeof(std::array<E, K>) == K * sizeof(E), "std::array holds its elements only");
  return reinterpret_cast<E*>(&v);
}
template <class C>
KOKKOS_INLINE_FUNCTION auto LanesOf(C& v) -> decltype(v.data()) {
  return v.data();
}

/// The number of elements of a fixed-size value, known at compile time: N for std::array
/// and C arrays, and for a contiguous container without resize(n) the elements its size
/// holds (the container must then hold exactly those: checked against size() at run time);
/// 0 for values without one.
template <class T, class = void>
struct FixedCount : std::integral_constant<std::size_t, 0> {};
template <class E, std::size_t N>
struct FixedCount<std::array<E, N>> : std::integral_constant<std::size_t, N> {};
template <class E, std::size_t N>
struct FixedCount<E[N]> : std::integral_constant<std::size_t, N> {};
template <class T>
struct FixedCount<T, std::enable_if_t<kContiguousContainer<T> && !HasResize<T>::value>>
    : std::integral_constant<std::size_t,
                             sizeof(T) % sizeof(typename ContainerElement<T>::type) == 0
                                 ? sizeof(T) / sizeof(typename ContainerElement<T>::type)
                                 : 0> {};

/// How a functor F called with `Args` gives a list's partial of a value T of K elements E.
template <class F, class T, class E, std::size_t K, class Args>
struct MultiForm;
template <class F, class T, class E, std::size_t K, class... A>
struct MultiForm<F, T, E, K, ArgList<A...>> {
  template <class Acc>
  static constexpr bool kInto = std::is_invocable_v<const F&, const A&..., Acc&> &&
                                !std::is_invocable_v<const F&, const A&..., Acc&&>;
  /// f(args..., T& acc) for a class T laid out as its K elements (std::array, a container).
  static constexpr bool into_value_type = std::is_class_v<T> && kInto<T>;
  static constexpr bool into_value =
      into_value_type && sizeof(T) == K * sizeof(E) && alignof(T) == alignof(E);
  /// f(args..., E (&acc)[K]), or f(args..., std::array<E, K>& acc).
  static constexpr bool into_array = kInto<E[K]>;
  static constexpr bool into_std_array = !into_value && !into_array && kInto<std::array<E, K>>;
  /// f(args..., ExactSums<K>& acc) or f(args..., ExactSum (&acc)[K]).
  static constexpr bool into_exact = kInto<ExactSums<K>>;
  static constexpr bool into_exact_array = kInto<ExactSum[K]>;
  static constexpr bool gives = std::is_invocable_v<const F&, const A&...>;
  using Given = std::conditional_t<gives, std::invoke_result<const F&, const A&...>,
                                   std::enable_if<true, void>>;
  using R = std::decay_t<typename Given::type>;
  /// f(args...) -> T (a class), std::array<E, K> or any container of K elements E: the K
  /// values.
  template <class U>
  static constexpr bool kKValues = std::is_same_v<U, std::array<E, K>> ||
                                   (kContiguousContainer<U> &&
                                    std::is_same_v<typename ContainerElement<U>::type, E> &&
                                    FixedCount<U>::value == K);
  static constexpr bool gives_values =
      gives && ((std::is_class_v<T> && std::is_same_v<R, T>) || kKValues<R>);
  /// f(args...) -> ExactSums<K>: K partials summed exactly (a team's nested reductions).
  static constexpr bool gives_sums = gives && std::is_same_v<R, ExactSums<K>>;
  static constexpr bool plain = into_value || into_array || into_std_array || gives_values;
  static constexpr bool accumulates = into_value || into_array || into_std_array;
  static constexpr bool exact =
      into_exact || into_exact_array || gives_sums ||
      (gives_values && (std::is_same_v<E, double> || std::is_same_v<E, float>));
  /// The value the kernel reduces: what the functor accumulates into (T itself, a
  /// std::array) or Lanes.
  using Value =
      std::conditional_t<into_value, T,
                         std::conditional_t<into_std_array, std::array<E, K>, Lanes<E, K>>>;
};

/// Where a batch kernel's K values go once reduced: element c to `to[c]`, a slot of the
/// member it belongs to (Batch::ContributeKernel); nowhere unless `on`.
template <class S, std::size_t K>
struct Scatter {
  S* to[K] = {};
  bool on = false;
  template <class V>
  KOKKOS_INLINE_FUNCTION void operator()(V& v) const {
    if (!on) return;
    const S* l = LanesOf(v);
    for (std::size_t c = 0; c < K; ++c) *to[c] = l[c];
  }
};

/// A user functor's K values combined elementwise with Op (the neutral element computed on
/// the host); V is the value type (Lanes<E, K> or the user's T).
template <class F, class V, class E, std::size_t K, class Op, class Args, bool Accumulates>
struct MultiFunctorKernel {
  using value_type = V;
  static constexpr bool kAccumulates = Accumulates;
  Op op;
  E identity;
  F f;
  Scatter<E, K> scatter;

  /// The reduced value, handed to the members of a batch kernel.
  KOKKOS_INLINE_FUNCTION void final(value_type& v) const { scatter(v); }

  KOKKOS_INLINE_FUNCTION void init(value_type& v) const {
    E* l = LanesOf(v);
    for (std::size_t c = 0; c < K; ++c) l[c] = identity;
  }
  KOKKOS_INLINE_FUNCTION void join(TRIBUTARY_POLICY_JOIN_CV value_type& dst,
                                   const TRIBUTARY_POLICY_JOIN_CV value_type& src) const {
    E* d = LanesOf(const_cast<value_type&>(dst));
    const E* s = LanesOf(const_cast<value_type&>(src));
    for (std::size_t c = 0; c < K; ++c) {
      E later = s[c];
      op(d[c], later);
      d[c] = later;
    }
  }
  KOKKOS_INLINE_FUNCTION static decltype(auto) Acc(value_type& u) {
    if constexpr (std::is_same_v<V, Lanes<E, K>>)
      return (u.v);
    else
      return (u);
  }
  template <class R>
  KOKKOS_INLINE_FUNCTION void Add(value_type& u, R part) const {
    E* l = LanesOf(u);
    const E* p = LanesOf(part);
    for (std::size_t c = 0; c < K; ++c) {
      E later = p[c];
      op(l[c], later);
      l[c] = later;
    }
  }
  TRIBUTARY_POLICY_CALLS(MultiFunctorKernel)
};

/// A user functor's K values summed exactly, each into its own ExactSum.
template <class F, std::size_t K, class Args, bool Accumulates, bool IntoArray>
struct MultiExactKernel {
  using value_type = ExactSums<K>;
  static constexpr bool kAccumulates = Accumulates;
  F f;
  Scatter<ExactSum, K> scatter;

  /// The reduced sums, handed to the members of a batch kernel.
  KOKKOS_INLINE_FUNCTION void final(value_type& v) const { scatter(v); }

  KOKKOS_INLINE_FUNCTION void init(value_type& v) const { v = value_type(); }
  KOKKOS_INLINE_FUNCTION void join(TRIBUTARY_POLICY_JOIN_CV value_type& dst,
                                   const TRIBUTARY_POLICY_JOIN_CV value_type& src) const {
    const_cast<value_type&>(dst) += const_cast<const value_type&>(src);
  }
  KOKKOS_INLINE_FUNCTION static decltype(auto) Acc(value_type& u) {
    if constexpr (IntoArray)
      return (u.sums);
    else
      return (u);
  }
  template <class R>
  KOKKOS_INLINE_FUNCTION void Add(value_type& u, R part) const {
    if constexpr (std::is_same_v<R, value_type>) {
      u += part;
    } else {
      const auto* p = LanesOf(part);
      for (std::size_t c = 0; c < K; ++c) u.sums[c] += static_cast<double>(p[c]);
    }
  }
  TRIBUTARY_POLICY_CALLS(MultiExactKernel)
};

#undef TRIBUTARY_POLICY_CALLS

/// A user's functor over a RangePolicy or an MDRangePolicy as the exact team kernels
/// (detail/device/exact_teams.hpp) read it: element f is the call at the f-th index of the
/// policy's range (row-major over an MDRange's extents; tiles play no part), applied by
/// `Kernel` (ExactFunctorKernel, MultiExactKernel) to the thread's accumulator.
template <class Kernel, class Policy>
struct ExactPolicySource;
template <class Kernel, class... P>
struct ExactPolicySource<Kernel, Kokkos::RangePolicy<P...>> {
  using value_type = typename Kernel::value_type;
  using Index = typename Kokkos::RangePolicy<P...>::index_type;
  Kernel kernel;
  std::int64_t begin = 0;
  std::int64_t total = 0;

  ExactPolicySource(const Kernel& k, const Kokkos::RangePolicy<P...>& policy)
      : kernel(k),
        begin(static_cast<std::int64_t>(policy.begin())),
        total(static_cast<std::int64_t>(policy.end() - policy.begin())) {}
  std::int64_t Total() const { return total; }
  KOKKOS_INLINE_FUNCTION void Add(value_type& acc, std::int64_t f) const {
    kernel.Apply(acc, static_cast<Index>(begin + f));
  }
  KOKKOS_INLINE_FUNCTION void Add8(value_type& acc, std::int64_t f, std::int64_t step) const {
    for (int u = 0; u < 8; ++u) Add(acc, f + u * step);
  }
};
template <class Kernel, class... P>
struct ExactPolicySource<Kernel, Kokkos::MDRangePolicy<P...>> {
  using Policy = Kokkos::MDRangePolicy<P...>;
  using value_type = typename Kernel::value_type;
  using Index = typename Policy::index_type;
  static constexpr int kRank = static_cast<int>(Policy::rank);
  Kernel kernel;
  std::int64_t lower[kRank] = {};
  std::int64_t extent[kRank] = {};
  std::int64_t total = 0;

  ExactPolicySource(const Kernel& k, const Policy& policy) : kernel(k), total(1) {
    for (int d = 0; d < kRank; ++d) {
      lower[d] = static_cast<std::int64_t>(policy.m_lower[d]);
      const auto n = static_cast<std::int64_t>(policy.m_upper[d] - policy.m_lower[d]);
      extent[d] = n > 0 ? n : 0;
      total *= extent[d];
    }
  }
  std::int64_t Total() const { return total; }
  template <std::size_t... D>
  KOKKOS_INLINE_FUNCTION void Call(value_type& acc, const Index* i,
                                   std::index_sequence<D...>) const {
    kernel.Apply(acc, i[D]...);
  }
  KOKKOS_INLINE_FUNCTION void Add(value_type& acc, std::int64_t f) const {
    Index i[kRank];
    for (int d = kRank - 1; d >= 0; --d) {
      i[d] = static_cast<Index>(lower[d] + f % extent[d]);
      f /= extent[d];
    }
    Call(acc, i, std::make_index_sequence<static_cast<std::size_t>(kRank)>());
  }
  KOKKOS_INLINE_FUNCTION void Add8(value_type& acc, std::int64_t f, std::int64_t step) const {
    for (int u = 0; u < 8; ++u) Add(acc, f + u * step);
  }
};

/// Whether an exact kernel over `Policy` on its backend runs on the team kernels: GPU
/// backends (and tests, TRIBUTARY_EXACT_TEAMS_ON_HOST) with a RangePolicy or an
/// MDRangePolicy. A TeamPolicy's functor takes a team member: Kokkos' reduction serves it.
template <class Policy>
constexpr bool kExactTeamsFor =
    kExactTeams<typename Policy::execution_space> && !PolicyArgs<Policy>::team;

/// The plan of an exact kernel over `policy`: the team kernels where kExactTeamsFor<Policy>
/// (its `teams` times the kernel's sums are the ExactSums of scratch a list needs), none
/// for Kokkos' reductions.
template <class Kernel, class Policy>
ExactTeamsPlan PlanExactPolicy(const Kernel& kernel, const Policy& policy) {
  if constexpr (kExactTeamsFor<Policy>) {
    return PlanExactTeams(policy.space(), ExactPolicySource<Kernel, Policy>(kernel, policy));
  } else {
    (void)kernel;
    (void)policy;
    return {};
  }
}

/// Queues the exact sums of `kernel` over `policy` into `out` (a rank-0 View of the
/// kernel's value) through the team kernels as `plan` says, with the scratch of `stage`'s
/// list `list` (allocated by the stage from the same plan).
template <class Kernel, class Policy, class Stage, class Out>
void QueueExactPolicyTeams(Stage& stage, int list, const Kernel& kernel, const Policy& policy,
                           const Out& out, const ExactTeamsPlan& plan) {
  using Exec = typename Policy::execution_space;
  using Value = typename Kernel::value_type;
  const ExactPolicySource<Kernel, Policy> source(kernel, policy);
  using Partials =
      Kokkos::View<Value*, typename Exec::memory_space, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  QueueExactTeams(
      policy.space(), source, source.Total(),
      Partials(reinterpret_cast<Value*>(stage.template ScratchOf<ExactSum>(list).data()),
               plan.teams),
      out, plan.team);
}

/// The compile-time rules of ContributeKernel for values of K elements.
template <class T, class E, std::size_t K, class Policy, class F, class Op>
constexpr void CheckMultiKernelContribution() {
  using P = PolicyArgs<Policy>;
  static_assert(P::known,
                "ContributeKernel: a Kokkos::RangePolicy, MDRangePolicy (rank 2 to 6) or "
                "TeamPolicy");
  static_assert(K > 0,
                "ContributeKernel: a value of a fixed number of elements (std::array, a C "
                "array, a contiguous container that holds exactly its elements)");
  using Form = MultiForm<F, T, E, K, typename P::Args>;
  static_assert(!Form::into_value_type || Form::into_value,
                "ContributeKernel: the functor accumulates into the value type, which does "
                "not hold exactly its elements; let it accumulate into E (&acc)[K]");
  static_assert(Form::plain || Form::exact,
                "ContributeKernel: for a value of K elements the functor accumulates all K in "
                "one pass (f(i..., T& acc) with the value type T, f(i..., E (&acc)[K]) or "
                "f(i..., std::array<E, K>& acc); a "
                "team: f(member, ...)) or gives them (T f(i...), std::array<E, K> f(i...)); "
                "for exact sums f(i..., tributary::ExactSums<K>& acc) or -> ExactSums<K>");
  static_assert(std::is_invocable_v<const Op&, const E&, E&>,
                "ContributeKernel: the operator does not apply to the value's element type");
  static_assert(Op::commutative, "ContributeKernel: device reductions need a commutative operator");
}

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
