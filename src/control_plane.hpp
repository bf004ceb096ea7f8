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

#include "tributary/config.hpp"

namespace tributary::detail {

struct ContextImpl;
class ReductionCore;

/// Control messages: the kind in the message's first byte.
enum ControlKind : char {
  kCtrlFailure = 'F',
  kCtrlQuery = 'Q',
  kCtrlStatus = 'S',
  kCtrlAck = 'A',
  kCtrlRelease = 'R'
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
  explicit ControlPlane(ContextImpl& context) : context_(context) {}
  ControlPlane(const ControlPlane&) = delete;
  ControlPlane& operator=(const ControlPlane&) = delete;

  /// Whether a failure was reported here or by another rank; its text and origin.
  bool Failed() const noexcept { return failed_.load(); }
  const std::string& FailureText() const noexcept { return failure_text_; }
  int FailureOrigin() const noexcept { return failure_origin_; }

  /// A failure of this rank: tell every rank, fail every current generation here, and
  /// launch the collecting ones once every rank has acknowledged (see Settle).
  void FailHere(const std::string& text);
#if TRIBUTARY_HAVE_MPI
  /// Context::Progress's turn: receives notices and queries, fails every generation here on
  /// another rank's failure notice, then settles the failure (Settle).
  void Receive();
  /// Frees the requests of sends still in flight (the Context's destruction).
  void FreeSends() noexcept;
#endif
  /// The watchdog's turn (watchdog.cpp): reports or fails the generations overdue.
  void RunWatchdog();
  /// Writes a watchdog report (ContextOptions::report_handler, else stderr).
  void Report(const std::string& text) noexcept;
  /// Forgets what the watchdog reported of object `id` (destroyed).
  void Forget(int id) noexcept;

 private:
#if TRIBUTARY_HAVE_MPI
  void Send(int dest, ControlKind kind, const std::string& text);  // requires mpi_mutex
  void Poll();                                                     // requires mpi_mutex
#endif
  void FailAll(const std::string& text, bool remote, int origin, bool defer) noexcept;
  /// After a failure: acknowledges the notices received (once their generations have
  /// failed here), sends the release once this rank's own notice is acknowledged by every
  /// rank, and launches the collecting generations once released. A generation launches
  /// with neutral elements for its missing contributions only when no rank can still
  /// complete it, so no rank takes that result for a success. Requires neither lock.
  void Settle();
  /// This rank's view of `core` for a rank that waits for `generation` (the watchdog's
  /// per-rank line; `core` null: no such object here).
  static std::string WatchdogLine(const ReductionCore* core, std::uint64_t generation);
  /// Answers a watchdog query ("number object generation ...").
  std::string AnswerQuery(const std::string& asked) const;
  /// Records an answer to a watchdog query from rank `from`.
  void TakeAnswer(int from, const std::string& answer);

  ContextImpl& context_;
#if TRIBUTARY_HAVE_MPI
  struct PendingSend {
    MPI_Request request = MPI_REQUEST_NULL;
    std::string text;
  };
  std::vector<std::unique_ptr<PendingSend>> sends_;
#endif
  std::atomic<bool> failed_{false};  // a failure was reported here or by another rank
  std::string failure_text_;
  int failure_origin_ = -1;
  int acks_needed_ = 0;         // acknowledgements of this rank's failure notice awaited
  std::vector<int> acks_owed_;  // ranks whose failure notice this rank has to acknowledge
  bool released_ = false;       // some origin's notice is acknowledged by every rank
  bool release_sent_ = false;
  bool launched_abandoned_ = false;

  /// The watchdog's report being gathered (none: number 0), the generations reported
  /// (object -> generation, and whether it was awaited rather than started), and when the
  /// watchdog first saw a poll waiting for a start (object -> generation, time).
  WatchdogQuery query_;
  std::uint64_t queries_sent_ = 0;
  std::map<int, std::pair<std::uint64_t, bool>> reported_;
  std::map<int, std::pair<std::uint64_t, std::chrono::steady_clock::time_point>> awaited_seen_;
};

}  // namespace tributary::detail
