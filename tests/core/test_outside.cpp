// What an outside program relies on without knowing Tributary's internals:
//  - MPI's progress rule: each rank waits on one object at a time, alone, in its own
//    shuffled order, and nothing hangs (every own schedule, the selection tree, block
//    patterns and keyed collectives mixed with reductions);
//  - no "complete" for a cycle that has not started: the hand-wired pattern and the
//    Expect/Contribute pattern over many cycles whose values change, lists run in reversed
//    and shuffled orders, serial and threaded executors;
//  - a refused contribution changes nothing;
//  - Context::Wait.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "mpi_test.hpp"
#include "tributary/tributary.hpp"

namespace {

using tributary::TaskStatus;
using tributary::UsageError;
using tributary::testing::Rank;
using tributary::testing::Size;

// A different random order of 0..n-1 on every rank and round.
std::vector<int> Shuffled(int n, unsigned round) {
  std::vector<int> order(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  std::mt19937 rng(17u + 7919u * static_cast<unsigned>(Rank()) + 104729u * round);
  std::shuffle(order.begin(), order.end(), rng);
  return order;
}

// Polls one object alone until it completes: an MPI programmer's wait loop (no
// Context::Progress, no other object touched).
template <class Poll>
void WaitAlone(Poll&& poll) {
  while (poll() != TaskStatus::complete) {
  }
}

// A selection tree that gives each message size of the test its own schedule, so that
// eight objects in one Context run eight different schedules.
std::string EverySchedulePerSize() {
  return R"({"tributary_selection": 1, "tree": [
    {"collective": "allreduce", "then": [
      {"commutative": true, "then": [
        {"msg_size": "<= 8", "then": {"schedule": "binomial"}},
        {"msg_size": "<= 16", "then": {"schedule": "knomial", "radix": 3}},
        {"msg_size": "<= 24", "then": {"schedule": "recursive_doubling"}},
        {"msg_size": "<= 40", "then": {"schedule": "rabenseifner"}},
        {"msg_size": "<= 64", "then": {"schedule": "ring", "segment_bytes": 16}},
        {"msg_size": "<= 128", "then": {"schedule": "reduce_bcast"}},
        {"msg_size": "any", "then": {"schedule": "mpi_library"}}]},
      {"commutative": "any", "then": {"schedule": "binomial"}}]},
    {"collective": "reduce", "then": [
      {"commutative": true, "then": [
        {"msg_size": "<= 64", "then": {"schedule": "pipelined_tree", "segment_bytes": 16}},
        {"msg_size": "any", "then": {"schedule": "knomial", "radix": 4}}]},
      {"commutative": "any", "then": {"schedule": "binomial"}}]},
    {"collective": "any", "then": {"schedule": "recursive_doubling"}}]})";
}

std::string WriteTree() {
  // One file per run (every rank reads rank 0's bytes).
  const std::string path = "tributary_outside_tree_" + std::to_string(Size()) + ".json";
  if (Rank() == 0) std::ofstream(path) << EverySchedulePerSize();
  return path;
}

