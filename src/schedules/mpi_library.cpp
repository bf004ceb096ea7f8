// The MPI library's own non-blocking collectives as a schedule.
#include "schedules/mpi_library.hpp"

#include <cstring>

#include "platform/mpi_access.hpp"
#include "tributary/errors.hpp"

#if defined(OPEN_MPI) && defined(__has_include)
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif
#endif

// Persistent collectives: MPI 4, or Open MPI 4's extension. Not under SMPI, whose
// MPI_Iallreduce is already worked around below.
#if TRIBUTARY_HAVE_SMPI
#define TRIBUTARY_HAVE_ALLREDUCE_INIT 0
#elif MPI_VERSION >= 4
#define TRIBUTARY_HAVE_ALLREDUCE_INIT 1
#define TRIBUTARY_ALLREDUCE_INIT MPI_Allreduce_init
#elif defined(OMPI_HAVE_MPI_EXT_PCOLLREQ) && OMPI_HAVE_MPI_EXT_PCOLLREQ
#define TRIBUTARY_HAVE_ALLREDUCE_INIT 1
#define TRIBUTARY_ALLREDUCE_INIT MPIX_Allreduce_init
#else
#define TRIBUTARY_HAVE_ALLREDUCE_INIT 0
#endif

namespace tributary::detail {

namespace {

// The largest message that runs on a persistent request. Its data is copied into the
// request's buffer and back each generation (the contribution's address may change between
// generations on one rank and not on another, and a new request on one rank alone would
// pair with another collective elsewhere); below this size the copies cost far less than
// the schedule the library builds for each MPI_Iallreduce.
constexpr long kPersistentBytes = 4096;

// A flag element (ScheduleArgs::flag) of 4 or 8 bytes, copied and compared inline.
void CopyFlag(void* to, const void* from, std::size_t bytes) noexcept {
  if (bytes == 8)
    std::memcpy(to, from, 8);
  else
    std::memcpy(to, from, 4);
}

bool SameFlag(const void* a, const void* b, std::size_t bytes) noexcept {
  return bytes == 8 ? std::memcmp(a, b, 8) == 0 : std::memcmp(a, b, 4) == 0;
}

}  // namespace

MpiLibrarySchedule::MpiLibrarySchedule(const ScheduleArgs& args) : args_(args) {}

// A collective request cannot be cancelled; the reduction layer never destroys a schedule
// in flight (it reports that through the Context's error handler instead). A persistent
// request at rest is freed, unless MPI is finalised (the library has let go of it).
MpiLibrarySchedule::~MpiLibrarySchedule() {
  if (!active_) FreePersistent();
}

void MpiLibrarySchedule::FreePersistent() noexcept {
  if (persistent_ && request_ != MPI_REQUEST_NULL && !MpiFinalized()) MPI_Request_free(&request_);
  request_ = MPI_REQUEST_NULL;
  persistent_ = false;
}

void MpiLibrarySchedule::DropKept(bool call_mpi) noexcept {
  if (active_) return;  // in flight: the reduction layer reports it and lets it go
  if (call_mpi) FreePersistent();
  if (persistent_) request_ = MPI_REQUEST_NULL;
  persistent_ = false;
}

bool MpiLibrarySchedule::StartPersistent() {
#if !TRIBUTARY_HAVE_ALLREDUCE_INIT
  return false;
#else
  if (!args_.op_kept) return false;
  const auto& p = args_.payload;
  const int count = static_cast<int>(p.count) + (flag_bytes_ ? 1 : 0);
  const Binding want{args_.comm, count, p.elem_type, p.op};
  if (!(persistent_ && want == bound_)) {
    MPI_Aint lb = 0, extent = 0;
    CheckMpi(MPI_Type_get_extent(p.elem_type, &lb, &extent), "MPI_Type_get_extent");
    const long bytes = static_cast<long>(extent) * want.count;
    if (lb != 0 || bytes > kPersistentBytes || bytes <= 0) return false;
    FreePersistent();
    buffer_.resize(static_cast<std::size_t>(bytes));
    CheckMpi(TRIBUTARY_ALLREDUCE_INIT(MPI_IN_PLACE, buffer_.data(), want.count, want.type, want.op,
                                      want.comm, MPI_INFO_NULL, &request_),
             "MPI_Allreduce_init");
    persistent_ = true;
    bound_ = want;
  }
  const std::size_t data_bytes = buffer_.size() - flag_bytes_;
  std::memcpy(buffer_.data(), args_.data, data_bytes);
  if (flag_bytes_) CopyFlag(buffer_.data() + data_bytes, args_.flag, flag_bytes_);
  CheckMpi(MPI_Start(&request_), "MPI_Start");
  return true;
#endif
}

void MpiLibrarySchedule::Start() {
  const auto& p = args_.payload;
  const int count = static_cast<int>(p.count);
  pending_ = PendingBuffers{};
  copied_ = copy_back_ = false;
  flag_bytes_ = 0;
  switch (args_.collective) {
    case Collective::allreduce: {
      // The flag's element has the data's type: a predefined one (Message::FlagsMiss).
      if (args_.flag) {
        if (p.elem_size != 4 && p.elem_size != 8)
          throw UsageError("a flag element after the data is of 4 or 8 bytes");
        flag_bytes_ = p.elem_size;
      }
      if (StartPersistent()) break;
      FreePersistent();
      void* data = args_.data;
      if (CopyOwn(args_.data)) data = copy_.data();
      if (flag_bytes_ && !copied_)
        throw UsageError("a flag element after the data needs a predefined datatype");
      copy_back_ = copied_;
      pending_.at[0] = copied_ ? nullptr : data;
      const int sent = count + (flag_bytes_ ? 1 : 0);
      const void* send = MPI_IN_PLACE;
#if TRIBUTARY_HAVE_SMPI
      // SMPI 3.32's MPI_Iallreduce with MPI_IN_PLACE returns wrong sums from some 64 KiB
      // up (every element of a 70000-long sum was wrong at 2 ranks): send from a copy.
      MPI_Aint lb = 0, extent = 0;
      CheckMpi(MPI_Type_get_extent(p.elem_type, &lb, &extent), "MPI_Type_get_extent");
      const auto* bytes = static_cast<const char*>(data);
      send_copy_.assign(bytes, bytes + static_cast<std::size_t>(extent) * sent);
      send = send_copy_.data();
#endif
      CheckMpi(MPI_Iallreduce(send, data, sent, p.elem_type, p.op, args_.comm, &request_),
               "MPI_Iallreduce");
    } break;
    case Collective::reduce: {
      FreePersistent();
      int rank = 0;
      CheckMpi(MPI_Comm_rank(args_.comm, &rank), "MPI_Comm_rank");
      const bool root = rank == args_.root;
      // A copy: of the data elsewhere, and of the root's contribution (its input, else its
      // data), which the result then replaces in place.
      void* data = args_.data;
      if (CopyOwn(root && args_.input ? args_.input : args_.data)) data = copy_.data();
      copy_back_ = copied_ && root;
      const void* send = !root ? data : !copied_ && args_.input ? args_.input : MPI_IN_PLACE;
      void* receive = root ? data : nullptr;
      if (!copied_) pending_.at = {send == MPI_IN_PLACE ? nullptr : send, receive};
      CheckMpi(
          MPI_Ireduce(send, receive, count, p.elem_type, p.op, args_.root, args_.comm, &request_),
          "MPI_Ireduce");
      break;
    }
    case Collective::allgather: {
      FreePersistent();
      // In place: this rank's elements are copied to their place in the result, which is
      // then all the collective uses (a failed generation's may be left pending with that
      // buffer alone: ReductionClient::LeaveBuffer). The copy is 1/size of what the library
      // writes.
      int rank = 0;
      MPI_Aint lb = 0, extent = 0;
      CheckMpi(MPI_Comm_rank(args_.comm, &rank), "MPI_Comm_rank");
      CheckMpi(MPI_Type_get_extent(p.elem_type, &lb, &extent), "MPI_Type_get_extent");
      const bool in_place = lb == 0;
      pending_.at = {args_.result, in_place ? nullptr : args_.data};
      if (in_place) {
        const auto bytes = static_cast<std::size_t>(extent) * p.count;
        if (bytes)
          std::memcpy(static_cast<char*>(args_.result) + static_cast<std::size_t>(rank) * bytes,
                      args_.data, bytes);
        CheckMpi(MPI_Iallgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, args_.result, count,
                                p.elem_type, args_.comm, &request_),
                 "MPI_Iallgather");
      } else {
        CheckMpi(MPI_Iallgather(args_.data, count, p.elem_type, args_.result, count, p.elem_type,
                                args_.comm, &request_),
                 "MPI_Iallgather");
      }
    } break;
  }
  active_ = true;
}

