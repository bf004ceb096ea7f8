#include "schedule_service.hpp"

#include <cstdio>
#include <cstring>
#include <optional>

#include "context_impl.hpp"
#include "schedules/simulated_cost.hpp"
#include "tributary/context.hpp"
#include "tributary/errors.hpp"

namespace tributary::detail {

// Inputs identical on every rank give the same choice everywhere (the pre-round compares
// it at DebugLevel::full).
ScheduleDecision ScheduleService::Choose(const ScheduleRequest& request, int slot) const {
  const ContextImpl& impl = context_;
  const ContextOptions& o = impl.options;
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
    c = impl.selection[static_cast<int>(request.collective)].Select(in);
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
        (!impl.net.nodes || impl.net.nodes->count <= 1 || impl.net.nodes->count >= impl.size))
      c.params.node_aware = false;
#endif
  }
  // The MPI library's collectives need a communicator whose collective order agrees on
  // every rank; objects beyond the pool (ContextOptions::communicator_pool) take one of
  // Tributary's schedules instead, chosen from what every rank knows alike.
  if (c.kind == ScheduleKind::mpi_library && !impl.HasLane(slot)) {
    if (request.device_memory)
      throw UsageError("device memory to the MPI library without a communicator of the pool");
    c = LibraryStandIn(request.collective, request.bytes);
    d.note =
        " [for mpi_library: no communicator of the pool left; ContextOptions::communicator_pool]";
  }
  return d;
}

bool ScheduleService::Logging() const noexcept { return context_.log_selection; }

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
  args->comm = kind == ScheduleKind::mpi_library ? context_.net.LaneFor(slot) : context_.net.comm;
  args->tag = Network::TagFor(slot, generation);
  args->nodes = context_.net.nodes.get();
}

void ScheduleRun::Start(ScheduleKind kind, ScheduleArgs args, bool read_only, int rank, int size) {
  const std::size_t bytes = args.payload.count * args.payload.elem_size;
  if (read_only && WritesData(kind, args, rank, size)) {
    if (staging_.size() < bytes) staging_.resize(bytes);
    if (bytes) std::memcpy(staging_.data(), args.data, bytes);
    args.data = staging_.data();
  }
  // The two-level form takes no separate contribution: it starts from the data.
  if (args.input && args.params.node_aware) {
    if (bytes) std::memcpy(args.data, args.input, bytes);
    args.input = nullptr;
  }
  if (!schedule_ || schedule_->Kind() != kind || !schedule_->Rearm(args))
    schedule_ = MakeSchedule(kind, args);
  active_ = true;
  ChargeStart();  // under SMPI only: the library's own work, which the simulator does not charge
  schedule_->Start();
}

bool ScheduleRun::Quiet() noexcept {
  if (active_ && !schedule_->Quiet()) return false;
  active_ = false;
  return true;
}

void ScheduleRun::Release() noexcept {
  if (active_) (void)schedule_.release();
  active_ = false;
}
#endif

}  // namespace tributary::detail