// Eight objects of different types and sizes, started in one order and each waited alone
// in a different shuffled order on every rank, over several generations.
void EightObjectsWaitedAloneInAnyOrder(tributary::Context& ctx) {
  tributary::AllReduce<double> o0(ctx, "8 B");
  tributary::AllReduce<std::array<double, 2>> o1(ctx, "16 B");
  tributary::AllReduce<std::array<int, 6>> o2(ctx, "24 B");
  tributary::AllReduce<std::vector<double>> o3(ctx, "40 B");
  tributary::AllReduce<std::vector<float>> o4(ctx, "64 B");
  tributary::AllReduce<std::array<long, 16>> o5(ctx, "128 B");
  tributary::Reduce<std::vector<int>> o6(ctx, "reduce");
  tributary::AllReduce<std::vector<double>> o7(ctx, "8 KiB");
  const int p = Size(), me = Rank();
  for (unsigned round = 0; round < 12; ++round) {
    const int g = static_cast<int>(round) + 1;
    const int root = static_cast<int>(round) % p;
    o0.val = me + g;
    o1.val = {1.0 * g, 2.0 * me};
    o2.val.fill(me * g);
    o3.val.assign(5, 0.5 * g);
    o4.val.assign(16, 1.0f);
    o5.val.fill(me + 1);
    o6.val.assign(round % 2 ? 4 : 40, g);
    o7.val.assign(1024, me);
    o0.StartReduce(tributary::Sum{});
    o1.StartReduce(tributary::Max{});
    o2.StartReduce(tributary::Sum{});
    o3.StartReduce(tributary::Sum{});
    o4.StartReduce(tributary::Sum{});
    o5.StartReduce(tributary::Prod{});
    o6.StartReduce(root, tributary::Sum{});
    o7.StartReduce(tributary::Max{});
    for (int k : Shuffled(8, round)) {
      switch (k) {
        case 0:
          WaitAlone([&] { return o0.CheckReduce(); });
          break;
        case 1:
          WaitAlone([&] { return o1.CheckReduce(); });
          break;
        case 2:
          WaitAlone([&] { return o2.CheckReduce(); });
          break;
        case 3:
          WaitAlone([&] { return o3.CheckReduce(); });
          break;
        case 4:
          WaitAlone([&] { return o4.CheckReduce(); });
          break;
        case 5:
          WaitAlone([&] { return o5.CheckReduce(); });
          break;
        case 6:
          WaitAlone([&] { return o6.CheckReduce(); });
          break;
        default:
          WaitAlone([&] { return o7.CheckReduce(); });
          break;
      }
    }
    long prod = 1;
    for (int r = 0; r < p; ++r) prod *= r + 1;
    bool ok = o0.val == p * (p - 1) / 2.0 + p * g && o1.val[0] == g && o1.val[1] == 2.0 * (p - 1) &&
              o2.val[5] == g * p * (p - 1) / 2 && o3.val.size() == 5 && o3.val[4] == 0.5 * g * p &&
              o4.val[15] == static_cast<float>(p) && o5.val[0] == prod && o7.val[1023] == p - 1;
    if (me == root) ok = ok && o6.val.front() == g * p && o6.val.back() == g * p;
    TRIBUTARY_EXPECT_ALL(ok);
  }
}

TEST(Progress, EveryOwnScheduleWaitedAloneInAnyOrder) {
  tributary::ContextOptions o;
  o.selection_file = WriteTree();
  tributary::Context ctx(o);
  EightObjectsWaitedAloneInAnyOrder(ctx);
  if (Rank() == 0) std::remove(o.selection_file.c_str());
}

TEST(Progress, BuiltInTreeWaitedAloneInAnyOrder) {
  tributary::Context ctx;
  EightObjectsWaitedAloneInAnyOrder(ctx);
}

struct Block {
  std::vector<std::int64_t> data;
};

