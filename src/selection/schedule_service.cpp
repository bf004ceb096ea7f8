#include "selection/schedule_service.hpp"

#include <cstdio>
#include <cstring>
#include <optional>

#include "platform/tags.hpp"
#include "tributary/context_options.hpp"
#include "tributary/errors.hpp"

namespace tributary::detail {

// Inputs identical on every rank give the same choice everywhere (the pre-round compares
// it at DebugLevel::full).
ScheduleDecision ScheduleService::Choose(const ScheduleRequest& request, int slot) const {
  const ContextOptions& o = options_;
  const std::optional<ScheduleKind>& forced =
      request.collective == Collective::reduce      ? o.reduce_schedule
      : request.collective == Collective::allgather ? o.allgather_schedule
                                                    : o.allreduce_schedule;
  const bool run_to_run = request.determinism == static_cast<int>(Determinism::run_to_run) &&
                          request.collective != Collective::allgather;
  ScheduleDecision d;
  SelectionChoice& c = d.choice;
  if (request.device_memory) {
    c.kind = ScheduleKind::mpi_library;
    c.params = ScheduleParams{};
    c.params.node_aware = false;
    d.note = " [device memory to the MPI library]";
  } else if (forced) {
    c.kind = *forced;
    c.params = o.schedule_params;
    d.note = " [forced by ContextOptions]";
    if (run_to_run && c.kind == ScheduleKind::mpi_library)
      throw UsageError(std::string("Determinism::run_to_run cannot use the MPI library's ") +
                       "schedule (its combine order is unspecified); force one of Tributary's " +
                       "own schedules, or leave the choice to the selection tree");
  } else {
    SelectionInput in;
    in.bytes = request.bytes;
    in.builtin_op = request.builtin_op;
    in.commutative = request.commutative;
    in.memory = MemorySpace::host;
    in.determinism = request.determinism;
    c = selection[static_cast<int>(request.collective)].Select(in);
    // run_to_run: a fixed combine order, computed once and broadcast where the MPI library
    // would decide the order.
    if (run_to_run && c.kind == ScheduleKind::mpi_library) {
      c.kind = request.collective == Collective::allreduce ? ScheduleKind::reduce_bcast
                                                           : ScheduleKind::binomial;
      c.params.node_aware = false;
    }
    // A node-aware leaf runs flat where the communicator has one node or one rank per node.
#if TRIBUTARY_HAVE_MPI
    if (c.params.node_aware &&
        (!net_.nodes || net_.nodes->count <= 1 || net_.nodes->count >= size_))
      c.params.node_aware = false;
#endif
  }
  // The MPI library's collectives need a communicator whose collective order agrees on
  // every rank; objects beyond the pool (ContextOptions::communicator_pool) take one of
  // Tributary's schedules instead, chosen from what every rank knows alike.
  if (c.kind == ScheduleKind::mpi_library && !HasLane(slot)) {
    if (request.device_memory)
      throw UsageError("device memory to the MPI library without a communicator of the pool");
    c = LibraryStandIn(request.collective, request.bytes);
    d.note =
        " [for mpi_library: no communicator of the pool left; ContextOptions::communicator_pool]";
  }
  return d;
}

SelectionChoice ScheduleService::AgreementSchedule() const noexcept {
  SelectionInput in;
  in.bytes = 80;
  in.builtin_op = true;
  in.commutative = true;
  SelectionChoice c = selection[static_cast<int>(Collective::allreduce)].Select(in);
  if (c.kind != ScheduleKind::recursive_doubling && c.kind != ScheduleKind::knomial &&
      c.kind != ScheduleKind::binomial) {
    c.kind = ScheduleKind::recursive_doubling;
    c.params = ScheduleParams{};
  }
  c.params.node_aware = false;
  return c;
}

bool ScheduleService::Logging() const noexcept { return log_selection; }

bool ScheduleService::HasLane(int slot) const noexcept {
#if TRIBUTARY_HAVE_MPI
  return net_.LaneFor(slot) != MPI_COMM_NULL;
#else
  return slot >= 0 && slot < options_.communicator_pool;
#endif
}

void ScheduleService::Log(const std::string& where, const ScheduleRequest& request,
                          const ScheduleDecision& decision) const {
  static const char* names[] = {"allreduce", "reduce", "allgather"};
  std::fprintf(stderr, "tributary: %s: %s of %zu B (%s, %s operator) -> %s%s%s\n", where.c_str(),
               names[static_cast<int>(request.collective)], request.bytes,
               request.builtin_op ? "builtin" : "user",
               request.commutative ? "commutative" : "non-commutative",
               ToString(decision.choice.kind),
               decision.choice.params.node_aware ? " (node-aware)" : "", decision.note);
}

#if TRIBUTARY_HAVE_MPI
void ScheduleService::Place(ScheduleKind kind, int slot, std::uint64_t generation,
                            ScheduleArgs* args) const {
  args->comm = kind == ScheduleKind::mpi_library ? net_.LaneFor(slot) : net_.comm;
  args->tag = GenerationTag(slot, generation);
  args->nodes = net_.nodes.get();
}

#endif

SelectionChoice LibraryStandIn(Collective collective, std::size_t bytes) noexcept {
  // The built-in single-machine tree's order-keeping choices for these sizes.
  SelectionChoice c;
  switch (collective) {
    case Collective::allreduce:
      c.kind = bytes <= 2048 ? ScheduleKind::recursive_doubling : ScheduleKind::rabenseifner;
      c.params.radix = 2;
      break;
    case Collective::reduce:
      c.kind = bytes <= 65536 ? ScheduleKind::knomial : ScheduleKind::binomial;
      c.params.radix = 4;
      break;
    case Collective::allgather:
      c.kind = ScheduleKind::recursive_doubling;
      break;
  }
  c.params.node_aware = false;
  return c;
}

}  // namespace tributary::detail
