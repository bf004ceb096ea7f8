// Reductions polled from a task system that is not Tributary's (a hand-written executor,
// serial with sweeps, or a pool of worker threads that queues incomplete tasks again, as
// Parthenon's does) that declares its cycles with ForeignCycle and its sweeps with
// ForeignSweep:
//  - no stale result: a check that runs before its cycle's start waits for it (and without
//    the declaration it does see the previous cycle's value: the test can tell);
//  - one network test per sweep for an object in flight polled by many lists;
//  - the watchdog names every object the tasks wait for, with each rank's state, including
//    "polled but never started";
//  - nesting ForeignCycle is refused.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "mpi_test.hpp"
#include "tributary/tributary.hpp"

#if TRIBUTARY_HAVE_MPI
#include <mpi.h>
// PMPI interposition: network tests made by the calling process.
namespace {
std::atomic<long> g_tests{0};
}
extern "C" {
int MPI_Test(MPI_Request* request, int* flag, MPI_Status* status) {
  ++g_tests;
  return PMPI_Test(request, flag, status);
}
int MPI_Testall(int count, MPI_Request* requests, int* flag, MPI_Status* statuses) {
  ++g_tests;
  return PMPI_Testall(count, requests, flag, statuses);
}
}
#endif

namespace {

using tributary::TaskStatus;
using tributary::testing::Rank;
using tributary::testing::Size;
using Task = std::function<TaskStatus()>;
using Lists = std::vector<std::vector<Task>>;  // each list's tasks run in order

// A serial executor of its own: sweeps the lists in `order`, running each list's tasks in
// turn until one returns incomplete; with `sweeps`, each pass is a ForeignSweep.
void RunSerial(Lists& lists, const std::vector<int>& order, bool sweeps) {
  std::vector<std::size_t> next(lists.size(), 0);
  for (bool left = true; left;) {
    std::optional<tributary::ForeignSweep> sweep;
    if (sweeps) sweep.emplace();
    left = false;
    for (int l : order) {
      auto& tasks = lists[static_cast<std::size_t>(l)];
      auto& k = next[static_cast<std::size_t>(l)];
      while (k < tasks.size() && tasks[k]() == TaskStatus::complete) ++k;
      left = left || k < tasks.size();
    }
  }
}

// A pool of worker threads, as Parthenon's: a queue of ready tasks; a worker runs one and
// queues the list's next task when it completes, the same task again when it does not. The
// calling thread waits. Rethrows the first exception a task threw.
class Pool {
 public:
  explicit Pool(int threads) {
    for (int t = 0; t < threads; ++t) workers_.emplace_back([this] { Work(); });
  }
  ~Pool() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      exit_ = true;
    }
    ready_.notify_all();
    for (auto& w : workers_) w.join();
  }
  void Run(Lists& lists) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      lists_ = &lists;
      left_ = 0;
      error_ = nullptr;
      for (std::size_t l = 0; l < lists.size(); ++l)
        if (!lists[l].empty()) {
          queue_.push_back({l, 0});
          ++left_;
        }
    }
    ready_.notify_all();
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [this] { return left_ == 0; });
    lists_ = nullptr;
    if (error_) std::rethrow_exception(error_);
  }

 private:
  struct Item {
    std::size_t list, task;
  };
  void Work() {
    for (;;) {
      Item item{};
      {
        std::unique_lock<std::mutex> lock(mutex_);
        ready_.wait(lock, [this] { return exit_ || !queue_.empty(); });
        if (exit_) return;
        item = queue_.front();
        queue_.pop_front();
      }
      TaskStatus status = TaskStatus::fail;
      std::exception_ptr error;
      try {
        status = (*lists_)[item.list][item.task]();
      } catch (...) {
        error = std::current_exception();
      }
      std::lock_guard<std::mutex> lock(mutex_);
      if (error && !error_) error_ = error;
      if (error || status == TaskStatus::fail) {
        if (--left_ == 0) done_.notify_all();
      } else if (status != TaskStatus::complete) {
        queue_.push_back(item);
        ready_.notify_one();
      } else if (item.task + 1 < (*lists_)[item.list].size()) {
        queue_.push_back({item.list, item.task + 1});
        ready_.notify_one();
      } else if (--left_ == 0) {
        done_.notify_all();
      }
    }
  }
  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable ready_, done_;
  std::deque<Item> queue_;
  Lists* lists_ = nullptr;
  int left_ = 0;
  bool exit_ = false;
  std::exception_ptr error_;
};

std::vector<int> Reversed(int n) {
  std::vector<int> order;
  for (int l = n - 1; l >= 0; --l) order.push_back(l);
  return order;
}

