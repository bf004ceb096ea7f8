// Block reduction patterns through the public API, for radices 2, 3, 4, 8 and mixed lists,
// distance doubling and halving, 1..16 blocks in 1-3 dimensions, contiguous and
// round-robin assignment (uneven, and ranks without blocks): merge equals a serial sum at
// the root, broadcast delivers the root's data everywhere, swap leaves each block its
// slice of the total, all-reduce gives every block the total, all-to-all delivers every
// message exactly once. Messages between blocks of one rank never call MPI_Isend (counted
// through the profiling interface). Bad input is a clear error.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <numeric>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "block_test_support.hpp"
#include "mpi_test.hpp"
#include "tributary/tributary.hpp"

#if TRIBUTARY_HAVE_MPI
// Every MPI_Isend of the process goes through here (the MPI profiling interface).
static std::atomic<long> isend_calls{0};
extern "C" int MPI_Isend(const void* buf, int count, MPI_Datatype type, int dest, int tag,
                         MPI_Comm comm, MPI_Request* request) {
  isend_calls.fetch_add(1);
  return PMPI_Isend(buf, count, type, dest, tag, comm, request);
}
#endif

namespace {

using tributary::AllReducePartners;
using tributary::BlockAllToAll;
using tributary::BlockAssignment;
using tributary::BlockGrid;
using tributary::BlockPartners;
using tributary::BlockProxy;
using tributary::BlockReduction;
using tributary::BroadcastPartners;
using tributary::MergePartners;
using tributary::SwapPartners;
using tributary::TaskStatus;
using tributary::testing::Rank;
using tributary::testing::Size;
using namespace tributary::block_test;

TEST(BlockPatterns, MergeGivesTheRootTheSum) {
  tributary::Context ctx;
  for (const Case& c : Cases()) {
    BlockGrid grid = BlockGrid::Regular(c.blocks, c.dims, Size(), c.assignment);
    BlockReduction<Block> merge(ctx, MergePartners(grid, c.radix, c.contiguous),
                                [](Block& b, BlockProxy& rp, const BlockPartners&) {
                                  EXPECT_EQ(rp.Gid(), b.gid);
                                  Sum(rp, b);
                                  for (int to : rp.OutLink()) rp.Enqueue(to, b.data);
                                });
    std::vector<Block> mine = LocalBlocks(grid);
    RunAsTasks(ctx, merge, mine, false, c.shuffle);
    for (const Block& b : mine)
      if (b.gid == 0) {
        EXPECT_EQ(b.data, Total(c.blocks)) << c.Name();
      }
  }
}

TEST(BlockPatterns, BroadcastDeliversTheRootsData) {
  tributary::Context ctx;
  for (const Case& c : Cases()) {
    BlockGrid grid = BlockGrid::Regular(c.blocks, c.dims, Size(), c.assignment);
    BlockReduction<Block> bcast(ctx, BroadcastPartners(grid, c.radix, c.contiguous),
                                [](Block& b, BlockProxy& rp, const BlockPartners&) {
                                  EXPECT_EQ(rp.Gid(), b.gid);
                                  if (!rp.InLink().empty()) {
                                    ASSERT_EQ(rp.InLink().size(), 1u);
                                    rp.Dequeue(rp.InLink()[0], b.data);
                                  }
                                  for (int to : rp.OutLink()) rp.Enqueue(to, b.data);
                                });
    std::vector<Block> mine = LocalBlocks(grid);
    RunAsTasks(ctx, bcast, mine, false, c.shuffle);
    std::vector<std::int64_t> root(kLength);
    for (std::size_t i = 0; i < kLength; ++i) root[i] = ValueOf(0, i);
    for (const Block& b : mine) EXPECT_EQ(b.data, root) << c.Name() << ", block " << b.gid;
  }
}

TEST(BlockPatterns, AllReduceGivesEveryBlockTheTotal) {
  tributary::Context ctx;
  for (const Case& c : Cases()) {
    BlockGrid grid = BlockGrid::Regular(c.blocks, c.dims, Size(), c.assignment);
    BlockReduction<Block> all(ctx, AllReducePartners(grid, c.radix, c.contiguous),
                              [](Block& b, BlockProxy& rp, const BlockPartners& partners) {
                                EXPECT_EQ(rp.Gid(), b.gid);
                                if (partners.InMerge(rp.Round())) {
                                  Sum(rp, b);
                                } else {
                                  ASSERT_EQ(rp.InLink().size(), 1u);
                                  rp.Dequeue(rp.InLink()[0], b.data);
                                }
                                for (int to : rp.OutLink()) rp.Enqueue(to, b.data);
                              });
    std::vector<Block> mine = LocalBlocks(grid);
    RunAsTasks(ctx, all, mine, c.blocks % 2 == 1, c.shuffle);  // odd counts on 2 threads
    for (const Block& b : mine)
      EXPECT_EQ(b.data, Total(c.blocks)) << c.Name() << ", block " << b.gid;
    // A second generation of the same object.
    mine = LocalBlocks(grid);
    RunAsTasks(ctx, all, mine, false, c.shuffle + 1);
    for (const Block& b : mine)
      EXPECT_EQ(b.data, Total(c.blocks)) << c.Name() << ", generation 2, block " << b.gid;
  }
}

TEST(BlockPatterns, SwapLeavesEachBlockItsSliceOfTheTotal) {
  tributary::Context ctx;
  for (const Case& c : Cases()) {
    BlockGrid grid = BlockGrid::Regular(c.blocks, c.dims, Size(), c.assignment);
    BlockReduction<Block> swap(
        ctx, SwapPartners(grid, c.radix, c.contiguous),
        [](Block& b, BlockProxy& rp, const BlockPartners&) {
          EXPECT_EQ(rp.Gid(), b.gid);
          if (!rp.InLink().empty()) {  // every partner sent our slice
            std::vector<std::int64_t> acc(b.hi - b.lo, 0);
            for (int from : rp.InLink()) {
              std::vector<std::int64_t> in;
              rp.Dequeue(from, in);
              ASSERT_EQ(in.size(), acc.size());
              for (std::size_t i = 0; i < acc.size(); ++i) acc[i] += in[i];
            }
            std::copy(acc.begin(), acc.end(), b.data.begin() + static_cast<std::ptrdiff_t>(b.lo));
          }
          const auto& out = rp.OutLink();
          const std::size_t k = out.size(), n = b.hi - b.lo, lo = b.lo;
          for (std::size_t j = 0; j < k; ++j) {
            const std::size_t a = lo + n * j / k, z = lo + n * (j + 1) / k;
            rp.Enqueue(out[j],
                       std::vector<std::int64_t>(b.data.begin() + static_cast<std::ptrdiff_t>(a),
                                                 b.data.begin() + static_cast<std::ptrdiff_t>(z)));
            if (out[j] == b.gid) {
              b.lo = a;
              b.hi = z;
            }
          }
        });
    std::vector<Block> mine = LocalBlocks(grid);
    RunAsTasks(ctx, swap, mine, false, c.shuffle);
    const auto total = Total(c.blocks);
    std::int64_t held = 0;
    for (const Block& b : mine) {
      held += static_cast<std::int64_t>(b.hi - b.lo);
      for (std::size_t i = b.lo; i < b.hi; ++i)
        EXPECT_EQ(b.data[i], total[i]) << c.Name() << ", block " << b.gid;
    }
    // The slices cover the vector exactly once.
    const auto all = tributary::testing::AllGather(held);
    EXPECT_EQ(std::accumulate(all.begin(), all.end(), std::int64_t(0)),
              static_cast<std::int64_t>(kLength))
        << c.Name();
  }
}

TEST(BlockPatterns, AllToAllDeliversEveryMessageOnce) {
  tributary::Context ctx;
  for (const Case& c : Cases()) {
    BlockGrid grid = BlockGrid::Regular(c.blocks, c.dims, Size(), c.assignment);
    std::vector<Block> mine = LocalBlocks(grid);
    int checked = 0;
    BlockAllToAll<Block> a2a(
        ctx, grid,
        [&](Block& b, BlockProxy& rp) {
          EXPECT_EQ(rp.Gid(), b.gid);
          if (rp.InLink().empty()) {
            // The first call: a message to every block d with (g + d) % 3 != 0, written in
            // two parts, every block's first part before any second part.
            EXPECT_EQ(static_cast<int>(rp.OutLink().size()), c.blocks);
            for (int d : rp.OutLink())
              if ((b.gid + d) % 3 != 0)
                rp.Enqueue(d, std::vector<std::int64_t>(static_cast<std::size_t>(d % 4 + 1),
                                                        b.gid * 100 + d));
            for (int d : rp.OutLink())
              if ((b.gid + d) % 3 != 0) rp.Enqueue(d, std::int32_t(b.gid * 7 + d));
            return;
          }
          EXPECT_EQ(static_cast<int>(rp.InLink().size()), c.blocks);
          for (int s : rp.InLink()) {
            if ((s + b.gid) % 3 == 0) {
              EXPECT_EQ(rp.Remaining(s), 0u) << c.Name();
              continue;
            }
            std::vector<std::int64_t> in;
            rp.Dequeue(s, in);
            EXPECT_EQ(in, std::vector<std::int64_t>(static_cast<std::size_t>(b.gid % 4 + 1),
                                                    s * 100 + b.gid))
                << c.Name();
            std::int32_t second = -1;
            rp.Dequeue(s, second);
            EXPECT_EQ(second, s * 7 + b.gid) << c.Name();
            EXPECT_EQ(rp.Remaining(s), 0u) << c.Name();
            ++checked;
          }
        },
        c.radix, c.contiguous);
    RunAsTasks(ctx, a2a, mine, false, c.shuffle);
    int want = 0;
    for (const Block& b : mine)
      for (int s = 0; s < c.blocks; ++s) want += (s + b.gid) % 3 != 0;
    EXPECT_EQ(checked, want) << c.Name();
  }
}

// Blocks are identified by their gid: Start takes them in any order, local block i is the
// i-th pair, and a list's earlier task (here: the one that fills the block) runs before the
// rounds of the block that list was given. Each generation draws a new order.
TEST(BlockPatterns, StartTakesBlocksInAnyOrder) {
  tributary::Context ctx;
  const int blocks = 16;
  for (auto assignment : {BlockAssignment::contiguous, BlockAssignment::round_robin}) {
    const BlockGrid grid = BlockGrid::Regular(blocks, 2, Size(), assignment);
    BlockReduction<Block> all(ctx, AllReducePartners(grid, {2}),
                              [](Block& b, BlockProxy& rp, const BlockPartners& p) {
                                EXPECT_EQ(rp.Gid(), b.gid);
                                if (p.InMerge(rp.Round()))
                                  Sum(rp, b);
                                else
                                  rp.Dequeue(rp.InLink()[0], b.data);
                                for (int to : rp.OutLink()) rp.Enqueue(to, b.data);
                              });
    for (unsigned generation = 1; generation <= 3; ++generation) {
      std::vector<Block> mine = LocalBlocks(grid);
      for (Block& b : mine) b.data.assign(kLength, -1);  // filled by each list's first task
      std::vector<std::pair<int, Block*>> order;
      for (Block& b : mine) order.push_back({b.gid, &b});
      std::shuffle(order.begin(), order.end(), std::mt19937(generation + 31u * Rank()));
      if (generation == 1) std::reverse(order.begin(), order.end());
      all.Start(order);
      tributary::TaskCollection tc;
      auto& region = tc.AddRegion(static_cast<int>(order.size()));
      std::vector<tributary::TaskID> filled;
      for (std::size_t i = 0; i < order.size(); ++i)
        filled.push_back(region[static_cast<int>(i)].AddTask(tributary::TaskID(), [&order, i] {
          Block& b = *order[i].second;
          for (std::size_t j = 0; j < kLength; ++j) b.data[j] = ValueOf(b.gid, j);
          return TaskStatus::complete;
        }));
      all.AddTasks(region, filled);
      ASSERT_EQ(ctx.Execute(tc), TaskStatus::complete);
      for (const Block& b : mine)
        EXPECT_EQ(b.data, Total(blocks)) << "generation " << generation << ", block " << b.gid;
    }
  }
}

// A set of blocks that is not exactly this rank's is refused, naming the missing, extra
// and repeated gids; the object stays usable.
TEST(BlockPatterns, StartRefusesAWrongSetOfBlocks) {
  tributary::Context ctx;
  const BlockGrid grid = BlockGrid::Regular(8, 1, Size());
  BlockReduction<Block> merge(ctx, MergePartners(grid, {2}),
                              [](Block& b, BlockProxy& rp, const BlockPartners&) {
                                Sum(rp, b);
                                for (int to : rp.OutLink()) rp.Enqueue(to, b.data);
                              });
  std::vector<Block> mine = LocalBlocks(grid);
  const auto message = [&](std::vector<std::pair<int, Block*>> set) {
    try {
      merge.Start(set);
    } catch (const tributary::UsageError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  Block other;
  const int foreign = (grid.LocalBlocks(Rank()).empty() ? 0 : grid.LocalBlocks(Rank()).back() + 1) %
                      8;  // a gid of another rank, or none when one rank owns all 8
  if (!mine.empty()) {
    std::vector<std::pair<int, Block*>> set;
    for (std::size_t i = 1; i < mine.size(); ++i) set.push_back({mine[i].gid, &mine[i]});
    const std::string missing = message(set);
    EXPECT_NE(missing.find("missing gids " + std::to_string(mine[0].gid)), std::string::npos)
        << missing;
    EXPECT_NE(missing.find("rank " + std::to_string(Rank())), std::string::npos) << missing;
    set.push_back({mine[1 % mine.size()].gid, &mine[1 % mine.size()]});
    set.push_back({mine[0].gid, &mine[0]});
    const std::string repeated = message(set);
    EXPECT_NE(repeated.find("repeated gids " + std::to_string(mine[1 % mine.size()].gid)),
              std::string::npos)
        << repeated;
    if (Size() > 1) {
      set = {{foreign, &other}};
      for (Block& b : mine) set.push_back({b.gid, &b});
      const std::string extra = message(set);
      EXPECT_NE(extra.find("extra gids " + std::to_string(foreign)), std::string::npos) << extra;
    }
  }
  const std::string outside = message({{8, &other}, {-1, &other}});
  EXPECT_NE(outside.find("extra gids -1 8"), std::string::npos) << outside;
  // Still usable: the right set in reverse order.
  std::vector<std::pair<int, Block*>> right;
  for (auto it = mine.rbegin(); it != mine.rend(); ++it) right.push_back({it->gid, &*it});
  merge.Start(right);
  while (true) {
    bool done = true;
    for (int i = 0; i < static_cast<int>(right.size()); ++i)
      done = merge.Run(i) == TaskStatus::complete && done;
    if (done) break;
  }
  for (const Block& b : mine)
    if (b.gid == 0) {
      EXPECT_EQ(b.data, Total(8));
    }
}

// Two pattern objects in flight at once, their lists in opposite orders on neighbouring
// ranks (so their rounds start in different orders): both complete, each object's
// messages are its own.
TEST(BlockPatterns, InstancesInFlightTogetherInAnyOrder) {
  tributary::Context ctx;
  const BlockGrid grid = BlockGrid::Regular(10, 2, Size(), BlockAssignment::round_robin);
  const auto callback = [](Block& b, BlockProxy& rp, const BlockPartners& p) {
    if (p.InMerge(rp.Round()))
      Sum(rp, b);
    else
      rp.Dequeue(rp.InLink()[0], b.data);
    for (int to : rp.OutLink()) rp.Enqueue(to, b.data);
  };
  BlockReduction<Block> a(ctx, AllReducePartners(grid, {2}), callback);
  BlockReduction<Block> b(ctx, AllReducePartners(grid, {3}, false), callback);
  std::vector<Block> mine_a = LocalBlocks(grid), mine_b = LocalBlocks(grid);
  std::vector<std::pair<int, Block*>> pa, pb;
  for (Block& x : mine_a) pa.push_back({x.gid, &x});
  for (Block& x : mine_b) pb.push_back({x.gid, &x});
  a.Start(pa);
  b.Start(pb);
  // One list per block and object; even ranks list A's blocks first, odd ranks B's.
  const int n = static_cast<int>(pa.size());
  tributary::TaskCollection tc;
  auto& region = tc.AddRegion(2 * n);
  for (int l = 0; l < 2 * n; ++l) {
    const bool first_half = l < n;
    BlockReduction<Block>& r = (Rank() % 2 == 0) == first_half ? a : b;
    const int i = l % std::max(n, 1);
    tributary::TaskID dep;
    for (int c = 0; c < r.Calls(); ++c)
      dep = region[l].AddTask(dep, [&r, i, c] { return r.Round(i, c); });
  }
  ASSERT_EQ(ctx.Execute(tc), TaskStatus::complete);
  for (const Block& x : mine_a) EXPECT_EQ(x.data, Total(10));
  for (const Block& x : mine_b) EXPECT_EQ(x.data, Total(10));
}

TEST(BlockPatterns, StepsUseTheLargestDivisorOrThePrimeRemainder) {
  const BlockGrid g7({7}, 1), g11({11}, 1), g13({13}, 1), g12({12}, 1), g14({14}, 1);
  auto ks = [](const tributary::RegularPartners& p) {
    std::vector<int> k;
    for (const auto& s : p.Steps()) k.push_back(s.k);
    return k;
  };
  EXPECT_EQ(ks(MergePartners(g7, {2})), std::vector<int>({7}));
  EXPECT_EQ(ks(MergePartners(g11, {4})), std::vector<int>({11}));
  EXPECT_EQ(ks(MergePartners(g13, {8})), std::vector<int>({13}));
  EXPECT_EQ(ks(MergePartners(g12, {8})), std::vector<int>({6, 2}));
  EXPECT_EQ(ks(MergePartners(g12, {3, 2})), std::vector<int>({3, 2, 2}));
  EXPECT_EQ(ks(MergePartners(g14, {4})), std::vector<int>({2, 7}));
  // Doubling groups neighbours first; halving the farthest first.
  const SwapPartners doubling(g12, {2}, true), halving(g12, {2}, false);
  EXPECT_EQ(doubling.Group(0, 5), std::vector<int>({4, 5}));
  EXPECT_EQ(halving.Group(0, 5), std::vector<int>({5, 11}));  // steps 2, 2, 3: stride 6 first
  // 3-D: the dimensions take turns.
  const BlockGrid cube({2, 2, 2}, 1);
  const MergePartners p(cube, {2});
  ASSERT_EQ(p.Steps().size(), 3u);
  EXPECT_EQ(p.Steps()[0].dim, 0);
  EXPECT_EQ(p.Steps()[1].dim, 1);
  EXPECT_EQ(p.Steps()[2].dim, 2);
}

TEST(BlockPatterns, AssignmentsAreUnevenAndMayLeaveRanksEmpty) {
  const BlockGrid contiguous({7}, 3), robin({7}, 3, BlockAssignment::round_robin), few({2}, 4);
  EXPECT_EQ(contiguous.LocalBlocks(0), std::vector<int>({0, 1, 2}));
  EXPECT_EQ(contiguous.LocalBlocks(1), std::vector<int>({3, 4}));
  EXPECT_EQ(contiguous.LocalBlocks(2), std::vector<int>({5, 6}));
  EXPECT_EQ(robin.LocalBlocks(1), std::vector<int>({1, 4}));
  EXPECT_TRUE(few.LocalBlocks(3).empty());
  EXPECT_EQ(BlockGrid::Regular(12, 2, 1).Divisions(), std::vector<int>({4, 3}));
  EXPECT_EQ(BlockGrid::Regular(8, 3, 1).Divisions(), std::vector<int>({2, 2, 2}));
  EXPECT_EQ(contiguous.Coords(5), std::vector<int>({5}));
  const BlockGrid g({3, 2}, 1);
  EXPECT_EQ(g.Coords(4), std::vector<int>({1, 1}));
  EXPECT_EQ(g.Gid({1, 1}), 4);
}

#if TRIBUTARY_HAVE_MPI
// All blocks on this rank (a one-rank Context): no MPI_Isend at all. Several ranks: one per
// block, call and other rank it sends to (small messages of one call to the blocks of one
// rank travel together).
TEST(BlockPatterns, MessagesOnOneRankNeverCallMpi) {
  tributary::Context self(MPI_COMM_SELF);
  const BlockGrid grid = BlockGrid::Regular(12, 2, 1);
  BlockReduction<Block> all(self, AllReducePartners(grid, {2}),
                            [](Block& b, BlockProxy& rp, const BlockPartners& p) {
                              if (p.InMerge(rp.Round()))
                                Sum(rp, b);
                              else
                                rp.Dequeue(rp.InLink()[0], b.data);
                              for (int to : rp.OutLink()) rp.Enqueue(to, b.data);
                            });
  std::vector<Block> mine = LocalBlocks(grid, 0);
  const long before = isend_calls.load();
  RunAsTasks(self, all, mine);
  EXPECT_EQ(isend_calls.load() - before, 0);
  EXPECT_EQ(all.RemoteMessages(), 0u);
  for (const Block& b : mine) EXPECT_EQ(b.data, Total(12));

  tributary::Context ctx;
  const BlockGrid spread = BlockGrid::Regular(12, 2, Size());
  SwapPartners partners(spread, {3});
  long expect = 0, messages = 0;
  for (int g : spread.LocalBlocks(Rank()))
    for (int c = 0; c < partners.Calls(); ++c) {
      std::set<int> ranks;
      for (int to : partners.OutLink(c, g))
        if (spread.Owner(to) != Rank()) {
          ranks.insert(spread.Owner(to));
          ++messages;
        }
      expect += static_cast<long>(ranks.size());
    }
  EXPECT_GE(messages, expect);
  if (Size() == 2) {
    EXPECT_GT(messages, expect);  // some travel together
  }
  BlockReduction<Block> swap(ctx, partners, [](Block&, BlockProxy& rp, const BlockPartners&) {
    for (int to : rp.OutLink()) rp.Enqueue(to, rp.Gid());
  });
  std::vector<Block> blocks = LocalBlocks(spread);
  tributary::testing::Barrier();
  const long start = isend_calls.load();
  RunAsTasks(ctx, swap, blocks);
  EXPECT_EQ(isend_calls.load() - start, expect);
  EXPECT_EQ(static_cast<long>(swap.RemoteMessages()), expect);
}
#endif

TEST(BlockPatterns, BadInputIsAClearError) {
  EXPECT_THROW(BlockGrid({2, 3}, 1).RequireBlocks(7), tributary::UsageError);
  try {
    BlockGrid({2, 3}, 1).RequireBlocks(7);
  } catch (const tributary::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("7 blocks do not match the grid of 2 x 3 = 6"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(MergePartners(BlockGrid({4}, 1), {1}), tributary::UsageError);
  EXPECT_THROW(MergePartners(BlockGrid({4}, 1), std::vector<int>{}), tributary::UsageError);
  EXPECT_THROW(BlockGrid({2, 0}, 1), tributary::UsageError);
  EXPECT_THROW(BlockGrid({2, 2, 2, 2}, 1), tributary::UsageError);
#if TRIBUTARY_HAVE_MPI
  tributary::Context self(MPI_COMM_SELF);
#else
  tributary::Context self;
#endif
  const BlockGrid grid({4}, 1);
  BlockReduction<Block> bad(
      self, MergePartners(grid, {2}), [](Block& b, BlockProxy& rp, const BlockPartners&) {
        rp.Enqueue((b.gid + 3) % 4,
                   b.gid);  // a partner for block 1 (0), not for block 2 (1)
      });
  std::vector<Block> mine = LocalBlocks(grid, 0);
  std::vector<std::pair<int, Block*>> ptrs;
  for (Block& b : mine) ptrs.push_back({b.gid, &b});
  bad.Start(ptrs);
  try {
    bad.Round(
        1,
        0);  // block 1's partner in step 0 is block 0; it enqueues to block 0 = (1 + 3) % 4: fine
    bad.Round(2, 0);  // block 2 enqueues to block 1, not its partner (2)
    ADD_FAILURE() << "no error for a non-partner";
  } catch (const tributary::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("not a partner"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("block 2, round 0"), std::string::npos) << e.what();
  }
  EXPECT_THROW(bad.Start(ptrs), tributary::UsageError);  // still running
  EXPECT_THROW(BlockReduction<Block>(self, MergePartners(BlockGrid({4}, 2), {2}),
                                     [](Block&, BlockProxy&, const BlockPartners&) {}),
               tributary::UsageError);  // a grid for 2 ranks on a one-rank Context
}

}  // namespace
