// A Context destroyed after MPI_Finalize cannot free its communicators: its error handler
// reports it (a recording handler here; the default would abort).
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
  options.error_handler = [&](const std::string& m) { reported = m; };
  auto ctx = std::make_unique<tributary::Context>(options);
#if TRIBUTARY_HAVE_MPI
  MPI_Finalize();
#endif
  ctx.reset();
#if TRIBUTARY_HAVE_MPI
  if (reported.find("destroyed after MPI_Finalize") == std::string::npos) {
    std::printf("FAIL: nothing reported\n");
    return 1;
  }
#endif
  std::printf("PASS: %s\n", reported.c_str());
  return 0;
}
