// The MPI library's own non-blocking collectives as a schedule.
#include "schedules/mpi_library.hpp"

#include "tributary/errors.hpp"

namespace tributary::detail {

MpiLibrarySchedule::MpiLibrarySchedule(const ScheduleArgs& args) : args_(args) {}

MpiLibrarySchedule::~MpiLibrarySchedule() {
  // A collective request cannot be cancelled; the reduction layer never destroys a
  // schedule in flight (it reports that through the Context's error handler instead).
}

void MpiLibrarySchedule::Start() {
  const auto& p = args_.payload;
  const int count = static_cast<int>(p.count);
  switch (args_.collective) {
    case Collective::allreduce:
      CheckMpi(MPI_Iallreduce(MPI_IN_PLACE, args_.data, count, p.elem_type, p.op, args_.comm,
                              &request_),
               "MPI_Iallreduce");
      break;
    case Collective::reduce: {
      int rank = 0;
      CheckMpi(MPI_Comm_rank(args_.comm, &rank), "MPI_Comm_rank");
      const void* send = rank != args_.root ? args_.data : args_.input ? args_.input : MPI_IN_PLACE;
      CheckMpi(MPI_Ireduce(send, rank == args_.root ? args_.data : nullptr, count, p.elem_type,
                           p.op, args_.root, args_.comm, &request_),
               "MPI_Ireduce");
      break;
    }
    case Collective::allgather:
      CheckMpi(MPI_Iallgather(args_.data, count, p.elem_type, args_.result, count, p.elem_type,
                              args_.comm, &request_),
               "MPI_Iallgather");
      break;
  }
}

bool MpiLibrarySchedule::Rearm(const ScheduleArgs& args) {
  if (request_ != MPI_REQUEST_NULL) return false;
  args_ = args;
  return true;
}

bool MpiLibrarySchedule::Progress() {
  if (request_ == MPI_REQUEST_NULL) return true;
  int done = 0;
  CheckMpi(MPI_Test(&request_, &done, MPI_STATUS_IGNORE), "MPI_Test");
  return done != 0;
}

}  // namespace tributary::detail
