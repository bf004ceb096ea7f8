// The network a Context's built-in cluster selection models, learnt where the Context
// starts: the file TRIBUTARY_NETWORK where it is set, else ping-pongs and bursts between the
// leaders of the first two nodes and ping-pongs within the first node, measured by the first
// Context of the job that spans nodes and kept for the later ones (docs/simulation.md, "The
// network at start-up").
#pragma once

#include <string>

#include "platform/node_layout.hpp"
#include "selection/cluster_model.hpp"
#include "tributary/selection.hpp"

namespace tributary::detail {

/// The message sizes of the start-up measurement: every power of two from 8 B to 1 MiB.
inline constexpr int kProfileSizes = 18;
/// The sizes of its bursts (8 B to 64 KiB), and the messages in one burst.
inline constexpr int kBurstSizes = 14;
inline constexpr int kBurstMessages = 16;

#if TRIBUTARY_HAVE_MPI
/// The built-in selection tree for a Context over `comm` (this rank `rank`) whose ranks span
/// nodes (`nodes`, `facts`): the cluster model's tree on the network profile learnt as above.
/// Collective over `comm`. Throws UsageError on every rank when TRIBUTARY_NETWORK names a
/// file that cannot be read or parsed.
std::string StartupClusterTree(MPI_Comm comm, int rank, const NodeLayout& nodes,
                               const SelectionFacts& facts);
#endif

/// The profile the last Context of this process learnt at start-up (measured, kept, or read
/// from TRIBUTARY_NETWORK); null before any.
const NetworkProfile* StartupNetwork() noexcept;

}  // namespace tributary::detail
