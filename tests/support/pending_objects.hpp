// The datatypes and operators that the MPI library's collectives in flight use, and the
// MPI_Type_free and MPI_Op_free calls made on one of them (also within MPI_Finalize, which
// then fails the process), taken through PMPI: include in one source file of a suite (it
// defines the MPI functions it watches). An MPI library may not hold on to what such a
// request uses (Open MPI 4.1's persistent collectives do not): freeing it then lets the
// request combine with a freed datatype.
#pragma once

#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>

#include "allreduce_init.hpp"

namespace pending_objects {

struct Use {
  MPI_Datatype type = MPI_DATATYPE_NULL;
  MPI_Op op = MPI_OP_NULL;
  bool derived = false;  ///< Not a predefined datatype (one Tributary made).
  bool persistent = false;
  bool active = false;
};

struct Watch {
  std::mutex mutex;
  std::map<MPI_Request, Use> requests;  // the library's collectives, by request
  long freed_in_use = 0;                // types and operators freed while a request used them
};

inline Watch& Watched() {
  static Watch w;
  return w;
}

inline void Made(MPI_Request request, MPI_Datatype type, MPI_Op op, bool persistent) {
  int count = 0, addresses = 0, types = 0, combiner = MPI_COMBINER_NAMED;
  MPI_Type_get_envelope(type, &count, &addresses, &types, &combiner);
  Watch& w = Watched();
  std::lock_guard<std::mutex> lock(w.mutex);
  w.requests[request] = Use{type, op, combiner != MPI_COMBINER_NAMED, persistent, !persistent};
}

// After a test or wait that said `done` of `request` (its handle before the call).
inline void Completed(MPI_Request request, bool done) {
  if (!done) return;
  Watch& w = Watched();
  std::lock_guard<std::mutex> lock(w.mutex);
  auto it = w.requests.find(request);
  if (it == w.requests.end()) return;
  if (it->second.persistent)
    it->second.active = false;
  else
    w.requests.erase(it);
}

/// Collectives in flight whose datatype is not predefined (made by Tributary).
inline int ActiveOnDerivedTypes() {
  Watch& w = Watched();
  std::lock_guard<std::mutex> lock(w.mutex);
  int n = 0;
  for (const auto& [request, use] : w.requests) n += use.active && use.derived;
  return n;
}

// Before a datatype or operator is freed: counts the collectives in flight that `uses` it.
template <class Uses>
void Freeing(Uses uses) {
  Watch& w = Watched();
  std::lock_guard<std::mutex> lock(w.mutex);
  for (const auto& [request, use] : w.requests)
    if (use.active && uses(use)) ++w.freed_in_use;
}

inline long FreedInUse() {
  Watch& w = Watched();
  std::lock_guard<std::mutex> lock(w.mutex);
  return w.freed_in_use;
}

}  // namespace pending_objects

#ifdef TEST_ALLREDUCE_INIT
extern "C" int TEST_ALLREDUCE_INIT(const void* send, void* recv, int count, MPI_Datatype type,
                                   MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  const int rc = TEST_PALLREDUCE_INIT(send, recv, count, type, op, comm, info, request);
  if (rc == MPI_SUCCESS) pending_objects::Made(*request, type, op, true);
  return rc;
}
#endif

extern "C" int MPI_Iallreduce(const void* send, void* recv, int count, MPI_Datatype type, MPI_Op op,
                              MPI_Comm comm, MPI_Request* request) {
  const int rc = PMPI_Iallreduce(send, recv, count, type, op, comm, request);
  if (rc == MPI_SUCCESS) pending_objects::Made(*request, type, op, false);
  return rc;
}

extern "C" int MPI_Ireduce(const void* send, void* recv, int count, MPI_Datatype type, MPI_Op op,
                           int root, MPI_Comm comm, MPI_Request* request) {
  const int rc = PMPI_Ireduce(send, recv, count, type, op, root, comm, request);
  if (rc == MPI_SUCCESS) pending_objects::Made(*request, type, op, false);
  return rc;
}

extern "C" int MPI_Start(MPI_Request* request) {
  const MPI_Request r = *request;
  const int rc = PMPI_Start(request);
  pending_objects::Watch& w = pending_objects::Watched();
  std::lock_guard<std::mutex> lock(w.mutex);
  auto it = w.requests.find(r);
  if (rc == MPI_SUCCESS && it != w.requests.end()) it->second.active = true;
  return rc;
}

extern "C" int MPI_Test(MPI_Request* request, int* flag, MPI_Status* status) {
  const MPI_Request r = *request;
  const int rc = PMPI_Test(request, flag, status);
  pending_objects::Completed(r, rc == MPI_SUCCESS && *flag);
  return rc;
}

extern "C" int MPI_Wait(MPI_Request* request, MPI_Status* status) {
  const MPI_Request r = *request;
  const int rc = PMPI_Wait(request, status);
  pending_objects::Completed(r, rc == MPI_SUCCESS);
  return rc;
}

extern "C" int MPI_Request_free(MPI_Request* request) {
  const MPI_Request r = *request;
  const int rc = PMPI_Request_free(request);
  pending_objects::Watch& w = pending_objects::Watched();
  std::lock_guard<std::mutex> lock(w.mutex);
  if (rc == MPI_SUCCESS) w.requests.erase(r);
  return rc;
}

extern "C" int MPI_Type_free(MPI_Datatype* type) {
  pending_objects::Freeing([type](const pending_objects::Use& u) { return u.type == *type; });
  return PMPI_Type_free(type);
}

extern "C" int MPI_Op_free(MPI_Op* op) {
  pending_objects::Freeing([op](const pending_objects::Use& u) { return u.op == *op; });
  return PMPI_Op_free(op);
}

// MPI_Finalize runs the delete callbacks of MPI_COMM_SELF's attributes first, where
// Tributary lets go of its process-wide datatypes and operators, and then progresses what
// is still pending: one freed there under a collective left pending fails the process.
extern "C" int MPI_Finalize() {
  const long before = pending_objects::FreedInUse();
  const int rc = PMPI_Finalize();
  if (pending_objects::FreedInUse() != before) {
    std::fprintf(stderr,
                 "pending_objects: MPI_Finalize freed a datatype or operator that a collective "
                 "left pending uses\n");
    std::_Exit(5);
  }
  return rc;
}