// Block patterns and keyed collectives mixed with reductions: every rank waits on each
// alone, in its own order.
TEST(Progress, BlockPatternsAndKeyedCollectivesWaitedAloneAmongReductions) {
  using tributary::BlockGrid;
  using tributary::BlockPartners;
  using tributary::BlockProxy;
  tributary::Context ctx;
  const BlockGrid grid =
      BlockGrid::Regular(2 * Size() + 1, 1, Size(), tributary::BlockAssignment::round_robin);
  const auto callback = [](Block& b, BlockProxy& rp, const BlockPartners& partners) {
    if (partners.InMerge(rp.Round())) {
      if (!rp.InLink().empty()) {  // the in-link holds the block itself too
        std::vector<std::int64_t> acc(b.data.size(), 0);
        for (int from : rp.InLink()) {
          std::vector<std::int64_t> in;
          rp.Dequeue(from, in);
          for (std::size_t i = 0; i < in.size() && i < acc.size(); ++i) acc[i] += in[i];
        }
        b.data = acc;
      }
    } else if (!rp.InLink().empty()) {
      rp.Dequeue(rp.InLink()[0], b.data);
    }
    for (int to : rp.OutLink()) rp.Enqueue(to, b.data);
  };
  tributary::BlockReduction<Block> blocks(ctx, tributary::AllReducePartners(grid, {2}), callback);
  tributary::KeyedReduction<std::int64_t> keyed(ctx, "keyed");
  tributary::AllReduce<std::vector<double>> a(ctx, "a");
  tributary::AllReduce<long> b(ctx, "b");
  const int p = Size(), me = Rank();
  const int nblocks = 2 * p + 1;
  for (unsigned round = 0; round < 8; ++round) {
    std::vector<Block> mine;
    for (int gid : grid.LocalBlocks(me))
      mine.push_back(Block{std::vector<std::int64_t>(9, gid + 1)});
    std::vector<std::pair<int, Block*>> ptrs;
    for (std::size_t i = 0; i < mine.size(); ++i)
      ptrs.push_back({grid.LocalBlocks(me)[i], &mine[i]});
    blocks.Start(ptrs);
    tributary::KeyOptions ko;
    ko.count = p;
    ko.reducers = {static_cast<int>(round) % p};
    keyed.Declare(round, tributary::Sum{}, ko);
    keyed.Contribute(round, me, me + 1);
    a.val.assign(300, 1.0 * me);
    a.StartReduce(tributary::Max{});
    b.val = me;
    b.StartReduce(tributary::Sum{});
    for (int k : Shuffled(4, round)) {
      if (k == 0) {  // the pattern's rounds of every local block (they feed each other)
        WaitAlone([&] {
          bool all = true;
          for (int i = 0; i < static_cast<int>(mine.size()); ++i)
            all = blocks.Run(i) == TaskStatus::complete && all;
          return all ? TaskStatus::complete : TaskStatus::incomplete;
        });
      } else if (k == 1) {
        WaitAlone([&] { return keyed.Check(round); });
      } else if (k == 2) {
        WaitAlone([&] { return a.CheckReduce(); });
      } else {
        WaitAlone([&] { return b.CheckReduce(); });
      }
    }
    bool ok =
        a.val[299] == p - 1 && b.val == p * (p - 1) / 2 && keyed.Result(round) == p * (p + 1) / 2;
    for (const Block& x : mine) ok = ok && x.data[8] == nblocks * (nblocks + 1) / 2;
    if (!ok)
      std::fprintf(stderr, "rank %d round %u: a %g b %ld keyed %ld block %ld\n", me, round,
                   a.val[299], b.val, static_cast<long>(keyed.Result(round)),
                   mine.empty() ? -1L : static_cast<long>(mine[0].data[8]));
    TRIBUTARY_EXPECT_ALL(ok);
  }
}

TEST(Progress, ContextWaitTakesSeveralObjects) {
  tributary::Context ctx;
  tributary::AllReduce<int> a(ctx, "a");
  tributary::Batch batch(ctx, "batch");
  auto& lo = batch.Add<double>(tributary::Min{}, "lo");
  a.val = Rank() + 1;
  a.StartReduce(tributary::Sum{});
  lo.val = 10.0 - Rank();
  batch.StartReduce();
  ctx.Wait(a, batch);
  TRIBUTARY_EXPECT_ALL(a.val == Size() * (Size() + 1) / 2 && lo.val == 10.0 - (Size() - 1));
  // A rank with nothing of its own still takes part: WaitAll drains what is in flight.
  a.val = 1;
  a.StartReduce(tributary::Sum{});
  ctx.WaitAll();
  TRIBUTARY_EXPECT_ALL(a.InFlight() == false && a.CheckReduce() == TaskStatus::complete &&
                       a.val == Size());
}

// The value list `list` contributes in cycle `cycle`: different every cycle.
double CycleValue(int cycle, int list) { return 1000.0 * cycle + Rank() * 10 + list; }

