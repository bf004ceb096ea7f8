// Reductions inside task lists: the regional combine (Expect / Contribute / CheckReduce from
// every list), the hand-wired pattern of task-based codes (local accumulate +
// AddRegionalDependencies, start on one list, check on all), ranks without lists, the
// threaded executor, the cost of polling, and a slow rank.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "mpi_test.hpp"
#include "tributary/tributary.hpp"

#if TRIBUTARY_HAVE_MPI
namespace {
std::atomic<long> g_mpi_tests{0};
}
extern "C" int MPI_Test(MPI_Request* request, int* flag, MPI_Status* status) {
  ++g_mpi_tests;
  return PMPI_Test(request, flag, status);
}
long MpiTests() { return g_mpi_tests.load(); }
#else
long MpiTests() { return 0; }
#endif

namespace {

using tributary::TaskID;
using tributary::TaskStatus;
using tributary::testing::Rank;
using tributary::testing::Size;

// One step of a block-structured code: every list computes a partial, contributes it, and
// polls the reduction; a task after the check reads the global result.
TEST(Regional, ContributeAndCheckFromEveryList) {
  tributary::Context ctx;
  tributary::AllReduce<double> total(ctx, "total");
  tributary::AllReduce<double> dt(ctx, "dt");
  for (int lists : {1, 3, 8}) {
    const int mine = Rank() % 2 ? lists : lists + 1;  // uneven lists per rank
    std::vector<double> seen(static_cast<std::size_t>(mine), -1.0);
    tributary::TaskCollection tc;
    tributary::TaskRegion& region = tc.AddRegion(mine);
    total.Expect(mine, tributary::Sum{});
    dt.Expect(mine, tributary::Min{});
    for (int i = 0; i < mine; ++i) {
      auto& tl = region[i];
      const double partial = Rank() * 100.0 + i;
      auto c1 = tl.AddTask(TaskID(), [&, i, partial] { return total.Contribute(i, partial); });
      auto c2 = tl.AddTask(TaskID(), [&, i, partial] { return dt.Contribute(i, 1.0 + partial); });
      auto k1 = tl.AddTask(c1, [&] { return total.CheckReduce(); });
      auto k2 = tl.AddTask(c2, [&] { return dt.CheckReduce(); });
      tl.AddTask(k1 & k2, [&, i] {
        seen[static_cast<std::size_t>(i)] = total.val + dt.val;
        return TaskStatus::complete;
      });
    }
    EXPECT_EQ(ctx.Execute(tc), TaskStatus::complete);
    double expect_total = 0;
    for (int q = 0; q < Size(); ++q) {
      const int n = q % 2 ? lists : lists + 1;
      for (int i = 0; i < n; ++i) expect_total += q * 100.0 + i;
    }
    bool ok = true;
    for (double s : seen) ok = ok && s == expect_total + 1.0;
    TRIBUTARY_EXPECT_ALL(ok);
  }
}

TEST(Regional, RanksWithNoListsNeitherHangNorNeedATask) {
  tributary::Context ctx;
  tributary::AllReduce<long> cells(ctx, "cells");
  for (int gen = 0; gen < 5; ++gen) {
    const int mine = (Rank() + gen) % 3 == 0 ? 0 : 2;  // some ranks own no blocks this step
    tributary::TaskCollection tc;
    tributary::TaskRegion& region = tc.AddRegion(mine);
    cells.Expect(mine, tributary::Sum{});
    for (int i = 0; i < mine; ++i) {
      auto c = region[i].AddTask(TaskID(), [&, i] { return cells.Contribute(i, 10L); });
      region[i].AddTask(c, [&] { return cells.CheckReduce(); });
    }
    EXPECT_EQ(ctx.Execute(tc), TaskStatus::complete);
    // A rank without lists still sees the result once it polls.
    while (cells.CheckReduce() != TaskStatus::complete) ctx.Progress();
    long expect = 0;
    for (int q = 0; q < Size(); ++q) expect += (q + gen) % 3 == 0 ? 0 : 20;
    TRIBUTARY_EXPECT_ALL(cells.val == expect);
  }
}

// The pattern task-based codes already use: each list adds to a rank-local value, a
// regional dependency makes the local value complete, one list starts the reduction, all
// lists check it.
TEST(Regional, HandWiredPatternWithRegionalDependencies) {
  tributary::Context ctx;
  tributary::AllReduce<double> sum(ctx, "hand-wired");
  const int lists = 4;
  std::vector<double> seen(lists, 0.0);
  tributary::TaskCollection tc;
  tributary::TaskRegion& region = tc.AddRegion(lists);
  sum.val = 0.0;
  for (int i = 0; i < lists; ++i) {
    auto& tl = region[i];
    auto acc = tl.AddTask(TaskID(), [&, i] {
      sum.val += 1.0 + i;  // the serial executor runs one task at a time
      return TaskStatus::complete;
    });
    region.AddRegionalDependencies("accumulate", i, acc);
    // List 0 starts the reduction; the others wait for that start through a regional
    // dependency, so that no list checks a generation that has not started yet.
    TaskID start = i == 0 ? tl.AddTask(acc, [&] { return sum.StartReduce(tributary::Sum{}); })
                          : tl.AddTask(acc, [] { return TaskStatus::complete; });
    region.AddRegionalDependencies("start", i, start);
    auto check = tl.AddTask(start, [&] { return sum.CheckReduce(); });
    tl.AddTask(check, [&, i] {
      seen[static_cast<std::size_t>(i)] = sum.val;
      return TaskStatus::complete;
    });
  }
  EXPECT_EQ(ctx.Execute(tc), TaskStatus::complete);
  bool ok = true;
  for (double s : seen) ok = ok && s == 10.0 * Size();
  TRIBUTARY_EXPECT_ALL(ok);
}

TEST(Regional, ThreadedExecutorContributesConcurrently) {
  tributary::Context ctx;
  tributary::AllReduce<std::vector<long>> hist(ctx, "histogram");
  const int lists = 16;
  for (int gen = 0; gen < 10; ++gen) {
    hist.val.assign(8, 0);
    hist.Expect(lists, tributary::Sum{});
    std::vector<long> seen(lists, -1);
    tributary::TaskCollection tc;
    tributary::TaskRegion& region = tc.AddRegion(lists);
    for (int i = 0; i < lists; ++i) {
      auto c = region[i].AddTask(TaskID(), [&, i] {
        std::vector<long> h(8, 0);
        h[static_cast<std::size_t>(i % 8)] = 1 + gen;
        return hist.Contribute(i, h);
      });
      auto k = region[i].AddTask(c, [&] { return hist.CheckReduce(); });
      region[i].AddTask(k, [&, i] {
        long s = 0;
        for (long v : hist.val) s += v;
        seen[static_cast<std::size_t>(i)] = s;
        return TaskStatus::complete;
      });
    }
    tributary::ThreadedExecutor exec(2);
    EXPECT_EQ(ctx.Execute(tc, exec), TaskStatus::complete);
    bool ok = true;
    for (long s : seen) ok = ok && s == static_cast<long>(lists) * (1 + gen) * Size();
    TRIBUTARY_EXPECT_ALL(ok);
  }
}

TEST(Regional, PollingTestsMpiAtMostOncePerSweepNotOncePerList) {
  tributary::Context ctx;
  tributary::AllReduce<double> r(ctx);
  const int lists = 8;
  std::atomic<long> polls_list0{0};
  tributary::TaskCollection tc;
  tributary::TaskRegion& region = tc.AddRegion(lists);
  r.Expect(lists, tributary::Sum{});
  for (int i = 0; i < lists; ++i) {
    auto c = region[i].AddTask(TaskID(), [&, i] {
      // The last rank contributes late, so that the others poll for a while.
      if (Rank() == Size() - 1 && i == 0 && polls_list0.load() == 0) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
      return r.Contribute(i, 1.0);
    });
    region[i].AddTask(c, [&, i] {
      if (i == 0) ++polls_list0;
      return r.CheckReduce();
    });
  }
  const long before = MpiTests();
  EXPECT_EQ(ctx.Execute(tc), TaskStatus::complete);
  const long tests = MpiTests() - before;
  TRIBUTARY_EXPECT_ALL(r.val == lists * Size());
  // Per sweep: at most one test from the lists and one from the progress hook.
  TRIBUTARY_EXPECT_ALL(tests <= 2 * polls_list0.load() + 2);
  if (Size() > 1) TRIBUTARY_EXPECT_ALL(polls_list0.load() >= 1);
}

// Four ranks on two cores: the lists of the fast ranks poll a reduction that waits on a
// slow rank. The executors' back-off must leave the slow rank its core.
TEST(Regional, SlowRankIsNotStarvedByPollingRanks) {
  tributary::Context ctx;
  tributary::AllReduce<double> r(ctx, "slow");
  const int lists = 4;
  tributary::TaskCollection tc;
  tributary::TaskRegion& region = tc.AddRegion(lists);
  r.Expect(lists, tributary::Sum{});
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < lists; ++i) {
    auto work = region[i].AddTask(TaskID(), [&, i] {
      if (Rank() == 0 && i == 0) {
        // CPU-bound work on the slow rank (not a sleep: it needs the core).
        volatile double x = 0;
        for (long k = 0; k < 60000000; ++k) x = x + 1e-9 * static_cast<double>(k % 7);
      }
      return r.Contribute(i, 1.0);
    });
    region[i].AddTask(work, [&] { return r.CheckReduce(); });
  }
  EXPECT_EQ(ctx.Execute(tc), TaskStatus::complete);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  TRIBUTARY_EXPECT_ALL(r.val == lists * Size());
  // Generous: the work takes well under a second alone; spinning pollers would stretch it
  // several times over on an oversubscribed machine.
  TRIBUTARY_EXPECT_ALL(seconds < 20.0);
}

}  // namespace
