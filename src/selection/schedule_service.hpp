// The schedule service of a Context: which schedule carries a generation (the options'
// forced schedule, else the pruned selection tree, with the rules every rank applies
// alike), where it runs (communicator, tags, node layout), and the one line per choice that
// TRIBUTARY_LOG=selection asks for.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/schedule_run.hpp"
#include "platform/network.hpp"
#include "tributary/context_options.hpp"
#include "tributary/schedule_kind.hpp"
#include "tributary/selection.hpp"

namespace tributary::detail {

class ScheduleService {
 public:
  /// The schedule service of a Context with these options and network services, of `size`
  /// ranks (set by the Context's constructor before any choice).
  ScheduleService(const ContextOptions& options, const Network& net, const int& size)
      : options_(options), net_(net), size_(size) {}

  /// The selection tree pruned per collective (allreduce, reduce, allgather), the facts it
  /// was pruned with, and whether TRIBUTARY_LOG asks for one line per choice (set by the
  /// Context's constructor).
  SelectionTree selection[3];
  SelectionFacts facts;
  bool log_selection = false;

  /// Whether the object in `slot` may run the MPI library's schedule (a lane of the pool).
  bool HasLane(int slot) const noexcept;

  /// The schedule of a generation of the object in `slot`. Throws UsageError where the
  /// options ask for what the request cannot take (the same on every rank).
  ScheduleDecision Choose(const ScheduleRequest& request, int slot) const;
  /// The schedule of the agreement's rounds (an allreduce of ten 64-bit integers): the
  /// tree's choice for them where it is recursive doubling or a k-nomial or binomial tree
  /// (flat), else recursive doubling. The tree is the same on every rank and the options are
  /// not consulted, so every rank takes the same.
  SelectionChoice AgreementSchedule() const noexcept;
  /// True when TRIBUTARY_LOG asks for one line per choice (Log).
  bool Logging() const noexcept;
  /// Writes that line for the object described by `where`.
  void Log(const std::string& where, const ScheduleRequest& request,
           const ScheduleDecision& decision) const;
#if TRIBUTARY_HAVE_MPI
  /// Where `kind` runs for generation `generation` of the object in `slot`: the object's
  /// lane for the MPI library, else the Context's communicator; the generation's tags; the
  /// node layout.
  void Place(ScheduleKind kind, int slot, std::uint64_t generation, ScheduleArgs* args) const;
#endif

 private:
  const ContextOptions& options_;
  const Network& net_;
  const int& size_;
};

/// Tributary's own schedule where the MPI library's is chosen for an object without a
/// communicator of the pool (ContextOptions::communicator_pool): order-keeping, for
/// `collective` on `bytes` bytes.
SelectionChoice LibraryStandIn(Collective collective, std::size_t bytes) noexcept;

}  // namespace tributary::detail
