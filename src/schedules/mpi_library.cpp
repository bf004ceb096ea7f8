// The MPI library's own non-blocking collectives as a schedule.
#include "schedules/mpi_library.hpp"

#include "tributary/errors.hpp"

namespace tributary::detail {

MpiLibrarySchedule::MpiLibrarySchedule(const ScheduleArgs& args) : args_(args) {}

// A collective request cannot be cancelled; the reduction layer never destroys a schedule
// in flight (it reports that through the Context's error handler instead).
MpiLibrarySchedule::~MpiLibrarySchedule() = default;

void MpiLibrarySchedule::Start() {
  const auto& p = args_.payload;
  const int count = static_cast<int>(p.count);
  switch (args_.collective) {
    case Collective::allreduce: {
      const void* send = MPI_IN_PLACE;
#if TRIBUTARY_HAVE_SMPI
      // SMPI 3.32's MPI_Iallreduce with MPI_IN_PLACE returns wrong sums from some 64 KiB
      // up (every element of a 70000-long sum was wrong at 2 ranks): send from a copy.
      MPI_Aint lb = 0, extent = 0;
      CheckMpi(MPI_Type_get_extent(p.elem_type, &lb, &extent), "MPI_Type_get_extent");
      const auto* bytes = static_cast<const char*>(args_.data);
      send_copy_.assign(bytes, bytes + static_cast<std::size_t>(extent) * p.count);
      send = send_copy_.data();
#endif
      CheckMpi(MPI_Iallreduce(send, args_.data, count, p.elem_type, p.op, args_.comm, &request_),
               "MPI_Iallreduce");
    } break;
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
