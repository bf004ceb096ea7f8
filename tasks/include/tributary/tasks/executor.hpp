// Executors: run a region's task lists until every task has completed or one failed.
#pragma once

#include <chrono>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "tributary/tasks/task_region.hpp"
#include "tributary/tasks/task_status.hpp"
#include "tributary/tasks/watchdog.hpp"

namespace tributary {

/// How an executor waits when nothing progresses, and its watchdog.
struct ExecutorOptions {
  /// Sweeps without progress before the executor starts yielding the core.
  int spin_sweeps = 32;
  /// Sweeps that yield (std::this_thread::yield) before the executor starts sleeping.
  int yield_sweeps = 256;
  /// Sleeps then double from 1 µs up to this; any progress resets the back-off.
  std::chrono::microseconds max_sleep{200};
  /// After this long without a task completing, report which tasks are incomplete and on
  /// which dependencies they wait; zero disables the watchdog.
  std::chrono::duration<double> watchdog{60};
  /// Report once and keep running (default), or fail the execution with the report.
  WatchdogAction on_watchdog = WatchdogAction::report;
  /// Receives the report of WatchdogAction::report; empty writes it to stderr.
  std::function<void(const std::string&)> report;
};

/// What went wrong in the last execution.
struct TaskReport {
  bool failed = false;  ///< True when the last execution failed.
  std::string label;    ///< The task's label ("task 3" when it has none).
  int list = -1;        ///< The list index in its region.
  std::string message;  ///< What happened, with label and list.
};

/// Runs regions. Not copyable; reusable for many executions.
class Executor {
 public:
  /// An executor with `options` (watchdog, back-off).
  explicit Executor(ExecutorOptions options = {});
  virtual ~Executor();
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  /// Adds a hook called after every sweep in which nothing progressed (before backing
  /// off), so that work outside the tasks (a reduction's network phase, a watchdog)
  /// progresses even when no task polls it. A hook that throws stops the execution like a
  /// failed task (reported as "progress hook"). Returns a handle for RemoveProgressHook.
  int AddProgressHook(std::function<void()> hook);
  /// Removes a hook added by AddProgressHook.
  void RemoveProgressHook(int handle);

  /// Adds a section to the watchdog's report: `section` is called when the report is
  /// written, on the thread that writes it, and its text follows the tasks'. A Context adds
  /// the reduction objects the tasks wait for, with every rank's view (Context::Execute).
  /// Returns a handle for RemoveReportSection.
  int AddReportSection(std::function<std::string()> section);
  /// Removes a section added by AddReportSection.
  void RemoveReportSection(int handle);
  /// While a Run is in progress (called from a progress hook, or another thread): the tasks
  /// that have not completed and what each waits for, as the watchdog's report lists them
  /// (the other workers pause while it is read); empty outside a Run. The run's own
  /// watchdog then does not report the same hang again (WatchdogAction::report).
  std::string ReportPending();

  /// Runs every list of `region` to completion. Returns complete, or fail with LastReport
  /// filled; rethrows a task's exception as TaskError.
  TaskStatus Run(TaskRegion& region);

  /// The report of the last failed execution.
  const TaskReport& LastReport() const noexcept { return report_; }
  /// The options, which may be changed between executions.
  ExecutorOptions& Options() noexcept { return options_; }

 protected:
  /// Runs the engine's lists on this executor's threads.
  virtual void RunLists(detail::TaskEngine& engine) = 0;

 private:
  friend class detail::TaskEngine;
  ExecutorOptions options_;
  std::mutex hooks_mutex_;
  std::vector<std::pair<int, std::function<void()>>> hooks_;
  int next_hook_ = 0;
  std::mutex sections_mutex_;
  std::vector<std::pair<int, std::function<std::string()>>> sections_;
  int next_section_ = 0;
  std::mutex engine_mutex_;
  detail::TaskEngine* engine_ = nullptr;  // the Run in progress
  TaskReport report_;
};

/// One thread, round-robin over the lists: an incomplete task never starves the others.
class SerialExecutor final : public Executor {
 public:
  /// A serial executor with `options`.
  explicit SerialExecutor(ExecutorOptions options = {}) : Executor(std::move(options)) {}

 protected:
  void RunLists(detail::TaskEngine& engine) override;

 private:
  std::vector<int> lists_;
};

/// `threads` workers; the lists of a region run concurrently (list i on worker
/// i % threads). With `bind`, each worker is bound to a core (hwloc, when available).
class ThreadedExecutor final : public Executor {
 public:
  /// `threads` workers (at least one), each bound to a core when `bind` is set.
  explicit ThreadedExecutor(int threads, bool bind = false, ExecutorOptions options = {});

 protected:
  void RunLists(detail::TaskEngine& engine) override;

 private:
  int threads_;
  bool bind_;
};

}  // namespace tributary
