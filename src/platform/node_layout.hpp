// The node layout of a Context's communicator (node_layout.cpp): the node groups of the
// two-level form and the node facts the selection tree is pruned with.
#pragma once

#include <memory>
#include <vector>

#include "tributary/config.hpp"
#include "tributary/selection.hpp"

#if TRIBUTARY_HAVE_MPI
#include <mpi.h>
#endif

namespace tributary::detail {

#if TRIBUTARY_HAVE_MPI
/// How the ranks of a communicator group into nodes, for the two-level form. Owned by the
/// Context (built once, collectively).
struct NodeLayout {
  MPI_Comm node = MPI_COMM_NULL;     ///< The ranks of this rank's node, in rank order.
  MPI_Comm leaders = MPI_COMM_NULL;  ///< One rank per node (its lowest); null elsewhere.
  /// The node's ranks with the leader first and the others in the order of the hardware
  /// they are bound to (hwloc), for commutative combines; null where that is rank order,
  /// unknown, or ContextOptions::hardware_node_order is off.
  MPI_Comm by_hardware = MPI_COMM_NULL;
  int count = 1;           ///< Number of nodes.
  int largest = 1;         ///< Ranks on the largest node.
  int size = 1;            ///< Ranks of the communicator.
  bool contiguous = true;  ///< Every node is a contiguous range of ranks, in node order.
  /// Blocked layouts (node i holds ranks i * stride .. i * stride + stride - 1; the last may
  /// hold fewer) need no table: stride > 0. Otherwise stride is 0 and the tables hold, per
  /// rank of the communicator, its node and its rank within its node.
  int stride = 0;
  std::vector<int> node_of;
  std::vector<int> local_of;
  /// The node of rank `r` of the communicator.
  int NodeOf(int r) const noexcept {
    return stride > 0 ? r / stride : node_of[static_cast<std::size_t>(r)];
  }
  /// The rank of `r` within its node.
  int LocalOf(int r) const noexcept {
    return stride > 0 ? r % stride : local_of[static_cast<std::size_t>(r)];
  }
};

/// The node layout of `comm`: shared-memory groups, or virtual nodes of `per_node` ranks;
/// hardware order within a node where asked (NodeLayout::by_hardware). Collective; counts
/// the communicators it makes in `created`. node_layout.cpp.
std::unique_ptr<NodeLayout> MakeNodeLayout(MPI_Comm comm, int rank, int size, int per_node,
                                           bool hardware_order, int* created);
/// Frees the layout's communicators.
void FreeNodeLayout(NodeLayout* nodes) noexcept;
/// Ranks per node (the largest node) and node count, from the layout or, where `needed`,
/// from a temporary shared-memory split of `comm` (counted in `created`, freed at once)
/// and messages on `p2p` at the tags of kStartupTag. Collective.
SelectionFacts NodeFacts(MPI_Comm comm, MPI_Comm p2p, int size, const NodeLayout* nodes,
                         bool needed, int* created);

#endif

}  // namespace tributary::detail
