// The control plane between the Contexts of different ranks: failure notices and their
// acknowledgements, and the watchdog's queries and answers, as short messages on the
// control tag of the Context's communicator. One per Context (ContextImpl::control); the
// messages and failures in control_plane.cpp, the watchdog in watchdog.cpp.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "platform/network.hpp"
#include "tributary/config.hpp"
#include "tributary/context_options.hpp"

namespace tributary::detail {

class ReductionCore;
struct Registry;

/// Control messages: the kind in the message's first byte.
enum ControlKind : char {
  kCtrlFailure = 'F',
  kCtrlQuery = 'Q',
  kCtrlStatus = 'S',
  kCtrlSettle = 'B',  ///< A round of SettleBarrier
};

/// One watchdog report in the making: the objects this rank waits for, and every other
/// rank's view of them (asked for over the control plane).
struct WatchdogQuery {
  struct Entry {
    int object = -1;
    std::uint64_t generation = 0;  // the generation this rank waits for
    std::string header;            // "AllReduce<double> 'dt' (object 3) generation 5 ..."
    std::string mine;              // this rank's line
  };
  std::uint64_t number = 0;
  std::chrono::steady_clock::time_point asked_at;
  std::vector<Entry> entries;
  std::map<int, std::map<int, std::string>> answers;  // rank -> object -> line
};

class ControlPlane {
 public:
  /// The control plane of the Context whose options, network services and registry these
  /// are; `rank` of `size` (set by the Context's constructor before any message).
  ControlPlane(const ContextOptions& options, Network& net, Registry& registry, const int& rank,
               const int& size)
      : options_(options), net_(net), registry_(registry), rank_(rank), size_(size) {}
  ControlPlane(const ControlPlane&) = delete;
  ControlPlane& operator=(const ControlPlane&) = delete;

  /// Whether a failure was reported here or by another rank; its text and origin.
  bool Failed() const noexcept { return failed_.load(); }
  const std::string& FailureText() const noexcept { return failure_text_; }
  int FailureOrigin() const noexcept { return failure_origin_; }

  /// A failure of this rank: tell every rank and fail every current generation here.
  void FailHere(const std::string& text);
#if TRIBUTARY_HAVE_MPI
  /// Context::Progress's turn: receives notices and queries, and fails every generation here
  /// on another rank's failure notice. After a failure it also drops every message that
  /// arrives unasked (Sink). Never blocks.
  void Receive();
  /// Frees the requests of sends still in flight (the Context's destruction).
  void FreeSends() noexcept;
  /// True once every control message this rank sent has left.
  bool SendsDone();
  /// The Context's destruction after a failure: a barrier of control messages, entered
  /// once this rank's own have left (a dissemination: round k to rank + 2^k, awaited from
  /// rank - 2^k). Not a collective of MPI's: one the MPI library's schedule left pending on
  /// the communicator it shares (lane 0) would pair with it on some ranks and not on those
  /// that never started it. True once every rank has entered. Requires mpi_mutex; never
  /// blocks.
  bool SettleBarrier();
#endif
  /// The watchdog's turn (watchdog.cpp): reports or fails the generations overdue, with
  /// the tasks that wait for them where Context::Execute runs an executor.
  void RunWatchdog();
  /// The report of every object this rank waits for, with every rank's view of each, asked
  /// for now and waited for (at most 2 s): the section a Context adds to the
  /// task watchdog's report (Executor::AddReportSection). Those generations are not
  /// reported again by the Context's own watchdog.
  std::string ObjectsReport();
  /// Writes a watchdog report (ContextOptions::report_handler, else stderr).
  void Report(const std::string& text) noexcept;
  /// Receive, where this thread may call MPI and MPI is live; never throws.
  void ServiceOnce() noexcept;
  /// Forgets what the watchdog reported of object `id` (destroyed).
  void Forget(int id) noexcept;

 private:
#if TRIBUTARY_HAVE_MPI
  void Send(int dest, ControlKind kind, const std::string& text);  // requires mpi_mutex
  void Poll();                                                     // requires mpi_mutex
#endif
  void FailAll(const std::string& text, bool remote, int origin) noexcept;
#if TRIBUTARY_HAVE_MPI
  /// After a failure every generation's result is dropped and nothing new starts: messages
  /// that arrive without a receive posted for them (another rank's data for a generation
  /// this rank failed, cancelled or never started) are received and dropped, so that every
  /// send completes and the buffers can go. On the Context's communicator and the node
  /// layout's. Requires mpi_mutex.
  void Sink(MPI_Comm comm);
#endif
  /// The objects this rank waits for (all: also those reported before); `overdue` is set
  /// when one has waited the watchdog's time. Requires the registry's mutex.
  WatchdogQuery CollectEntries(std::chrono::steady_clock::time_point now, bool all, bool* overdue);
  /// Makes `q` the query in progress and asks every other rank for its view.
  void Ask(WatchdogQuery q);
  /// The report of the query in progress, with the answers so far; ends the query and
  /// marks its generations reported. Requires the registry's mutex.
  std::string Compose();
  /// The incomplete tasks of the executors Context::Execute runs now.
  std::string PendingTasks();
  /// This rank's view of `core` for a rank that waits for `generation` (the watchdog's
  /// per-rank line; `core` null: no such object here).
  static std::string WatchdogLine(const ReductionCore* core, std::uint64_t generation);
  /// Answers a watchdog query ("number object generation ...").
  std::string AnswerQuery(const std::string& asked) const;
  /// Records an answer to a watchdog query from rank `from`.
  void TakeAnswer(int from, const std::string& answer);

  const ContextOptions& options_;
  Network& net_;
  Registry& registry_;
  const int& rank_;
  const int& size_;
#if TRIBUTARY_HAVE_MPI
  struct PendingSend {
    MPI_Request request = MPI_REQUEST_NULL;
    std::string text;
  };
  std::vector<std::unique_ptr<PendingSend>> sends_;
#endif
  // A failure reported here or by another rank. Text and origin are written once, under the
  // registry mutex, before the flag is set; they are read only after the flag is seen.
  std::atomic<bool> failed_{false};
  std::string failure_text_;
  int failure_origin_ = -1;
#if TRIBUTARY_HAVE_MPI
  std::vector<char> sunk_;            // what Sink receives, dropped
  int settle_sent_ = 0;               // SettleBarrier's rounds sent
  std::uint64_t settle_arrived_ = 0;  // bit k: its round k has arrived
#endif

  /// The watchdog's report being gathered (none: number 0), the generations reported
  /// (object -> generation, and whether it was awaited rather than started), and when the
  /// watchdog first saw a poll waiting for a start (object -> generation, time).
  WatchdogQuery query_;
  std::uint64_t queries_sent_ = 0;
  std::map<int, std::pair<std::uint64_t, bool>> reported_;
  std::map<int, std::pair<std::uint64_t, std::chrono::steady_clock::time_point>> awaited_seen_;
};

/// The watchdog's clock: steady_clock, or under SimGrid SMPI the simulated time.
std::chrono::steady_clock::time_point WatchdogClock() noexcept;

/// Ends the whole job after a report: prints `text` to stderr, gives the launcher a moment
/// to forward it (MPICH's Hydra drops a dying rank's unread output when it tears the job
/// down), then MPI_Abort on the Context's user communicator (MPI_COMM_WORLD without one)
/// when MPI is live, or _Exit.
[[noreturn]] void AbortJob(const Network* net, int code, const std::string& text) noexcept;

}  // namespace tributary::detail
