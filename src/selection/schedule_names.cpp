// Schedule names and properties (no MPI: the selection loader uses them too).
#include <string>

#include "tributary/schedule_kind.hpp"

namespace tributary {

namespace {
struct KindInfo {
  ScheduleKind kind;
  const char* name;
  bool order_keeping;
  bool allreduce, reduce, allgather;
  bool takes_radix;
};
constexpr KindInfo kKinds[] = {
    {ScheduleKind::mpi_library, "mpi_library", true, true, true, true, false},
    {ScheduleKind::binomial, "binomial", true, true, true, false, false},
    {ScheduleKind::knomial, "knomial", true, true, true, false, true},
    {ScheduleKind::pipelined_tree, "pipelined_tree", true, false, true, false, false},
    {ScheduleKind::recursive_doubling, "recursive_doubling", true, true, false, true, false},
    {ScheduleKind::rabenseifner, "rabenseifner", true, true, false, false, true},
    {ScheduleKind::ring, "ring", false, true, false, true, false},
    {ScheduleKind::reduce_bcast, "reduce_bcast", true, true, false, false, false},
    {ScheduleKind::reduce_scatter_gather, "reduce_scatter_gather", true, false, true, false, true},
    {ScheduleKind::recursive_multiplying, "recursive_multiplying", true, true, false, false, true},
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

bool TakesRadix(ScheduleKind kind) noexcept { return Info(kind).takes_radix; }

bool Supports(ScheduleKind kind, Collective c) noexcept {
  const auto& k = Info(kind);
  switch (c) {
    case Collective::allreduce:
      return k.allreduce;
    case Collective::reduce:
      return k.reduce;
    case Collective::allgather:
      return k.allgather;
  }
  return false;
}

}  // namespace tributary
