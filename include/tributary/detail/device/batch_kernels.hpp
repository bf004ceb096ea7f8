// Batch::ContributeKernel: one kernel feeding several members of a batch from one pass. The
// kernel reduces the members' K values together (detail/device/device_policy_kernels.hpp) into a
// scratch value of the first member's stage, and its final step hands each member its part
// in that member's device slot, on the device; each member then folds its lists as its own
// ContributeKernel would have it. Part of the Kokkos layer: included through
// tributary/kokkos.hpp only.
#pragma once

#if !defined(TRIBUTARY_PUBLIC_INCLUDE) && !defined(TRIBUTARY_INTERNAL_INCLUDE)
#error \
    "<tributary/detail/device/batch_kernels.hpp> is internal to Tributary: include <tributary/kokkos.hpp> instead"
#endif

#include "tributary/config.hpp"

#if TRIBUTARY_HAVE_KOKKOS

#include <Kokkos_Core.hpp>
#include <array>
#include <cstddef>
#include <string>
#include <tuple>
#include <type_traits>

#include "tributary/batch.hpp"
#include "tributary/detail/device/device_contributions.hpp"
#include "tributary/detail/device/device_policy_kernels.hpp"
#include "tributary/errors.hpp"

namespace tributary {

namespace detail {

/// The elements a batch member gives a shared kernel: 1 for a member of one element, else
/// its fixed count (0 for members without one: refused at compile time).
template <class T>
constexpr std::size_t kMemberCount =
    std::is_same_v<T, typename ValueTraits<T>::element> ? 1 : FixedCount<T>::value;

}  // namespace detail

template <class Acc, class Policy, class F, class Op, class... T>
void Batch::ContributeSharedKernel(int list, const Policy& policy, const F& f, const Op& op,
                                   BatchMember<T>&... members) {
  static_assert(sizeof...(T) > 0, "Batch::ContributeKernel: name the members it feeds");
  using E = typename ValueTraits<std::tuple_element_t<0, std::tuple<T...>>>::element;
  static_assert((std::is_same_v<typename ValueTraits<T>::element, E> && ...),
                "Batch::ContributeKernel: members of one element type");
  static_assert(((detail::kMemberCount<T> > 0) && ...),
                "Batch::ContributeKernel: members of a fixed number of elements");
  constexpr std::size_t K = (detail::kMemberCount<T> + ...);
  // The value the functor sees: Acc, or E[K] (so that a functor generic in its accumulator
  // gets E (&acc)[K], which every backend indexes; std::array<E, K>& is still taken).
  using Value = std::conditional_t<std::is_void_v<Acc>, E[K], Acc>;
  static_assert(
      std::is_void_v<Acc> || (detail::kContiguousContainer<Acc> &&
                              std::is_same_v<typename detail::ContainerElement<Acc>::type, E> &&
                              detail::FixedCount<Acc>::value == K),
      "Batch::ContributeKernel: Acc is a contiguous container of the members' K "
      "elements");
  detail::CheckMultiKernelContribution<Value, E, K, Policy, F, Op>();
  using Exec = typename Policy::execution_space;
  using Args = typename detail::PolicyArgs<Policy>::Args;
  using Form = detail::MultiForm<F, Value, E, K, Args>;

  // Every refusal before any member is claimed: a refused contribution changes nothing.
  detail::BatchMemberBase* given[] = {&members...};
  for (std::size_t a = 0; a < sizeof...(T); ++a) {
    for (std::size_t b = 0; b < a; ++b)
      if (given[a] == given[b])
        throw UsageError(core_->Where() + ": ContributeKernel names member '" + given[a]->label +
                         "' twice");
  }
  const bool exact = std::get<0>(std::forward_as_tuple(members...)).exact_;
  auto refuse = [&](const std::string& why) {
    throw UsageError(core_->Where() + ": list " + std::to_string(list) + ": " + why);
  };
  auto check = [&](auto& m) {
    if (m.batch_ != this) refuse("member '" + m.label + "' belongs to another batch");
    if (m.exact_ != exact)
      refuse("one kernel cannot feed members that sum exactly and members that do not ('" +
             m.label + "')");
    using M = std::decay_t<decltype(m)>;
    using TM = std::decay_t<decltype(m.val)>;
    static_assert(std::is_same_v<M, BatchMember<TM>>);
    detail::CheckKernelLayout<TM, detail::kMemberCount<TM>>(m.partials_, list, m.val);
    m.partials_.template CheckShared<Exec, Op>(list, detail::kMemberCount<TM>, exact, *m.op_);
  };
  (check(members), ...);
  if (exact && !Form::exact)
    refuse(
        "the functor accumulates into rounded values, which cannot sum exactly "
        "(Determinism::rank_count_independent); let it accumulate into a "
        "tributary::ExactSums<" +
        std::to_string(K) + ">& or return its values");
  if (!exact && !Form::plain)
    refuse(
        "the functor sums into tributary::ExactSums, which needs "
        "Determinism::rank_count_independent and Sum over float or double");

  // Each member's slot for this list; the first member's stage holds the kernel's value.
  detail::Scatter<E, K> to;
  detail::Scatter<ExactSum, K> to_exact;
  to.on = to_exact.on = true;
  std::size_t next = 0;
  auto begin = [&](auto& m) {
    using TM = std::decay_t<decltype(m.val)>;
    constexpr std::size_t k = detail::kMemberCount<TM>;
    void* slot = m.partials_.template BeginShared<Exec, Op>(list, policy.space(), k, exact, op,
                                                            *m.op_, next == 0 ? K : 0);
    for (std::size_t c = 0; c < k; ++c, ++next) {
      if (exact)
        to_exact.to[next] = static_cast<ExactSum*>(slot) + c;
      else
        to.to[next] = static_cast<E*>(slot) + c;
    }
  };
  (begin(members), ...);

  auto& first = std::get<0>(std::forward_as_tuple(members...));
  Kokkos::Profiling::pushRegion("tributary::contribute");
  if constexpr (Form::exact) {
    if (exact) {
      using Kernel =
          detail::MultiExactKernel<F, K, Args, Form::into_exact || Form::into_exact_array,
                                   !Form::into_exact && Form::into_exact_array>;
      Kokkos::parallel_reduce("tributary::batch_exact_kernel", FitTiles<ExactSums<K>>(policy),
                              Kernel{f, to_exact},
                              first.partials_.template SharedScratch<ExactSums<K>, Exec>(list));
    }
  }
  if constexpr (Form::plain) {
    if (!exact) {
      using V = typename Form::Value;
      using Kernel = detail::MultiFunctorKernel<F, V, E, K, Op, Args, Form::accumulates>;
      Kokkos::parallel_reduce("tributary::batch_kernel", policy,
                              Kernel{op, first.op_->Identity(), f, to},
                              first.partials_.template SharedScratch<V, Exec>(list));
    }
  }
  Kokkos::Profiling::popRegion();
  bool last = false;
  ((last = members.partials_.template EndShared<Exec>(list, policy.space(), exact) || last), ...);
  if (last) LastArrived();
}

}  // namespace tributary

#endif  // TRIBUTARY_HAVE_KOKKOS
