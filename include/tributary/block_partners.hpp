// Who talks to whom in each call of a block pattern. BlockPartners is the interface the
// engine runs (a user may write one); RegularPartners groups the blocks of a regular grid
// k at a time along one dimension per step, and MergePartners, BroadcastPartners,
// SwapPartners and AllReducePartners are its patterns.
#pragma once

#include <initializer_list>
#include <utility>
#include <vector>

#include "tributary/block_grid.hpp"

namespace tributary {

/// Who talks to whom in each of the `Calls()` calls of a block's callback. Call c of block
/// g receives what the blocks of `InLink(c, g)` sent to it in call c - 1, and sends to the
/// blocks of `OutLink(c, g)`: a block in one's out-link lists it in its in-link of the next
/// call (the pattern objects check this for their rank's blocks when constructed, and
/// refuse partners that disagree). Call 0 receives nothing and the last call sends
/// nothing. Write a subclass for a pattern of your own: the links must be pure functions
/// of (call, gid), the same on every rank; they are asked when a pattern object is
/// constructed.
class BlockPartners {
 public:
  /// The grid says which blocks there are and which rank owns each.
  explicit BlockPartners(BlockGrid grid) : grid_(std::move(grid)) {}
  virtual ~BlockPartners() = default;

  /// Calls of the callback per block (at least 1).
  virtual int Calls() const = 0;
  /// Whether block `gid`'s callback runs in `call` (default: every call). A block that is
  /// not active has no links in that call.
  virtual bool Active(int call, int gid) const;
  /// The gids `gid` receives from in `call` (itself included where it sends to itself).
  virtual std::vector<int> InLink(int call, int gid) const = 0;
  /// The gids `gid` sends to in `call`.
  virtual std::vector<int> OutLink(int call, int gid) const = 0;
  /// Whether `call` belongs to a merge: true for every call of MergePartners and for the
  /// merge half of AllReducePartners (its call S, the turn, is both); false otherwise.
  virtual bool InMerge(int call) const;

  /// The grid the partners link.
  const BlockGrid& Grid() const noexcept { return grid_; }

 protected:
  /// Copied by the pattern objects (BlockReduction keeps its own copy).
  BlockPartners(const BlockPartners&) = default;
  /// Assigned as a whole, subclass included.
  BlockPartners& operator=(const BlockPartners&) = default;

 private:
  BlockGrid grid_;
};

/// One step of an explicit list: group `k` blocks along dimension `dim`.
struct BlockStep {
  int dim;  ///< The dimension the step groups along.
  int k;    ///< The group size.
};

/// An explicit list of steps, in order, e.g. `BlockSteps{{0, 4}, {1, 2}, {0, 2}}`: along each
/// dimension the product of its steps' k must equal the grid's division (a dimension of
/// one block has no step).
class BlockSteps {
 public:
  /// The steps written in place: `BlockSteps{{0, 4}, {1, 2}}`.
  BlockSteps(std::initializer_list<BlockStep> steps) : steps_(steps) {}
  /// The steps of a list built at run time.
  explicit BlockSteps(std::vector<BlockStep> steps) : steps_(std::move(steps)) {}
  /// The steps, in order.
  const std::vector<BlockStep>& List() const noexcept { return steps_; }

 private:
  std::vector<BlockStep> steps_;
};

/// Partners over a regular grid in k-ary steps: each step groups k blocks along one
/// dimension. From a radix: the dimensions take turns (0, 1, 2, 0, ...) while blocks remain
/// along them; a step along a dimension with d blocks left uses the largest divisor of d
/// that is at most that step's radix, and when there is none the smallest prime factor of d
/// (a prime d is one step). From a BlockSteps list: exactly those steps, in that order.
/// `contiguous` = true: distance doubling (the first step along a dimension groups neighbours);
/// false: distance halving.
class RegularPartners : public BlockPartners {
 public:
  /// One k-ary step: which dimension it groups along, and how.
  struct Step {
    int dim;     ///< the dimension this step groups along
    int k;       ///< the group size
    int stride;  ///< distance between group members along `dim`
  };
  /// The steps, in order.
  const std::vector<Step>& Steps() const noexcept { return steps_; }
  /// The group of `gid` in step `step` (ascending gids, itself included).
  std::vector<int> Group(int step, int gid) const;
  /// The member of `gid`'s group in `step` whose position along the step's dimension
  /// matches `target`'s (the next hop toward `target`).
  int Toward(int step, int gid, int target) const;

