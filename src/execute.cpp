// Context::Execute: runs a task collection with the Context's progress hook and applies
// the failure policy. Kept apart so that the rest of the Context does not see the executors.
#include "context_impl.hpp"
#include "tributary/context.hpp"
#include "tributary/errors.hpp"
#include "tributary/tasks.hpp"

namespace tributary {

TaskStatus Context::Execute(TaskCollection& tasks, Executor& executor) {
  // The hook lives for this execution only: an executor may be reused with other Contexts.
  struct HookGuard {
    Executor& executor;
    int handle;
    ~HookGuard() { executor.RemoveProgressHook(handle); }
  } guard{executor, executor.AddProgressHook([this] { Progress(); })};
  struct Hooked {
    std::atomic<int>& runs;
    ~Hooked() { runs.fetch_sub(1, std::memory_order_relaxed); }
  } hooked{impl_->registry.hooked_runs};
  hooked.runs.fetch_add(1, std::memory_order_relaxed);
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
    const auto& report = executor.LastReport();
    ReportFailure(report.message.empty() ? std::string("a task failed") : report.message);
  }
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
