// The few MPI calls the benchmark harness and bench_device make, for a build without MPI
// (TRIBUTARY_ENABLE_MPI=OFF): one process, so a collective is a copy, a barrier does
// nothing and MPI_Wtime is steady_clock. It lets bench_device measure a GPU on a machine
// that has CUDA but no MPI library.
#pragma once

#include <chrono>
#include <cstdlib>
#include <cstring>

using MPI_Comm = int;
using MPI_Datatype = int;
using MPI_Op = int;
inline constexpr MPI_Comm MPI_COMM_WORLD = 0;
inline constexpr MPI_Datatype MPI_INT = sizeof(int);
inline constexpr MPI_Datatype MPI_DOUBLE = sizeof(double);
inline constexpr MPI_Op MPI_MIN = 0;
inline constexpr MPI_Op MPI_MAX = 1;

inline int MPI_Init(int*, char***) { return 0; }
inline int MPI_Finalize() { return 0; }
inline int MPI_Comm_rank(MPI_Comm, int* rank) {
  *rank = 0;
  return 0;
}
inline int MPI_Comm_size(MPI_Comm, int* size) {
  *size = 1;
  return 0;
}
inline int MPI_Barrier(MPI_Comm) { return 0; }
/// One process: the result is the contribution (the datatype is its size in bytes here).
inline int MPI_Allreduce(const void* in, void* out, int count, MPI_Datatype type, MPI_Op,
                         MPI_Comm) {
  std::memmove(out, in, static_cast<std::size_t>(count) * static_cast<std::size_t>(type));
  return 0;
}
[[noreturn]] inline int MPI_Abort(MPI_Comm, int code) { std::exit(code); }
inline double MPI_Wtime() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