// The global total of a cycle's CycleValue over every rank and list.
double CycleTotal(int cycle, int lists) {
  double want = 0;
  for (int r = 0; r < Size(); ++r)
    for (int l = 0; l < lists; ++l) want += 1000.0 * cycle + r * 10 + l;
  return want;
}

// Adds list `l`'s check task after `dep`: it records the value the list sees complete.
void AddCheck(tributary::TaskList& tl, tributary::TaskID dep, tributary::AllReduce<double>& total,
              std::vector<double>& seen, int l) {
  tl.AddTask(dep, [&total, &seen, l] {
    const TaskStatus s = total.CheckReduce();
    if (s == TaskStatus::complete) seen[static_cast<std::size_t>(l)] = total.val;
    return s;
  });
}

// The seed's hand-wired pattern: list 0 starts after a regional dependency, every other
// list's check depends only on its own list. The lists are gated so that they run in the
// order `order` (a list waits for its predecessor's first task), so that in most cycles
// some list checks before list 0 has started the cycle's generation.
void HandWiredCycles(tributary::Executor& executor, int lists, bool threaded) {
  tributary::Context ctx;
  tributary::AllReduce<double> total(ctx, "total");
  std::vector<double> seen(static_cast<std::size_t>(lists));
  bool ok = true;
  for (int cycle = 1; cycle <= 120; ++cycle) {
    std::vector<int> order(static_cast<std::size_t>(lists));
    std::iota(order.begin(), order.end(), 0);
    if (cycle % 3 == 0) std::reverse(order.begin(), order.end());
    if (cycle % 3 == 1) order = Shuffled(lists, static_cast<unsigned>(cycle));
    std::vector<std::atomic<int>> turn(1);
    turn[0] = 0;
    std::vector<double> partial(static_cast<std::size_t>(lists));
    tributary::TaskCollection tc;
    auto& region = tc.AddRegion(lists);
    for (int pos = 0; pos < lists; ++pos) {
      const int l = order[static_cast<std::size_t>(pos)];
      auto& tl = region[l];
      // Serial executor: a gate that is not yet open keeps the list at this task.
      auto gate = tl.AddTask(tributary::TaskID(), [&turn, pos, threaded] {
        if (threaded) return TaskStatus::complete;
        if (turn[0].load() != pos) return TaskStatus::incomplete;
        turn[0].fetch_add(1);
        return TaskStatus::complete;
      });
      auto compute = tl.AddTask(gate, [&partial, l, cycle] {
        partial[static_cast<std::size_t>(l)] = CycleValue(cycle, l);
        return TaskStatus::complete;
      });
      tributary::TaskID check_dep = compute;
      if (l == 0) {
        auto sum = tl.AddTask(compute, [&] {
          total.val = std::accumulate(partial.begin(), partial.end(), 0.0);
          return TaskStatus::complete;
        });
        region.AddRegionalDependencies("sum", l, compute);
        check_dep = tl.AddTask(sum, [&] { return total.StartReduce(tributary::Sum{}); });
      } else {
        region.AddRegionalDependencies("sum", l, compute);
      }
      AddCheck(tl, check_dep, total, seen, l);
    }
    ASSERT_EQ(ctx.Execute(tc, executor), TaskStatus::complete);
    for (double v : seen) ok = ok && v == CycleTotal(cycle, lists);
  }
  TRIBUTARY_EXPECT_ALL(ok);
}

TEST(Cycles, HandWiredChecksNeverSeeTheLastCyclesValueSerial) {
  tributary::SerialExecutor serial;
  HandWiredCycles(serial, 5, false);
}

TEST(Cycles, HandWiredChecksNeverSeeTheLastCyclesValueThreaded) {
  tributary::ThreadedExecutor threaded(3);
  HandWiredCycles(threaded, 6, true);
}

