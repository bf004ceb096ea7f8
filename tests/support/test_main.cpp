// The one main for Tributary's MPI test suites.
//  - Initialises MPI (MPI_THREAD_MULTIPLE requested), then Kokkos when enabled.
//  - Fails at once when the rank count differs from --tributary-np=N: a launcher that
//    belongs to another MPI library starts N singletons that would all "pass".
//  - Only rank 0 prints. After every test the ranks agree on the outcome: a failure on any
//    rank is printed by rank 0 with that rank's messages, counts as a failure everywhere,
//    and every rank exits with the same code.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "mpi_test.hpp"
#include "tributary/config.hpp"

#if TRIBUTARY_HAVE_MPI
#include <mpi.h>
#endif
#if TRIBUTARY_HAVE_KOKKOS
#include <Kokkos_Core.hpp>
#endif

namespace tributary::testing {

int Rank() {
#if TRIBUTARY_HAVE_MPI
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
#else
  return 0;
#endif
}

int Size() {
#if TRIBUTARY_HAVE_MPI
  int s = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
#else
  return 1;
#endif
}

bool AllTrue(bool local) {
#if TRIBUTARY_HAVE_MPI
  int in = local ? 1 : 0, out = 0;
  MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return out != 0;
#else
  return local;
#endif
}

bool AnyTrue(bool local) {
#if TRIBUTARY_HAVE_MPI
  int in = local ? 1 : 0, out = 0;
  MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return out != 0;
#else
  return local;
#endif
}

std::vector<std::int64_t> AllGather(std::int64_t local) {
  std::vector<std::int64_t> all(static_cast<std::size_t>(Size()));
#if TRIBUTARY_HAVE_MPI
  MPI_Allgather(&local, 1, MPI_INT64_T, all.data(), 1, MPI_INT64_T, MPI_COMM_WORLD);
#else
  all[0] = local;
#endif
  return all;
}

std::vector<std::string> AllGatherBytes(const std::string& local) {
#if TRIBUTARY_HAVE_MPI
  const int n = Size();
  int len = static_cast<int>(local.size());
  std::vector<int> lens(static_cast<std::size_t>(n)), displs(static_cast<std::size_t>(n));
  MPI_Allgather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, MPI_COMM_WORLD);
  int total = 0;
  for (int r = 0; r < n; ++r) {
    displs[static_cast<std::size_t>(r)] = total;
    total += lens[static_cast<std::size_t>(r)];
  }
  std::string all(static_cast<std::size_t>(total), '\0');
  // Nothing to gather is the common case; SMPI 3.32 (ompi selector) divides by zero there.
  if (total > 0)
    MPI_Allgatherv(local.data(), len, MPI_CHAR, all.data(), lens.data(), displs.data(), MPI_CHAR,
                   MPI_COMM_WORLD);
  std::vector<std::string> out;
  for (int r = 0; r < n; ++r)
    out.push_back(all.substr(static_cast<std::size_t>(displs[static_cast<std::size_t>(r)]),
                             static_cast<std::size_t>(lens[static_cast<std::size_t>(r)])));
  return out;
#else
  return {local};
#endif
}

void Barrier() {
#if TRIBUTARY_HAVE_MPI
  MPI_Barrier(MPI_COMM_WORLD);
#endif
}

