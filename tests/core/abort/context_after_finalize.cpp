// A framework may finalise MPI before its objects and their Context go: MPI_Finalize has
// let go of every communicator and request, so their destruction is quiet (nothing to free,
// nothing reported) and exits cleanly. On a second Context forced onto the MPI library's
// schedule, whose small generations keep persistent requests between them (a plain one
// and a packed one) when MPI_Finalize comes. Run by CTest (1 and 2 ranks), which expects
// "PASS".
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "tributary/tributary.hpp"

int main(int argc, char** argv) {
#if TRIBUTARY_HAVE_MPI
  MPI_Init(&argc, &argv);
#else
  (void)argc;
  (void)argv;
#endif
  std::string reported;
  tributary::ContextOptions options;
  options.error_handler = [&](const std::string& m) { reported += m; };
  auto ctx = std::make_unique<tributary::Context>(options);
  auto r = std::make_unique<tributary::AllReduce<double>>(*ctx, "done");
  auto user = std::make_unique<tributary::AllReduce<double>>(*ctx, "user operator");
  r->val = 1.0;
  r->StartReduce(tributary::Sum{});
  ctx->Wait(*r);
  user->val = 2.0;
  user->StartReduce(tributary::MakeOp<tributary::Commutes::yes>(
      [](const double& in, double& inout) { inout += in; }, 0.0));
  ctx->Wait(*user);
  tributary::ContextOptions library_options = options;
  library_options.allreduce_schedule = tributary::ScheduleKind::mpi_library;
  auto library = std::make_unique<tributary::Context>(library_options);
  auto kept = std::make_unique<tributary::AllReduce<double>>(*library, "kept request");
  auto packed = std::make_unique<tributary::AllReduce<std::vector<double>>>(*library, "packed");
  for (int i = 0; i < 3; ++i) {
    kept->val = 1.0;
    kept->StartReduce(tributary::Sum{});
    library->Wait(*kept);
    packed->val.assign(4, 1.0);
    packed->StartReduce(tributary::Sum{});
    library->Wait(*packed);
  }
  if (kept->val != library->Size() || packed->val != std::vector<double>(4, library->Size())) {
    std::printf("FAIL: wrong results on the library's schedule\n");
    return 1;
  }
#if TRIBUTARY_HAVE_MPI
  MPI_Finalize();
#endif
  r.reset();
  ctx.reset();  // before `user`, after `r`: any order
  user.reset();
  library.reset();  // before its objects
  kept.reset();
  packed.reset();
  if (!reported.empty()) {
    std::printf("FAIL: %s\n", reported.c_str());
    return 1;
  }
  std::printf("PASS: destroyed after MPI_Finalize without a report\n");
  return 0;
}
