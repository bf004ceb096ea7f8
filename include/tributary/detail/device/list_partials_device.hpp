// The Kokkos half of ListPartials (detail/core/list_partials.hpp): a list's contribution from a
// View or a kernel into its device slot, and the fold queued after the last list's kernel.
// Part of the Kokkos layer: included through tributary/kokkos.hpp only.
#pragma once

#if !defined(TRIBUTARY_PUBLIC_INCLUDE) && !defined(TRIBUTARY_INTERNAL_INCLUDE)
#error \
    "<tributary/detail/device/list_partials_device.hpp> is internal to Tributary: include <tributary/kokkos.hpp> instead"
#endif

#include "tributary/config.hpp"

#if TRIBUTARY_HAVE_KOKKOS

#include <Kokkos_Core.hpp>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>

#include "tributary/detail/core/list_partials.hpp"
#include "tributary/detail/device/device_policy_kernels.hpp"
#include "tributary/detail/device/device_stage.hpp"

namespace tributary::detail {

template <class T>
template <class Exec, class View, class Op>
bool ListPartials<T>::ContributeView(int list, const Exec& exec, const View& data, const Op& op,
                                     const OpHolderBase<E>& holder, std::int64_t first_index,
                                     std::size_t k, bool exact, std::size_t size) {
  CheckDeviceOperator<Op>(list, holder);
  if constexpr (std::is_same_v<E, double> || std::is_same_v<E, float>) {
    if (exact) {
      const ExactTeamsPlan plan = PlanExactView(exec, data, k);
      return ContributeToStage(
          list, exec, k, size, exact_stage_, ExactMergeOp{},
          [&](DeviceStage<ExactSum, Exec>& stage) {
            QueueExactViewKernel(stage, list, exec, data, plan);
          },
          plan.teams);
    }
  }
  using V = typename View::non_const_value_type;
  if constexpr (std::is_same_v<V, ExactSum> || IsExactSums<V>::value) {
    throw UsageError(Where() + ": list " + std::to_string(list) +
                     " contributed ExactSum partials, which need "
                     "Determinism::rank_count_independent and the Sum operator");
  } else {
    return ContributeToStage(list, exec, k, size, stage_, op, [&](DeviceStage<E, Exec>& stage) {
      QueueViewKernel(stage, list, exec, data, op, holder.Identity(), first_index);
    });
  }
}
template <class T>
template <class Policy, class F, class Op>
bool ListPartials<T>::ContributeKernel(int list, const Policy& policy, const F& f, const Op& op,
                                       const OpHolderBase<E>& holder, bool exact,
                                       std::size_t size) {
  using Exec = typename Policy::execution_space;
  using Args = typename PolicyArgs<Policy>::Args;
  using Form = FunctorForm<F, E, Args>;
  CheckDeviceOperator<Op>(list, holder);
  if constexpr (std::is_same_v<E, double> || std::is_same_v<E, float>) {
    if (exact) {
      if constexpr (Form::exact) {
        const ExactFunctorKernel<F, Args> kernel{f};
        const ExactTeamsPlan plan = PlanExactPolicy(kernel, policy);
        return ContributeToStage(
            list, policy.space(), 1, size, exact_stage_, ExactMergeOp{},
            [&](DeviceStage<ExactSum, Exec>& stage) {
              if constexpr (kExactTeamsFor<Policy>)
                QueueExactPolicyTeams(stage, list, kernel, policy, stage.ScalarOf(list), plan);
              else
                Kokkos::parallel_reduce("tributary::exact_kernel", FitTiles<ExactSum>(policy),
                                        kernel, stage.ScalarOf(list));
            },
            plan.teams);
      } else {
        throw UsageError(Where() + ": list " + std::to_string(list) +
                         "'s functor accumulates into a rounded value, which cannot sum "
                         "exactly (Determinism::rank_count_independent); let it accumulate "
                         "into a tributary::ExactSum& (s += x) or return its values");
      }
    }
  }
  if constexpr (Form::plain) {
    return ContributeToStage(
        list, policy.space(), 1, size, stage_, op, [&](DeviceStage<E, Exec>& stage) {
          Kokkos::parallel_reduce("tributary::reduce_kernel", policy,
                                  FunctorKernel<F, E, Op, Args>{op, holder.Identity(), f},
                                  stage.ScalarOf(list));
        });
  } else {
    throw UsageError(Where() + ": list " + std::to_string(list) +
                     "'s functor sums into tributary::ExactSum, which needs "
                     "Determinism::rank_count_independent and Sum over float or double");
  }
}

template <class T>
template <std::size_t K, class Policy, class F, class Op>
bool ListPartials<T>::ContributeKernelValues(int list, const Policy& policy, const F& f,
                                             const Op& op, const OpHolderBase<E>& holder,
                                             bool exact, std::size_t size) {
  using Exec = typename Policy::execution_space;
  using Args = typename PolicyArgs<Policy>::Args;
  using Form = MultiForm<F, T, E, K, Args>;
  CheckDeviceOperator<Op>(list, holder);
  if constexpr (std::is_same_v<E, double> || std::is_same_v<E, float>) {
    if (exact) {
      if constexpr (Form::exact) {
        using Kernel = MultiExactKernel<F, K, Args, Form::into_exact || Form::into_exact_array,
                                        !Form::into_exact && Form::into_exact_array>;
        const Kernel kernel{f, {}};
        const ExactTeamsPlan plan = PlanExactPolicy(kernel, policy);
        return ContributeToStage(
            list, policy.space(), K, size, exact_stage_, ExactMergeOp{},
            [&](DeviceStage<ExactSum, Exec>& stage) {
              const auto out = stage.template ValuesOf<ExactSums<K>>(list);
              if constexpr (kExactTeamsFor<Policy>)
                QueueExactPolicyTeams(stage, list, kernel, policy, out, plan);
              else
                Kokkos::parallel_reduce("tributary::exact_values_kernel",
                                        FitTiles<ExactSums<K>>(policy), kernel, out);
            },
            plan.teams * K);
      } else {
        throw UsageError(Where() + ": list " + std::to_string(list) +
                         "'s functor accumulates into rounded values, which cannot sum "
                         "exactly (Determinism::rank_count_independent); let it accumulate "
                         "into a tributary::ExactSums<" +
                         std::to_string(K) + ">& (acc[c] += x) or return its values");
      }
    }
  }
  if constexpr (Form::plain) {
    using V = typename Form::Value;
    using Kernel = MultiFunctorKernel<F, V, E, K, Op, Args, Form::accumulates>;
    return ContributeToStage(list, policy.space(), K, size, stage_, op,
                             [&](DeviceStage<E, Exec>& stage) {
                               Kokkos::parallel_reduce("tributary::reduce_values_kernel", policy,
                                                       Kernel{op, holder.Identity(), f, {}},
                                                       stage.template ValuesOf<V>(list));
                             });
  } else {
    throw UsageError(Where() + ": list " + std::to_string(list) +
                     "'s functor sums into tributary::ExactSums, which needs "
                     "Determinism::rank_count_independent and Sum over float or double");
  }
}

template <class T>
template <class Op>
void ListPartials<T>::CheckDeviceOperator(int list, const OpHolderBase<E>& holder) {
  core_->CheckCaller();
  if (!Mine(list)) core_->Claim(list);  // throws the error for this state or index
  if (holder.Type() != typeid(Op))
    throw UsageError(Where() + ": list " + std::to_string(list) + " contributed with operator " +
                     TypeLabel<Op>() + ", but the " +
                     (member_ ? "member was declared" : "generation was armed") +
                     " with another operator");
}

// What every device contribution shares: the shape check, the stage of this generation
// (prepared by the first list, in `holder`, folding with `fold`, with `scratch` elements
// per list of scratch where non-zero), the claim, the list's kernel, and the fold after the
// last list's.
template <class T>
template <class S, class Exec, class Fold, class Launch>
bool ListPartials<T>::ContributeToStage(int list, const Exec& exec, std::size_t k, std::size_t size,
                                        std::unique_ptr<DeviceStageBase<S>>& holder,
                                        const Fold& fold, Launch&& launch, std::size_t scratch) {
  DeviceStage<S, Exec>* stage = BeginStage(list, exec, k, size, holder, fold, scratch);
  Kokkos::Profiling::pushRegion("tributary::contribute");
  launch(*stage);
  Kokkos::Profiling::popRegion();
  return EndStage(list, exec, stage);
}

// The refusals of BeginStage, without changing anything.
template <class T>
template <class S, class Exec>
void ListPartials<T>::CheckStage(int list, std::size_t k, std::size_t size,
                                 const std::unique_ptr<DeviceStageBase<S>>& holder) {
  if (size != 0 && k != size) DeviceShapeError(list, std::to_string(k) + " value(s)", size);
  if (!Mine(list)) core_->Claim(list);  // throws the error for this state or index
  const int seen = where_.load(std::memory_order_acquire);
  if (seen == kOnHost)
    throw UsageError(Where() + ": list " + std::to_string(list) +
                     " contributed on the device in a generation whose lists contribute host "
                     "values; all lists of a generation contribute the same way");
  if (marks_[static_cast<std::size_t>(list)].load(std::memory_order_acquire) != 0)
    throw UsageError(Where() + ": list " + std::to_string(list) +
                     " contributed twice in one generation");
  std::lock_guard<std::mutex> lock(device_mutex_);
  if (device_generation_ != core_->Generation()) return;  // this list prepares the stage
  if (holder->Space() != typeid(Exec))
    throw UsageError(Where() + ": list " + std::to_string(list) +
                     " contributed from another execution space than the lists before it");
  if (holder->count != k) LengthMismatch(holder->count, list, k);
}

// The stage of this generation (prepared by the first list), with `scratch` elements per
// list of scratch where non-zero, and the claim of list `list`'s slot.
template <class T>
template <class S, class Exec, class Fold>
DeviceStage<S, Exec>* ListPartials<T>::BeginStage(int list, const Exec& exec, std::size_t k,
                                                  std::size_t size,
                                                  std::unique_ptr<DeviceStageBase<S>>& holder,
                                                  const Fold& fold, std::size_t scratch) {
  if (size != 0 && k != size) DeviceShapeError(list, std::to_string(k) + " value(s)", size);
  ClaimWhere(list, kOnDevice);
  DeviceStage<S, Exec>* stage = nullptr;
  {
    std::lock_guard<std::mutex> lock(device_mutex_);
    const bool first = device_generation_ != core_->Generation();
    if (!first && holder->Space() != typeid(Exec))
      throw UsageError(Where() + ": list " + std::to_string(list) +
                       " contributed from another execution space than the lists before it");
    if (!holder || holder->Space() != typeid(Exec))
      holder = std::make_unique<DeviceStage<S, Exec>>();
    stage = static_cast<DeviceStage<S, Exec>*>(holder.get());
    if (first) {
      device_generation_ = core_->Generation();
      stage->Prepare(exec, lists_, k);
      stage->SetFold(fold);
    } else if (stage->count != k) {
      LengthMismatch(stage->count, list, k);
    }
    if (scratch != 0) stage->EnsureScratch(exec, scratch);
  }
  auto& mark = marks_[static_cast<std::size_t>(list)];
  if (member_) {  // duplicates are refused before the slot is written
    std::uint8_t none = 0;
    if (!mark.compare_exchange_strong(none, kDevice, std::memory_order_acq_rel))
      throw UsageError(Where() + ": list " + std::to_string(list) +
                       " contributed twice in one generation");
  } else {
    core_->Arrive(list);  // duplicates are refused before the slot is written
    mark.store(kDevice, std::memory_order_release);
  }
  return stage;
}

// List `list`'s kernel is queued: its event, the fold after the last list's, the arrival.
template <class T>
template <class S, class Exec>
bool ListPartials<T>::EndStage(int list, const Exec& exec, DeviceStage<S, Exec>* stage) {
  stage->Launched(list, exec);
  const bool folds = device_launched_.fetch_add(1, std::memory_order_acq_rel) + 1 == lists_;
  if (folds) stage->Fold(list);
  if (member_) return core_->Arrive(list);  // the batch launches once every member is done
  if (folds) {
    core_->AwaitClient();
    core_->PollClient();  // host backends: the result is there already
  }
  return false;
}

template <class T>
template <class Exec, class Op>
void ListPartials<T>::CheckShared(int list, std::size_t k, bool exact,
                                  const OpHolderBase<E>& holder) {
  CheckDeviceOperator<Op>(list, holder);
  if (exact)
    CheckStage<ExactSum, Exec>(list, k, k, exact_stage_);
  else
    CheckStage<E, Exec>(list, k, k, stage_);
}

template <class T>
template <class Exec, class Op>
void* ListPartials<T>::BeginShared(int list, const Exec& exec, std::size_t k, bool exact,
                                   const Op& op, const OpHolderBase<E>& holder,
                                   std::size_t scratch) {
  CheckDeviceOperator<Op>(list, holder);
  if (exact)
    return BeginStage(list, exec, k, k, exact_stage_, ExactMergeOp{}, scratch)->SlotOf(list).data();
  return BeginStage(list, exec, k, k, stage_, op, scratch)->SlotOf(list).data();
}

template <class T>
template <class Exec>
bool ListPartials<T>::EndShared(int list, const Exec& exec, bool exact) {
  if (exact)
    return EndStage(list, exec, static_cast<DeviceStage<ExactSum, Exec>*>(exact_stage_.get()));
  return EndStage(list, exec, static_cast<DeviceStage<E, Exec>*>(stage_.get()));
}

template <class T>
template <class V, class Exec>
auto ListPartials<T>::SharedScratch(int list) {
  std::lock_guard<std::mutex> lock(device_mutex_);  // another list's BeginShared may grow it
  if constexpr (IsExactSums<V>::value)
    return static_cast<DeviceStage<ExactSum, Exec>*>(exact_stage_.get())
        ->template ScratchOf<V>(list);
  else
    return static_cast<DeviceStage<E, Exec>*>(stage_.get())->template ScratchOf<V>(list);
}

}  // namespace tributary::detail

#endif  // TRIBUTARY_HAVE_KOKKOS
