// A framework may finalise MPI before its objects and their Context go: MPI_Finalize has
// let go of every communicator and request, so their destruction is quiet (nothing to free,
// nothing reported) and exits cleanly. Run by CTest, which expects "PASS".
#include <cstdio>
#include <memory>
#include <string>

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
#if TRIBUTARY_HAVE_MPI
  MPI_Finalize();
#endif
  r.reset();
  ctx.reset();  // before `user`, after `r`: any order
  user.reset();
  if (!reported.empty()) {
    std::printf("FAIL: %s\n", reported.c_str());
    return 1;
  }
  std::printf("PASS: destroyed after MPI_Finalize without a report\n");
  return 0;
}
