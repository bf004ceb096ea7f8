// The names a user gives a network schedule: the collective, the algorithm and its
// parameters (ContextOptions, the selection tree). The schedules themselves are private to
// the library (src/schedules/).
#pragma once

#include <cstddef>
#include <string>

namespace tributary {

/// The collective a schedule carries out.
enum class Collective { allreduce, reduce, allgather };

/// Which algorithm carries out the network phase.
enum class ScheduleKind {
  mpi_library,         ///< The MPI library's own non-blocking collective.
  binomial,            ///< reduce: binomial tree; allreduce: binomial reduce + binomial bcast.
  knomial,             ///< reduce, allreduce: k-nomial tree with ScheduleParams::radix.
  pipelined_tree,      ///< reduce: segmented pipeline along a chain, for large messages.
  recursive_doubling,  ///< allreduce, allgather: recursive doubling, fold-in for non-powers of 2.
  rabenseifner,        ///< allreduce: reduce-scatter + allgather in groups of
                       ///< ScheduleParams::radix (2: recursive halving and doubling).
  ring,                ///< allreduce (segmented reduce-scatter ring + allgather ring) and
                       ///< allgather; not order-keeping.
  reduce_bcast,        ///< allreduce: binomial reduce to rank 0, then binomial broadcast.
  reduce_scatter_gather,  ///< reduce: reduce-scatter in groups of ScheduleParams::radix (as
                          ///< rabenseifner), then a gather to the root; for large messages.
  recursive_multiplying,  ///< allreduce: recursive doubling in groups of ScheduleParams::radix
                          ///< ranks (log_k p rounds of k − 1 messages each way); for short
                          ///< messages where a round's latency outweighs its posts.
};

/// The schedule's name as used in options, logs and selection files ("binomial", ...).
const char* ToString(ScheduleKind kind) noexcept;
/// Parses a name given by ToString; returns false when unknown.
bool ParseScheduleKind(const std::string& name, ScheduleKind* out) noexcept;
/// True when the schedule combines contributions in rank order, so that a non-commutative
/// operator gives rank 0's value ∘ rank 1's ∘ ... ∘ rank p-1's.
bool IsOrderKeeping(ScheduleKind kind) noexcept;
/// True when ScheduleParams::radix shapes the schedule (knomial, rabenseifner,
/// reduce_scatter_gather, recursive_multiplying).
bool TakesRadix(ScheduleKind kind) noexcept;
/// True when the schedule implements the collective.
bool Supports(ScheduleKind kind, Collective c) noexcept;

/// Parameters of a schedule (those that do not apply are ignored).
struct ScheduleParams {
  /// Radix (>= 2) of the k-nomial trees, of recursive multiplying's groups, and of
  /// Rabenseifner's rounds (rounded down to a
  /// power of two; the built-in trees give Rabenseifner 2 on one machine, 4, 8 or 16
  /// across nodes).
  int radix = 4;
  std::size_t segment_bytes = 65536;  ///< Segment size for pipelined tree and ring (> 0).
  /// Two-level form: combine within each node (binomial, in rank order), run the schedule
  /// among the node leaders, release within the node. Nodes are the shared-memory groups
  /// of the communicator, or virtual nodes (ContextOptions::ranks_per_node).
  bool node_aware = false;
};

}  // namespace tributary
