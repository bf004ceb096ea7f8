// The node layout of a Context's communicator (node_layout.cpp): the node groups of the
// two-level form and the node facts the selection tree is pruned with.
#pragma once

#include <memory>

#include "schedules/schedule.hpp"
#include "tributary/selection.hpp"

namespace tributary::detail {

#if TRIBUTARY_HAVE_MPI
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
