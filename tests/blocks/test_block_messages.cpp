// What travels in block messages: types of the user's own through free Save / Load
// functions or a BlockSerialization specialisation, the built-in containers (nested),
// pointer + count without a temporary vector, and a wrong dequeue that is a clear error
// rather than a huge allocation. Each at 1-4 ranks with blocks started in shuffled order.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "block_test_support.hpp"
#include "mpi_test.hpp"
#include "tributary/tributary.hpp"

namespace shapes {

// A type with a string and a vector: it travels through two free functions found by
// argument-dependent lookup.
struct Tally {
  std::string names;              // the gids that went in, "3,0,7,"
  std::vector<std::int64_t> sum;  // element-wise sum
};

void Save(tributary::BlockWriter& out, const Tally& t) {
  out.Save(t.names);
  out.Save(t.sum);
}
void Load(tributary::BlockReader& in, Tally& t) {
  in.Load(t.names);
  in.Load(t.sum);
}

// Trivially copyable, but with Save / Load of its own, which take precedence over its bytes:
// it travels as (value + 1) and comes back as the value.
struct Shifted {
  std::int64_t value;
};
int saved_shifted = 0;
void Save(tributary::BlockWriter& out, const Shifted& s) {
  ++saved_shifted;
  const std::int64_t wire = s.value + 1;
  out.Write(&wire, sizeof wire);
}
void Load(tributary::BlockReader& in, Shifted& s) {
  in.Read(&s.value, sizeof s.value);
  s.value -= 1;
}

// Travels through a specialisation of the trait (a length-prefixed list of labels).
struct Labels {
  std::vector<std::string> list;
};

}  // namespace shapes

template <>
struct tributary::BlockSerialization<shapes::Labels> {
  static void Save(BlockWriter& out, const shapes::Labels& l) {
    const std::uint32_t n = static_cast<std::uint32_t>(l.list.size());
    out.Write(&n, sizeof n);
    for (const std::string& s : l.list) out.Save(s);
  }
  static void Load(BlockReader& in, shapes::Labels& l) {
    std::uint32_t n = 0;
    in.Read(&n, sizeof n);
    l.list.resize(n);
    for (std::string& s : l.list) in.Load(s);
  }
};

