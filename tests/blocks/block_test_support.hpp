// What the block-pattern suites share: a block of int64 values, its expected totals, the
// configurations every pattern runs through, and a driver that runs a pattern as tasks.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "mpi_test.hpp"
#include "tributary/tributary.hpp"

namespace tributary::block_test {

using tributary::BlockAssignment;
using tributary::BlockGrid;
using tributary::BlockProxy;
using tributary::TaskStatus;
using tributary::testing::Rank;
using tributary::testing::Size;

struct Block {
  int gid = 0;
  std::vector<std::int64_t> data;
  std::size_t lo = 0, hi = 0;  // swap: the slice this block holds
};

constexpr std::size_t kLength = 37;

inline std::int64_t ValueOf(int gid, std::size_t i) {
  return (gid + 1) * 1000 + static_cast<std::int64_t>(i) * (gid % 5 + 1);
}

inline std::vector<std::int64_t> Total(int blocks) {
  std::vector<std::int64_t> t(kLength, 0);
  for (int g = 0; g < blocks; ++g)
    for (std::size_t i = 0; i < kLength; ++i) t[i] += ValueOf(g, i);
  return t;
}

struct Case {
  int blocks, dims;
  std::vector<int> radix;
  bool contiguous;
  BlockAssignment assignment;
  unsigned shuffle = 0;  // not 0: Start gets the blocks in an order drawn from this seed
  std::string Name() const {
    std::string r;
    for (int k : radix) r += std::to_string(k) + ",";
    return std::to_string(blocks) + " blocks, " + std::to_string(dims) + "-D, radix " + r +
           (contiguous ? " doubling" : " halving") +
           (assignment == BlockAssignment::contiguous ? ", contiguous" : ", round-robin") +
           (shuffle ? ", shuffled " + std::to_string(shuffle) : "");
  }
};

inline std::vector<Case> Cases() {
  std::vector<Case> cases;
  const std::vector<std::vector<int>> radices = {{2}, {3}, {4}, {8}, {3, 2}, {2, 4, 3}};
  for (int blocks = 1; blocks <= 16; ++blocks)
    for (int dims = 1; dims <= 3; ++dims)
      for (std::size_t r = 0; r < radices.size(); ++r) {
        // every block count with radix 2 and 3; the rest on a sample, both directions
        if (r > 1 && (blocks + dims + static_cast<int>(r)) % 3 != 0) continue;
        const bool contiguous = (blocks + static_cast<int>(r)) % 2 == 0;
        const auto assignment =
            (blocks + dims) % 2 ? BlockAssignment::round_robin : BlockAssignment::contiguous;
        // every other case gives Start its blocks in a shuffled order
        const unsigned shuffle =
            cases.size() % 2 ? static_cast<unsigned>(1 + cases.size() + 97 * Rank()) : 0u;
        cases.push_back({blocks, dims, radices[r], contiguous, assignment, shuffle});
      }
  return cases;
}

// Runs every call of every local block through a task region (one list per block), on the
// serial executor or on 2 worker threads (callbacks of different blocks then run at once).
// `shuffle`: when not 0, the blocks go to Start in an order drawn from that seed.
template <class R>
void RunAsTasks(tributary::Context& ctx, R& r, std::vector<Block>& mine, bool threaded = false,
                unsigned shuffle = 0) {
  std::vector<std::pair<int, Block*>> ptrs;
  for (Block& b : mine) ptrs.push_back({b.gid, &b});
  if (shuffle != 0) std::shuffle(ptrs.begin(), ptrs.end(), std::mt19937(shuffle));
  r.Start(ptrs);
  tributary::TaskCollection tc;
  auto& region = tc.AddRegion(static_cast<int>(mine.size()));
  r.AddTasks(region);
  if (threaded) {
    tributary::ThreadedExecutor ex(2);
    ASSERT_EQ(ctx.Execute(tc, ex), TaskStatus::complete);
  } else {
    ASSERT_EQ(ctx.Execute(tc), TaskStatus::complete);
  }
}

// This rank's blocks (`rank`: the rank in the grid's Context, when not the world's).
inline std::vector<Block> LocalBlocks(const BlockGrid& grid, int rank = Rank()) {
  std::vector<Block> mine;
  for (int g : grid.LocalBlocks(rank)) {
    Block b;
    b.gid = g;
    b.data.resize(kLength);
    for (std::size_t i = 0; i < kLength; ++i) b.data[i] = ValueOf(g, i);
    b.hi = kLength;
    mine.push_back(b);
  }
  return mine;
}

inline void Sum(BlockProxy& rp, Block& b) {
  if (rp.InLink().empty()) return;
  std::vector<std::int64_t> acc(b.data.size(), 0);
  for (int from : rp.InLink()) {
    std::vector<std::int64_t> in;
    rp.Dequeue(from, in);
    EXPECT_EQ(in.size(), acc.size());
    for (std::size_t i = 0; i < acc.size() && i < in.size(); ++i) acc[i] += in[i];
    EXPECT_EQ(rp.Remaining(from), 0u);
  }
  b.data = acc;
}

}  // namespace tributary::block_test
