// Counts of the MPI library's collective calls behind the library's schedule, taken through
// PMPI: include in one source file of a suite (it defines the MPI functions it counts).
#pragma once

#include <mpi.h>

#include "allreduce_init.hpp"

/// Persistent allreduce requests made, and MPI_Iallreduce calls, by this process.
inline long g_allreduce_inits = 0;
inline long g_iallreduces = 0;

#ifdef TEST_ALLREDUCE_INIT
extern "C" int TEST_ALLREDUCE_INIT(const void* send, void* recv, int count, MPI_Datatype type,
                                   MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  ++g_allreduce_inits;
  return TEST_PALLREDUCE_INIT(send, recv, count, type, op, comm, info, request);
}
#endif
extern "C" int MPI_Iallreduce(const void* send, void* recv, int count, MPI_Datatype type, MPI_Op op,
                              MPI_Comm comm, MPI_Request* request) {
  ++g_iallreduces;
  return PMPI_Iallreduce(send, recv, count, type, op, comm, request);
}