 protected:
  /// `radix`: one k for every step, or a list (step i uses radix[i], the last repeating).
  /// UsageError for an empty list or a radix below 2.
  RegularPartners(const BlockGrid& grid, std::vector<int> radix, bool contiguous);
  /// UsageError for a dimension out of range, a k below 2, or steps whose product along a
  /// dimension is not its division.
  RegularPartners(const BlockGrid& grid, const BlockSteps& steps, bool contiguous);
  /// The number of steps.
  int StepCount() const noexcept { return static_cast<int>(steps_.size()); }
  /// Whether `gid` is the first member of its groups in steps 0..steps-1 (the root so far).
  bool Leads(int steps, int gid) const;

 private:
  int Digit(int step, int gid) const;
  void SetStrides();
  std::vector<Step> steps_;
  bool contiguous_ = true;
};

/// Merge-reduce: in each step every group of k sends to its first block (the root; it
/// sends to itself too); the others sit out the later calls; gid 0 ends with the result.
/// S steps, S + 1 calls.
class MergePartners final : public RegularPartners {
 public:
  /// A merge over `grid` in steps of `radix` (see RegularPartners).
  explicit MergePartners(const BlockGrid& grid, std::vector<int> radix = {2},
                         bool contiguous = true)
      : RegularPartners(grid, std::move(radix), contiguous) {}
  /// A merge over `grid` in the explicit `steps`.
  MergePartners(const BlockGrid& grid, const BlockSteps& steps, bool contiguous = true)
      : RegularPartners(grid, steps, contiguous) {}
  int Calls() const override { return StepCount() + 1; }
  bool Active(int call, int gid) const override;
  std::vector<int> InLink(int call, int gid) const override;
  std::vector<int> OutLink(int call, int gid) const override;
  bool InMerge(int) const override { return true; }
};

/// Broadcast, the reverse of a merge: the root of each group sends to the whole group.
class BroadcastPartners final : public RegularPartners {
 public:
  /// A broadcast over `grid` in steps of `radix` (see RegularPartners).
  explicit BroadcastPartners(const BlockGrid& grid, std::vector<int> radix = {2},
                             bool contiguous = true)
      : RegularPartners(grid, std::move(radix), contiguous) {}
  /// A broadcast over `grid` in the explicit `steps`.
  BroadcastPartners(const BlockGrid& grid, const BlockSteps& steps, bool contiguous = true)
      : RegularPartners(grid, steps, contiguous) {}
  int Calls() const override { return StepCount() + 1; }
  bool Active(int call, int gid) const override;
  std::vector<int> InLink(int call, int gid) const override;
  std::vector<int> OutLink(int call, int gid) const override;
};

/// Swap-reduce: every block sends to and receives from its whole group, every call; data
/// are typically split into k parts, part j to member j.
class SwapPartners final : public RegularPartners {
 public:
  /// A swap over `grid` in steps of `radix` (see RegularPartners).
  explicit SwapPartners(const BlockGrid& grid, std::vector<int> radix = {2}, bool contiguous = true)
      : RegularPartners(grid, std::move(radix), contiguous) {}
  /// A swap over `grid` in the explicit `steps`.
  SwapPartners(const BlockGrid& grid, const BlockSteps& steps, bool contiguous = true)
      : RegularPartners(grid, steps, contiguous) {}
  int Calls() const override { return StepCount() + 1; }
  std::vector<int> InLink(int call, int gid) const override;
  std::vector<int> OutLink(int call, int gid) const override;
};

/// Merge, then broadcast: 2S + 1 calls; `InMerge(call)` says which half a call belongs to
/// (call S is both: it receives the merged parts and starts the broadcast).
class AllReducePartners final : public RegularPartners {
 public:
  /// A merge then a broadcast over `grid` in steps of `radix` (see RegularPartners).
  explicit AllReducePartners(const BlockGrid& grid, std::vector<int> radix = {2},
                             bool contiguous = true)
      : RegularPartners(grid, std::move(radix), contiguous) {}
  /// A merge then a broadcast over `grid` in the explicit `steps`.
  AllReducePartners(const BlockGrid& grid, const BlockSteps& steps, bool contiguous = true)
      : RegularPartners(grid, steps, contiguous) {}
  int Calls() const override { return 2 * StepCount() + 1; }
  bool Active(int call, int gid) const override;
  std::vector<int> InLink(int call, int gid) const override;
  std::vector<int> OutLink(int call, int gid) const override;
  bool InMerge(int call) const override { return call <= StepCount(); }
};

}  // namespace tributary
