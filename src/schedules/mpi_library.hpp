// The MPI library's own non-blocking collectives (MPI_Iallreduce, MPI_Ireduce,
// MPI_Iallgather) behind the schedule seam; Progress is one MPI_Test.
#pragma once

#include <vector>

#include "schedules/schedule.hpp"

namespace tributary::detail {

class MpiLibrarySchedule final : public Schedule {
 public:
  explicit MpiLibrarySchedule(const ScheduleArgs& args);
  ~MpiLibrarySchedule() override;
  void Start() override;
  bool Progress() override;
  ScheduleKind Kind() const noexcept override { return ScheduleKind::mpi_library; }
  bool Rearm(const ScheduleArgs& args) override;
  /// A collective cannot be cancelled: it completes only where every rank takes part.
  bool Cancel() noexcept override { return false; }
  bool Quiet() noexcept override { return RequestsQuiet(&request_, 1); }

 private:
  ScheduleArgs args_;
  MPI_Request request_ = MPI_REQUEST_NULL;
  std::vector<char> send_copy_;  ///< Under SMPI: the input, sent from here (see Start).
};

}  // namespace tributary::detail