// Expect/Contribute armed inside the cycle: list 0 arms and contributes the rank's total
// after a regional dependency; the other lists only check, after their own work, so they
// may check before this cycle's Expect and must wait for it.
TEST(Cycles, ExpectContributeArmedInsideTheCycle) {
  tributary::Context ctx;
  tributary::SerialExecutor serial;
  tributary::AllReduce<double> total(ctx, "total");
  const int lists = 4;
  bool ok = true;
  for (int cycle = 1; cycle <= 100; ++cycle) {
    const std::vector<int> order = Shuffled(lists, static_cast<unsigned>(cycle) + 999u);
    std::vector<double> seen(static_cast<std::size_t>(lists), -1),
        partial(static_cast<std::size_t>(lists));
    std::atomic<int> turn{0};
    tributary::TaskCollection tc;
    auto& region = tc.AddRegion(lists);
    for (int pos = 0; pos < lists; ++pos) {
      const int l = order[static_cast<std::size_t>(pos)];
      auto& tl = region[l];
      auto gate = tl.AddTask(tributary::TaskID(), [&turn, pos] {
        if (turn.load() != pos) return TaskStatus::incomplete;
        ++turn;
        return TaskStatus::complete;
      });
      auto compute = tl.AddTask(gate, [&partial, l, cycle] {
        partial[static_cast<std::size_t>(l)] = CycleValue(cycle, l);
        return TaskStatus::complete;
      });
      region.AddRegionalDependencies("computed", l, compute);
      tributary::TaskID before_check = compute;
      if (l == 0)
        before_check = tl.AddTask(compute, [&] {
          total.Expect(1, tributary::Sum{});
          return total.Contribute(0, std::accumulate(partial.begin(), partial.end(), 0.0));
        });
      AddCheck(tl, before_check, total, seen, l);
    }
    ASSERT_EQ(ctx.Execute(tc, serial), TaskStatus::complete);
    for (double v : seen) ok = ok && v == CycleTotal(cycle, lists);
  }
  TRIBUTARY_EXPECT_ALL(ok);
}

// Outside an executor the generation is the token: the next one is incomplete until it
// starts, an earlier one is an error, never an old value.
TEST(Cycles, GenerationTokenOutsideAnExecutor) {
  tributary::Context ctx;
  tributary::AllReduce<int> r(ctx, "r");
  r.val = 1;
  r.StartReduce(tributary::Sum{});
  ctx.Wait(r);
  const std::uint64_t next = r.Generation() + 1;
  const bool waits = r.CheckGeneration(next) == TaskStatus::incomplete;
  r.val = 2;
  r.StartReduce(tributary::Sum{});
  while (r.CheckGeneration(next) != TaskStatus::complete) {
  }
  bool old_refused = false;
  try {
    r.CheckGeneration(next - 1);
  } catch (const UsageError&) {
    old_refused = true;
  }
  TRIBUTARY_EXPECT_ALL(waits && old_refused && r.val == 2 * Size());
}

// A duplicate, an out-of-range index and a contribution after the start are refused with
// UsageError, and the generation's result is what it would have been without them.
TEST(RefusedContributions, ChangeNothingOnHostValues) {
  tributary::Context ctx;
  tributary::AllReduce<std::vector<double>> v(ctx, "v");
  tributary::AllReduce<double> s(ctx, "s");
  const int lists = 3, p = Size();
  int refused = 0;
  v.Expect(lists, tributary::Sum{});
  s.Expect(lists, tributary::Max{});
  for (int l = 0; l < lists; ++l) {
    if (l == 1) {
      try {
        v.Contribute(0, std::vector<double>(4, 1e9));  // list 0 again
      } catch (const UsageError&) {
        ++refused;
      }
      try {
        s.Contribute(0, 1e9);
      } catch (const UsageError&) {
        ++refused;
      }
    }
    try {
      v.Contribute(lists + l, std::vector<double>(4, 1e9));  // out of range
    } catch (const UsageError&) {
      ++refused;
    }
    v.Contribute(l, std::vector<double>(4, l + 1.0));
    s.Contribute(l, 1.0 * l);
  }
  try {
    v.Contribute(1, std::vector<double>(4, 1e9));  // after the start
  } catch (const UsageError&) {
    ++refused;
  }
  ctx.Wait(v, s);
  TRIBUTARY_EXPECT_ALL(refused == 6 && v.val.size() == 4 && v.val[3] == 6.0 * p &&
                       s.val == lists - 1);
}

