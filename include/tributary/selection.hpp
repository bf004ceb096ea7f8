// The selection tree: the single place where the schedule of a reduction is chosen.
//
// A tree is written as JSON (docs/selection.md). Inner nodes are operators (predicates on
// the collective, the communicator, the message and the operator); leaves are containers
// naming a schedule and its parameters. When a Context is created the tree is pruned of
// everything fixed for its communicator (one pruned tree per collective); each start then
// evaluates what is left on the message size, the operator, the memory space and the
// determinism mode.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "tributary/schedule_kind.hpp"

namespace tributary {

/// Where a reduction's data lives.
enum class MemorySpace : std::uint8_t { host, device };

/// What the pruning fixes: the communicator's facts, identical on every rank.
struct SelectionFacts {
  int comm_size = 1;       ///< The communicator's rank count.
  int ranks_per_node = 1;  ///< The largest node's rank count.
  int node_count = 1;      ///< The number of nodes the communicator spans.
};

/// What each start decides on, identical on every rank.
struct SelectionInput {
  std::size_t bytes = 0;                   ///< Message bytes per rank.
  bool builtin_op = true;                  ///< A builtin operator on builtin elements.
  bool commutative = true;                 ///< The operator commutes.
  MemorySpace memory = MemorySpace::host;  ///< Where the data lives.
  int determinism = 0;                     ///< tributary::Determinism as an integer.
};

/// A leaf: the schedule and its parameters.
struct SelectionChoice {
  ScheduleKind kind = ScheduleKind::mpi_library;  ///< The schedule.
  ScheduleParams params;                          ///< Its parameters (radix, segment, ...).
};

/// A validated selection tree (and, after Prune, the pruned one for one collective).
class SelectionTree {
 public:
  /// Parses and validates `json`. Throws UsageError naming `source` with the line and
  /// column of a syntax error, or the JSON pointer of the offending key for an unknown
  /// predicate or schedule, mixed sibling kinds, a level without its "any" catch-all, a leaf
  /// above the bottom, a schedule that does not implement a collective that reaches it, or
  /// a non-order-keeping schedule that a non-commutative operator can reach.
  static SelectionTree Parse(const std::string& json, const std::string& source = "selection");
  /// The tree built into the library for one machine (docs/selection.md says where it
  /// comes from).
  static const std::string& DefaultJson();
  /// The cluster selection's model file built into the library: the candidate schedules
  /// per collective and the built-in network profile (simulation/cluster-selection.json;
  /// docs/simulation.md, "The cluster selection"). Not a selection tree itself.
  static const std::string& ClusterJson();
  /// The built-in tree for a communicator of this shape: DefaultJson() within one node;
  /// across nodes, the tree the cluster model makes for the shape and the network profile
  /// (TRIBUTARY_NETWORK, else ClusterJson()'s), made once per shape. Throws UsageError for
  /// a network profile that cannot be read.
  static const std::string& BuiltinJson(const SelectionFacts& facts);

  /// The tree with every predicate fixed by `facts` and `collective` resolved.
  SelectionTree Prune(const SelectionFacts& facts, Collective collective) const;
  /// Evaluates the tree (normally a pruned one; predicates that were not pruned are
  /// evaluated from `collective` and `facts` as given to the last Prune, or defaults).
  SelectionChoice Select(const SelectionInput& input) const;
  /// The tree as JSON, in the file format.
  std::string ToJson(int indent = 2) const;
  /// True when a leaf asks for the node-aware form.
  bool UsesNodeAware() const noexcept {
    for (const auto& l : lists_)
      if (l.leaf && l.choice.params.node_aware) return true;
    return false;
  }
  /// True when some operator node tests `pred` (with a value other than "any").
  bool Tests(std::uint8_t pred) const noexcept {
    for (const auto& n : nodes_)
      if (static_cast<std::uint8_t>(n.pred) == pred && n.form != Form::any) return true;
    return false;
  }
  /// Number of operator nodes (for tests of the pruning).
  std::size_t OperatorCount() const noexcept { return nodes_.size(); }

  /// The predicates a tree may test (the keys of the file format); for Tests().
  enum class Pred : std::uint8_t {
    collective,
    comm_size,
    comm_type,
    ranks_per_node,
    node_count,
    msg_size,
    op_kind,
    commutative,
    memory,
    determinism
  };

 private:
  enum class Form : std::uint8_t { any, le, pow2, eq };
  struct Node {
    Pred pred;
    Form form;
    std::int64_t value;
    int then;  // index into lists_
  };
  struct List {
    bool leaf = false;
    SelectionChoice choice;
    int first = 0, count = 0;  // nodes_[first .. first + count)
  };
  friend class SelectionBuilder;
  bool Matches(const Node& n, const SelectionInput& in) const noexcept;
  int PruneList(const SelectionTree& from, int list, const SelectionFacts& facts, Collective c);
  std::vector<Node> nodes_;
  std::vector<List> lists_;
  int root_ = 0;
  SelectionFacts facts_;
  Collective collective_ = Collective::allreduce;
  bool pruned_ = false;
};

}  // namespace tributary
