// Failures across ranks: the watchdog names the ranks and lists that did not contribute,
// a failure reported on one rank reaches the others (FailurePolicy::propagate), and MPI
// errors on Tributary's communicators become tributary::MpiError with the library's text.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "context/context_impl.hpp"  // the Context's own communicators
#include "mpi_test.hpp"
#include "tributary/tributary.hpp"

namespace {

using tributary::TaskID;
using tributary::TaskStatus;
using tributary::testing::Rank;
using tributary::testing::Size;

bool Contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

tributary::ContextOptions Propagating(double watchdog_seconds) {
  tributary::ContextOptions options;
  options.on_failure = tributary::FailurePolicy::propagate;
  options.watchdog = std::chrono::duration<double>(watchdog_seconds);
  options.on_watchdog = tributary::WatchdogAction::fail;
  return options;
}

// Lets a failed generation's network phase finish so that the object can be destroyed.
template <class R>
void Drain(tributary::Context& ctx, R& r) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (r.InFlight() && std::chrono::steady_clock::now() < until) {
    try {
      ctx.Progress();
    } catch (const tributary::Error&) {
    }
  }
}

TEST(Failures, WatchdogNamesTheRankAndTheListThatDidNotContribute) {
  // 1.5 s: the slow rank then waits as long for the others' status answers, which a
  // loaded machine (the suite runs tests side by side) may delay by a fraction of that.
  tributary::Context ctx(Propagating(1.5));
  tributary::AllReduce<double> r(ctx, "energy");
  const int slow = Size() - 1;
  r.Expect(2, tributary::Sum{});
  r.Contribute(0, 1.0);
  if (Rank() != slow) r.Contribute(1, 1.0);  // the last rank withholds list 1
  std::string report;
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (report.empty() && std::chrono::steady_clock::now() < until) {
    try {
      ctx.Progress();
      r.CheckReduce();
    } catch (const tributary::Error& e) {
      report = e.what();
    }
  }
  TRIBUTARY_EXPECT_ALL(Contains(report, "watchdog: AllReduce<double> 'energy'"));
  TRIBUTARY_EXPECT_ALL(Contains(report, "rank " + std::to_string(slow) +
                                            ": generation 1 collecting: 1 of 2 lists "
                                            "contributed, missing lists: 1"));
  if (Size() > 1) TRIBUTARY_EXPECT_ALL(Contains(report, "rank 0: generation 1 in flight"));
  EXPECT_EQ(r.State(), tributary::Phase::failed);
  Drain(ctx, r);
  TRIBUTARY_EXPECT_ALL(!r.InFlight());
}

TEST(Failures, AFailedTaskOnOneRankFailsTheOthersInsteadOfHangingThem) {
  tributary::Context ctx(Propagating(0));
  tributary::AllReduce<int> r(ctx, "after-failure");
  const int bad = Size() - 1;
  tributary::TaskCollection tc;
  auto& region = tc.AddRegion(2);
  r.Expect(2, tributary::Sum{});
  for (int i = 0; i < 2; ++i) {
    auto work = region[i].AddTask(TaskID(), "work", [i, bad] {
      return Rank() == bad && i == 1 ? TaskStatus::fail : TaskStatus::complete;
    });
    auto c = region[i].AddTask(work, [&, i] { return r.Contribute(i, 1); });
    region[i].AddTask(c, [&] { return r.CheckReduce(); });
  }
  std::string message;
  TaskStatus status = TaskStatus::complete;
  try {
    status = ctx.Execute(tc);
  } catch (const tributary::Error& e) {
    message = e.what();
    status = TaskStatus::fail;
  } catch (const std::exception& e) {
    message = e.what();
    status = TaskStatus::fail;
  }
  TRIBUTARY_EXPECT_ALL(status == TaskStatus::fail);
  if (Rank() != bad) {
    EXPECT_TRUE(Contains(message, "rank " + std::to_string(bad) + " failed")) << message;
  }
  Drain(ctx, r);
  TRIBUTARY_EXPECT_ALL(!r.InFlight());
}

#if TRIBUTARY_HAVE_MPI
// Tributary's own communicators return MPI errors instead of aborting; they become
// tributary::MpiError with the library's text.
TEST(Failures, MpiErrorsOnOwnCommunicatorsBecomeMpiError) {
  tributary::Context ctx;
  std::string message;
  int code = 0;
  try {
    tributary::detail::CheckMpi(
        MPI_Send(nullptr, -1, MPI_INT, 0, 0, tributary::detail::StateOf(ctx).net.comm), "MPI_Send");
  } catch (const tributary::MpiError& e) {
    message = e.what();
    code = e.code();
  }
  TRIBUTARY_EXPECT_ALL(code != 0 && Contains(message, "MPI_Send failed (MPI error"));
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(code, text, &len);
  TRIBUTARY_EXPECT_ALL(len > 0 &&
                       Contains(message, std::string(text, static_cast<std::size_t>(len))));
}
#endif

}  // namespace
