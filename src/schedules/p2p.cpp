#include "schedules/p2p.hpp"

#include <algorithm>
#include <cstring>

#include "schedules/simulated_cost.hpp"
#include "tributary/errors.hpp"

namespace tributary::detail {

void P2PSchedule::FreeAll(MPI_Request* requests, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i)
    if (requests[i] != MPI_REQUEST_NULL) MPI_Request_free(&requests[i]);
}
bool P2PSchedule::AllNull(const MPI_Request* requests, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i)
    if (requests[i] != MPI_REQUEST_NULL) return false;
  return true;
}

void CancelRequests(MPI_Request* requests, std::size_t n) noexcept {
  for (std::size_t i = 0; i < n; ++i)
    if (requests[i] != MPI_REQUEST_NULL) MPI_Cancel(&requests[i]);
}

bool RequestsQuiet(MPI_Request* requests, std::size_t n) noexcept {
  bool quiet = true;
  for (std::size_t i = 0; i < n; ++i) {
    if (requests[i] == MPI_REQUEST_NULL) continue;
    int done = 0;
    if (MPI_Test(&requests[i], &done, MPI_STATUS_IGNORE) != MPI_SUCCESS || !done) quiet = false;
  }
  return quiet;
}

bool P2PSchedule::Cancel() noexcept {
  CancelRequests(requests_.data(), requests_.size());
  for (const Tracked& t : tracked_) CancelRequests(t.requests, t.n);
  return true;
}

bool P2PSchedule::Quiet() noexcept {
  bool quiet = RequestsQuiet(requests_.data(), requests_.size());
  for (const Tracked& t : tracked_) quiet = RequestsQuiet(t.requests, t.n) && quiet;
  return quiet;
}

P2PSchedule::P2PSchedule(const ScheduleArgs& args) : args_(args) {
  CheckMpi(MPI_Comm_rank(args_.comm, &rank_), "MPI_Comm_rank");
  CheckMpi(MPI_Comm_size(args_.comm, &size_), "MPI_Comm_size");
  requests_.reserve(32);
}

P2PSchedule::~P2PSchedule() { FreeAll(requests_.data(), requests_.size()); }

bool P2PSchedule::Rearm(const ScheduleArgs& args) {
  if (!AllNull(requests_.data(), requests_.size())) return false;
  if (args.comm != args_.comm || args.params.node_aware != args_.params.node_aware) return false;
  args_ = args;
  requests_.clear();
  sized_.clear();
  return true;
}

void P2PSchedule::FinishRange(std::size_t lo, std::size_t n) const {
  const Finisher& f = args_.finisher;
  if (n)
    f.fn(f.state, Data() + Bytes(lo), static_cast<unsigned char*>(f.out) + f.out_size * lo, lo, n);
}

void P2PSchedule::CombineAndFinish(const void* in, std::size_t lo, std::size_t n) const {
  const Finisher& f = args_.finisher;
  if (n == 0) return;
  if (f.combine_fn && f.combine_fn(f.state, in, Data() + Bytes(lo),
                                   static_cast<unsigned char*>(f.out) + f.out_size * lo, lo, n)) {
    ChargeCombine(Bytes(n));
    return;
  }
  Combine(in, Data() + Bytes(lo), n);
  FinishRange(lo, n);
}

unsigned char* P2PSchedule::Scratch(std::size_t bytes) {
  if (scratch_.size() < bytes) scratch_.resize(bytes);
  return scratch_.data();
}

void P2PSchedule::Combine(const void* in, void* inout, std::size_t n) const {
  if (n == 0 || Silenced()) return;
  args_.payload.combine(args_.payload.combine_state, in, inout, n);
  ChargeCombine(Bytes(n));
}

void P2PSchedule::CombineInto(unsigned char** acc, unsigned char** other, std::size_t n) const {
  if (args_.payload.commutative) {
    Combine(*other, *acc, n);  // acc = other ∘ acc = acc ∘ other
  } else {
    Combine(*acc, *other, n);  // other = acc ∘ other
    std::swap(*acc, *other);
  }
}

void P2PSchedule::PostSend(const void* buf, std::size_t bytes, int dest, int tag_offset,
                           MPI_Request* request) {
  if (!request) {
    requests_.push_back(MPI_REQUEST_NULL);
    request = &requests_.back();
  }
  if (Silenced()) bytes = 0;  // the short-message signal: "did not fit"
  CheckMpi(MPI_Isend(buf, static_cast<int>(bytes), MPI_BYTE, dest, args_.tag + tag_offset,
                     args_.comm, request),
           "MPI_Isend");
  if (args_.rounds) args_.rounds->Post(dest, bytes, true);
}

void P2PSchedule::PostRecv(void* buf, std::size_t bytes, int source, int tag_offset,
                           MPI_Request* request) {
  if (!request) {
    if (args_.missed != nullptr) sized_.emplace_back(requests_.size(), bytes);
    requests_.push_back(MPI_REQUEST_NULL);
    request = &requests_.back();
  }
  CheckMpi(MPI_Irecv(buf, static_cast<int>(bytes), MPI_BYTE, source, args_.tag + tag_offset,
                     args_.comm, request),
           "MPI_Irecv");
  if (args_.rounds) args_.rounds->Post(source, bytes, false);
}

int P2PSchedule::FoldIn(const void* mine, void* incoming, std::size_t bytes) {
  if (!InFold()) return rank_ - rem_;
  if (rank_ % 2 == 0) {
    PostSend(mine, bytes, rank_ + 1, 0);
    return -1;
  }
  PostRecv(incoming, bytes, rank_ - 1, 0);
  return rank_ / 2;
}

bool P2PSchedule::RequestsDone() {
  if (requests_.empty()) return true;
  // With the short-message signal the receives' statuses are kept for their sizes.
  const bool sized = args_.missed != nullptr;
  if (sized) statuses_.resize(requests_.size());
#if TRIBUTARY_HAVE_SMPI
  // SMPI charges smpi/test for every request that MPI_Testall tests, where a real MPI's
  // unsuccessful MPI_Testall costs about one test whatever the count (`bench_simulation
  // calibrate`: 16 ns, and 0.07 ns per further request). Testing in order and stopping at the
  // first outstanding request charges one test per poll and one per completed request.
  for (std::size_t i = 0; i < requests_.size(); ++i) {
    if (requests_[i] == MPI_REQUEST_NULL) continue;
    int done = 0;
    CheckMpi(MPI_Test(&requests_[i], &done, sized ? &statuses_[i] : MPI_STATUS_IGNORE), "MPI_Test");
    if (!done) return false;
  }
#else
  int done = 0;
  CheckMpi(MPI_Testall(static_cast<int>(requests_.size()), requests_.data(), &done,
                       sized ? statuses_.data() : MPI_STATUSES_IGNORE),
           "MPI_Testall");
  if (!done) return false;
#endif
  for (const auto& [index, bytes] : sized_) {
    int got = 0;
    CheckMpi(MPI_Get_count(&statuses_[index], MPI_BYTE, &got), "MPI_Get_count");
    if (static_cast<std::size_t>(got) != bytes) *args_.missed = true;
  }
  ResetRequests();
  if (args_.rounds) args_.rounds->Completed();
  return true;
}

bool P2PSchedule::Done(MPI_Request* request) {
  if (*request == MPI_REQUEST_NULL) return true;
  int done = 0;
  CheckMpi(MPI_Test(request, &done, MPI_STATUS_IGNORE), "MPI_Test");
  return done != 0;
}

}  // namespace tributary::detail