TEST(RefusedContributions, ChangeNothingOnBatchMembersAndExactSums) {
  tributary::ContextOptions o;
  o.determinism = tributary::Determinism::rank_count_independent;
  tributary::Context ctx(o);
  tributary::Batch batch(ctx, "step");
  auto& sum = batch.Add<double>(tributary::Sum{}, "sum");
  auto& lo = batch.Add<double>(tributary::Min{}, "lo");
  tributary::AllReduce<double> exact(ctx, "exact");
  const int lists = 3, p = Size();
  int refused = 0;
  batch.Expect(lists);
  exact.Expect(lists, tributary::Sum{});
  for (int l = 0; l < lists; ++l) {
    tributary::ExactSum part;
    part.Add(0.1 * (l + 1));
    sum.Contribute(l, part);
    lo.Contribute(l, 5.0 + l);
    exact.Contribute(l, part);
    try {  // the same lists again, as a host value and as an exact partial
      sum.Contribute(l, 1e300);
    } catch (const UsageError&) {
      ++refused;
    }
    try {
      lo.Contribute(l, -1e300);
    } catch (const UsageError&) {
      ++refused;
    }
    try {
      exact.Contribute(l, 1e300);
    } catch (const UsageError&) {
      ++refused;
    }
  }
  ctx.Wait(batch, exact);
  // 0.1 + 0.2 + 0.3 per rank, summed exactly and rounded once.
  tributary::ExactSum want;
  for (int r = 0; r < p; ++r)
    for (int l = 0; l < lists; ++l) want.Add(0.1 * (l + 1));
  TRIBUTARY_EXPECT_ALL(refused == 3 * lists && sum.val == want.Round() &&
                       exact.val == want.Round() && lo.val == 5.0);
}

// Keyed collectives: a repeated order index and one out of range are refused on the
// contributing rank, and the key's result is what it would have been without them.
TEST(RefusedContributions, ChangeNothingOnKeyedCollectives) {
  tributary::Context ctx;
  tributary::KeyedReduction<std::int64_t> keyed(ctx, "keyed");
  tributary::KeyOptions o;
  o.count = 2 * Size();
  o.reducers = {Size() - 1};
  keyed.Declare(5, tributary::Sum{}, o);
  int refused = 0;
  keyed.Contribute(5, 2 * Rank(), 10 * Rank() + 1);
  for (const std::int64_t bad : {std::int64_t(2 * Rank()), std::int64_t(2 * Size())}) {
    try {
      keyed.Contribute(5, bad, 1000000);
    } catch (const UsageError&) {
      ++refused;
    }
  }
  keyed.Contribute(5, 2 * Rank() + 1, 10 * Rank() + 2);
  WaitAlone([&] { return keyed.Check(5); });
  const std::int64_t p = Size();
  TRIBUTARY_EXPECT_ALL(refused == 2 && keyed.Result(5) == 10 * p * (p - 1) + 3 * p);
}

