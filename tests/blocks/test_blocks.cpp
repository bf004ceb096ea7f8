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
#include <string>
#include <vector>

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

using tributary::BlockAllToAll;
using tributary::BlockAssignment;
using tributary::BlockGrid;
using tributary::BlockPartners;
using tributary::BlockPattern;
using tributary::BlockProxy;
using tributary::BlockReduction;
using tributary::TaskStatus;
using tributary::testing::Rank;
using tributary::testing::Size;

struct Block {
  int gid = 0;
  std::vector<std::int64_t> data;
  std::size_t lo = 0, hi = 0;  // swap: the slice this block holds
};

constexpr std::size_t kLength = 37;

std::int64_t ValueOf(int gid, std::size_t i) {
  return (gid + 1) * 1000 + static_cast<std::int64_t>(i) * (gid % 5 + 1);
}

std::vector<std::int64_t> Total(int blocks) {
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
  std::string Name() const {
    std::string r;
    for (int k : radix) r += std::to_string(k) + ",";
    return std::to_string(blocks) + " blocks, " + std::to_string(dims) + "-D, radix " + r +
           (contiguous ? " doubling" : " halving") +
           (assignment == BlockAssignment::contiguous ? ", contiguous" : ", round-robin");
  }
};

std::vector<Case> Cases() {
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
        cases.push_back({blocks, dims, radices[r], contiguous, assignment});
      }
  return cases;
}

