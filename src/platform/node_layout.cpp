// Which ranks share a node: the node layout of the two-level form (NodeLayout, built once
// by the Context, collectively) and the node facts the selection tree is pruned with.
#include "platform/node_layout.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "platform/mpi_access.hpp"
#include "platform/tags.hpp"
#include "platform/topology.hpp"
#include "tributary/errors.hpp"

namespace tributary::detail {

#if TRIBUTARY_HAVE_MPI
namespace {

// An allreduce of `count` 64-bit integers (the maximum; the last summed with `sum_last`)
// by recursive doubling on blocking point-to-point messages of `comm` at `tag` (ranks from
// the largest power of two up fold into the ranks below it first). Under SimGrid SMPI the
// first collective on a communicator pays for SMPI's view of its nodes (an MPI_Allreduce
// took 8.9 s of wall time at 2048 simulated ranks, the next one 1.1 s); messages do not.
// Blocking, not polled: a rank that polls while it waits for a slower one makes the
// simulator run one event per poll (at 1024 simulated ranks the polls of a Context's
// start-up cost more wall time than everything else in it).
void AgreeOverRanks(MPI_Comm comm, int tag, std::int64_t* values, std::size_t count,
                    bool sum_last) {
  int rank = 0, size = 1;
  CheckMpi(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  CheckMpi(MPI_Comm_size(comm, &size), "MPI_Comm_size");
  const int n = static_cast<int>(count);
  std::vector<std::int64_t> other(count);
  const auto combine = [&] {
    for (std::size_t k = 0; k < count; ++k)
      values[k] = sum_last && k + 1 == count ? values[k] + other[k] : std::max(values[k], other[k]);
  };
  int pof2 = 1;
  while (pof2 <= size / 2) pof2 *= 2;
  if (rank >= pof2) {
    CheckMpi(MPI_Send(values, n, MPI_INT64_T, rank - pof2, tag, comm), "MPI_Send");
    CheckMpi(MPI_Recv(values, n, MPI_INT64_T, rank - pof2, tag, comm, MPI_STATUS_IGNORE),
             "MPI_Recv");
    return;
  }
  const bool folds = rank + pof2 < size;
  if (folds) {
    CheckMpi(MPI_Recv(other.data(), n, MPI_INT64_T, rank + pof2, tag, comm, MPI_STATUS_IGNORE),
             "MPI_Recv");
    combine();
  }
  for (int mask = 1; mask < pof2; mask *= 2) {
    const int partner = rank ^ mask;
    CheckMpi(MPI_Sendrecv(values, n, MPI_INT64_T, partner, tag, other.data(), n, MPI_INT64_T,
                          partner, tag, comm, MPI_STATUS_IGNORE),
             "MPI_Sendrecv");
    combine();
  }
  if (folds) CheckMpi(MPI_Send(values, n, MPI_INT64_T, rank + pof2, tag, comm), "MPI_Send");
}

// The node's ranks in hardware order for commutative combines (NodeLayout::by_hardware):
// the leader first, then the others by BoundPosition. Made only where that order differs
// from rank order and every rank of the node knows its position; collective over the node.
void AddHardwareOrder(NodeLayout* nodes, int local, int* created) {
  int local_size = 1;
  CheckMpi(MPI_Comm_size(nodes->node, &local_size), "MPI_Comm_size");
  if (local_size < 3) return;  // the leader and one other: hardware order is rank order
  // Without hwloc no rank knows its position (BoundPosition is -1): nothing to gather.
  if (!TRIBUTARY_HAVE_HWLOC) return;
  const int mine = local == 0 ? -1 : BoundPosition();
  std::vector<int> pos(static_cast<std::size_t>(local_size));
  CheckMpi(MPI_Allgather(&mine, 1, MPI_INT, pos.data(), 1, MPI_INT, nodes->node), "MPI_Allgather");
  bool known = true, differs = false;
  for (std::size_t i = 1; i < pos.size(); ++i) {
    known = known && pos[i] >= 0;
    differs = differs || (i > 1 && pos[i] < pos[i - 1]);
  }
  if (!known || !differs) return;
  // Ties (ranks bound to the same first PU) keep rank order: MPI_Comm_split sorts by key,
  // then by rank in the node.
  CheckMpi(MPI_Comm_split(nodes->node, 0, mine, &nodes->by_hardware), "MPI_Comm_split");
  ++*created;
  CheckMpi(MPI_Comm_set_errhandler(nodes->by_hardware, MPI_ERRORS_RETURN),
           "MPI_Comm_set_errhandler");
}

#if TRIBUTARY_HAVE_SMPI
// FNV-1a of `name` from `seed`: the integer colour of a host.
std::uint64_t HashName(const char* name, std::uint64_t seed) {
  std::uint64_t h = 1469598103934665603ull ^ (seed * 0x9e3779b97f4a7c15ull);
  for (const char* c = name; *c; ++c) h = (h ^ static_cast<unsigned char>(*c)) * 1099511628211ull;
  return h;
}
#endif

// The ranks of `comm` that share a node. SimGrid SMPI 3.32's MPI_Comm_split_type can hand
// a rank a group that is not yet complete (rank 0 saw 1 or 2 ranks of 16); there the
// simulated host name, which names the node, decides: split by a hash of it (an integer
// colour, no name travels), then, within each group only, check with one allreduce that a
// second hash agrees, and split that group again by another hash where two host names
// shared the first (a collision of 31-bit colours).
int SplitByNode(MPI_Comm comm, int key, MPI_Comm* node) {
#if TRIBUTARY_HAVE_SMPI
  char name[MPI_MAX_PROCESSOR_NAME + 1] = {};
  int len = 0;
  CheckMpi(MPI_Get_processor_name(name, &len), "MPI_Get_processor_name");
  MPI_Comm group = comm;
  for (std::uint64_t seed = 0;; ++seed) {
    const int colour = static_cast<int>(HashName(name, 2 * seed) & 0x7fffffffu);
    MPI_Comm split = MPI_COMM_NULL;
    const int rc = MPI_Comm_split(group, colour, key, &split);
    if (group != comm) MPI_Comm_free(&group);
    if (rc != MPI_SUCCESS) return rc;
    group = split;
    const auto check = static_cast<std::int64_t>(HashName(name, 2 * seed + 1) >> 1);
    std::int64_t range[2] = {check, -check};
    AgreeOverRanks(group, 0, range, 2, false);
    if (range[0] == -range[1]) break;  // one host name in the group
  }
  *node = group;
  return MPI_SUCCESS;
#else
  return MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, key, MPI_INFO_NULL, node);
#endif
}

}  // namespace

std::unique_ptr<NodeLayout> MakeNodeLayout(MPI_Comm comm, int rank, int size, int per_node,
                                           bool hardware_order, int* created) {
  auto nodes = std::make_unique<NodeLayout>();
  nodes->size = size;
  if (per_node > 0)
    CheckMpi(MPI_Comm_split(comm, rank / per_node, rank, &nodes->node), "MPI_Comm_split");
  else
    CheckMpi(SplitByNode(comm, rank, &nodes->node), "MPI_Comm_split_type");
  ++*created;
  CheckMpi(MPI_Comm_set_errhandler(nodes->node, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  int local = 0, local_size = 1;
  CheckMpi(MPI_Comm_rank(nodes->node, &local), "MPI_Comm_rank");
  CheckMpi(MPI_Comm_size(nodes->node, &local_size), "MPI_Comm_size");
  if (hardware_order) AddHardwareOrder(nodes.get(), local, created);
  if (local_size == size) {  // one node: nothing to agree on, and no leaders to connect
    nodes->largest = nodes->stride = size;
    return nodes;
  }
  CheckMpi(MPI_Comm_split(comm, local == 0 ? 0 : MPI_UNDEFINED, rank, &nodes->leaders),
           "MPI_Comm_split");
  // No table of every rank's node where a formula gives it: a table of p entries per rank
  // (an allgather) is O(p^2) in all, and under SimGrid SMPI's default selector an
  // MPI_Allgather is one message between every two ranks (minutes of wall time at 1024
  // simulated ranks). Each leader checks its own node (the node's ranks as ranks of
  // `comm`, a local translation), the leaders agree in messages, and each node's leader
  // tells its ranks: facts = node index, largest node, whether every node is a contiguous
  // range in node order, whether node i holds ranks i * largest .. (i + 1) * largest - 1
  // (the last node fewer), node count.
  std::int64_t facts[5] = {0, local_size, 1, 1, 1};
  if (nodes->leaders != MPI_COMM_NULL) {
    ++*created;
    CheckMpi(MPI_Comm_set_errhandler(nodes->leaders, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
    int index = 0;
    CheckMpi(MPI_Comm_rank(nodes->leaders, &index), "MPI_Comm_rank");
    std::vector<int> locals(static_cast<std::size_t>(local_size)), ranks(locals.size());
    for (int i = 0; i < local_size; ++i) locals[static_cast<std::size_t>(i)] = i;
    MPI_Group node_group = MPI_GROUP_NULL, comm_group = MPI_GROUP_NULL;
    CheckMpi(MPI_Comm_group(nodes->node, &node_group), "MPI_Comm_group");
    CheckMpi(MPI_Comm_group(comm, &comm_group), "MPI_Comm_group");
    CheckMpi(
        MPI_Group_translate_ranks(node_group, local_size, locals.data(), comm_group, ranks.data()),
        "MPI_Group_translate_ranks");
    MPI_Group_free(&node_group);
    MPI_Group_free(&comm_group);
    bool contiguous = true;
    for (int i = 0; i < local_size; ++i)
      contiguous = contiguous && ranks[static_cast<std::size_t>(i)] == rank + i;
    // The maximum of: the node size, "not contiguous", minus the size of every node but
    // the last (the one with rank size - 1); and the number of nodes, summed.
    const bool last = rank + local_size == size;
    std::int64_t agreed[4] = {local_size, contiguous ? 0 : 1,
                              last ? std::numeric_limits<std::int64_t>::min() : -local_size, 1};
    AgreeOverRanks(nodes->leaders, 0, agreed, 4, true);
    const bool all_contiguous = agreed[1] == 0;
    facts[0] = index;
    facts[1] = agreed[0];
    facts[2] = all_contiguous ? 1 : 0;
    facts[3] = all_contiguous && (agreed[2] == std::numeric_limits<std::int64_t>::min() ||
                                  -agreed[2] == agreed[0])
                   ? 1
                   : 0;
    facts[4] = agreed[3];
  }
  CheckMpi(MPI_Bcast(facts, 5, MPI_INT64_T, 0, nodes->node), "MPI_Bcast");
  nodes->largest = static_cast<int>(facts[1]);
  nodes->contiguous = facts[2] != 0;
  nodes->count = static_cast<int>(facts[4]);
  if (facts[3] != 0) {
    nodes->stride = nodes->largest;
    return nodes;
  }
  // Any other layout: a table of p entries per rank.
  const int mine[2] = {static_cast<int>(facts[0]), local};
  std::vector<int> all(2 * static_cast<std::size_t>(size));
  CheckMpi(MPI_Allgather(mine, 2, MPI_INT, all.data(), 2, MPI_INT, comm), "MPI_Allgather");
  nodes->node_of.resize(static_cast<std::size_t>(size));
  nodes->local_of.resize(static_cast<std::size_t>(size));
  for (std::size_t r = 0; r < static_cast<std::size_t>(size); ++r) {
    nodes->node_of[r] = all[2 * r];
    nodes->local_of[r] = all[2 * r + 1];
  }
  return nodes;
}

void FreeNodeLayout(NodeLayout* nodes) noexcept {
  if (nodes->node != MPI_COMM_NULL) MPI_Comm_free(&nodes->node);
  if (nodes->leaders != MPI_COMM_NULL) MPI_Comm_free(&nodes->leaders);
  if (nodes->by_hardware != MPI_COMM_NULL) MPI_Comm_free(&nodes->by_hardware);
}

SelectionFacts NodeFacts(MPI_Comm comm, MPI_Comm p2p, int size, const NodeLayout* nodes,
                         bool needed, int* created) {
  SelectionFacts f;
  f.comm_size = size;
  f.node_count = 1;
  f.ranks_per_node = size;  // unknown unless needed: then measured below
  if (nodes) {
    f.node_count = nodes->count;
    f.ranks_per_node = nodes->largest;
    return f;
  }
  if (!needed || size == 1) return f;  // one rank: one node
  MPI_Comm shared = MPI_COMM_NULL;
  CheckMpi(SplitByNode(comm, 0, &shared), "MPI_Comm_split_type");
  ++*created;
  int local_size = 1, local_rank = 0;
  MPI_Comm_size(shared, &local_size);
  MPI_Comm_rank(shared, &local_rank);
  MPI_Comm_free(&shared);
  // The largest node and the number of node leaders, in messages on `p2p` (the Context's
  // own communicator: nothing else runs on it yet) at the tags of kStartupTag.
  std::int64_t facts[2] = {local_size, local_rank == 0 ? 1 : 0};
  AgreeOverRanks(p2p, kStartupTag, facts, 2, true);
  f.ranks_per_node = static_cast<int>(facts[0]);
  f.node_count = static_cast<int>(facts[1]);
  return f;
}
#endif

}  // namespace tributary::detail
