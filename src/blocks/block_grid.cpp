// Blocks in a regular grid and their owners.
#include "tributary/block_grid.hpp"

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>

#include "tributary/errors.hpp"

namespace tributary {

BlockGrid::BlockGrid(std::vector<int> divisions, int ranks, BlockAssignment assignment)
    : divisions_(std::move(divisions)), ranks_(ranks), assignment_(assignment) {
  if (divisions_.empty() || divisions_.size() > 3)
    throw UsageError("BlockGrid: 1 to 3 dimensions, not " + std::to_string(divisions_.size()));
  if (ranks_ < 1) throw UsageError("BlockGrid: ranks must be >= 1, not " + std::to_string(ranks_));
  std::int64_t product = 1;
  for (int d : divisions_) {
    if (d < 1)
      throw UsageError("BlockGrid: every dimension needs at least one block, not " +
                       std::to_string(d));
    product *= d;
    if (product > (std::int64_t(1) << 30)) throw UsageError("BlockGrid: too many blocks");
  }
  blocks_ = static_cast<int>(product);
}

BlockGrid BlockGrid::Regular(int blocks, int dims, int ranks, BlockAssignment assignment) {
  if (blocks < 1) throw UsageError("BlockGrid: at least one block, not " + std::to_string(blocks));
  if (dims < 1 || dims > 3)
    throw UsageError("BlockGrid: 1 to 3 dimensions, not " + std::to_string(dims));
  std::vector<int> primes;
  for (int n = blocks, f = 2; n > 1;) {
    if (static_cast<std::int64_t>(f) * f > n) f = n;
    if (n % f == 0) {
      primes.push_back(f);
      n /= f;
    } else {
      ++f;
    }
  }
  std::vector<int> divisions(static_cast<std::size_t>(dims), 1);
  for (auto it = primes.rbegin(); it != primes.rend(); ++it)  // largest factor to the smallest side
    *std::min_element(divisions.begin(), divisions.end()) *= *it;
  std::sort(divisions.rbegin(), divisions.rend());
  return BlockGrid(std::move(divisions), ranks, assignment);
}

void BlockGrid::RequireBlocks(int blocks) const {
  if (blocks != blocks_) {
    std::string shape;
    for (int d : divisions_) shape += (shape.empty() ? "" : " x ") + std::to_string(d);
    throw UsageError("BlockGrid: " + std::to_string(blocks) + " blocks do not match the grid of " +
                     shape + " = " + std::to_string(blocks_) + " blocks");
  }
}

std::vector<int> BlockGrid::Coords(int gid) const {
  if (gid < 0 || gid >= blocks_)
    throw UsageError("BlockGrid: gid " + std::to_string(gid) + " is not a block (0.." +
                     std::to_string(blocks_ - 1) + ")");
  std::vector<int> c(divisions_.size());
  for (std::size_t d = 0; d < divisions_.size(); ++d) {
    c[d] = gid % divisions_[d];
    gid /= divisions_[d];
  }
  return c;
}

int BlockGrid::Gid(const std::vector<int>& coords) const {
  int gid = 0;
  for (std::size_t d = divisions_.size(); d-- > 0;) gid = gid * divisions_[d] + coords[d];
  return gid;
}

int BlockGrid::Owner(int gid) const {
  if (gid < 0 || gid >= blocks_)
    throw UsageError("BlockGrid: gid " + std::to_string(gid) + " is not a block (0.." +
                     std::to_string(blocks_ - 1) + ")");
  if (assignment_ == BlockAssignment::round_robin) return gid % ranks_;
  const int base = blocks_ / ranks_, extra = blocks_ % ranks_;
  if (gid < extra * (base + 1)) return gid / (base + 1);
  return extra + (gid - extra * (base + 1)) / base;
}

std::vector<int> BlockGrid::LocalBlocks(int rank) const {
  std::vector<int> mine;
  for (int g = 0; g < blocks_; ++g)
    if (Owner(g) == rank) mine.push_back(g);
  return mine;
}

}  // namespace tributary
