// The task engine: dependencies, regions and regional keys, iterative sublists in lockstep,
// failures and exceptions, the watchdog, the GraphViz dump, progress hooks, and a large
// region. Each test runs on the serial and the threaded executor where it applies.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "tributary/tasks.hpp"

namespace {

using tributary::IterationLimits;
using tributary::OnMaxIterations;
using tributary::TaskCollection;
using tributary::TaskID;
using tributary::TaskRegion;
using tributary::TaskStatus;

// Runs a test body on a serial and a threaded executor.
class OnEachExecutor : public ::testing::TestWithParam<int> {
 protected:
  std::unique_ptr<tributary::Executor> MakeExecutor(tributary::ExecutorOptions o = {}) {
    if (GetParam() == 0) return std::make_unique<tributary::SerialExecutor>(o);
    return std::make_unique<tributary::ThreadedExecutor>(GetParam(), false, o);
  }
};
INSTANTIATE_TEST_SUITE_P(Executors, OnEachExecutor, ::testing::Values(0, 2, 4),
                         [](const auto& param_info) {
                           return param_info.param == 0
                                      ? std::string("serial")
                                      : "threads" + std::to_string(param_info.param);
                         });

TEST_P(OnEachExecutor, DependenciesRunInOrder) {
  TaskCollection tc;
  auto& region = tc.AddRegion(3);
  std::vector<std::vector<int>> order(3);
  for (int l = 0; l < 3; ++l) {
    auto& tl = region[l];
    auto& o = order[static_cast<std::size_t>(l)];
    // a -> {b, c} -> d, where b needs several polls.
    auto a = tl.AddTask(TaskID(), [&o] {
      o.push_back(0);
      return TaskStatus::complete;
    });
    auto polls = std::make_shared<int>(0);
    auto b = tl.AddTask(a, [&o, polls] {
      if (++*polls < 5) return TaskStatus::incomplete;
      o.push_back(1);
      return TaskStatus::complete;
    });
    auto c = tl.AddTask(a, [&o] { o.push_back(2); });  // void: complete
    tl.AddTask(b & c, [&o] {
      o.push_back(3);
      return TaskStatus::complete;
    });
  }
  auto ex = MakeExecutor();
  EXPECT_EQ(tc.Execute(*ex), TaskStatus::complete);
  for (const auto& o : order) EXPECT_EQ(o, (std::vector<int>{0, 2, 1, 3}));
}

struct Counter {
  int value = 0;
  TaskStatus Add(int k) {
    value += k;
    return TaskStatus::complete;
  }
};

TEST(Tasks, MemberFunctionsAndArgumentsByValue) {
  TaskCollection tc;
  auto& tl = tc.AddRegion(1)[0];
  Counter c;
  int copied = 5;
  tl.AddTask(TaskID(), &Counter::Add, &c, copied);
  copied = 100;  // stored by value: the task still adds 5
  tl.AddTask(TaskID(), "by ref", &Counter::Add, std::ref(c), 2);
  EXPECT_EQ(tc.Execute(), TaskStatus::complete);
  EXPECT_EQ(c.value, 7);
}

TEST_P(OnEachExecutor, RegionalDependencyWaitsForEveryList) {
  TaskCollection tc;
  const int n = 6;
  auto& region = tc.AddRegion(n);
  std::atomic<int> contributed{0};
  std::vector<int> seen(n, -1);
  for (int l = 0; l < n; ++l) {
    auto& tl = region[l];
    // Lists have different numbers of tasks before the regional one.
    TaskID prev;
    for (int k = 0; k < l; ++k) prev = tl.AddTask(prev, [] { return TaskStatus::complete; });
    auto slow = std::make_shared<int>(0);
    auto contrib = tl.AddTask(prev, [&contributed, slow, l] {
      if (++*slow < 3 * l) return TaskStatus::incomplete;
      ++contributed;
      return TaskStatus::complete;
    });
    region.AddRegionalDependencies("sum", l, contrib);
    tl.AddTask(contrib, [&, l] {
      seen[static_cast<std::size_t>(l)] = contributed.load();
      return TaskStatus::complete;
    });
  }
  auto ex = MakeExecutor();
  EXPECT_EQ(tc.Execute(*ex), TaskStatus::complete);
  for (int s : seen) EXPECT_EQ(s, n);
}

TEST(Tasks, MissingRegionalKeyIsABuildError) {
  TaskRegion region(4);
  for (int l = 0; l < 4; ++l) {
    auto id = region[l].AddTask(TaskID(), [] { return TaskStatus::complete; });
    if (l != 1 && l != 3) region.AddRegionalDependencies("flux", l, id);
    region.AddRegionalDependencies(7, l, region[l].AddTask(id, [] {}));
  }
  try {
    region.Validate();
    FAIL() << "no error for a key missing from lists 1 and 3";
  } catch (const tributary::TaskGraphError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("regional key \"flux\""), std::string::npos) << msg;
    EXPECT_NE(msg.find("registered in list(s) 0, 2"), std::string::npos) << msg;
    EXPECT_NE(msg.find("missing from list(s) 1, 3"), std::string::npos) << msg;
  }
  tributary::SerialExecutor ex;
  EXPECT_THROW(ex.Run(region), tributary::TaskGraphError);
}

