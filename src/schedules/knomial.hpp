// k-nomial (and binomial) trees: reduce, broadcast, and reduce + broadcast allreduce.
#pragma once

#include <cstddef>
#include <vector>

#include "schedules/p2p.hpp"

namespace tributary::detail {

/// The plan of a k-nomial tree rooted at virtual rank 0, where virtual rank
/// v = (rank − base) mod p. At level m = 1, k, k², …, a node v with v mod (m·k) = 0
/// receives from v + j·m (j = 1 … k−1); the others send to v − (v mod m·k) and are done.
/// The subtree of v + j·m is the range [v + j·m, v + (j+1)·m), so children combined in
/// the listed order give rank order (with base 0). Radix 2 is the binomial tree.
struct KnomialTree {
  KnomialTree() = default;
  KnomialTree(int rank, int size, int radix, int base);
  int vrank = 0;
  int parent = -1;             ///< Real rank; -1 at the root.
  std::vector<int> children;   ///< Real ranks, in combine order (increasing subtrees).
  std::vector<int> level_end;  ///< Level l's children end at children[level_end[l]].
  /// The chain v → v − 1 (a tree of fan-out 1), for pipelines.
  static KnomialTree Chain(int rank, int size, int base);
  /// Whether `rank` has children in the k-nomial tree, without building it: its first
  /// level (m = 1) has the child v + 1 exactly when v is a multiple of the radix and not the
  /// last rank, and a rank without that child has none at any higher level either.
  static bool HasChildren(int rank, int size, int radix, int base) noexcept {
    const int v = ((rank - base) % size + size) % size;
    return v % radix == 0 && v + 1 < size;
  }
};

/// k-nomial (and binomial) reduce, broadcast and reduce + broadcast allreduce. Reduce
/// combines in rank order (it reduces to rank 0 and forwards to the root) unless the
/// operator commutes, when the tree is rooted at the root itself.
class KnomialSchedule final : public P2PSchedule {
 public:
  enum Phases : int { kReduce = 1, kBroadcast = 2 };
  /// `phases` 0 means: what args.collective needs. The radix is 2, or the parameters'
  /// radix for ScheduleKind::knomial.
  KnomialSchedule(const ScheduleArgs& args, ScheduleKind kind, int phases = 0);
  void Start() override;
  bool Progress() override;
  ScheduleKind Kind() const noexcept override { return kind_; }

 private:
  enum class Step { reduce, sent_up, forward, broadcast, finishing, done };
  void PostReduceLevel();
  void AfterReduce();
  void StartBroadcast();
  void SendToChildren();
  ScheduleKind kind_;
  int radix_ = 2;
  int phases_;
  int base_ = 0;
  int tree_base_ = -1, tree_radix_ = 0;  // the cached tree's shape
  KnomialTree tree_;
  Step step_ = Step::done;
  std::size_t level_ = 0;
  unsigned char* acc_ = nullptr;
  std::vector<unsigned char*> free_;      // receive buffers not in use
  std::vector<unsigned char*> pending_;   // this level's receive buffers, in child order
  std::size_t combined_ = 0;              // children of this level combined so far
  const unsigned char* input_ = nullptr;  // a separate contribution not yet combined
};

}  // namespace tributary::detail