bool MpiLibrarySchedule::Rearm(const ScheduleArgs& args) {
  if (active_) return false;
  args_ = args;
  return true;
}

bool MpiLibrarySchedule::CopyOwn(const void* from) {
  copied_ = false;
  if (!args_.fixed_storage && !flag_bytes_) return false;
  MPI_Aint lb = 0, extent = 0;
  CheckMpi(MPI_Type_get_extent(args_.payload.elem_type, &lb, &extent), "MPI_Type_get_extent");
  if (lb != 0) return false;  // not a plain block of bytes: waited for after a failure
  const std::size_t bytes = static_cast<std::size_t>(extent) * args_.payload.count;
  copy_.resize(bytes + flag_bytes_);
  if (bytes) std::memcpy(copy_.data(), from, bytes);
  if (flag_bytes_) CopyFlag(copy_.data() + bytes, args_.flag, flag_bytes_);
  copied_ = true;
  return true;
}

void MpiLibrarySchedule::CopyResult(const unsigned char* from, std::size_t bytes) const noexcept {
  const std::size_t data_bytes = bytes - flag_bytes_;
  // With a flag, the elements only where the combined flag is the one this rank sent (no
  // other rank's changed it): where another rank missed, the data stays as it was.
  const bool stands = !flag_bytes_ || SameFlag(from + data_bytes, args_.flag, flag_bytes_);
  if (stands && data_bytes) std::memcpy(args_.data, from, data_bytes);
  if (flag_bytes_) CopyFlag(args_.flag, from + data_bytes, flag_bytes_);
}

bool MpiLibrarySchedule::Progress() {
  if (!active_) return true;
  int done = 0;
  CheckMpi(MPI_Test(&request_, &done, MPI_STATUS_IGNORE), "MPI_Test");
  if (!done) return false;
  active_ = false;
  if (persistent_) CopyResult(buffer_.data(), buffer_.size());
  // A copy that received the result: into the data (an allreduce, a reduce's root).
  if (copy_back_ && !copy_.empty()) CopyResult(copy_.data(), copy_.size());
  return true;
}

bool MpiLibrarySchedule::Quiet() noexcept {
  if (!active_) return true;
  int done = 0;
  if (MPI_Test(&request_, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS || !done) return false;
  active_ = false;
  return true;
}

}  // namespace tributary::detail