// Runs every call of every local block through a task region (one list per block), on the
// serial executor or on 2 worker threads (callbacks of different blocks then run at once).
template <class R>
void RunAsTasks(tributary::Context& ctx, R& r, std::vector<Block>& mine, bool threaded = false) {
  std::vector<Block*> ptrs;
  for (Block& b : mine) ptrs.push_back(&b);
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
std::vector<Block> LocalBlocks(const BlockGrid& grid, int rank = Rank()) {
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

void Sum(BlockProxy& rp, Block& b) {
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

TEST(BlockPatterns, MergeGivesTheRootTheSum) {
  tributary::Context ctx;
  for (const Case& c : Cases()) {
    BlockGrid grid = BlockGrid::Regular(c.blocks, c.dims, Size(), c.assignment);
    BlockReduction<Block> merge(ctx,
                                BlockPartners(BlockPattern::merge, grid, c.radix, c.contiguous),
                                [](Block& b, BlockProxy& rp, const BlockPartners&) {
                                  Sum(rp, b);
                                  for (int to : rp.OutLink()) rp.Enqueue(to, b.data);
                                });
    std::vector<Block> mine = LocalBlocks(grid);
    RunAsTasks(ctx, merge, mine);
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
    BlockReduction<Block> bcast(ctx,
                                BlockPartners(BlockPattern::broadcast, grid, c.radix, c.contiguous),
                                [](Block& b, BlockProxy& rp, const BlockPartners&) {
                                  if (!rp.InLink().empty()) {
                                    ASSERT_EQ(rp.InLink().size(), 1u);
                                    rp.Dequeue(rp.InLink()[0], b.data);
                                  }
                                  for (int to : rp.OutLink()) rp.Enqueue(to, b.data);
                                });
    std::vector<Block> mine = LocalBlocks(grid);
    RunAsTasks(ctx, bcast, mine);
    std::vector<std::int64_t> root(kLength);
    for (std::size_t i = 0; i < kLength; ++i) root[i] = ValueOf(0, i);
    for (const Block& b : mine) EXPECT_EQ(b.data, root) << c.Name() << ", block " << b.gid;
  }
}

TEST(BlockPatterns, AllReduceGivesEveryBlockTheTotal) {
  tributary::Context ctx;
  for (const Case& c : Cases()) {
    BlockGrid grid = BlockGrid::Regular(c.blocks, c.dims, Size(), c.assignment);
    BlockReduction<Block> all(ctx,
                              BlockPartners(BlockPattern::all_reduce, grid, c.radix, c.contiguous),
                              [](Block& b, BlockProxy& rp, const BlockPartners& partners) {
                                if (partners.InMerge(rp.Round())) {
                                  Sum(rp, b);
                                } else {
                                  ASSERT_EQ(rp.InLink().size(), 1u);
                                  rp.Dequeue(rp.InLink()[0], b.data);
                                }
                                for (int to : rp.OutLink()) rp.Enqueue(to, b.data);
                              });
    std::vector<Block> mine = LocalBlocks(grid);
    RunAsTasks(ctx, all, mine, c.blocks % 2 == 1);  // odd block counts on worker threads
    for (const Block& b : mine)
      EXPECT_EQ(b.data, Total(c.blocks)) << c.Name() << ", block " << b.gid;
    // A second generation of the same object.
    mine = LocalBlocks(grid);
    RunAsTasks(ctx, all, mine);
    for (const Block& b : mine)
      EXPECT_EQ(b.data, Total(c.blocks)) << c.Name() << ", generation 2, block " << b.gid;
  }
}

TEST(BlockPatterns, SwapLeavesEachBlockItsSliceOfTheTotal) {
  tributary::Context ctx;
  for (const Case& c : Cases()) {
    BlockGrid grid = BlockGrid::Regular(c.blocks, c.dims, Size(), c.assignment);
    BlockReduction<Block> swap(
        ctx, BlockPartners(BlockPattern::swap, grid, c.radix, c.contiguous),
        [](Block& b, BlockProxy& rp, const BlockPartners&) {
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
    RunAsTasks(ctx, swap, mine);
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
          if (rp.InLink()
                  .empty()) {  // the first call: a message to every block d with (g + d) % 3 != 0
            EXPECT_EQ(static_cast<int>(rp.OutLink().size()), c.blocks);
            for (int d : rp.OutLink())
              if ((b.gid + d) % 3 != 0)
                rp.Enqueue(d, std::vector<std::int64_t>(static_cast<std::size_t>(d % 4 + 1),
                                                        b.gid * 100 + d));
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
            EXPECT_EQ(rp.Remaining(s), 0u) << c.Name();
            ++checked;
          }
        },
        c.radix, c.contiguous);
    RunAsTasks(ctx, a2a, mine);
    int want = 0;
    for (const Block& b : mine)
      for (int s = 0; s < c.blocks; ++s) want += (s + b.gid) % 3 != 0;
    EXPECT_EQ(checked, want) << c.Name();
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
  BlockReduction<Block> a(ctx, BlockPartners(BlockPattern::all_reduce, grid, {2}), callback);
  BlockReduction<Block> b(ctx, BlockPartners(BlockPattern::all_reduce, grid, {3}, false), callback);
  std::vector<Block> mine_a = LocalBlocks(grid), mine_b = LocalBlocks(grid);
  std::vector<Block*> pa, pb;
  for (Block& x : mine_a) pa.push_back(&x);
  for (Block& x : mine_b) pb.push_back(&x);
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
  auto ks = [](const BlockPartners& p) {
    std::vector<int> k;
    for (const auto& s : p.Steps()) k.push_back(s.k);
    return k;
  };
  EXPECT_EQ(ks(BlockPartners(BlockPattern::merge, g7, {2})), std::vector<int>({7}));
  EXPECT_EQ(ks(BlockPartners(BlockPattern::merge, g11, {4})), std::vector<int>({11}));
  EXPECT_EQ(ks(BlockPartners(BlockPattern::merge, g13, {8})), std::vector<int>({13}));
  EXPECT_EQ(ks(BlockPartners(BlockPattern::merge, g12, {8})), std::vector<int>({6, 2}));
  EXPECT_EQ(ks(BlockPartners(BlockPattern::merge, g12, {3, 2})), std::vector<int>({3, 2, 2}));
  EXPECT_EQ(ks(BlockPartners(BlockPattern::merge, g14, {4})), std::vector<int>({2, 7}));
  // Doubling groups neighbours first; halving the farthest first.
  const BlockPartners doubling(BlockPattern::swap, g12, {2}, true),
      halving(BlockPattern::swap, g12, {2}, false);
  EXPECT_EQ(doubling.Group(0, 5), std::vector<int>({4, 5}));
  EXPECT_EQ(halving.Group(0, 5), std::vector<int>({5, 11}));  // steps 2, 2, 3: stride 6 first
  // 3-D: the dimensions take turns.
  const BlockGrid cube({2, 2, 2}, 1);
  const BlockPartners p(BlockPattern::merge, cube, {2});
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
// All blocks on this rank (a one-rank Context): no MPI_Isend at all. Several ranks: exactly
// the messages whose partner lives on another rank.
TEST(BlockPatterns, MessagesOnOneRankNeverCallMpi) {
  tributary::Context self(MPI_COMM_SELF);
  const BlockGrid grid = BlockGrid::Regular(12, 2, 1);
  BlockReduction<Block> all(self, BlockPartners(BlockPattern::all_reduce, grid, {2}),
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
  BlockPartners partners(BlockPattern::swap, spread, {3});
  long expect = 0;
  for (int g : spread.LocalBlocks(Rank()))
    for (int c = 0; c < partners.Calls(); ++c)
      for (int to : partners.OutLink(c, g)) expect += spread.Owner(to) != Rank();
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
  EXPECT_THROW(BlockPartners(BlockPattern::merge, BlockGrid({4}, 1), {1}), tributary::UsageError);
  EXPECT_THROW(BlockPartners(BlockPattern::merge, BlockGrid({4}, 1), {}), tributary::UsageError);
  EXPECT_THROW(BlockGrid({2, 0}, 1), tributary::UsageError);
  EXPECT_THROW(BlockGrid({2, 2, 2, 2}, 1), tributary::UsageError);
#if TRIBUTARY_HAVE_MPI
  tributary::Context self(MPI_COMM_SELF);
#else
  tributary::Context self;
#endif
  const BlockGrid grid({4}, 1);
  BlockReduction<Block> bad(self, BlockPartners(BlockPattern::merge, grid, {2}),
                            [](Block& b, BlockProxy& rp, const BlockPartners&) {
                              rp.Enqueue((b.gid + 3) % 4,
                                         b.gid);  // a partner for block 1 (0), not for block 2 (1)
                            });
  std::vector<Block> mine = LocalBlocks(grid, 0);
  std::vector<Block*> ptrs;
  for (Block& b : mine) ptrs.push_back(&b);
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
  EXPECT_THROW(
      BlockReduction<Block>(self, BlockPartners(BlockPattern::merge, BlockGrid({4}, 2), {2}),
                            [](Block&, BlockProxy&, const BlockPartners&) {}),
      tributary::UsageError);  // a grid for 2 ranks on a one-rank Context
}

}  // namespace
