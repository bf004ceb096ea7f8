#include <algorithm>
#include <cstdio>
#include <sstream>
#include <thread>

#include "engine.hpp"
#include "tributary/tasks/sweep.hpp"

#if TRIBUTARY_TASKS_HWLOC
#include <hwloc.h>
#endif

namespace tributary {
namespace detail {

// Resets every node of `list` and its sublists: a region may be executed many times.
void TaskEngine::ResetForExecution(TaskList& list) {
  list.runtime_->pending.clear();
  list.runtime_->iterate_requested = false;
  for (std::size_t t = 0; t < list.tasks_.size(); ++t) {
    auto& node = *list.tasks_[t];
    node.done = false;
    node.completions = 0;
    node.iteration = 0;
    node.at_barrier = false;
    node.want_more = false;
    list.runtime_->pending.push_back(static_cast<int>(t));
    if (node.sublist) ResetForExecution(*node.sublist);
  }
}

TaskEngine::TaskEngine(Executor& executor, TaskRegion& region)
    : executor_(executor), region_(region), cycle_(BeginCycle()) {
  for (auto& list : region_.lists_) ResetForExecution(*list);
  for (auto& g : region_.groups_) g->done.store(0);
  for (auto& b : region_.barriers_) b->arrived.store(0);
}

TaskEngine::~TaskEngine() { EndCycle(); }

void TaskEngine::Fail(const std::string& label, int list, const std::string& message,
                      std::exception_ptr error) {
  std::lock_guard<std::mutex> lock(fail_mutex_);
  if (!failed_) {
    failed_ = true;
    report_.failed = true;
    report_.label = label;
    report_.list = list;
    report_.message = message;
    error_ = std::move(error);
  }
  stop_.store(true, std::memory_order_release);
}

bool TaskEngine::Ready(const TaskList& list, const TaskNode& node) const {
  for (int d : node.deps) {
    const TaskNode& dep = *list.tasks_[static_cast<std::size_t>(d)];
    if (!dep.done) return false;
    if (dep.group &&
        dep.group->done.load(std::memory_order_acquire) < dep.group->size * dep.completions)
      return false;
  }
  return true;
}

void TaskEngine::MarkDone(TaskNode& node) {
  node.done = true;
  ++node.completions;
  if (node.group) node.group->done.fetch_add(1, std::memory_order_acq_rel);
}

void TaskEngine::ResetList(TaskList& list) {
  list.runtime_->pending.clear();
  list.runtime_->iterate_requested = false;
  for (std::size_t t = 0; t < list.tasks_.size(); ++t) {
    auto& node = *list.tasks_[t];
    node.done = false;
    node.at_barrier = false;
    if (node.sublist) {
      node.iteration = 0;
      ResetList(*node.sublist);
    }
    list.runtime_->pending.push_back(static_cast<int>(t));
  }
}

bool TaskEngine::RunList(TaskList& list, int index, bool in_sublist, bool& progressed) {
  auto& pending = list.runtime_->pending;
  std::size_t keep = 0;
  for (std::size_t k = 0; k < pending.size(); ++k) {
    const int t = pending[k];
    TaskNode& node = *list.tasks_[static_cast<std::size_t>(t)];
    if (Stopped()) {
      pending[keep++] = t;
      continue;
    }
    if (!Ready(list, node)) {
      pending[keep++] = t;
      continue;
    }
    TaskStatus status;
    if (node.sublist) {
      status = RunSublist(node, index, progressed);
    } else {
      try {
        status = node.body();
      } catch (const std::exception& e) {
        Fail(node.label, index,
             "task '" + node.label + "' in list " + std::to_string(index) + " threw: " + e.what(),
             std::current_exception());
        status = TaskStatus::fail;
      } catch (...) {
        Fail(node.label, index,
             "task '" + node.label + "' in list " + std::to_string(index) +
                 " threw an exception not derived from std::exception",
             std::current_exception());
        status = TaskStatus::fail;
      }
    }
    switch (status) {
      case TaskStatus::complete:
        MarkDone(node);
        progressed = true;
        break;
      case TaskStatus::iterate:
        if (!in_sublist) {
          Fail(node.label, index,
               "task '" + node.label + "' in list " + std::to_string(index) +
                   " returned iterate outside an iterative sublist");
          pending[keep++] = t;
          break;
        }
        list.runtime_->iterate_requested = true;
        MarkDone(node);
        progressed = true;
        break;
      case TaskStatus::incomplete:
        pending[keep++] = t;
        break;
      case TaskStatus::fail:
        if (!Stopped() || !failed_)
          Fail(node.label, index,
               "task '" + node.label + "' in list " + std::to_string(index) + " failed");
        pending[keep++] = t;
        break;
    }
  }
  pending.resize(keep);
  return pending.empty();
}

TaskStatus TaskEngine::RunSublist(TaskNode& node, int index, bool& progressed) {
  if (!node.at_barrier) {
    if (!RunList(*node.sublist, index, true, progressed)) return TaskStatus::incomplete;
    if (Stopped()) return TaskStatus::incomplete;
    // This list finished an iteration.
    const int finished = node.iteration + 1;
    bool more = node.sublist->runtime_->iterate_requested || finished < node.limits.min;
    if (more && finished >= node.limits.max) {
      const std::string msg = "sublist '" + node.label + "' in list " + std::to_string(index) +
                              " reached its maximum of " + std::to_string(node.limits.max) +
                              " iteration(s) while a task still asks to iterate";
      if (node.limits.on_max == OnMaxIterations::fail) {
        Fail(node.label, index, msg);
        return TaskStatus::incomplete;
      }
      std::fprintf(stderr, "tributary tasks: warning: %s; completing it\n", msg.c_str());
      more = false;
    }
    node.want_more = more;
    progressed = true;
    if (!node.barrier) return ApplyIteration(node, progressed);
    const std::size_t n = static_cast<std::size_t>(node.barrier->size);
    node.barrier
        ->decisions[static_cast<std::size_t>(node.iteration % 2) * n +
                    static_cast<std::size_t>(index)]
        .store(more ? 1 : 0, std::memory_order_relaxed);
    node.barrier->arrived.fetch_add(1, std::memory_order_acq_rel);
    node.at_barrier = true;
  }
  // Lockstep: wait until every list has finished this iteration.
  SublistBarrier& b = *node.barrier;
  const long target = static_cast<long>(b.size) * (node.iteration + 1);
  if (b.arrived.load(std::memory_order_acquire) < target) return TaskStatus::incomplete;
  const std::size_t n = static_cast<std::size_t>(b.size);
  std::string disagree;
  for (std::size_t j = 0; j < n; ++j) {
    const int d = b.decisions[static_cast<std::size_t>(node.iteration % 2) * n + j].load(
        std::memory_order_relaxed);
    if ((d != 0) != node.want_more) disagree += " " + std::to_string(j);
  }
  if (!disagree.empty()) {
    Fail(node.label, index,
         "sublist '" + node.label + "': the lists of the region disagree after iteration " +
             std::to_string(node.iteration + 1) + ": list " + std::to_string(index) +
             (node.want_more ? " iterates" : " completes") + " but list(s)" + disagree +
             " do not; sublists with regional dependencies iterate in lockstep");
    return TaskStatus::incomplete;
  }
  node.at_barrier = false;
  progressed = true;
  return ApplyIteration(node, progressed);
}

TaskStatus TaskEngine::ApplyIteration(TaskNode& node, bool& progressed) {
  if (node.want_more) {
    ++node.iteration;
    // Keep the iteration count while resetting the sublist's own tasks.
    const int iteration = node.iteration;
    ResetList(*node.sublist);
    node.iteration = iteration;
    progressed = true;
    return TaskStatus::incomplete;
  }
  return TaskStatus::complete;
}

void TaskEngine::RunSweeps(std::vector<int>& lists) {
  EnterCycle(cycle_);
  running_.fetch_add(1);
  struct Leave {
    std::atomic<int>& running;
    ~Leave() { running.fetch_sub(1); }
  } leave{running_};
  int idle = 0;
  while (!lists.empty() && !Stopped()) {
    PauseIfAsked();
    BeginSweep();
    bool progressed = false;
    for (std::size_t k = 0; k < lists.size() && !Stopped();) {
      if (SweepList(lists[k], progressed))
        lists.erase(lists.begin() + static_cast<std::ptrdiff_t>(k));
      else
        ++k;
    }
    if (progressed) {
      if (!progressed_.load(std::memory_order_relaxed))
        progressed_.store(true, std::memory_order_relaxed);
      idle = 0;
      continue;
    }
    CallHooks();
    // The watchdog's clock is read on every 32nd idle sweep only (a sweep is ~100 ns).
    if ((++idle & 31) == 0) CheckWatchdog();
    Backoff(idle);
  }
}

bool TaskEngine::SweepList(int i, bool& progressed) {
  return RunList(*region_.lists_[static_cast<std::size_t>(i)], i, false, progressed);
}

void TaskEngine::CallHooks() {
  // One thread runs the hooks at a time; one that finds them busy (run by another, or
  // being added or removed) skips this idle sweep. One try-lock: a second mutex cost a
  // cycle through the MPI library's schedule about 250 instructions (scripts/profile-cycle.sh).
  std::unique_lock<std::mutex> lock(executor_.hooks_mutex_, std::try_to_lock);
  if (!lock) return;
  for (auto& [handle, hook] : executor_.hooks_) {
    try {
      hook();
    } catch (const std::exception& e) {
      Fail("progress hook", -1, std::string("progress hook failed: ") + e.what(),
           std::current_exception());
      return;
    }
  }
}

void TaskEngine::Backoff(int idle) const {
  const auto& o = executor_.options_;
  if (idle <= o.spin_sweeps) return;
  if (idle <= o.spin_sweeps + o.yield_sweeps) {
    std::this_thread::yield();
    return;
  }
  const int doublings = std::min(idle - o.spin_sweeps - o.yield_sweeps, 30);
  const auto sleep = std::min<std::chrono::microseconds>(
      o.max_sleep, std::chrono::microseconds(std::int64_t(1) << std::min(doublings, 20)));
  std::this_thread::sleep_for(sleep);
}

std::string TaskEngine::WatchdogReport() const {
  std::ostringstream r;
  const double seconds = executor_.options_.watchdog.count();
  r << "task watchdog: the region has not finished after " << seconds << " s.\n" << PendingTasks();
  std::lock_guard<std::mutex> lock(executor_.sections_mutex_);
  for (const auto& [handle, section] : executor_.sections_) {
    try {
      r << section();
    } catch (const std::exception& e) {
      r << "  (a report section failed: " << e.what() << ")\n";
    }
  }
  return r.str();
}

std::string TaskEngine::PendingTasks() const {
  std::ostringstream r;
  std::function<void(const TaskList&, int, const std::string&)> list_report =
      [&](const TaskList& list, int index, const std::string& indent) {
        for (int t : list.runtime_->pending) {
          const TaskNode& node = *list.tasks_[static_cast<std::size_t>(t)];
          r << indent << "list " << index << ": '" << node.label << "' ";
          if (Ready(list, node)) {
            if (node.sublist)
              r << "(sublist, iteration " << node.iteration + 1
                << (node.at_barrier ? ", waiting for the other lists to finish the iteration" : "")
                << ")\n";
            else
              r << "returns incomplete\n";
          } else {
            r << "waits for";
            for (int d : node.deps) {
              const TaskNode& dep = *list.tasks_[static_cast<std::size_t>(d)];
              if (!dep.done)
                r << " '" << dep.label << "'";
              else if (dep.group)
                r << " regional key " << dep.group->key.ToString();
            }
            r << "\n";
          }
          if (node.sublist) list_report(*node.sublist, index, indent + "  ");
        }
      };
  for (int i = 0; i < region_.size(); ++i)
    list_report(*region_.lists_[static_cast<std::size_t>(i)], i, "  ");
  for (const auto& g : region_.groups_) {
    std::string done_lists, waiting;
    for (int i = 0; i < g->size; ++i) {
      const TaskNode* m = g->members[static_cast<std::size_t>(i)];
      (m->done ? done_lists : waiting) += " " + std::to_string(i);
    }
    if (waiting.empty()) continue;
    r << "  regional key " << g->key.ToString() << ": done in list(s)"
      << (done_lists.empty() ? " none" : done_lists) << "; waiting for list(s)" << waiting << "\n";
  }
  return r.str();
}

template <class Read>
void TaskEngine::WhilePaused(Read&& read) {
  pause_.store(true, std::memory_order_release);
  // The caller, when it is a worker of this run, does not pause itself.
  const int others = running_.load() - (CurrentCycle() == cycle_ ? 1 : 0);
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  while (paused_.load() < others && std::chrono::steady_clock::now() < give_up)
    std::this_thread::yield();
  read();
  pause_.store(false, std::memory_order_release);
}

std::string TaskEngine::PendingReport() {
  reported_.store(true);
  std::string text;
  WhilePaused([&] { text = PendingTasks(); });
  return text;
}

void TaskEngine::PauseIfAsked() {
  if (!pause_.load(std::memory_order_acquire)) return;
  paused_.fetch_add(1);
  while (pause_.load(std::memory_order_acquire)) std::this_thread::yield();
  paused_.fetch_sub(1);
}

// Writes the report while the other workers wait at the top of their sweeps (a worker busy
// inside a task for over a second is not waited for; its lists may then be read as they
// change, which only blurs the report).
void TaskEngine::ReportOnce() {
  if (reported_.exchange(true)) return;
  std::string text;
  WhilePaused([&] { text = WatchdogReport(); });
  text += "  (reported once; the execution goes on waiting)\n";
  const auto& sink = executor_.options_.report;
  try {
    if (sink) {
      sink(text);
      return;
    }
  } catch (...) {
  }
  std::fputs(text.c_str(), stderr);
  std::fflush(stderr);
}

void TaskEngine::CheckWatchdog() {
  const double limit = executor_.options_.watchdog.count();
  if (limit <= 0) return;
  const auto now = std::chrono::steady_clock::now();
  // The clock starts at the first look (no clock read per run).
  if (last_progress_ns_.load(std::memory_order_relaxed) == 0) {
    std::int64_t unset = 0;
    last_progress_ns_.compare_exchange_strong(unset, now.time_since_epoch().count(),
                                              std::memory_order_relaxed);
    return;
  }
  if (executor_.options_.on_watchdog == WatchdogAction::report) {
    if (reported_.load(std::memory_order_relaxed)) return;
    if (progressed_.exchange(false, std::memory_order_relaxed)) {
      last_progress_ns_.store(now.time_since_epoch().count(), std::memory_order_relaxed);
      return;
    }
    const auto last = std::chrono::steady_clock::time_point(
        std::chrono::steady_clock::duration(last_progress_ns_.load(std::memory_order_relaxed)));
    if (std::chrono::duration<double>(now - last).count() >= limit) ReportOnce();
    return;
  }
  // Fail: the time since the first look (a task completing does not reset it).
  if (start_ns_.load(std::memory_order_relaxed) == 0) {
    std::int64_t unset = 0;
    start_ns_.compare_exchange_strong(unset, last_progress_ns_.load(std::memory_order_relaxed),
                                      std::memory_order_relaxed);
  }
  const double elapsed =
      std::chrono::duration<double>(
          now.time_since_epoch() -
          std::chrono::steady_clock::duration(start_ns_.load(std::memory_order_relaxed)))
          .count();
  if (elapsed < limit || watchdog_fired_.exchange(true)) return;
  // Stop every worker; the report is written once they have all stopped (FinishWatchdog),
  // so that it reads the lists' state without racing them.
  stop_.store(true, std::memory_order_release);
}

void TaskEngine::FinishWatchdog() {
  if (watchdog_fired_.load() && !failed_) Fail("watchdog", -1, WatchdogReport());
}

}  // namespace detail

Executor::Executor(ExecutorOptions options) : options_(std::move(options)) {}
Executor::~Executor() = default;

int Executor::AddProgressHook(std::function<void()> hook) {
  std::lock_guard<std::mutex> lock(hooks_mutex_);
  hooks_.emplace_back(next_hook_, std::move(hook));
  return next_hook_++;
}

void Executor::RemoveProgressHook(int handle) {
  std::lock_guard<std::mutex> lock(hooks_mutex_);
  hooks_.erase(std::remove_if(hooks_.begin(), hooks_.end(),
                              [handle](const auto& h) { return h.first == handle; }),
               hooks_.end());
}

int Executor::AddReportSection(std::function<std::string()> section) {
  std::lock_guard<std::mutex> lock(sections_mutex_);
  sections_.emplace_back(next_section_, std::move(section));
  return next_section_++;
}

void Executor::RemoveReportSection(int handle) {
  std::lock_guard<std::mutex> lock(sections_mutex_);
  sections_.erase(std::remove_if(sections_.begin(), sections_.end(),
                                 [handle](const auto& s) { return s.first == handle; }),
                  sections_.end());
}

std::string Executor::ReportPending() {
  std::lock_guard<std::mutex> lock(engine_mutex_);
  return engine_ ? engine_->PendingReport() : std::string();
}

TaskStatus Executor::Run(TaskRegion& region) {
  region.Validate();
  report_ = TaskReport{};
  detail::TaskEngine engine(*this, region);
  struct Current {
    Executor& executor;
    explicit Current(Executor& e, detail::TaskEngine* engine) : executor(e) {
      std::lock_guard<std::mutex> lock(executor.engine_mutex_);
      executor.engine_ = engine;
    }
    ~Current() {
      std::lock_guard<std::mutex> lock(executor.engine_mutex_);
      executor.engine_ = nullptr;
    }
  } current(*this, &engine);
  if (region.size() > 0) RunLists(engine);
  detail::EndSweeps();
  engine.FinishWatchdog();
  if (!engine.Failed()) return TaskStatus::complete;
  report_ = engine.Report();
  if (auto error = engine.Error()) {
    try {
      std::rethrow_exception(error);
    } catch (...) {
      std::throw_with_nested(TaskError(report_.message, report_.label, report_.list));
    }
  }
  return TaskStatus::fail;
}

void SerialExecutor::RunLists(detail::TaskEngine& engine) {
  lists_.clear();  // kept between executions: no allocation per step
  for (int i = 0; i < engine.NumLists(); ++i) lists_.push_back(i);
  engine.RunSweeps(lists_);
}

ThreadedExecutor::ThreadedExecutor(int threads, bool bind, ExecutorOptions options)
    : Executor(std::move(options)), threads_(std::max(1, threads)), bind_(bind) {}

namespace {
void BindToCore(int worker) {
#if TRIBUTARY_TASKS_HWLOC
  hwloc_topology_t topo;
  if (hwloc_topology_init(&topo) != 0) return;
  if (hwloc_topology_load(topo) == 0) {
    const int cores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
    if (cores > 0) {
      hwloc_obj_t core = hwloc_get_obj_by_type(topo, HWLOC_OBJ_CORE, worker % cores);
      if (core) hwloc_set_cpubind(topo, core->cpuset, HWLOC_CPUBIND_THREAD);
    }
  }
  hwloc_topology_destroy(topo);
#else
  (void)worker;
#endif
}
}  // namespace

void ThreadedExecutor::RunLists(detail::TaskEngine& engine) {
  const int n = engine.NumLists();
  const int workers = std::min(threads_, n);
  auto work = [&engine, n, workers, this](int w) {
    if (bind_) BindToCore(w);
    std::vector<int> mine;
    for (int i = w; i < n; i += workers) mine.push_back(i);
    engine.RunSweeps(mine);
    detail::EndSweeps();
  };
  std::vector<std::thread> threads;
  for (int w = 1; w < workers; ++w) threads.emplace_back(work, w);
  work(0);
  for (auto& t : threads) t.join();
}

}  // namespace tributary