namespace {

using tributary::AllReducePartners;
using tributary::BlockGrid;
using tributary::BlockPartners;
using tributary::BlockProxy;
using tributary::BlockReduction;
using tributary::MergePartners;
using tributary::TaskStatus;
using tributary::block_test::Case;
using tributary::block_test::Cases;
using tributary::block_test::ValueOf;
using tributary::testing::Rank;
using tributary::testing::Size;

struct UserBlock {
  int gid = 0;
  shapes::Tally tally;
  shapes::Labels labels;
  std::vector<std::pair<std::string, std::vector<int>>> nested;
  std::array<std::string, 2> ends;
};

// One start of `r` over `mine` in an order drawn from `seed`, run as tasks.
template <class R, class B>
void RunShuffled(tributary::Context& ctx, R& r, std::vector<B>& mine, unsigned seed) {
  std::vector<std::pair<int, B*>> order;
  for (B& b : mine) order.push_back({b.gid, &b});
  std::shuffle(order.begin(), order.end(), std::mt19937(seed));
  r.Start(order);
  tributary::TaskCollection tc;
  r.AddTasks(tc.AddRegion(static_cast<int>(order.size())));
  ASSERT_EQ(ctx.Execute(tc), TaskStatus::complete);
}

std::vector<std::int64_t> Values(int gid) {
  std::vector<std::int64_t> v(static_cast<std::size_t>(5 + gid % 3));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = ValueOf(gid, i);
  return v;
}

// An all-reduce of user types: the tally's names collect every gid once, its sums add up
// (vectors of different lengths), the labels and nested pairs merge, through both Save /
// Load and the trait.
TEST(BlockMessages, UserTypesTravelThroughTheirSaveAndLoad) {
  tributary::Context ctx;
  for (const Case& c : Cases()) {
    if (c.radix.size() > 1 || c.radix[0] > 3) continue;  // radix 2 and 3: enough here
    const BlockGrid grid = BlockGrid::Regular(c.blocks, c.dims, Size(), c.assignment);
    BlockReduction<UserBlock> all(
        ctx, AllReducePartners(grid, c.radix, c.contiguous),
        [](UserBlock& b, BlockProxy& rp, const BlockPartners& p) {
          if (p.InMerge(rp.Round()) && !rp.InLink().empty()) {
            UserBlock acc;
            for (int from : rp.InLink()) {
              UserBlock in;
              rp.Dequeue(from, in.tally);
              rp.Dequeue(from, in.labels);
              rp.Dequeue(from, in.nested);
              rp.Dequeue(from, in.ends);
              EXPECT_EQ(rp.Remaining(from), 0u);
              acc.tally.names += in.tally.names;
              if (acc.tally.sum.size() < in.tally.sum.size())
                acc.tally.sum.resize(in.tally.sum.size());
              for (std::size_t i = 0; i < in.tally.sum.size(); ++i)
                acc.tally.sum[i] += in.tally.sum[i];
              acc.labels.list.insert(acc.labels.list.end(), in.labels.list.begin(),
                                     in.labels.list.end());
              acc.nested.insert(acc.nested.end(), in.nested.begin(), in.nested.end());
              acc.ends = in.ends;
            }
            b.tally = acc.tally;
            b.labels = acc.labels;
            b.nested = acc.nested;
          } else if (!rp.InLink().empty()) {
            rp.Dequeue(rp.InLink()[0], b.tally);
            rp.Dequeue(rp.InLink()[0], b.labels);
            rp.Dequeue(rp.InLink()[0], b.nested);
            rp.Dequeue(rp.InLink()[0], b.ends);
          }
          for (int to : rp.OutLink()) {
            rp.Enqueue(to, b.tally);
            rp.Enqueue(to, b.labels);
            rp.Enqueue(to, b.nested);
            rp.Enqueue(to, b.ends);
          }
        });
    std::vector<UserBlock> mine;
    for (int g : grid.LocalBlocks(Rank())) {
      UserBlock b;
      b.gid = g;
      b.tally = {std::to_string(g) + ",", Values(g)};
      b.labels.list = {"block " + std::to_string(g), std::string(static_cast<std::size_t>(g), 'x')};
      b.nested = {{std::to_string(g), std::vector<int>(static_cast<std::size_t>(g % 4), g)}};
      b.ends = {"first", std::string(static_cast<std::size_t>(g + 1), 'e')};
      mine.push_back(std::move(b));
    }
    RunShuffled(ctx, all, mine, static_cast<unsigned>(c.blocks * 31 + c.dims + Rank()));
    std::vector<std::int64_t> sum;
    for (int g = 0; g < c.blocks; ++g) {
      const auto v = Values(g);
      if (sum.size() < v.size()) sum.resize(v.size());
      for (std::size_t i = 0; i < v.size(); ++i) sum[i] += v[i];
    }
    for (const UserBlock& b : mine) {
      EXPECT_EQ(b.tally.sum, sum) << c.Name() << ", block " << b.gid;
      std::vector<int> seen(static_cast<std::size_t>(c.blocks), 0);
      std::size_t pos = 0;
      for (std::size_t comma; (comma = b.tally.names.find(',', pos)) != std::string::npos;
           pos = comma + 1)
        ++seen[static_cast<std::size_t>(std::stoi(b.tally.names.substr(pos, comma - pos)))];
      EXPECT_EQ(seen, std::vector<int>(static_cast<std::size_t>(c.blocks), 1))
          << c.Name() << ": " << b.tally.names;
      ASSERT_EQ(b.labels.list.size(), 2u * static_cast<std::size_t>(c.blocks)) << c.Name();
      ASSERT_EQ(b.nested.size(), static_cast<std::size_t>(c.blocks)) << c.Name();
      for (const auto& [name, ints] : b.nested) {
        const int g = std::stoi(name);
        EXPECT_EQ(ints, std::vector<int>(static_cast<std::size_t>(g % 4), g)) << c.Name();
      }
      EXPECT_EQ(b.ends[0], "first");
    }
  }
}

struct PlainBlock {
  int gid = 0;
  std::vector<double> data;  // kept at its size: the callback reads into it in place
  shapes::Shifted shifted{0};
};

// Pointer + count: values go out of and into the block's own storage, no temporary vector;
// a trivially copyable type with Save / Load of its own travels through them.
TEST(BlockMessages, PointerAndCountTravelWithoutAVector) {
  tributary::Context ctx;
  constexpr std::size_t n = 300;
  for (int blocks : {1, 5, 8, 13}) {
    const BlockGrid grid = BlockGrid::Regular(blocks, 1, Size());
    BlockReduction<PlainBlock> merge(
        ctx, MergePartners(grid, {4}), [](PlainBlock& b, BlockProxy& rp, const BlockPartners&) {
          if (!rp.InLink().empty()) {
            std::vector<double> sum(n, 0.0);
            std::int64_t shifted = 0;
            for (int from : rp.InLink()) {
              rp.Dequeue(from, b.data.data(), n);  // into the block itself
              for (std::size_t i = 0; i < n; ++i) sum[i] += b.data[i];
              shapes::Shifted s{0};
              rp.Dequeue(from, s);
              shifted += s.value;
              EXPECT_EQ(rp.Remaining(from), 0u);
            }
            b.data = sum;
            b.shifted.value = shifted;
          }
          for (int to : rp.OutLink()) {
            rp.Enqueue(to, b.data.data(), n);
            rp.Enqueue(to, b.shifted);
          }
        });
    std::vector<PlainBlock> mine;
    for (int g : grid.LocalBlocks(Rank())) {
      PlainBlock b;
      b.gid = g;
      b.data.resize(n);
      for (std::size_t i = 0; i < n; ++i) b.data[i] = static_cast<double>(g) + 0.5 * i;
      b.shifted.value = g;
      mine.push_back(b);
    }
    shapes::saved_shifted = 0;
    RunShuffled(ctx, merge, mine, static_cast<unsigned>(blocks + 11 * Rank()));
    for (const PlainBlock& b : mine)
      if (b.gid == 0) {
        for (std::size_t i = 0; i < n; ++i)
          EXPECT_EQ(b.data[i], blocks * (blocks - 1) / 2.0 + 0.5 * i * blocks) << i;
        EXPECT_EQ(b.shifted.value, blocks * (blocks - 1) / 2) << blocks << " blocks";
      }
    // Every local block sent its Shifted in call 0 at least (one block: no call sends), through
    // its Save.
    if (blocks > 1) {
      EXPECT_GE(shapes::saved_shifted, static_cast<int>(mine.size()));
    }
  }
}

// A swap-reduce that adds what arrives straight from the messages (DequeueInPlace) and
// keeps each block's own part in place (nothing sent to itself), with messages small
// enough to travel together and large enough to go alone.
TEST(BlockMessages, DequeueInPlaceReadsTheMessageWhereItLies) {
  tributary::Context ctx;
  for (std::size_t n : {std::size_t(600), std::size_t(12000)})
    for (int radix : {2, 3}) {
      const BlockGrid grid = BlockGrid::Regular(12, 1, Size());
      struct Slice {
        std::size_t lo = 0, hi = 0;
      };
      std::vector<Slice> slices(12);
      BlockReduction<PlainBlock> swap(ctx, tributary::SwapPartners(grid, {radix}),
                                      [&](PlainBlock& b, BlockProxy& rp, const BlockPartners&) {
                                        Slice& s = slices[static_cast<std::size_t>(b.gid)];
                                        const std::size_t len = s.hi - s.lo;
                                        for (int from : rp.InLink()) {
                                          if (from == b.gid) continue;
                                          const double* in = rp.DequeueInPlace<double>(from, len);
                                          for (std::size_t i = 0; i < len; ++i)
                                            b.data[s.lo + i] += in[i];
                                          EXPECT_EQ(rp.Remaining(from), 0u);
                                        }
                                        const auto& out = rp.OutLink();
                                        const std::size_t lo = s.lo;
                                        for (std::size_t j = 0; j < out.size(); ++j) {
                                          const std::size_t a = lo + len * j / out.size(),
                                                            z = lo + len * (j + 1) / out.size();
                                          if (out[j] == b.gid)
                                            s = Slice{a, z};
                                          else
                                            rp.Enqueue(out[j], b.data.data() + a, z - a);
                                        }
                                      });
      std::vector<PlainBlock> mine;
      for (int g : grid.LocalBlocks(Rank())) {
        PlainBlock b;
        b.gid = g;
        b.data.resize(n);
        for (std::size_t i = 0; i < n; ++i) b.data[i] = g * 1000.0 + static_cast<double>(i);
        slices[static_cast<std::size_t>(g)] = Slice{0, n};
        mine.push_back(b);
      }
      RunShuffled(ctx, swap, mine, static_cast<unsigned>(radix + 5 * Rank()));
      std::size_t covered = 0;
      for (const PlainBlock& b : mine) {
        const Slice& s = slices[static_cast<std::size_t>(b.gid)];
        covered += s.hi - s.lo;
        for (std::size_t i = s.lo; i < s.hi; ++i)
          EXPECT_EQ(b.data[i], 66000.0 + 12.0 * static_cast<double>(i)) << n << " " << radix;
      }
      EXPECT_GT(covered, 0u);
    }
}

// Reading in place more than is left, or values that are not aligned for their type in
// the message, is a clear error.
TEST(BlockMessages, DequeueInPlaceRefusesTooMuchAndMisalignedValues) {
#if TRIBUTARY_HAVE_MPI
  tributary::Context self(MPI_COMM_SELF);
#else
  tributary::Context self;
#endif
  const BlockGrid grid({2}, 1);
  std::vector<std::string> errors;
  BlockReduction<PlainBlock> merge(
      self, MergePartners(grid, {2}), [&](PlainBlock&, BlockProxy& rp, const BlockPartners&) {
        for (int to : rp.OutLink()) {
          const char c = 'x';
          const double d[2] = {1.0, 2.0};
          rp.Enqueue(to, c);
          rp.Enqueue(to, d, 2);
        }
        for (int from : rp.InLink()) {
          for (int attempt = 0; attempt < 2; ++attempt) try {
              if (attempt == 0) rp.DequeueInPlace<double>(from, 3);  // 17 bytes are there
              char c = 0;
              rp.Dequeue(from, c);
              rp.DequeueInPlace<double>(from, 2);  // one byte in: not aligned
            } catch (const tributary::UsageError& e) {
              errors.push_back(e.what());
            }
        }
      });
  std::vector<PlainBlock> mine(2);
  mine[1].gid = 1;
  merge.Start({{1, &mine[1]}, {0, &mine[0]}});  // local 0 is block 1, which sends first
  while (merge.Run(0) != TaskStatus::complete || merge.Run(1) != TaskStatus::complete) {
  }
  ASSERT_EQ(errors.size(), 4u);  // two senders, each: too much, then misaligned
  EXPECT_NE(errors[0].find("dequeue of 24 bytes from block 0, which has 17 left"),
            std::string::npos)
      << errors[0];
  EXPECT_NE(errors[1].find("not aligned to 8 bytes"), std::string::npos) << errors[1];
}

// Messages of very different sizes from one call to the blocks of one rank: small ones
// travel together, large ones alone; each arrives whole, in the order it was written. An
// all-to-all sent directly and routed, blocks spread over the ranks.
TEST(BlockMessages, SmallAndLargeMessagesToOneRankArriveWhole) {
  tributary::Context ctx;
  const BlockGrid grid = BlockGrid::Regular(8, 1, Size());
  const auto length = [](int from, int to) -> std::size_t {
    switch ((from + 2 * to) % 4) {
      case 0:
        return 0;
      case 1:
        return 3;
      case 2:
        return 1500;  // 12 KB
      default:
        return 5000;  // 40 KB
    }
  };
  const auto value = [](int from, int to, std::size_t i) {
    return static_cast<double>(from * 1000003 + to * 1009 + static_cast<int>(i));
  };
  for (int radix : {8, 2}) {
    bool ok = true;
    int received = 0;
    tributary::BlockAllToAll<PlainBlock> a2a(ctx, grid,
                                             [&](PlainBlock& b, BlockProxy& rp) {
                                               if (rp.InLink().empty()) {
                                                 for (int to : rp.OutLink()) {
                                                   std::vector<double> v(length(b.gid, to));
                                                   for (std::size_t i = 0; i < v.size(); ++i)
                                                     v[i] = value(b.gid, to, i);
                                                   if (!v.empty())
                                                     rp.Enqueue(to, v.data(), v.size());
                                                 }
                                                 return;
                                               }
                                               for (int from : rp.InLink()) {
                                                 const std::size_t n = length(from, b.gid);
                                                 ok =
                                                     ok && rp.Remaining(from) == n * sizeof(double);
                                                 std::vector<double> v(n);
                                                 if (n) rp.Dequeue(from, v.data(), n);
                                                 for (std::size_t i = 0; i < n; ++i)
                                                   ok = ok && v[i] == value(from, b.gid, i);
                                                 ++received;
                                               }
                                             },
                                             {radix});
    std::vector<PlainBlock> mine;
    for (int g : grid.LocalBlocks(Rank())) mine.push_back(PlainBlock{g, {}, {0}});
    RunShuffled(ctx, a2a, mine, 7u + static_cast<unsigned>(Rank()));
    EXPECT_TRUE(ok) << "radix " << radix;
    EXPECT_EQ(received, 8 * static_cast<int>(mine.size())) << "radix " << radix;
  }
}

// Dequeueing a vector from a message that holds something else reports the shortfall,
// naming the block, round, generation and rank, instead of allocating the count it read.
TEST(BlockMessages, AWrongDequeueIsAClearError) {
#if TRIBUTARY_HAVE_MPI
  tributary::Context self(MPI_COMM_SELF);
#else
  tributary::Context self;
#endif
  const BlockGrid grid({2}, 1);
  std::string what;
  BlockReduction<PlainBlock> merge(
      self, MergePartners(grid, {2}), [&](PlainBlock& b, BlockProxy& rp, const BlockPartners&) {
        for (int to : rp.OutLink()) {
          const std::uint64_t huge = std::uint64_t(1) << 60;  // read back as a count
          rp.Enqueue(to, huge);
        }
        for (int from : rp.InLink()) {
          try {
            rp.Dequeue(from, b.data);
          } catch (const tributary::UsageError& e) {
            what = e.what();
          }
        }
      });
  std::vector<PlainBlock> mine(2);
  mine[1].gid = 1;
  merge.Start({{1, &mine[1]}, {0, &mine[0]}});
  while (merge.Run(0) != TaskStatus::complete || merge.Run(1) != TaskStatus::complete) {
  }
  EXPECT_NE(what.find("block 0, round 1, rank 0"), std::string::npos) << what;
  EXPECT_NE(what.find("from block 1, which has 0 left"), std::string::npos) << what;
  EXPECT_TRUE(mine[0].data.empty());
}

}  // namespace
