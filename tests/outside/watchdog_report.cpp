// One hang report whichever watchdog fires, on every rank, at every rank count: an
// AllReduce that every list polls and no rank ever starts. The task watchdog of Tributary's
// executors and the Context's watchdog both run; whichever writes the report, it names the
// object, every rank's line ("polled but never started") and, under Tributary's executors,
// the task that polls it.
//   --action=report: each rank's report arrives through ContextOptions::report_handler and
//     the program then lets its tasks go (the report does not end the run by itself);
//   --action=fail (FailurePolicy::propagate): the report is the exception every rank
//     catches.
//   --executor=serial|threaded|foreign. Exits 0 when every rank saw such a report, else 1.
#include <atomic>
#include <chrono>
#include <mutex>
#include <optional>
#include <string>

#include "outside_support.hpp"

namespace {

using outside::Contains;
using outside::Rank;
using outside::Size;
using tributary::TaskStatus;
constexpr const char* kProgram = "watchdog_report";

bool Complete(const std::string& report, const std::string& executor) {
  bool ok = Contains(report, "AllReduce<double> 'dt_never_started'");
  for (int r = 0; r < Size(); ++r)
    ok = ok && Contains(report, "rank " + std::to_string(r) + ": polled but never started");
  if (executor != "foreign") ok = ok && Contains(report, "'poll dt'");
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string action = outside::Arg(argc, argv, "action", "report");
  const std::string executor = outside::Arg(argc, argv, "executor", "serial");
  int provided = 0;
  // The tasks make MPI calls of their own (a non-blocking barrier) beside Tributary's.
  MPI_Init_thread(&argc, &argv, executor == "serial" ? MPI_THREAD_SINGLE : MPI_THREAD_MULTIPLE,
                  &provided);
  std::string report;
  {
    std::mutex report_mutex;
    std::atomic<bool> reported{false};
    tributary::ContextOptions options;
    options.watchdog = std::chrono::seconds(1);
    if (action == "fail") {
      options.on_watchdog = tributary::WatchdogAction::fail;
      options.on_failure = tributary::FailurePolicy::propagate;
    } else {
      options.report_handler = [&](const std::string& text) {
        std::lock_guard<std::mutex> lock(report_mutex);
        if (report.empty()) report = text;
        reported = true;
      };
    }
    tributary::Context ctx(options);
    tributary::AllReduce<double> dt(ctx, "dt_never_started");
    // Once this rank has its report, every rank waits for the others' (a barrier of the
    // program's own), polling its Context meanwhile so that it answers their questions.
    MPI_Request barrier = MPI_REQUEST_NULL;
    std::mutex barrier_mutex;
    auto poll = [&]() -> TaskStatus {
      if (!reported) return dt.CheckReduce();
      ctx.Progress();  // answers the others' watchdogs while they gather their reports
      std::lock_guard<std::mutex> lock(barrier_mutex);
      if (barrier == MPI_REQUEST_NULL) MPI_Ibarrier(MPI_COMM_WORLD, &barrier);
      int done = 0;
      MPI_Test(&barrier, &done, MPI_STATUS_IGNORE);
      return done ? TaskStatus::complete : TaskStatus::incomplete;
    };
    try {
      if (executor == "foreign") {
        outside::Pool pool(2);
        outside::Lists lists(2, std::vector<outside::Task>{poll});
        tributary::ForeignCycle cycle;
        pool.Run(lists);
      } else {
        tributary::TaskCollection tc;
        auto& region = tc.AddRegion(2);
        for (int b = 0; b < 2; ++b) region[b].AddTask(tributary::TaskID(), "poll dt", poll);
        if (executor == "threaded") {
          tributary::ExecutorOptions eo;
          eo.watchdog = options.watchdog;
          eo.on_watchdog = options.on_watchdog;
          eo.report = options.report_handler;
          tributary::ThreadedExecutor threaded(2, false, eo);
          ctx.Execute(tc, threaded);
        } else {
          ctx.Execute(tc);
        }
      }
    } catch (const std::exception& e) {
      report = e.what();
    }
  }
  const bool ok = Complete(report, executor);
  outside::Say(kProgram, (ok ? "complete report:\n" : "INCOMPLETE report:\n") + report);
  const bool all = outside::AllTrue(ok);
  MPI_Finalize();
  return all ? 0 : 1;
}
