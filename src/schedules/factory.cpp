// The factory that makes the schedule of a reduction.

#include "schedules/knomial.hpp"
#include "schedules/mpi_library.hpp"
#include "schedules/node_aware.hpp"
#include "schedules/pipelined_tree.hpp"
#include "schedules/rabenseifner.hpp"
#include "schedules/recursive_doubling.hpp"
#include "schedules/recursive_multiplying.hpp"
#include "schedules/reduce_scatter_gather.hpp"
#include "schedules/ring.hpp"
#include "schedules/schedule.hpp"
#include "tributary/errors.hpp"

namespace tributary {
namespace detail {

std::unique_ptr<Schedule> MakeSchedule(ScheduleKind kind, const ScheduleArgs& args) {
  if (!Supports(kind, args.collective))
    throw UsageError(std::string("schedule '") + ToString(kind) +
                     "' does not implement this collective");
  if (!args.payload.commutative && !IsOrderKeeping(kind))
    throw UsageError(std::string("schedule '") + ToString(kind) +
                     "' does not keep rank order, so it cannot carry a non-commutative operator");
  if (args.params.segment_bytes == 0)
    throw UsageError("ScheduleParams::segment_bytes must be positive");
  if (TakesRadix(kind) && args.params.radix < 2)
    throw UsageError("ScheduleParams::radix must be at least 2, got " +
                     std::to_string(args.params.radix));
  // The two-level form applies to allreduce and reduce; allgather always runs flat.
  if (args.params.node_aware && args.collective != Collective::allgather) {
    if (!args.nodes)
      throw UsageError("node_aware schedule requested, but the Context has no node layout");
    if (kind == ScheduleKind::mpi_library)
      throw UsageError(
          "the node-aware form needs one of Tributary's own schedules among the "
          "node leaders, not mpi_library");
    if (!args.payload.commutative && !args.nodes->contiguous)
      throw UsageError(
          "the nodes are not contiguous rank ranges, so the node-aware form "
          "cannot carry a non-commutative operator");
    if (args.nodes->count > 1 && args.nodes->count < args.nodes->size)
      return std::make_unique<NodeAwareSchedule>(kind, args);
  }
  switch (kind) {
    case ScheduleKind::mpi_library:
      return std::make_unique<MpiLibrarySchedule>(args);
    case ScheduleKind::binomial:
    case ScheduleKind::knomial:
    case ScheduleKind::reduce_bcast:
      return std::make_unique<KnomialSchedule>(args, kind);
    case ScheduleKind::pipelined_tree:
      return std::make_unique<PipelinedTreeSchedule>(args);
    case ScheduleKind::recursive_doubling:
      return std::make_unique<RecursiveDoublingSchedule>(args);
    case ScheduleKind::recursive_multiplying:
      return std::make_unique<RecursiveMultiplyingSchedule>(args);
    case ScheduleKind::rabenseifner:
      return std::make_unique<RabenseifnerSchedule>(args);
    case ScheduleKind::reduce_scatter_gather:
      return std::make_unique<ReduceScatterGatherSchedule>(args);
    case ScheduleKind::ring:
      return std::make_unique<RingSchedule>(args);
  }
  throw UsageError(std::string("schedule '") + ToString(kind) + "' is not available in this build");
}

bool WritesData(ScheduleKind kind, const ScheduleArgs& args, int rank, int size) {
  if (args.collective != Collective::reduce || rank == args.root) return true;
  if (args.params.node_aware) return true;  // node leaders accumulate; not worked out per rank
  // The trees are rooted at the root for a commutative operator, else at rank 0 (whose
  // result then goes on to the root; KnomialSchedule and PipelinedTreeSchedule).
  const int base = args.payload.commutative ? args.root : 0;
  switch (kind) {
    case ScheduleKind::mpi_library:
      return false;  // MPI_Ireduce's send buffer is const
    case ScheduleKind::binomial:
    case ScheduleKind::knomial:
      return KnomialTree::HasChildren(rank, size,
                                      kind == ScheduleKind::knomial ? args.params.radix : 2, base);
    case ScheduleKind::pipelined_tree:  // the chain: radix 1 in effect, every rank but the last
      return ((rank - base) % size + size) % size + 1 < size;
    default:
      return true;
  }
}

}  // namespace detail
}  // namespace tributary