// Under the threaded executor every list contributes once and then tries again: the
// second contributions race the last arrival's combine, are refused and change nothing
// (CI runs this under ThreadSanitizer).
TEST(RefusedContributions, ThreadedDuplicatesRaceNothing) {
  tributary::Context ctx;
  tributary::ThreadedExecutor threaded(4);
  tributary::AllReduce<std::vector<double>> v(ctx, "v");
  const int lists = 8, p = Size();
  std::atomic<int> refused{0};
  bool ok = true;
  for (int cycle = 1; cycle <= 30; ++cycle) {
    v.Expect(lists, tributary::Sum{});
    tributary::TaskCollection tc;
    auto& region = tc.AddRegion(lists);
    for (int l = 0; l < lists; ++l) {
      auto& tl = region[l];
      auto give = tl.AddTask(tributary::TaskID(), [&, l, cycle] {
        v.Contribute(l, std::vector<double>(64, cycle + l));
        try {
          v.Contribute(l, std::vector<double>(64, 1e9));
        } catch (const UsageError&) {
          ++refused;
        }
        return TaskStatus::complete;
      });
      tl.AddTask(give, [&] { return v.CheckReduce(); });
    }
    ASSERT_EQ(ctx.Execute(tc, threaded), TaskStatus::complete);
    ok = ok && v.val.size() == 64 && v.val[63] == p * (lists * cycle + lists * (lists - 1) / 2.0);
  }
  TRIBUTARY_EXPECT_ALL(ok && refused.load() == 30 * lists);
}

}  // namespace

namespace {

// The default watchdog reports a hang once and keeps waiting: here after 0.3 s, through the
// report handler, with a list withheld until the report has arrived on this rank.
TEST(Watchdog, ReportsAWithheldListOnceAndKeepsWaiting) {
  tributary::ContextOptions o;
  o.watchdog = std::chrono::duration<double>(0.3);
  std::string report;
  std::atomic<int> reports{0};
  o.report_handler = [&](const std::string& text) {
    if (reports++ == 0) report = text;
  };
  tributary::Context ctx(o);
  tributary::AllReduce<double> r(ctx, "energy");
  r.Expect(2, tributary::Sum{});
  r.Contribute(0, 1.0);
  bool given = false;
  while (r.CheckReduce() != TaskStatus::complete) {
    if (!given && reports.load() > 0) {
      r.Contribute(1, 2.0);  // list 1 arrives late: the generation completes
      given = true;
    }
  }
  const bool named = report.find("watchdog: AllReduce<double> 'energy'") != std::string::npos &&
                     report.find("missing lists: 1") != std::string::npos &&
                     report.find("reported once") != std::string::npos;
  if (!named) std::fprintf(stderr, "report on rank %d:\n%s", Rank(), report.c_str());
  TRIBUTARY_EXPECT_ALL(named && reports.load() == 1 && r.val == 3.0 * Size());
}

// A region whose regional key cannot be satisfied (list 1 holds back the task the key
// names): the task watchdog reports which tasks wait on what, once, and the execution goes
// on; the task is released after the report.
TEST(Watchdog, ReportsTasksBlockedOnARegionalKey) {
  tributary::ContextOptions o;
  o.watchdog = std::chrono::duration<double>(0.3);
  std::string report;
  std::atomic<int> reports{0};
  o.report_handler = [&](const std::string& text) {
    if (reports++ == 0) report = text;
  };
  tributary::Context ctx(o);
  tributary::TaskCollection tc;
  auto& region = tc.AddRegion(3);
  for (int l = 0; l < 3; ++l) {
    auto& tl = region[l];
    auto halo = tl.AddTask(tributary::TaskID(), "exchange halo", [&, l] {
      return l == 1 && reports.load() == 0 ? TaskStatus::incomplete : TaskStatus::complete;
    });
    region.AddRegionalDependencies("halo", l, halo);
    tl.AddTask(halo, "update", [] {});
  }
  const TaskStatus status = ctx.Execute(tc);
  const bool named = report.find("'exchange halo' returns incomplete") != std::string::npos &&
                     report.find("'update' waits for regional key") != std::string::npos &&
                     report.find("waiting for list(s) 1") != std::string::npos;
  if (!named) std::fprintf(stderr, "report on rank %d:\n%s", Rank(), report.c_str());
  TRIBUTARY_EXPECT_ALL(status == TaskStatus::complete && named && reports.load() == 1);
}

}  // namespace
