// A PMPI layer that perturbs MPI's progress, loaded with LD_PRELOAD under the test suites:
// real MPI libraries progress differently from this machine's Open MPI, and every MPI is
// allowed to answer a test or a probe "not yet" for a request that could complete, and to
// start a message later than it was posted. At random (seeded, and reported at
// MPI_Finalize) it
//  - answers MPI_Test, MPI_Testall, MPI_Testany, MPI_Testsome, MPI_Iprobe and MPI_Improbe
//    "not yet" without asking the library (never for null requests only, which the standard
//    says complete at once);
//  - delays some posts (MPI_Isend, MPI_Issend, MPI_Irecv, MPI_Iallreduce, MPI_Ireduce,
//    MPI_Iallgather, MPI_Ibarrier, and MPI_Start of a persistent request) by a few
//    microseconds before making them.
// Environment: TRIBUTARY_PERTURB_SEED (1), TRIBUTARY_PERTURB_TEST (the share of tests
// answered "not yet", 0.5), TRIBUTARY_PERTURB_POST (the share of posts delayed, 0.05),
// TRIBUTARY_PERTURB_DELAY_US (the longest delay, 50).
#include <mpi.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <thread>

namespace {

std::uint64_t g_seed = 1;
double g_test_share = 0.5;
double g_post_share = 0.05;
int g_delay_us = 50;
int g_rank = -1;
std::atomic<std::uint64_t> g_draws{0};
std::atomic<long> g_tests{0}, g_refused{0}, g_posts{0}, g_delayed{0};

double Env(const char* name, double fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::atof(v) : fallback;
}

void Configure() {
  g_seed = static_cast<std::uint64_t>(Env("TRIBUTARY_PERTURB_SEED", 1));
  g_test_share = Env("TRIBUTARY_PERTURB_TEST", 0.5);
  g_post_share = Env("TRIBUTARY_PERTURB_POST", 0.05);
  g_delay_us = static_cast<int>(Env("TRIBUTARY_PERTURB_DELAY_US", 50));
  PMPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
}

// A uniform draw in [0, 1): splitmix64 of (seed, rank, the draw's number). The sequence is
// fixed per rank for a given seed; which call gets which draw depends on the calls' order.
double Draw() {
  std::uint64_t z = g_seed * 0x9E3779B97F4A7C15ull +
                    static_cast<std::uint64_t>(g_rank + 1) * 0xBF58476D1CE4E5B9ull +
                    g_draws.fetch_add(1, std::memory_order_relaxed) * 0x94D049BB133111EBull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return static_cast<double>(z >> 11) * 0x1.0p-53;
}

bool NotYet() {
  g_tests.fetch_add(1, std::memory_order_relaxed);
  if (g_rank < 0 || Draw() >= g_test_share) return false;
  g_refused.fetch_add(1, std::memory_order_relaxed);
  return true;
}

void MaybeDelay() {
  g_posts.fetch_add(1, std::memory_order_relaxed);
  if (g_rank < 0 || Draw() >= g_post_share) return;
  g_delayed.fetch_add(1, std::memory_order_relaxed);
  const auto us = static_cast<int>(Draw() * g_delay_us) + 1;
  const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(us);
  while (std::chrono::steady_clock::now() < until) std::this_thread::yield();
}

bool AnyActive(int count, const MPI_Request* requests) {
  for (int i = 0; i < count; ++i)
    if (requests[i] != MPI_REQUEST_NULL) return true;
  return false;
}

}  // namespace

extern "C" {

int MPI_Init(int* argc, char*** argv) {
  const int rc = PMPI_Init(argc, argv);
  Configure();
  return rc;
}

int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  const int rc = PMPI_Init_thread(argc, argv, required, provided);
  Configure();
  return rc;
}

int MPI_Finalize(void) {
  std::fprintf(stderr,
               "perturb: rank %d, seed %llu: %ld of %ld tests and probes answered \"not yet\", "
               "%ld of %ld posts delayed\n",
               g_rank, static_cast<unsigned long long>(g_seed), g_refused.load(), g_tests.load(),
               g_delayed.load(), g_posts.load());
  return PMPI_Finalize();
}

int MPI_Test(MPI_Request* request, int* flag, MPI_Status* status) {
  if (*request != MPI_REQUEST_NULL && NotYet()) {
    *flag = 0;
    return MPI_SUCCESS;
  }
  return PMPI_Test(request, flag, status);
}

int MPI_Testall(int count, MPI_Request requests[], int* flag, MPI_Status statuses[]) {
  if (AnyActive(count, requests) && NotYet()) {
    *flag = 0;
    return MPI_SUCCESS;
  }
  return PMPI_Testall(count, requests, flag, statuses);
}

int MPI_Testany(int count, MPI_Request requests[], int* index, int* flag, MPI_Status* status) {
  if (AnyActive(count, requests) && NotYet()) {
    *flag = 0;
    *index = MPI_UNDEFINED;
    return MPI_SUCCESS;
  }
  return PMPI_Testany(count, requests, index, flag, status);
}

int MPI_Testsome(int incount, MPI_Request requests[], int* outcount, int indices[],
                 MPI_Status statuses[]) {
  if (AnyActive(incount, requests) && NotYet()) {
    *outcount = 0;
    return MPI_SUCCESS;
  }
  return PMPI_Testsome(incount, requests, outcount, indices, statuses);
}

int MPI_Iprobe(int source, int tag, MPI_Comm comm, int* flag, MPI_Status* status) {
  if (NotYet()) {
    *flag = 0;
    return MPI_SUCCESS;
  }
  return PMPI_Iprobe(source, tag, comm, flag, status);
}

int MPI_Improbe(int source, int tag, MPI_Comm comm, int* flag, MPI_Message* message,
                MPI_Status* status) {
  if (NotYet()) {
    *flag = 0;
    return MPI_SUCCESS;
  }
  return PMPI_Improbe(source, tag, comm, flag, message, status);
}

int MPI_Isend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
              MPI_Request* request) {
  MaybeDelay();
  return PMPI_Isend(buf, count, type, dest, tag, comm, request);
}

int MPI_Issend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
               MPI_Request* request) {
  MaybeDelay();
  return PMPI_Issend(buf, count, type, dest, tag, comm, request);
}

int MPI_Irecv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
              MPI_Request* request) {
  MaybeDelay();
  return PMPI_Irecv(buf, count, type, source, tag, comm, request);
}

int MPI_Iallreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
                   MPI_Comm comm, MPI_Request* request) {
  MaybeDelay();
  return PMPI_Iallreduce(sendbuf, recvbuf, count, type, op, comm, request);
}

int MPI_Ireduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
                int root, MPI_Comm comm, MPI_Request* request) {
  MaybeDelay();
  return PMPI_Ireduce(sendbuf, recvbuf, count, type, op, root, comm, request);
}

int MPI_Iallgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  MaybeDelay();
  return PMPI_Iallgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request);
}

int MPI_Ibarrier(MPI_Comm comm, MPI_Request* request) {
  MaybeDelay();
  return PMPI_Ibarrier(comm, request);
}

int MPI_Start(MPI_Request* request) {
  MaybeDelay();
  return PMPI_Start(request);
}

}  // extern "C"