TEST(Tasks, DependencyOnAnotherListIsAnError) {
  TaskRegion region(2);
  auto a = region[0].AddTask(TaskID(), [] {});
  EXPECT_THROW(region[1].AddTask(a, [] {}), tributary::TaskGraphError);
}

// The zeroing scenario: every iteration each list zeroes its accumulator, adds it to a
// shared regional sum, and after the regional dependency reads the sum. No list may start
// iteration k+1 (zeroing) while another still reads iteration k's result.
TEST_P(OnEachExecutor, IterativeSublistsWithRegionalSyncIterateInLockstep) {
  const int n = 5, iterations = 20;
  TaskCollection tc;
  auto& region = tc.AddRegion(n);
  struct Shared {
    std::mutex m;
    std::vector<long> acc;
    long sum[2] = {0, 0};
    std::atomic<int> wrong{0};
  } sh;
  sh.acc.assign(n, 0);
  for (int l = 0; l < n; ++l) {
    auto [sub, id] = region[l].AddSublist(TaskID(), IterationLimits{1, iterations + 5}, "solver");
    auto it = std::make_shared<int>(0);
    auto zero = sub.AddTask(TaskID(), "zero", [&sh, l, it] {
      std::lock_guard<std::mutex> lock(sh.m);
      sh.acc[static_cast<std::size_t>(l)] = 0;
      if (l == 0) sh.sum[(*it + 1) % 2] = 0;  // next iteration's slot
      return TaskStatus::complete;
    });
    auto add = sub.AddTask(zero, "accumulate", [&sh, l, it] {
      std::lock_guard<std::mutex> lock(sh.m);
      sh.acc[static_cast<std::size_t>(l)] = l + 1;
      sh.sum[*it % 2] += l + 1;
      return TaskStatus::complete;
    });
    region.AddRegionalDependencies("sum", l, add);
    auto read = sub.AddTask(add, "read", [&sh, it, n] {
      std::this_thread::yield();
      std::lock_guard<std::mutex> lock(sh.m);
      long all = 0;
      for (long v : sh.acc) all += v;
      if (all != n * (n + 1) / 2 || sh.sum[*it % 2] != n * (n + 1) / 2) ++sh.wrong;
      return TaskStatus::complete;
    });
    sub.AddTask(read, "check", [it, iterations] {
      return ++*it < iterations ? TaskStatus::iterate : TaskStatus::complete;
    });
  }
  auto ex = MakeExecutor();
  EXPECT_EQ(tc.Execute(*ex), TaskStatus::complete);
  EXPECT_EQ(sh.wrong.load(), 0);
}

TEST_P(OnEachExecutor, ListsThatDisagreeInLockstepFailClearly) {
  TaskCollection tc;
  auto& region = tc.AddRegion(2);
  for (int l = 0; l < 2; ++l) {
    auto [sub, id] = region[l].AddSublist(TaskID(), IterationLimits{1, 10}, "loop");
    auto t = sub.AddTask(TaskID(), [] {});
    region.AddRegionalDependencies(1, l, t);
    sub.AddTask(t, [l] { return l == 0 ? TaskStatus::iterate : TaskStatus::complete; });
  }
  auto ex = MakeExecutor();
  EXPECT_EQ(tc.Execute(*ex), TaskStatus::fail);
  EXPECT_NE(ex->LastReport().message.find("disagree after iteration 1"), std::string::npos)
      << ex->LastReport().message;
}

TEST_P(OnEachExecutor, ExceptionsAreRethrownWithTaskAndList) {
  TaskCollection tc;
  auto& region = tc.AddRegion(4);
  std::atomic<int> after{0};
  for (int l = 0; l < 4; ++l) {
    auto t = region[l].AddTask(TaskID(), "compute", [l] {
      if (l == 2) throw std::runtime_error("negative density");
      return TaskStatus::complete;
    });
    region[l].AddTask(t, [&after, l] {
      if (l == 2) ++after;  // a dependent of the failed task must never run
    });
  }
  auto ex = MakeExecutor();
  try {
    tc.Execute(*ex);
    FAIL() << "no exception";
  } catch (const tributary::TaskError& e) {
    EXPECT_EQ(e.label(), "compute");
    EXPECT_EQ(e.list(), 2);
    EXPECT_NE(std::string(e.what()).find("negative density"), std::string::npos);
    try {
      std::rethrow_if_nested(e);
      FAIL() << "not nested";
    } catch (const std::runtime_error& inner) {
      EXPECT_STREQ(inner.what(), "negative density");
    }
  }
  EXPECT_EQ(after.load(), 0);
}