namespace {

// Prints on rank 0 only, after agreeing with the other ranks on each test's outcome.
class CollectivePrinter : public ::testing::EmptyTestEventListener {
 public:
  void OnTestProgramStart(const ::testing::UnitTest& unit) override {
    if (Rank() == 0)
      std::printf("[==========] Running %d tests on %d rank(s).\n", unit.test_to_run_count(),
                  Size());
  }
  void OnTestStart(const ::testing::TestInfo& info) override {
    if (Rank() == 0) {
      std::printf("[ RUN      ] %s.%s\n", info.test_suite_name(), info.name());
      std::fflush(stdout);
    }
  }
  void OnTestPartResult(const ::testing::TestPartResult& result) override {
    if (result.type() == ::testing::TestPartResult::kSuccess) return;
    if (result.type() == ::testing::TestPartResult::kSkip) return;
    messages_ += std::string(result.file_name() ? result.file_name() : "?") + ":" +
                 std::to_string(result.line_number()) + ": " + result.message() + "\n";
  }
  void OnTestEnd(const ::testing::TestInfo& info) override {
    const bool failed = info.result()->Failed();
    const auto texts = AllGatherBytes(failed ? messages_ : std::string());
    const auto flags = AllGather(failed ? 1 : 0);
    messages_.clear();
    bool any = false;
    for (auto f : flags) any = any || f != 0;
    const std::string name = std::string(info.test_suite_name()) + "." + info.name();
    if (any) failed_tests_.push_back(name);
    if (info.result()->Skipped() && !any) ++skipped_;
    if (Rank() != 0) return;
    for (std::size_t r = 0; r < flags.size(); ++r)
      if (flags[r]) std::printf("rank %zu:\n%s", r, texts[r].c_str());
    if (any)
      std::printf("[  FAILED  ] %s\n", name.c_str());
    else if (info.result()->Skipped())
      std::printf("[  SKIPPED ] %s\n", name.c_str());
    else
      std::printf("[       OK ] %s (%lld ms)\n", name.c_str(),
                  static_cast<long long>(info.result()->elapsed_time()));
    std::fflush(stdout);
  }
  void OnTestProgramEnd(const ::testing::UnitTest& unit) override {
    if (Rank() != 0) return;
    const int total = unit.test_to_run_count();
    const int failed = static_cast<int>(failed_tests_.size());
    std::printf("[==========] %d tests ran on %d rank(s).\n", total, Size());
    std::printf("[  PASSED  ] %d tests.\n", total - failed - skipped_);
    if (skipped_) std::printf("[  SKIPPED ] %d tests.\n", skipped_);
    for (const auto& t : failed_tests_) std::printf("[  FAILED  ] %s\n", t.c_str());
    std::fflush(stdout);
  }
  bool AnyFailed() const { return !failed_tests_.empty(); }

 private:
  std::string messages_;
  std::vector<std::string> failed_tests_;
  int skipped_ = 0;
};

int ExpectedRanks(int argc, char** argv) {
  const char* flag = "--tributary-np=";
  for (int i = 1; i < argc; ++i)
    if (std::strncmp(argv[i], flag, std::strlen(flag)) == 0)
      return std::atoi(argv[i] + std::strlen(flag));
  return 0;
}

}  // namespace
}  // namespace tributary::testing

int main(int argc, char** argv) {
  using namespace tributary::testing;
#if TRIBUTARY_HAVE_MPI
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
#endif
  int rc = 0;
  {
    const int expected = ExpectedRanks(argc, argv);
    if (expected > 0 && expected != Size()) {
      std::fprintf(stderr,
                   "test main: started on %d rank(s) but registered for %d: the launcher "
                   "does not belong to the MPI library this test was built with\n",
                   Size(), expected);
#if TRIBUTARY_HAVE_MPI
      MPI_Abort(MPI_COMM_WORLD, 3);
#endif
      return 3;
    }
#if TRIBUTARY_HAVE_KOKKOS
    Kokkos::initialize(argc, argv);
#endif
    ::testing::InitGoogleTest(&argc, argv);
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    auto* printer = new CollectivePrinter;
    listeners.Append(printer);
    const int local = RUN_ALL_TESTS();
    const bool any_failed = printer->AnyFailed();
    rc = AnyTrue(local != 0 || any_failed) ? 1 : 0;
#if TRIBUTARY_HAVE_KOKKOS
    Kokkos::finalize();
#endif
  }
#if TRIBUTARY_HAVE_MPI
  MPI_Finalize();
#endif
  return rc;
}
