// Context::Execute: runs a task collection with the Context's progress hook, applies the
// failure policy, and ends the cycle (the generations no list of this rank polls). Kept
// apart so that the rest of the Context does not see the executors.
#include <algorithm>

#include "context/context_impl.hpp"
#include "tributary/context.hpp"
#include "tributary/errors.hpp"
#include "tributary/tasks.hpp"

namespace tributary {

namespace detail {

bool ContextImpl::UnpolledLeft(std::uint64_t first_cycle) {
  std::lock_guard<std::mutex> lock(registry.mutex);
  for (ReductionCore* core : registry.objects) {
    if (core->Expected() != 0 || core->ArmedCycle() < first_cycle) continue;
    if (core->AwaitingClient()) core->PollClient();
    if (core->State() == Phase::in_flight || core->AwaitingClient()) return true;
  }
  return false;
}

void ContextImpl::CompleteUnpolled(Context& ctx, std::uint64_t first_cycle) {
  while (UnpolledLeft(first_cycle)) ctx.Progress();
}

void ContextImpl::ForeignCycleEnded(void* self, std::uint64_t cycle) noexcept {
  auto& ctx = *static_cast<Context*>(self);
  auto& d = StateOf(ctx);
  if (d.size > 1 && !d.net.MayCallMpi()) return;
  try {
    d.CompleteUnpolled(ctx, cycle);
  } catch (...) {
    // A failure: the generations have failed with it, and their objects throw it.
  }
}

}  // namespace detail

TaskStatus Context::Execute(TaskCollection& tasks, Executor& executor) {
  auto& d = *impl_;
  if (!d.net.MayCallMpi())
    d.net.ThrowWrongThread("tributary::Context::Execute on rank " + std::to_string(d.rank));
  if (d.control.Failed()) throw RemoteError(d.control.FailureOrigin(), d.control.FailureText());
  // The hook lives for this execution only: an executor may be reused with other Contexts.
  struct HookGuard {
    Executor& executor;
    int handle;
    ~HookGuard() { executor.RemoveProgressHook(handle); }
  } guard{executor, executor.AddProgressHook([this] { Progress(); })};
  struct Hooked {
    detail::Registry& registry;
    Executor& executor;
    int section;
    ~Hooked() {
      executor.RemoveReportSection(section);
      std::lock_guard<std::mutex> lock(registry.mutex);
      auto& v = registry.executors;
      v.erase(std::find(v.begin(), v.end(), &executor));
      registry.hooked_runs.fetch_sub(1, std::memory_order_relaxed);
    }
  } hooked{d.registry, executor,
           // One hang report whichever watchdog fires: the task watchdog's names the
           // objects too, the Context's the tasks (ControlPlane::RunWatchdog).
           executor.AddReportSection([this] { return impl_->control.ObjectsReport(); })};
  {
    std::lock_guard<std::mutex> lock(d.registry.mutex);
    d.registry.executors.push_back(&executor);
    d.registry.hooked_runs.fetch_add(1, std::memory_order_relaxed);
  }
  // Generations armed from here on (and just before: the driver's Expect) belong to it.
  const std::uint64_t first_cycle = detail::CycleStamp();
  TaskStatus status = TaskStatus::fail;
  try {
    status = tasks.Execute(executor);
  } catch (const RemoteError&) {
    throw;  // another rank failed and already told everyone
  } catch (const TaskError& e) {
    // A task or the progress hook saw another rank's failure: nothing new to report.
    try {
      std::rethrow_if_nested(e);
    } catch (const RemoteError&) {
      throw;
    } catch (...) {
    }
    ReportFailure(e.what());
    throw;
  } catch (const std::exception& e) {
    ReportFailure(e.what());
    throw;
  }
  if (status == TaskStatus::fail) {
    // A task that returned fail, or the task watchdog: the failure as every rank sees it.
    const auto& report = executor.LastReport();
    d.FailByPolicy(report.message.empty() ? std::string("a task failed") : report.message,
                   report.label == "watchdog" ? 2 : 1);
    throw RemoteError(d.control.FailureOrigin(), d.control.FailureText());
  }
  // No list of this rank polls a generation that expects no contribution here (a rank with
  // no lists): the cycle ends once it has completed, so that its result is in `val` here
  // as on the ranks whose lists polled it.
  d.CompleteUnpolled(*this, first_cycle);
  return status;
}

TaskStatus Context::Execute(TaskCollection& tasks) {
  ExecutorOptions options;
  // The task watchdog reads the wall clock; under SimGrid SMPI, where a simulated second
  // takes far longer, it is off (the Context's watchdog counts simulated time).
  options.watchdog = TRIBUTARY_HAVE_SMPI ? std::chrono::duration<double>(0) : Options().watchdog;
  options.on_watchdog = Options().on_watchdog;
  options.report = Options().report_handler;
  SerialExecutor executor(options);
  return Execute(tasks, executor);
}

}  // namespace tributary