TEST_P(OnEachExecutor, FailedTaskStopsTheRegionAndIsReported) {
  TaskCollection tc;
  auto& region = tc.AddRegion(3);
  std::atomic<int> dependents{0};
  for (int l = 0; l < 3; ++l) {
    auto t = region[l].AddTask(TaskID(), "step",
                               [l] { return l == 1 ? TaskStatus::fail : TaskStatus::complete; });
    region[l].AddTask(t, [&dependents, l] {
      if (l == 1) ++dependents;
    });
  }
  tc.AddRegion(1)[0].AddTask(TaskID(), [&dependents] { dependents += 100; });
  auto ex = MakeExecutor();
  EXPECT_EQ(tc.Execute(*ex), TaskStatus::fail);
  EXPECT_EQ(dependents.load(), 0);  // neither the dependent nor the next region ran
  EXPECT_TRUE(ex->LastReport().failed);
  EXPECT_EQ(ex->LastReport().label, "step");
  EXPECT_EQ(ex->LastReport().list, 1);
  EXPECT_NE(ex->LastReport().message.find("task 'step' in list 1 failed"), std::string::npos);
}

TEST(Tasks, MaxIterationsWarnsOrFailsNeverSilently) {
  for (auto policy : {OnMaxIterations::warn, OnMaxIterations::fail}) {
    TaskCollection tc;
    auto [sub, id] =
        tc.AddRegion(1)[0].AddSublist(TaskID(), IterationLimits{1, 4, policy}, "newton");
    int runs = 0;
    sub.AddTask(TaskID(), [&runs] {
      ++runs;
      return TaskStatus::iterate;  // never converges
    });
    tributary::SerialExecutor ex;
    ::testing::internal::CaptureStderr();
    const TaskStatus s = tc.Execute(ex);
    const std::string err = ::testing::internal::GetCapturedStderr();
    EXPECT_EQ(runs, 4);
    if (policy == OnMaxIterations::warn) {
      EXPECT_EQ(s, TaskStatus::complete);
      EXPECT_NE(err.find("sublist 'newton' in list 0 reached its maximum of 4"), std::string::npos)
          << err;
    } else {
      EXPECT_EQ(s, TaskStatus::fail);
      EXPECT_NE(ex.LastReport().message.find("reached its maximum of 4"), std::string::npos);
    }
  }
}

TEST(Tasks, MinIterationsAreRun) {
  TaskCollection tc;
  auto [sub, id] = tc.AddRegion(1)[0].AddSublist(TaskID(), IterationLimits{3, 10});
  int runs = 0;
  sub.AddTask(TaskID(), [&runs] { ++runs; });
  EXPECT_EQ(tc.Execute(), TaskStatus::complete);
  EXPECT_EQ(runs, 3);
}

TEST(Tasks, IterateOutsideASublistIsAnError) {
  TaskCollection tc;
  tc.AddRegion(1)[0].AddTask(TaskID(), [] { return TaskStatus::iterate; });
  tributary::SerialExecutor ex;
  EXPECT_EQ(tc.Execute(ex), TaskStatus::fail);
  EXPECT_NE(ex.LastReport().message.find("outside an iterative sublist"), std::string::npos);
}

TEST_P(OnEachExecutor, WatchdogReportsIncompleteTasksAndWaitingKeys) {
  TaskCollection tc;
  auto& region = tc.AddRegion(3);
  for (int l = 0; l < 3; ++l) {
    auto t = region[l].AddTask(TaskID(), "exchange halos", [l] {
      return l == 2 ? TaskStatus::incomplete : TaskStatus::complete;
    });
    region.AddRegionalDependencies("halo", l, t);
    region[l].AddTask(t, "update", [] {});
  }
  tributary::ExecutorOptions o;
  o.watchdog = std::chrono::milliseconds(200);
  o.on_watchdog = tributary::WatchdogAction::fail;
  auto ex = MakeExecutor(o);
  EXPECT_EQ(tc.Execute(*ex), TaskStatus::fail);
  const std::string r = ex->LastReport().message;
  EXPECT_NE(r.find("task watchdog: the region has not finished after 0.2 s"), std::string::npos)
      << r;
  EXPECT_NE(r.find("list 2: 'exchange halos' returns incomplete"), std::string::npos) << r;
  EXPECT_NE(r.find("list 0: 'update' waits for regional key \"halo\""), std::string::npos) << r;
  EXPECT_NE(r.find("regional key \"halo\": done in list(s) 0 1; waiting for list(s) 2"),
            std::string::npos)
      << r;
}

