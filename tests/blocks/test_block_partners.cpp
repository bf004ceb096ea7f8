// Partners of the user's own through the BlockPartners interface: a ring that passes every
// block's value around gives every block all values (1-9 blocks, shuffled starts); links
// that disagree are refused on every rank when the pattern object is constructed.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "block_test_support.hpp"
#include "mpi_test.hpp"
#include "tributary/tributary.hpp"

namespace {

using tributary::BlockGrid;
using tributary::BlockPartners;
using tributary::BlockProxy;
using tributary::BlockReduction;
using tributary::testing::Rank;
using tributary::testing::Size;
using namespace tributary::block_test;

// A ring: in call c < n - 1 block g sends to g + 1 (mod n), in call c >= 1 it receives from
// g - 1; n calls carry every value to every block.
class Ring final : public BlockPartners {
 public:
  explicit Ring(const BlockGrid& grid) : BlockPartners(grid) {}
  int Calls() const override { return Grid().Blocks(); }
  std::vector<int> InLink(int call, int gid) const override {
    if (call < 1 || call >= Calls()) return {};
    return {(gid + Grid().Blocks() - 1) % Grid().Blocks()};
  }
  std::vector<int> OutLink(int call, int gid) const override {
    if (call < 0 || call >= Calls() - 1) return {};
    return {(gid + 1) % Grid().Blocks()};
  }
};

TEST(UserPartners, ARingGivesEveryBlockEveryValue) {
  tributary::Context ctx;
  for (int blocks = 1; blocks <= 9; ++blocks) {
    const BlockGrid grid = BlockGrid::Regular(blocks, 1, Size(),
                                              blocks % 2 ? tributary::BlockAssignment::round_robin
                                                         : tributary::BlockAssignment::contiguous);
    // Block data: [own value, then the values received, in the order they came].
    BlockReduction<Block> ring(ctx, Ring(grid),
                               [](Block& b, BlockProxy& rp, const BlockPartners& p) {
                                 EXPECT_EQ(rp.Gid(), b.gid);
                                 EXPECT_FALSE(p.InMerge(rp.Round()));
                                 for (int from : rp.InLink()) {
                                   std::int64_t v = 0;
                                   rp.Dequeue(from, v);
                                   b.data.push_back(v);
                                 }
                                 for (int to : rp.OutLink()) rp.Enqueue(to, b.data.back());
                               });
    std::vector<Block> mine = LocalBlocks(grid);
    for (Block& b : mine) b.data = {ValueOf(b.gid, 0)};
    RunAsTasks(ctx, ring, mine, blocks % 3 == 0, static_cast<unsigned>(blocks + 7 * Rank()));
    for (const Block& b : mine) {
      std::vector<std::int64_t> want;
      for (int c = 0; c < blocks; ++c) want.push_back(ValueOf((b.gid - c + blocks) % blocks, 0));
      EXPECT_EQ(b.data, want) << blocks << " blocks, block " << b.gid;
    }
  }
}

// Explicit steps: exactly the dimensions and radices listed, in order, strides by
// direction; a list that does not multiply to the grid is refused.
TEST(ExplicitSteps, TheListIsTheSteps) {
  using tributary::BlockSteps;
  using tributary::MergePartners;
  using tributary::SwapPartners;
  const BlockGrid grid({8, 3}, 1);
  const auto steps = [](const tributary::RegularPartners& p) {
    std::vector<std::vector<int>> s;
    for (const auto& x : p.Steps()) s.push_back({x.dim, x.k, x.stride});
    return s;
  };
  const BlockSteps list{{1, 3}, {0, 2}, {0, 4}};
  EXPECT_EQ(steps(MergePartners(grid, list)),
            (std::vector<std::vector<int>>{{1, 3, 1}, {0, 2, 1}, {0, 4, 2}}));
  EXPECT_EQ(steps(SwapPartners(grid, list, false)),
            (std::vector<std::vector<int>>{{1, 3, 1}, {0, 2, 4}, {0, 4, 1}}));
  EXPECT_EQ(SwapPartners(grid, list, false).Group(1, 0), std::vector<int>({0, 4}));
  EXPECT_EQ(MergePartners(grid, list).Calls(), 4);
  const auto error = [&](const BlockSteps& s) {
    try {
      MergePartners p(grid, s);
    } catch (const tributary::UsageError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(error({{1, 3}, {0, 2}}).find("dimension 0 multiply to 2, the grid has 8"),
            std::string::npos);
  EXPECT_NE(error({{1, 3}, {0, 8}, {0, 2}}).find("multiply to 16"), std::string::npos);
  EXPECT_NE(error({{2, 3}, {0, 8}}).find("dimension 2 of a grid of 2"), std::string::npos);
  EXPECT_NE(error({{1, 3}, {0, 1}, {0, 8}}).find("k must be >= 2"), std::string::npos);
  // A grid of one block: no steps, one call.
  EXPECT_EQ(MergePartners(BlockGrid({1}, 1), BlockSteps{}).Calls(), 1);
}

// Every pattern over explicit steps gives the right values at 1-4 ranks.
TEST(ExplicitSteps, PatternsRunOverThem) {
  using tributary::AllReducePartners;
  using tributary::BlockSteps;
  using tributary::MergePartners;
  tributary::Context ctx;
  const BlockGrid grid({6, 2, 2}, Size(), tributary::BlockAssignment::round_robin);
  for (const BlockSteps& list :
       {BlockSteps{{0, 6}, {1, 2}, {2, 2}}, BlockSteps{{2, 2}, {0, 2}, {1, 2}, {0, 3}},
        BlockSteps{{0, 3}, {0, 2}, {2, 2}, {1, 2}}})
    for (bool contiguous : {true, false}) {
      BlockReduction<Block> all(ctx, AllReducePartners(grid, list, contiguous),
                                [](Block& b, BlockProxy& rp, const BlockPartners& p) {
                                  if (p.InMerge(rp.Round()))
                                    Sum(rp, b);
                                  else
                                    rp.Dequeue(rp.InLink()[0], b.data);
                                  for (int to : rp.OutLink()) rp.Enqueue(to, b.data);
                                });
      std::vector<Block> mine = LocalBlocks(grid);
      RunAsTasks(ctx, all, mine, false, 5u + static_cast<unsigned>(Rank()));
      for (const Block& b : mine) EXPECT_EQ(b.data, Total(24)) << "block " << b.gid;
      tributary::BlockAllToAll<Block> a2a(ctx, tributary::SwapPartners(grid, list, contiguous),
                                          [](Block& b, BlockProxy& rp) {
                                            if (rp.InLink().empty()) {
                                              for (int to : rp.OutLink())
                                                rp.Enqueue(to, b.gid * 100 + to);
                                              return;
                                            }
                                            for (int from : rp.InLink()) {
                                              int v = 0;
                                              rp.Dequeue(from, v);
                                              EXPECT_EQ(v, from * 100 + b.gid);
                                              b.data[0] = from;  // the last sender seen
                                            }
                                          });
      mine = LocalBlocks(grid);
      RunAsTasks(ctx, a2a, mine);
      for (const Block& b : mine) EXPECT_EQ(b.data[0], 23) << "block " << b.gid;
    }
}

// Two calls: every block sends to block 0, which expects only blocks below `expected`.
class Gather final : public BlockPartners {
 public:
  Gather(const BlockGrid& grid, int expected) : BlockPartners(grid), expected_(expected) {}
  int Calls() const override { return 2; }
  std::vector<int> InLink(int call, int gid) const override {
    std::vector<int> in;
    if (call == 1 && gid == 0)
      for (int g = 0; g < expected_; ++g) in.push_back(g);
    return in;
  }
  std::vector<int> OutLink(int call, int) const override {
    return call == 0 ? std::vector<int>{0} : std::vector<int>{};
  }

 private:
  int expected_;
};

TEST(UserPartners, LinksThatDisagreeAreRefusedOnEveryRank) {
  tributary::Context ctx;
  const int blocks = 2 * Size() + 1;
  const BlockGrid grid = BlockGrid::Regular(blocks, 1, Size());
  const auto noop = [](Block&, BlockProxy&, const BlockPartners&) {};
  // Block 0 expects all but the last block, which sends anyway.
  std::string what;
  try {
    BlockReduction<Block> bad(ctx, Gather(grid, blocks - 1), noop, "gather");
  } catch (const tributary::UsageError& e) {
    what = e.what();
  }
  EXPECT_NE(what.find("BlockReduction 'gather'"), std::string::npos) << what;
  const int owner = grid.Owner(blocks - 1);
  if (Rank() == owner) {
    EXPECT_NE(what.find("block " + std::to_string(blocks - 1) + ", call 0 sends to block 0"),
              std::string::npos)
        << what;
  } else {
    EXPECT_NE(what.find("the partners disagree on rank " + std::to_string(owner)),
              std::string::npos)
        << what;
  }
  // Block 0 expects one block more than there are (not a block): refused on its rank.
  what.clear();
  try {
    BlockReduction<Block> bad(ctx, Gather(grid, blocks + 1), noop);
  } catch (const tributary::UsageError& e) {
    what = e.what();
  }
  EXPECT_NE(what.find(Rank() == 0 ? "not a block" : "disagree on rank 0"), std::string::npos)
      << what;
  // Agreeing links construct.
  EXPECT_NO_THROW(BlockReduction<Block>(ctx, Gather(grid, blocks), noop));
}

}  // namespace
