// A timeline of reductions (ContextOptions::trace, TRIBUTARY_TRACE): per rank, per object
// and generation, when each list contributed, the combine, the network phase with its
// schedule and rounds, and the completion, written as Chrome trace-event JSON (Perfetto,
// chrome://tracing; scripts/trace-timeline.sh merges the ranks and draws them).
//
// Off, every hook is one test of a pointer that is null (ReductionCore::trace_,
// ScheduleArgs::trace). On, an event takes a lock and formats one line; the file is written
// in pieces of about 1 MiB and closed when the Context is destroyed.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "schedules/schedule.hpp"
#include "tributary/detail/core/message_spec.hpp"
#include "tributary/schedule_kind.hpp"

namespace tributary {
class Context;
struct ContextOptions;

namespace detail {

class Tracer;

/// What a schedule reports of its rounds (ScheduleArgs::rounds), on the timeline. Posts made in one
/// advance of the schedule, after its previous messages completed, form one round, which lasts
/// until the next round starts or the network phase completes.
class TraceRounds final : public RoundObserver {
 public:
  void Post(int peer, std::size_t bytes, bool send) override;
  void Completed() override;

 private:
  friend class Tracer;
  Tracer* tracer_ = nullptr;
  int object_ = -1;
};

/// One rank's timeline, shared by the objects of one Context.
class Tracer {
 public:
  /// Writes to `path`; `rank` of `size` names the process.
  Tracer(std::string path, int rank, int size);
  ~Tracer();
  Tracer(const Tracer&) = delete;
  Tracer& operator=(const Tracer&) = delete;

  /// Names the lane of reduction object `object` ("AllReduce<double> 'dt' (object 3)").
  void Object(int object, const std::string& name);
  /// A generation started collecting `expected` contributions.
  void Arm(int object, std::uint64_t generation, int expected);
  /// List `list` contributed.
  void Contribute(int object, std::uint64_t generation, int list);
  /// The last contribution arrived: the combine starts.
  void LastArrival(int object, std::uint64_t generation);
  /// The network phase starts with the message `spec` describes.
  void NetworkStart(int object, std::uint64_t generation, const LaunchSpec& spec);
  /// The schedule `kind` starts; its rounds are reported through the handle returned.
  TraceRounds* ScheduleStart(int object, std::uint64_t generation, ScheduleKind kind);
  /// The network phase is advanced (a poll): posts from here on form a new round. Called at
  /// every poll, so it takes no lock: it sets a flag.
  void Advancing(int object) noexcept {
    advanced_[static_cast<unsigned>(object) % advanced_.size()].store(1, std::memory_order_relaxed);
  }
  /// The generation completed (`failed`: with an error).
  void Complete(int object, std::uint64_t generation, bool failed);

  /// The file this tracer writes.
  const std::string& Path() const noexcept { return path_; }

 private:
  friend class TraceRounds;
  struct Round {
    double start = -1;  // µs; < 0: no round open
    int index = 0;
    int sends = 0;
    int receives = 0;
    std::size_t bytes_sent = 0;
    std::string peers;
  };
  struct ObjectState {
    std::string name;
    std::string quoted, contribute;  // the name as JSON, and the contributions' event name
    std::uint64_t generation = 0;
    double armed = -1, last = -1, network = -1;
    std::size_t bytes = 0;
    ScheduleKind kind = ScheduleKind::mpi_library;
    bool scheduled = false;
    bool boundary = true;  // the next post opens a round
    Round round;
    TraceRounds handle;
  };
  double Now() const noexcept;
  ObjectState& State(int object);
  void CloseRound(int object, ObjectState& s, double now);
  void Slice(int object, const char* name, double start, double end, const std::string& args);
  void Emit(const std::string& event);
  void Flush();

  std::string path_;
  int rank_;
  std::mutex mutex_;
  std::FILE* file_ = nullptr;
  std::string buffer_;
  bool first_ = true;
  std::chrono::steady_clock::time_point origin_;
  std::unordered_map<int, ObjectState> objects_;
  // Advancing's flags, by object id modulo their number (ids that share a flag at most
  // start a round early).
  std::array<std::atomic<std::uint8_t>, 4096> advanced_{};
  int lists_named_ = 0;  // list lanes 0 .. lists_named_ - 1 have their names
};

/// Opens the timeline of `ctx` (rank `rank` of `size`) when ContextOptions::trace or the
/// environment variable TRIBUTARY_TRACE names a file prefix; does nothing otherwise. A file
/// that cannot be written is reported on stderr, and the run goes on without a timeline.
void TraceOpen(const Context* ctx, const ContextOptions& options, int rank, int size) noexcept;
/// Writes and closes the timeline of `ctx`, if it has one.
void TraceClose(const Context* ctx) noexcept;
/// The tracer of `ctx` with the lane of `object` named `name`, or null when `ctx` traces
/// nothing (the test of one global counter).
Tracer* TraceFor(const Context* ctx, int object, const std::string& name);

}  // namespace detail
}  // namespace tributary