TEST_P(OnEachExecutor, ProgressHooksRunWhenNothingProgresses) {
  TaskCollection tc;
  std::atomic<int> hook_calls{0};
  std::atomic<bool> released{false};
  tc.AddRegion(2)[0].AddTask(
      TaskID(), [&] { return released.load() ? TaskStatus::complete : TaskStatus::incomplete; });
  auto ex = MakeExecutor();
  const int handle = ex->AddProgressHook([&] {
    if (++hook_calls == 50) released = true;  // the hook is what moves things on
  });
  EXPECT_EQ(tc.Execute(*ex), TaskStatus::complete);
  EXPECT_GE(hook_calls.load(), 50);
  ex->RemoveProgressHook(handle);
  const int before = hook_calls.load();
  released = false;
  std::atomic<int> polls{0};
  TaskCollection tc2;
  tc2.AddRegion(1)[0].AddTask(
      TaskID(), [&] { return ++polls < 100 ? TaskStatus::incomplete : TaskStatus::complete; });
  EXPECT_EQ(tc2.Execute(*ex), TaskStatus::complete);
  EXPECT_EQ(hook_calls.load(), before);
}

TEST(Tasks, HookThatThrowsStopsExecution) {
  TaskCollection tc;
  tc.AddRegion(1)[0].AddTask(TaskID(), [] { return TaskStatus::incomplete; });
  tributary::SerialExecutor ex;
  ex.AddProgressHook([] { throw std::runtime_error("remote rank failed"); });
  EXPECT_THROW(tc.Execute(ex), tributary::TaskError);
  EXPECT_EQ(ex.LastReport().label, "progress hook");
}

TEST(Tasks, BackoffYieldsAndSleepsWhileWaiting) {
  // A task that waits 100 ms: a spinning executor would poll it millions of times; with the
  // back-off it polls a few thousand times at most.
  TaskCollection tc;
  long polls = 0;
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(100);
  tc.AddRegion(1)[0].AddTask(TaskID(), [&] {
    ++polls;
    return std::chrono::steady_clock::now() < until ? TaskStatus::incomplete : TaskStatus::complete;
  });
  EXPECT_EQ(tc.Execute(), TaskStatus::complete);
  EXPECT_LT(polls, 20000);
  EXPECT_GT(polls, 32);
}

TEST(Tasks, GraphvizDumpHasTheGraphsEdges) {
  TaskRegion region(2);
  for (int l = 0; l < 2; ++l) {
    auto a = region[l].AddTask(TaskID(), "a", [] {});
    auto b = region[l].AddTask(a, "b", [] {});
    region.AddRegionalDependencies("k", l, b);
    auto c = region[l].AddTask(a & b, "c", [] {});
    auto [sub, s] = region[l].AddSublist(c, IterationLimits{1, 2}, "loop");
    sub.AddTask(TaskID(), "inner", [] {});
  }
  const std::string dot = region.ToDot();
  auto count = [&](const std::string& re) {
    std::regex r(re);
    return std::distance(std::sregex_iterator(dot.begin(), dot.end(), r), std::sregex_iterator());
  };
  // Per list: a->b, a->c, b->c, c->loop = 4 solid edges; c depends on regional b: one dashed
  // edge from the other list's b.
  EXPECT_EQ(count(R"(-> l[01]_[0-9]+;)"), 8) << dot;
  EXPECT_EQ(count(R"(\[style=dashed\])"), 2) << dot;
  EXPECT_NE(dot.find("l0_1 -> l1_2 [style=dashed]"), std::string::npos) << dot;
  EXPECT_NE(dot.find("l1_1 -> l0_2 [style=dashed]"), std::string::npos) << dot;
  EXPECT_NE(dot.find("subgraph cluster_l0_3"), std::string::npos) << dot;
  EXPECT_NE(dot.find("l0_3_0 [label=\"inner\"]"), std::string::npos) << dot;
}

TEST_P(OnEachExecutor, SixtyFourListsWithAHundredThousandTasks) {
  const int n = 64, per_list = 100000 / 64 + 1;
  TaskCollection tc;
  auto& region = tc.AddRegion(n);
  std::vector<long> ran(n, 0);
  for (int l = 0; l < n; ++l) {
    TaskID prev;
    for (int k = 0; k < per_list; ++k) {
      long* r = &ran[static_cast<std::size_t>(l)];
      // Alternate chains and fan-in so that dependencies are not all linear.
      TaskID dep = k % 3 == 2 ? prev : TaskID();
      prev = region[l].AddTask(dep, [r] { ++*r; });
    }
  }
  auto ex = MakeExecutor();
  EXPECT_EQ(tc.Execute(*ex), TaskStatus::complete);
  for (long r : ran) EXPECT_EQ(r, per_list);
}

}  // namespace
