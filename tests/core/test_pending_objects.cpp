// What the MPI library's collectives left pending after a failure keep using: the datatypes
// and operators, watched through PMPI (support/pending_objects.hpp). A suite of its own: its
// MPI_Test, MPI_Wait and MPI_Start wrappers call PMPI directly, past the perturbation layer
// that scripts/run-perturbed.sh preloads, which the other core suites keep.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "mpi_test.hpp"
#include "pending_objects.hpp"
#include "reduction_test.hpp"
#include "tributary/tributary.hpp"

namespace {

using tributary::TaskStatus;
using tributary::testing::MessageOf;
using tributary::testing::Rank;
using tributary::testing::Size;
using tributary::testing::Wait;

// A failed generation's collective on the MPI library's schedule that another rank never
// started is left pending (Lifecycle.AFailedLibraryCollectiveGivesUpTheBuffersItUses); on
// Tributary's own operator the packed datatype it runs on is left to it too, never freed
// while it is pending. Open MPI 4.1's persistent allreduce does not hold on to its
// datatype: freed, the request went on combining with it and wrote past its buffers (a heap
// corruption after the failure, seen under the threaded executor). A small batch runs on a
// persistent request, a large vector on MPI_Iallreduce.
TEST(PendingObjects, AFailedLibraryCollectiveKeepsTheDatatypeItUses) {
  if (Size() < 2) GTEST_SKIP() << "needs a rank that never starts";
  std::vector<std::string> reported;
  tributary::ContextOptions options;
  options.watchdog = std::chrono::seconds(10);
  options.on_failure = tributary::FailurePolicy::propagate;
  options.error_handler = [&](const std::string& m) { reported.push_back(m); };
  options.communicator_pool = 4;
  options.allreduce_schedule = tributary::ScheduleKind::mpi_library;
  options.debug = tributary::DebugLevel::none;  // the vector's data goes out at once
  auto ctx = std::make_unique<tributary::Context>(options);
  auto step = std::make_unique<tributary::Batch>(*ctx, "step");
  auto& dt = step->Add<double>(tributary::Min{}, "dt");
  auto& mass = step->Add<double>(tributary::Sum{}, "mass");
  auto field = std::make_unique<tributary::AllReduce<std::vector<double>>>(*ctx, "field");
  const auto add = tributary::MakeOp<tributary::Commutes::yes>(
      [](const double& in, double& inout) { inout += in; }, 0.0);
  const std::size_t n = 1000;  // 8 KB: above the persistent request's 4 KiB
  auto generation = [&] {
    step->Expect(1);
    dt.Contribute(0, 1.0 + Rank());
    mass.Contribute(0, 2.0);
    field->val.assign(n, 1.0);
    field->StartReduce(add);
  };
  generation();  // a whole one first: the persistent request is made, used and at rest
  Wait(*step);
  Wait(*field);
  TRIBUTARY_EXPECT_ALL(dt.val == 1.0 && mass.val == 2.0 * Size() &&
                       field->val == std::vector<double>(n, 1.0 * Size()));
  const bool starts = Rank() != Size() - 1;
  if (starts) generation();
  tributary::testing::Barrier();
  if (!starts) ctx->ReportFailure("injected: this rank starts nothing");
  // The collectives on Tributary's datatypes this rank has in flight (not the control
  // plane's): both objects', on the ranks that started them.
  const int derived = pending_objects::ActiveOnDerivedTypes();
  bool settled = true;
  auto fails = [&](auto& r) {
    if (!starts) return;
    (void)MessageOf<tributary::RemoteError>([&] { Wait(r); });
    for (int polls = 0; polls < 100000 && r.InFlight(); ++polls)
      (void)MessageOf<tributary::RemoteError>([&] { (void)r.CheckReduce(); });
    settled = settled && !r.InFlight();
  };
  fails(*step);
  fails(*field);
  TRIBUTARY_EXPECT_ALL(settled);
  TRIBUTARY_EXPECT_ALL(derived == (starts ? 2 : 0));
  step.reset();
  field.reset();
  ctx.reset();
  // Left pending, the collectives keep their datatypes: none was freed under them.
  TRIBUTARY_EXPECT_ALL(pending_objects::FreedInUse() == 0);
  TRIBUTARY_EXPECT_ALL(reported.empty());
}

}  // namespace
