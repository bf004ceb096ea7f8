// A program that starts MPI with plain MPI_Init (as Parthenon does) and polls a reduction
// from a worker thread: the start is refused with a UsageError that says what to do, and
// nothing is left in flight. Run by CTest at 2 ranks, which expects "PASS" from the message.
#include <cstdio>
#include <string>
#include <thread>

#include "tributary/tributary.hpp"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int provided = 0;
  MPI_Query_thread(&provided);
  {
    tributary::Context ctx;
    tributary::AllReduce<double> r(ctx, "worker");
    std::string message;
    std::thread worker([&] {
      try {
        r.val = 1.0;
        r.StartReduce(tributary::Sum{});
      } catch (const tributary::UsageError& e) {
        message = e.what();
      }
    });
    worker.join();
    const bool advice =
        message.find("MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided)") !=
            std::string::npos &&
        message.find("ParthenonInit") != std::string::npos &&
        message.find("rank " + std::to_string(ctx.Rank())) != std::string::npos;
    if (provided >= MPI_THREAD_SERIALIZED)
      std::printf("PASS (this MPI gives MPI_THREAD_SERIALIZED to plain MPI_Init)\n");
    else if (advice && !r.InFlight())
      std::printf("PASS: %s\n", message.c_str());
    else
      std::printf("FAIL: %s\n", message.empty() ? "the start was not refused" : message.c_str());
  }
  MPI_Finalize();
  return 0;
}
