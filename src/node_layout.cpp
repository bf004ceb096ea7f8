// Which ranks share a node: the node layout of the two-level form (NodeLayout, built once
// by the Context, collectively) and the node facts the selection tree is pruned with.
#include <algorithm>
#include <cstring>
#include <vector>

#include "context_impl.hpp"
#include "topology.hpp"
#include "tributary/errors.hpp"

namespace tributary::detail {

#if TRIBUTARY_HAVE_MPI
namespace {

// The node's ranks in hardware order for commutative combines (NodeLayout::by_hardware):
// the leader first, then the others by BoundPosition. Made only where that order differs
// from rank order and every rank of the node knows its position; collective over the node.
void AddHardwareOrder(NodeLayout* nodes, int local, int* created) {
  int local_size = 1;
  CheckMpi(MPI_Comm_size(nodes->node, &local_size), "MPI_Comm_size");
  if (local_size < 3) return;  // the leader and one other: hardware order is rank order
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

// The ranks of `comm` that share a node. SimGrid SMPI 3.32's MPI_Comm_split_type can hand
// a rank a group that is not yet complete (rank 0 saw 1 or 2 ranks of 16); there the
// simulated host name, which names the node, decides.
int SplitByNode(MPI_Comm comm, int key, MPI_Comm* node) {
#if TRIBUTARY_HAVE_SMPI
  int size = 0, rank = 0, len = 0;
  MPI_Comm_size(comm, &size);
  MPI_Comm_rank(comm, &rank);
  std::vector<char> names(static_cast<std::size_t>(size) * MPI_MAX_PROCESSOR_NAME, '\0');
  char* mine = names.data() + static_cast<std::size_t>(rank) * MPI_MAX_PROCESSOR_NAME;
  CheckMpi(MPI_Get_processor_name(mine, &len), "MPI_Get_processor_name");
  CheckMpi(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, names.data(), MPI_MAX_PROCESSOR_NAME,
                         MPI_CHAR, comm),
           "MPI_Allgather");
  int color = rank;
  for (int r = 0; r < rank; ++r)
    if (std::strncmp(names.data() + static_cast<std::size_t>(r) * MPI_MAX_PROCESSOR_NAME, mine,
                     MPI_MAX_PROCESSOR_NAME) == 0) {
      color = r;
      break;
    }
  return MPI_Comm_split(comm, color, key, node);
#else
  return MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, key, MPI_INFO_NULL, node);
#endif
}

}  // namespace

std::unique_ptr<NodeLayout> MakeNodeLayout(MPI_Comm comm, int rank, int size, int per_node,
                                           bool hardware_order, int* created) {
  auto nodes = std::make_unique<NodeLayout>();
  if (per_node > 0)
    CheckMpi(MPI_Comm_split(comm, rank / per_node, rank, &nodes->node), "MPI_Comm_split");
  else
    CheckMpi(SplitByNode(comm, rank, &nodes->node), "MPI_Comm_split_type");
  ++*created;
  CheckMpi(MPI_Comm_set_errhandler(nodes->node, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  int local = 0;
  CheckMpi(MPI_Comm_rank(nodes->node, &local), "MPI_Comm_rank");
  if (hardware_order) AddHardwareOrder(nodes.get(), local, created);
  CheckMpi(MPI_Comm_split(comm, local == 0 ? 0 : MPI_UNDEFINED, rank, &nodes->leaders),
           "MPI_Comm_split");
  int index = 0;
  if (nodes->leaders != MPI_COMM_NULL) {
    ++*created;
    CheckMpi(MPI_Comm_set_errhandler(nodes->leaders, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
    CheckMpi(MPI_Comm_rank(nodes->leaders, &index), "MPI_Comm_rank");
  }
  CheckMpi(MPI_Bcast(&index, 1, MPI_INT, 0, nodes->node), "MPI_Bcast");
  const int mine[2] = {index, local};
  std::vector<int> all(2 * static_cast<std::size_t>(size));
  CheckMpi(MPI_Allgather(mine, 2, MPI_INT, all.data(), 2, MPI_INT, comm), "MPI_Allgather");
  nodes->node_of.resize(static_cast<std::size_t>(size));
  nodes->local_of.resize(static_cast<std::size_t>(size));
  for (std::size_t r = 0; r < static_cast<std::size_t>(size); ++r) {
    nodes->node_of[r] = all[2 * r];
    nodes->local_of[r] = all[2 * r + 1];
    nodes->count = std::max(nodes->count, all[2 * r] + 1);
    const bool starts = r == 0 || nodes->node_of[r] != nodes->node_of[r - 1];
    if (starts ? (nodes->local_of[r] != 0 || (r && nodes->node_of[r] != nodes->node_of[r - 1] + 1))
               : nodes->local_of[r] != nodes->local_of[r - 1] + 1)
      nodes->contiguous = false;
  }
  return nodes;
}

void FreeNodeLayout(NodeLayout* nodes) noexcept {
  if (nodes->node != MPI_COMM_NULL) MPI_Comm_free(&nodes->node);
  if (nodes->leaders != MPI_COMM_NULL) MPI_Comm_free(&nodes->leaders);
  if (nodes->by_hardware != MPI_COMM_NULL) MPI_Comm_free(&nodes->by_hardware);
}

SelectionFacts NodeFacts(MPI_Comm comm, int size, const NodeLayout* nodes, bool needed,
                         int* created) {
  SelectionFacts f;
  f.comm_size = size;
  f.node_count = 1;
  f.ranks_per_node = size;  // unknown unless needed: then measured below
  if (nodes) {
    std::vector<int> per(static_cast<std::size_t>(nodes->count), 0);
    for (int n : nodes->node_of) ++per[static_cast<std::size_t>(n)];
    f.node_count = nodes->count;
    f.ranks_per_node = *std::max_element(per.begin(), per.end());
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
  int leader = local_rank == 0 ? 1 : 0;
  CheckMpi(MPI_Allreduce(&local_size, &f.ranks_per_node, 1, MPI_INT, MPI_MAX, comm),
           "MPI_Allreduce");
  CheckMpi(MPI_Allreduce(&leader, &f.node_count, 1, MPI_INT, MPI_SUM, comm), "MPI_Allreduce");
  return f;
}
#endif

}  // namespace tributary::detail
