// The persistent allreduce the MPI library's schedule uses, for suites that watch it
// through PMPI: TEST_ALLREDUCE_INIT and TEST_PALLREDUCE_INIT name MPI 4's
// MPI_Allreduce_init or Open MPI 4's MPIX_ extension, and are undefined where neither exists.
#pragma once

#include <mpi.h>
#if defined(OPEN_MPI) && defined(__has_include)
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif
#endif

#if MPI_VERSION >= 4
#define TEST_ALLREDUCE_INIT MPI_Allreduce_init
#define TEST_PALLREDUCE_INIT PMPI_Allreduce_init
#elif defined(OMPI_HAVE_MPI_EXT_PCOLLREQ) && OMPI_HAVE_MPI_EXT_PCOLLREQ
#define TEST_ALLREDUCE_INIT MPIX_Allreduce_init
#define TEST_PALLREDUCE_INIT PMPIX_Allreduce_init
#endif
