// The task engine's private state: task nodes, regional groups, sublist barriers, and the
// engine that sweeps lists for an executor.
#pragma once

#include <atomic>
#include <chrono>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "tributary/tasks/executor.hpp"
#include "tributary/tasks/task_list.hpp"
#include "tributary/tasks/task_region.hpp"

namespace tributary::detail {

/// The tasks registered under one regional key, one per list.
struct RegionalGroup {
  RegionalKey key{0};
  int size = 0;
  std::vector<TaskNode*> members;  // per list
  std::atomic<long> done{0};       // completions, all lists and iterations together
};

/// Sibling sublists (one per list) that iterate in lockstep because they hold regional
/// tasks: no list starts iteration k+1 before every list has finished iteration k.
struct SublistBarrier {
  int size = 0;
  std::atomic<long> arrived{0};
  std::unique_ptr<std::atomic<int>[]> decisions;  // [2][size]: iterate again (1) or not (0)
  std::vector<TaskNode*> members;
};

struct TaskNode {
  std::string label;
  std::vector<int> deps;
  std::function<TaskStatus()> body;
  std::unique_ptr<TaskList> sublist;  // set for a sublist node
  IterationLimits limits;
  RegionalGroup* group = nullptr;
  SublistBarrier* barrier = nullptr;
  // Run state, reset at the start of every execution.
  bool done = false;
  long completions = 0;
  int iteration = 0;
  bool at_barrier = false;
  bool want_more = false;
};

/// Per-list run state.
struct ListRuntime {
  std::vector<int> pending;  // tasks not yet done, in insertion order
  bool iterate_requested = false;
};

/// Runs one region for one executor.
class TaskEngine {
 public:
  TaskEngine(Executor& executor, TaskRegion& region);
  ~TaskEngine();
  TaskEngine(const TaskEngine&) = delete;
  TaskEngine& operator=(const TaskEngine&) = delete;

  int NumLists() const noexcept { return region_.size(); }
  /// One sweep over list `i`: returns true when every task of the list is done.
  bool SweepList(int i, bool& progressed);
  /// Sweeps `lists` (removing each once it is done) until all are done or the execution
  /// stops; after a sweep without progress: hooks, watchdog, back-off.
  void RunSweeps(std::vector<int>& lists);
  bool Stopped() const noexcept { return stop_.load(std::memory_order_acquire); }
  /// Calls the executor's progress hooks (one thread at a time).
  void CallHooks();
  /// Waits according to the back-off after `idle` sweeps without progress.
  void Backoff(int idle) const;
  /// Stops the execution when the watchdog's time is up.
  void CheckWatchdog();
  /// After every worker has stopped: fails with the watchdog report if it fired.
  void FinishWatchdog();
  void Fail(const std::string& label, int list, const std::string& message,
            std::exception_ptr error = nullptr);

  /// The incomplete tasks and what they wait for (the other workers pause while it is
  /// read); marks the run as reported.
  std::string PendingReport();

  /// Report and exception of the execution.
  const TaskReport& Report() const noexcept { return report_; }
  std::exception_ptr Error() const noexcept { return error_; }
  bool Failed() const noexcept { return failed_; }

 private:
  bool RunList(TaskList& list, int index, bool in_sublist, bool& progressed);
  TaskStatus RunSublist(TaskNode& node, int index, bool& progressed);
  TaskStatus ApplyIteration(TaskNode& node, bool& progressed);
  bool Ready(const TaskList& list, const TaskNode& node) const;
  void MarkDone(TaskNode& node);
  static void ResetList(TaskList& list);
  static void ResetForExecution(TaskList& list);
  std::string WatchdogReport() const;
  std::string PendingTasks() const;
  // Pauses the other workers (those at the top of a sweep) while `read` runs.
  template <class Read>
  void WhilePaused(Read&& read);

  Executor& executor_;
  TaskRegion& region_;
  std::atomic<bool> stop_{false};
  std::uint64_t cycle_ = 0;  // this run's cycle (CurrentCycle() in its tasks)
  std::mutex fail_mutex_;
  bool failed_ = false;
  TaskReport report_;
  std::exception_ptr error_;
  std::atomic<bool> watchdog_fired_{false};
  // WatchdogAction::report: a task completed since the last idle sweep looked; when one
  // last did; the workers pause while the report reads their lists.
  std::atomic<bool> progressed_{false};
  std::atomic<std::int64_t> last_progress_ns_{0};  // 0: the watchdog has not looked yet
  std::atomic<std::int64_t> start_ns_{0};
  std::atomic<bool> reported_{false};
  std::atomic<bool> pause_{false};
  std::atomic<int> running_{0};
  std::atomic<int> paused_{0};
  void ReportOnce();
  void PauseIfAsked();
};

}  // namespace tributary::detail
