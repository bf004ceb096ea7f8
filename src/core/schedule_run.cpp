// One object's running schedule (schedule_run.hpp).
#include "core/schedule_run.hpp"

#include <cstring>
#include <mutex>

#include "core/mpi_registry.hpp"
#include "schedules/simulated_cost.hpp"

namespace tributary::detail {

#if TRIBUTARY_HAVE_MPI
void ScheduleRun::Start(ScheduleKind kind, ScheduleArgs& args, bool read_only, int rank, int size) {
  const std::size_t bytes = args.payload.count * args.payload.elem_size;
  if (read_only && WritesData(kind, args, rank, size)) {
    if (staging_.size() < bytes) staging_.resize(bytes);
    if (bytes) std::memcpy(staging_.data(), args.data, bytes);
    args.data = staging_.data();
  }
  // The two-level form takes no separate contribution: it starts from the data.
  if (args.input && args.params.node_aware) {
    if (bytes) std::memcpy(args.data, args.input, bytes);
    args.input = nullptr;
  }
  if (!schedule_ || schedule_->Kind() != kind || !schedule_->Rearm(args))
    schedule_ = MakeSchedule(kind, args);
  active_ = true;
  ChargeStart();  // under SMPI only: the library's own work, which the simulator does not charge
  schedule_->Start();
}

bool ScheduleRun::Quiet() noexcept {
  if (active_ && !schedule_->Quiet()) return false;
  active_ = false;
  return true;
}

void ScheduleRun::Release() noexcept {
  if (active_) {
    NoteLeftPending();
    (void)schedule_.release();
  }
  active_ = false;
}

namespace {

// Schedules left with requests that will never complete (a failed generation's collective
// of the MPI library, which another rank never started). MPI may write their buffers for as
// long as it runs; they go when the process ends, without an MPI call.
class Abandoned {
 public:
  static Abandoned& Instance() {
    static Abandoned abandoned;
    return abandoned;
  }
  /// Takes `s` (may be null) and `buffers` only once nothing can throw any more: where this
  /// throws, they still hold them.
  void Keep(std::unique_ptr<Schedule>& s, KeptBuffers& buffers) {
    std::lock_guard<std::mutex> lock(mutex_);
    kept_.emplace_back();
    kept_.back().schedule = std::move(s);
    kept_.back().buffers = std::move(buffers);
  }

 private:
  struct Left {
    std::unique_ptr<Schedule> schedule;
    KeptBuffers buffers;
  };
  std::mutex mutex_;
  std::vector<Left> kept_;
};

}  // namespace

std::unique_ptr<KeptBuffer> ScheduleRun::LeaveStaging(const void* at) noexcept {
  return LeaveBytes(staging_, at);
}

bool ScheduleRun::Abandon(KeptBuffers kept, bool whole) noexcept {
  if (!active_) return true;
  NoteLeftPending();
  if (!whole && kept.empty()) return false;  // nothing given up (the caller polls again)
  std::unique_ptr<Schedule> none;
  std::unique_ptr<Schedule>& schedule = whole ? schedule_ : none;
  try {
    Abandoned::Instance().Keep(schedule, kept);
  } catch (...) {  // no memory to keep them: let them go unfreed
    (void)schedule.release();
    for (auto& b : kept) (void)b.release();
  }
  if (whole) active_ = false;
  return whole;
}
#endif

}  // namespace tributary::detail
