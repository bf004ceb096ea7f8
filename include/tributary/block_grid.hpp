// Blocks in a regular grid of 1-3 dimensions, and the ranks that own them: which blocks
// exist, where each sits, and who holds it. The partners of a block pattern
// (block_partners.hpp) say who talks to whom over such a grid.
#pragma once

#include <vector>

namespace tributary {

/// How blocks are assigned to ranks.
enum class BlockAssignment {
  contiguous,  ///< rank r owns a contiguous run of gids (the first blocks % ranks get one more)
  round_robin  ///< gid g belongs to rank g % ranks
};

/// Blocks 0..n-1 in a regular grid of 1-3 dimensions, and their ranks. gid = c0 + d0 (c1 +
/// d1 c2) for coordinates c and divisions d.
class BlockGrid {
 public:
  /// `divisions` blocks along each dimension (1 to 3 of them, each >= 1); their product is
  /// the block count. UsageError otherwise, or when `ranks` < 1.
  BlockGrid(std::vector<int> divisions, int ranks,
            BlockAssignment assignment = BlockAssignment::contiguous);
  /// `blocks` blocks in `dims` dimensions, divided as evenly as the factors allow (the
  /// larger factors first). UsageError when `blocks` < 1 or `dims` is not 1-3.
  static BlockGrid Regular(int blocks, int dims, int ranks,
                           BlockAssignment assignment = BlockAssignment::contiguous);
  /// Checks that `blocks` equals the grid's block count (UsageError naming both otherwise).
  void RequireBlocks(int blocks) const;

  /// The number of blocks (the product of the divisions).
  int Blocks() const noexcept { return blocks_; }
  /// The number of dimensions (1-3).
  int Dims() const noexcept { return static_cast<int>(divisions_.size()); }
  /// The number of ranks the blocks are assigned to.
  int Ranks() const noexcept { return ranks_; }
  /// The blocks along each dimension.
  const std::vector<int>& Divisions() const noexcept { return divisions_; }
  /// The coordinates of `gid` (UsageError when it is not a block).
  std::vector<int> Coords(int gid) const;
  /// The gid at `coords` (one per dimension, each within its division).
  int Gid(const std::vector<int>& coords) const;
  /// The rank that owns `gid` (UsageError when it is not a block).
  int Owner(int gid) const;
  /// The gids `rank` owns, ascending (may be empty).
  std::vector<int> LocalBlocks(int rank) const;

 private:
  std::vector<int> divisions_;
  int blocks_ = 1;
  int ranks_ = 1;
  BlockAssignment assignment_;
};

}  // namespace tributary
