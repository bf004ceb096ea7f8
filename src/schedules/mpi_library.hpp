// The MPI library's own non-blocking collectives (MPI_Iallreduce, MPI_Ireduce,
// MPI_Iallgather) behind the schedule seam; Progress is one MPI_Test. A small allreduce runs
// on a persistent request (MPI 4's MPI_Allreduce_init, or Open MPI's MPIX_ extension) made
// once and started again each generation.
#pragma once

#include <cstddef>
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
  bool Quiet() noexcept override;
  void DropKept(bool call_mpi) noexcept override;
  /// A persistent request works in the schedule's own buffer; MPI_Iallreduce in the data,
  /// MPI_Ireduce in what it sends and receives, an allgather in place in the result.
  PendingBuffers InUse() const noexcept override { return active_ ? pending_ : PendingBuffers{}; }

 private:
  /// What a persistent request is bound to. It changes at the same generation on every
  /// rank, so that every rank makes a new request there (an initialisation is a collective
  /// call, ordered like the others on the communicator): the communicator and count are the
  /// same on every rank; the operator and datatype are predefined (ScheduleArgs::op_kept), or
  /// Tributary's own operator and packed type, which a Message makes again only when the
  /// message's size changes (on every rank), after dropping the request made on the old one
  /// (DropKept).
  struct Binding {
    MPI_Comm comm = MPI_COMM_NULL;
    int count = 0;
    MPI_Datatype type = MPI_DATATYPE_NULL;
    MPI_Op op = MPI_OP_NULL;
    bool operator==(const Binding& o) const noexcept {
      return comm == o.comm && count == o.count && type == o.type && op == o.op;
    }
  };
  /// Starts this generation's allreduce on the persistent request; false where it does not
  /// take one (then the caller posts MPI_Iallreduce).
  bool StartPersistent();
  void FreePersistent() noexcept;
  /// Where args_.fixed_storage or an allreduce carries a flag (ScheduleArgs::flag): copies
  /// the `count` elements at `from`, then the flag, into copy_, which the collective then
  /// uses instead; false where it does not (a datatype with a lower bound).
  bool CopyOwn(const void* from);
  /// Copies a completed collective's result from `from` (`bytes` with the flag) into the
  /// data, then the flag (ScheduleArgs::flag: the data only where the flag is unchanged).
  void CopyResult(const unsigned char* from, std::size_t bytes) const noexcept;

  ScheduleArgs args_;
  MPI_Request request_ = MPI_REQUEST_NULL;
  bool active_ = false;      ///< Started and not yet seen complete.
  bool persistent_ = false;  ///< request_ is the persistent request of bound_.
  PendingBuffers pending_;   ///< The object's buffers request_ uses (none: persistent).
  Binding bound_;
  std::vector<unsigned char> buffer_;  ///< The persistent request's data (see StartPersistent).
  std::vector<char> send_copy_;        ///< Under SMPI: the input, sent from here (see Start).
  std::vector<unsigned char> copy_;    ///< The data the collective uses (CopyOwn).
  std::size_t flag_bytes_ = 0;         ///< The collective in flight carries a flag this long.
  bool copied_ = false;                ///< The collective in flight uses copy_.
  bool copy_back_ = false;             ///< ... and writes the result there.
};

}  // namespace tributary::detail
