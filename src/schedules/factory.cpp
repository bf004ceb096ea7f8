// Schedule names, properties, and the factory that makes one for a reduction.
#include <cstring>

#include "schedules/mpi_library.hpp"
#include "schedules/p2p.hpp"
#include "tributary/detail/schedule.hpp"
#include "tributary/errors.hpp"

namespace tributary {

namespace {
struct KindInfo {
  ScheduleKind kind;
  const char* name;
  bool order_keeping;
  bool allreduce, reduce, allgather;
};
constexpr KindInfo kKinds[] = {
    {ScheduleKind::mpi_library, "mpi_library", true, true, true, true},
    {ScheduleKind::binomial, "binomial", true, true, true, false},
    {ScheduleKind::knomial, "knomial", true, true, true, false},
    {ScheduleKind::pipelined_tree, "pipelined_tree", true, false, true, false},
    {ScheduleKind::recursive_doubling, "recursive_doubling", true, true, false, true},
    {ScheduleKind::rabenseifner, "rabenseifner", true, true, false, false},
    {ScheduleKind::ring, "ring", false, true, false, true},
    {ScheduleKind::reduce_bcast, "reduce_bcast", true, true, false, false},
};
const KindInfo& Info(ScheduleKind kind) {
  for (const auto& k : kKinds)
    if (k.kind == kind) return k;
  return kKinds[0];
}
}  // namespace

const char* ToString(ScheduleKind kind) noexcept { return Info(kind).name; }

bool ParseScheduleKind(const std::string& name, ScheduleKind* out) noexcept {
  for (const auto& k : kKinds)
    if (name == k.name) {
      *out = k.kind;
      return true;
    }
  return false;
}

// The MPI library's collectives combine in rank order for non-commutative operators (the
// MPI standard requires it), so the MPI-library path counts as order-keeping.
bool IsOrderKeeping(ScheduleKind kind) noexcept { return Info(kind).order_keeping; }

bool Supports(ScheduleKind kind, Collective c) noexcept {
  const auto& k = Info(kind);
  switch (c) {
    case Collective::allreduce: return k.allreduce;
    case Collective::reduce: return k.reduce;
    case Collective::allgather: return k.allgather;
  }
  return false;
}

namespace detail {

std::unique_ptr<Schedule> MakeSchedule(ScheduleKind kind, const ScheduleArgs& args) {
  if (!Supports(kind, args.collective))
    throw UsageError(std::string("schedule '") + ToString(kind) + "' does not implement this collective");
  if (!args.payload.commutative && !IsOrderKeeping(kind))
    throw UsageError(std::string("schedule '") + ToString(kind) +
                     "' does not keep rank order, so it cannot carry a non-commutative operator");
  if (args.params.segment_bytes == 0) throw UsageError("ScheduleParams::segment_bytes must be positive");
  if (kind == ScheduleKind::knomial && args.params.radix < 2)
    throw UsageError("ScheduleParams::radix must be at least 2, got " + std::to_string(args.params.radix));
  // The two-level form applies to allreduce and reduce; allgather always runs flat.
  if (args.params.node_aware && args.collective != Collective::allgather) {
    if (!args.nodes)
      throw UsageError("node_aware schedule requested, but the Context has no node layout");
    if (kind == ScheduleKind::mpi_library)
      throw UsageError("the node-aware form needs one of Tributary's own schedules among the "
                       "node leaders, not mpi_library");
    if (!args.payload.commutative && !args.nodes->contiguous)
      throw UsageError("the nodes are not contiguous rank ranges, so the node-aware form "
                       "cannot carry a non-commutative operator");
    if (args.nodes->count > 1 && args.nodes->count < static_cast<int>(args.nodes->node_of.size()))
      return std::make_unique<NodeAwareSchedule>(kind, args);
  }
  switch (kind) {
    case ScheduleKind::mpi_library: return std::make_unique<MpiLibrarySchedule>(args);
    case ScheduleKind::binomial:
    case ScheduleKind::knomial:
    case ScheduleKind::reduce_bcast: return std::make_unique<KnomialSchedule>(args, kind);
    case ScheduleKind::pipelined_tree: return std::make_unique<PipelinedTreeSchedule>(args);
    case ScheduleKind::recursive_doubling: return std::make_unique<RecursiveDoublingSchedule>(args);
    case ScheduleKind::rabenseifner: return std::make_unique<RabenseifnerSchedule>(args);
    case ScheduleKind::ring: return std::make_unique<RingSchedule>(args);
  }
  throw UsageError(std::string("schedule '") + ToString(kind) + "' is not available in this build");
}

}  // namespace detail
}  // namespace tributary