// Ten cycles of two objects: `hand` hand-wired (list 0 starts it; every list checks, then
// reads val) and `regional` armed by the driver before the cycle (every list contributes,
// checks, reads). `declare` false leaves the cycles undeclared. Returns the number of reads
// that saw another cycle's value.
int StaleReads(bool declare, Pool* pool) {
  constexpr int kLists = 4;
  tributary::Context ctx;
  tributary::AllReduce<double> hand(ctx, "hand");
  tributary::AllReduce<double> regional(ctx, "regional");
  std::atomic<int> stale{0};
  const double p = Size();
  if (!declare) {  // outside any cycle a check before any start throws: give it a generation
    hand.val = 0;
    hand.StartReduce(tributary::Sum{});
    ctx.Wait(hand);
  }
  for (int cycle = 0; cycle < 10; ++cycle) {
    const double expected = p * (cycle + 1);
    regional.Expect(kLists, tributary::Sum{});  // before the cycle: it belongs to it
    Lists lists(kLists);
    for (int l = 0; l < kLists; ++l) {
      auto& tl = lists[static_cast<std::size_t>(l)];
      if (l == 0)
        tl.push_back([&, cycle] {
          hand.val = cycle + 1.0;
          return hand.StartReduce(tributary::Sum{});
        });
      tl.push_back([&] { return hand.CheckReduce(); });
      tl.push_back([&, expected] {
        if (hand.val != expected) ++stale;
        return TaskStatus::complete;
      });
      tl.push_back([&, l, cycle] { return regional.Contribute(l, (cycle + 1.0) / kLists); });
      tl.push_back([&] { return regional.CheckReduce(); });
      tl.push_back([&, expected] {
        if (regional.val != expected) ++stale;
        return TaskStatus::complete;
      });
    }
    std::optional<tributary::ForeignCycle> declared;
    if (declare) declared.emplace();
    if (pool)
      pool->Run(lists);
    else
      RunSerial(lists, Reversed(kLists), /*sweeps=*/true);
  }
  ctx.WaitAll();
  return stale.load();
}

TEST(ForeignExecutor, SerialDeclaredCyclesNeverSeeThePreviousResult) {
  TRIBUTARY_EXPECT_ALL(StaleReads(true, nullptr) == 0);
}

// The control: the same serial executor without ForeignCycle runs the checks of lists 3, 2
// and 1 before list 0's start and reads the previous cycle's value, every cycle.
TEST(ForeignExecutor, SerialUndeclaredCyclesDoSeeThePreviousResult) {
  TRIBUTARY_EXPECT_ALL(StaleReads(false, nullptr) >= 10);
}

TEST(ForeignExecutor, WorkerThreadsDeclaredCyclesNeverSeeThePreviousResult) {
  Pool pool(3);
  TRIBUTARY_EXPECT_ALL(StaleReads(true, &pool) == 0);
}

TEST(ForeignExecutor, CyclesDoNotNest) {
  std::string error;
  {
    tributary::ForeignCycle outer;
    EXPECT_EQ(tributary::CurrentCycle(), outer.Number());
    try {
      tributary::ForeignCycle inner;
    } catch (const std::logic_error& e) {
      error = e.what();
    }
  }
  EXPECT_EQ(tributary::CurrentCycle(), 0u);
  EXPECT_NE(error.find("do not nest"), std::string::npos) << error;
}

#if TRIBUTARY_HAVE_MPI
// Inside one ForeignSweep, eight lists poll an object in flight: the first poll tests the
// network, the other seven answer from the flag. Without sweeps every poll tests.
TEST(ForeignExecutor, OneNetworkTestPerSweep) {
  if (Size() < 2) GTEST_SKIP() << "needs an operation in flight";
  tributary::Context ctx;
  tributary::AllReduce<double> r(ctx, "swept");
  MPI_Comm signal;
  MPI_Comm_dup(MPI_COMM_WORLD, &signal);
  long in_sweep = -1, first = -1, unswept = -1;
  {
    tributary::ForeignCycle cycle;
    r.val = 1.0;
    if (Rank() == 0) {
      r.StartReduce(tributary::Sum{});  // the others start only once rank 0 has measured
      {
        tributary::ForeignSweep sweep;
        const long before = g_tests.load();
        r.CheckReduce();
        first = g_tests.load() - before;
        for (int l = 1; l < 8; ++l) r.CheckReduce();
        in_sweep = g_tests.load() - before - first;
      }
      const long before = g_tests.load();
      for (int l = 0; l < 8; ++l) r.CheckReduce();
      unswept = g_tests.load() - before;
      std::vector<MPI_Request> sends(static_cast<std::size_t>(Size() - 1));
      char go = 1;
      for (int q = 1; q < Size(); ++q)
        MPI_Isend(&go, 1, MPI_CHAR, q, 0, signal, &sends[static_cast<std::size_t>(q - 1)]);
      MPI_Waitall(Size() - 1, sends.data(), MPI_STATUSES_IGNORE);
    } else {
      char go = 0;
      MPI_Recv(&go, 1, MPI_CHAR, 0, 0, signal, MPI_STATUS_IGNORE);
      r.StartReduce(tributary::Sum{});
    }
    Lists one(1);
    one[0].push_back([&] { return r.CheckReduce(); });
    RunSerial(one, {0}, true);
  }
  MPI_Comm_free(&signal);
  if (Rank() == 0) {
    EXPECT_GE(first, 1);
    EXPECT_EQ(in_sweep, 0);
    EXPECT_GE(unswept, 8);
  }
  TRIBUTARY_EXPECT_ALL(r.val == Size());
}
#endif

// A hang as a framework would make one: in the second cycle the last rank's start task
// returns without starting `late` while its list 2 polls it, and its list 1 holds back its
// contribution to `partial`. Every rank's watchdog names both objects with every rank's
// state; the last rank's lines say "polled but never started". A rank that has its report
// tells the last rank (from the report handler), which starts and contributes once it has
// its own report and every other rank's word: so every rank has answered the queries first.
void WatchdogNamesEveryPolledObject(Pool* pool) {
  const int last = Size() - 1;
#if TRIBUTARY_HAVE_MPI
  MPI_Comm signal;
  MPI_Comm_dup(MPI_COMM_WORLD, &signal);
  MPI_Request sent = MPI_REQUEST_NULL;
  char token = 1;
  int received = 0;
#endif
  tributary::ContextOptions o;
  // 1.5 s: a rank then waits as long for the others' answers, which a loaded machine (the
  // suite runs tests side by side) may delay by a fraction of that.
  o.watchdog = std::chrono::duration<double>(1.5);
  std::mutex m;
  std::string report;
  std::atomic<bool> have{false};
  o.report_handler = [&](const std::string& text) {
    std::lock_guard<std::mutex> lock(m);
    if (!report.empty()) return;
    report = text;
    have = true;
#if TRIBUTARY_HAVE_MPI
    if (Rank() != last) MPI_Isend(&token, 1, MPI_CHAR, last, 7, signal, &sent);
#endif
  };
  std::mutex probing;  // the pool's workers may ask at once
  auto released = [&] {
    if (!have.load()) return false;
    std::lock_guard<std::mutex> lock(probing);
#if TRIBUTARY_HAVE_MPI
    for (int flag = 1; received < Size() - 1 && flag;) {
      MPI_Iprobe(MPI_ANY_SOURCE, 7, signal, &flag, MPI_STATUS_IGNORE);
      if (flag) {
        char got = 0;
        MPI_Recv(&got, 1, MPI_CHAR, MPI_ANY_SOURCE, 7, signal, MPI_STATUS_IGNORE);
        ++received;
      }
    }
    return received == Size() - 1;
#else
    return true;
#endif
  };
  {
    tributary::Context ctx(o);
    tributary::AllReduce<double> late(ctx, "late");
    tributary::AllReduce<double> partial(ctx, "partial");
    for (int cycle = 0; cycle < 2; ++cycle) {
      if (cycle == 1) partial.Expect(2, tributary::Sum{});
      const bool hang = cycle == 1 && Rank() == last;
      Lists lists(3);
      if (cycle == 1) {
        lists[0].push_back([&] { return partial.Contribute(0, 1.0); });
        lists[1].push_back([&, hang] {
          if (hang && !released()) return TaskStatus::incomplete;
          return partial.Contribute(1, 1.0);
        });
      }
      lists[0].push_back([&, hang] {
        if (hang && !released()) return TaskStatus::incomplete;
        late.val = 1.0;
        return late.StartReduce(tributary::Sum{});
      });
      for (auto& tl : lists) tl.push_back([&] { return late.CheckReduce(); });
      if (cycle == 1)
        for (auto& tl : lists) tl.push_back([&] { return partial.CheckReduce(); });
      tributary::ForeignCycle declared;
      if (pool)
        pool->Run(lists);
      else
        RunSerial(lists, {2, 1, 0}, true);
    }
    TRIBUTARY_EXPECT_ALL(late.val == Size() && partial.val == 2.0 * Size());
  }
#if TRIBUTARY_HAVE_MPI
  MPI_Wait(&sent, MPI_STATUS_IGNORE);
  MPI_Comm_free(&signal);
#endif
  auto has = [&](const std::string& s) { return report.find(s) != std::string::npos; };
  const std::string who = "  rank " + std::to_string(last) + ": ";
  bool ok = has("watchdog: AllReduce<double> 'late' (object 0) generation 2 ") &&
            has(who +
                "polled but never started: generation 2 has not started "
                "(generation 1 done)") &&
            has("watchdog: AllReduce<double> 'partial' (object 1) generation 1 ") &&
            has(who + "generation 1 collecting: 1 of 2 lists contributed, missing lists: 1") &&
            has("reported once");
  if (Rank() == last)
    ok = ok && has("'late' (object 0) generation 2 is polled but has not started after");
  else
    ok = ok && has("'late' (object 0) generation 2 has not completed after") &&
         has("  rank " + std::to_string(Rank()) + ": generation 2 in flight");
  if (!ok) std::fprintf(stderr, "report on rank %d:\n%s", Rank(), report.c_str());
  TRIBUTARY_EXPECT_ALL(ok);
}

TEST(ForeignExecutor, SerialWatchdogNamesEveryPolledObject) {
  WatchdogNamesEveryPolledObject(nullptr);
}

TEST(ForeignExecutor, WorkerThreadsWatchdogNamesEveryPolledObject) {
  Pool pool(2);
  WatchdogNamesEveryPolledObject(&pool);
}

}  // namespace
