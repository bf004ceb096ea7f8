// The Context's private state, shared by the files of src/.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "schedule_service.hpp"
#include "schedules/schedule.hpp"
#include "tributary/context.hpp"
#include "tributary/detail/progress.hpp"
#include "tributary/detail/reduction_core.hpp"

namespace tributary::detail {

/// Control messages between the Contexts of different ranks: one tag of the Context's
/// communicator (kControlTag), the kind in the message's first byte.
enum ControlKind : char {
  kCtrlFailure = 'F',
  kCtrlQuery = 'Q',
  kCtrlStatus = 'S',
  kCtrlAck = 'A',
  kCtrlRelease = 'R'
};

/// The tags of the Context's communicator: block 0 (tags 0 .. kTagsPerSchedule - 1) is the
/// control plane's, which uses its first tag; reduction object `slot` and generation g use
/// block 1 + slot * kGenerationsInTag + g % kGenerationsInTag, so consecutive generations of
/// an object never share tags (TagFor).
inline constexpr int kControlTag = 0;
/// Block 0's upper tags (kStartupTag ..): the agreement on node facts while the Context is
/// created.
inline constexpr int kStartupTag = 4;
inline constexpr int kGenerationsInTag = 4;

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

struct ContextImpl {
  ContextOptions options;
  ErrorHandler handler;
  int rank = 0;
  int size = 1;
  int comms_created = 0;
  std::thread::id owner_thread;

  /// The selection tree pruned per collective (allreduce, reduce, allgather), its facts,
  /// and whether TRIBUTARY_LOG asks for one line per choice.
  SelectionTree selection[3];
  SelectionFacts facts;
  bool log_selection = false;
  /// Which schedule each generation runs, and where (schedule_service.cpp).
  ScheduleService schedules{*this};
  /// ContextOptions::device_aware_mpi resolved (every rank agrees).
  bool mpi_reads_device = false;
#if TRIBUTARY_HAVE_MPI
  MPI_Comm user = MPI_COMM_NULL;
  /// The Context's one communicator: Tributary's own schedules and the control plane, told
  /// apart by tag, and the MPI library's collectives of the object in slot 0.
  MPI_Comm comm = MPI_COMM_NULL;
  /// Communicators for the MPI library's schedule, one per slot below
  /// ContextOptions::communicator_pool: lanes[0] is `comm`, the others are duplicates.
  /// Objects in higher slots run Tributary's own schedules where the library's is chosen.
  std::vector<MPI_Comm> lanes;
  int thread_level = MPI_THREAD_SINGLE;
  int tag_ub = 32767;
  struct PendingSend {
    MPI_Request request = MPI_REQUEST_NULL;
    std::string text;
  };
  std::vector<std::unique_ptr<PendingSend>> ctrl_sends;
  /// Node layout for the two-level form; null unless requested by the options.
  std::unique_ptr<NodeLayout> nodes;
#endif
  /// The progress thread (ProgressPolicy::thread; progress.cpp).
  std::thread progress_thread;
  std::atomic<bool> progress_stop{false};
#if TRIBUTARY_HAVE_MPI
  /// Starts the progress thread; throws UsageError where it cannot call MPI.
  void StartProgressThread(Context* ctx);
#endif
  /// Stops and joins the progress thread, if one runs.
  void StopProgressThread() noexcept;

  /// Serialises every MPI call Tributary makes (MPI_THREAD_SERIALIZED suffices). The
  /// reductions' own calls (LockMpi) lock only at MPI_THREAD_SERIALIZED: with
  /// MPI_THREAD_MULTIPLE each object's state has its own lock, and below SERIALIZED
  /// CheckThread admits the Context's thread alone. The shared control plane always locks.
  std::mutex mpi_mutex;
  bool serialize_mpi = true;
  std::unique_lock<std::mutex> LockMpi() {
    return serialize_mpi ? std::unique_lock<std::mutex>(mpi_mutex)
                         : std::unique_lock<std::mutex>(mpi_mutex, std::defer_lock);
  }
  /// Progress() calls since the control plane was last polled.
  std::atomic<int> control_countdown{0};
  /// Guards objects/slots and the control state.
  std::mutex registry_mutex;
  std::vector<ReductionCore*> objects;
  std::vector<char> slot_used;
  /// Keyed collectives and block patterns (detail/progress.hpp).
  struct Poller {
    void* self;
    PollFn poll;
  };
  std::vector<Poller> pollers;
  /// objects.size() + pollers.size(), readable without the lock (AdvanceOthers' fast exit).
  std::atomic<int> members{0};
  /// Context::Execute runs in progress: their executors call Progress after every sweep
  /// without progress, so polls inside their sweeps need not advance the others.
  std::atomic<int> hooked_runs{0};
  /// AdvanceOthers' turn: the index, over objects then pollers, advanced last.
  std::size_t next_turn = 0;
  /// Whether MPI may be called from this thread (CheckThread without the exception).
  bool MayCallMpi() const noexcept;
  int next_object_id = 0;

  std::atomic<bool> failed{false};  // a failure was reported here or by another rank
  std::string failure_text;
  int failure_origin = -1;

  /// The watchdog's report being gathered (none: number 0), the generations reported
  /// (object -> generation, and whether it was awaited rather than started), and when the
  /// watchdog first saw a poll waiting for a start (object -> generation, time).
  WatchdogQuery query;
  std::uint64_t queries_sent = 0;
  std::map<int, std::pair<std::uint64_t, bool>> reported;
  std::map<int, std::pair<std::uint64_t, std::chrono::steady_clock::time_point>> awaited_seen;
  /// Writes a watchdog report (ContextOptions::report_handler, else stderr).
  void Report(const std::string& text) noexcept;
  /// This rank's view of `core` for a rank that waits for `generation` (the watchdog's
  /// per-rank line; `core` null: no such object here). watchdog.cpp.
  static std::string WatchdogLine(const ReductionCore* core, std::uint64_t generation);
  /// Answers a watchdog query ("number object generation ...") from rank `from`.
  std::string AnswerQuery(const std::string& asked) const;
  /// Records an answer to a watchdog query.
  void TakeAnswer(int from, const std::string& answer);

  /// Registers `core`: gives it an object id and the lowest free slot (the same on every
  /// rank, objects being created in the same order). Throws UsageError only where the MPI
  /// library's tag space (MPI_TAG_UB) has no room for another slot.
  void Register(ReductionCore* core, int* id, int* slot);
  void Unregister(ReductionCore* core) noexcept;
  /// The tag base of a generation of the object in `slot` (own schedules).
  int TagFor(int slot, std::uint64_t generation) const noexcept;
  /// The most slots the tag space holds.
  int MaxSlots() const noexcept;
#if TRIBUTARY_HAVE_MPI
  /// The communicator of the MPI library's schedule for `slot`; MPI_COMM_NULL beyond the
  /// pool.
  MPI_Comm LaneFor(int slot) const noexcept {
    return slot >= 0 && slot < static_cast<int>(lanes.size())
               ? lanes[static_cast<std::size_t>(slot)]
               : MPI_COMM_NULL;
  }
#endif
  /// Whether the object in `slot` may run the MPI library's schedule.
  bool HasLane(int slot) const noexcept;
  /// Throws UsageError when MPI may not be called from this thread.
  void CheckThread() const;
  /// Reports an error that cannot be thrown.
  void HandleError(const std::string& message) noexcept;

  // Control plane (control_plane.cpp) and watchdog (watchdog.cpp).
  void SendControl(int dest, ControlKind kind, const std::string& text);  // requires mpi_mutex
  void PollControl();                                                     // requires mpi_mutex
#if TRIBUTARY_HAVE_MPI
  /// Context::Progress's turn of the control plane: receives notices and queries, fails
  /// every generation here on another rank's failure notice, then settles the failure
  /// (SettleFailure).
  void ReceiveControl();
#endif
  void RunWatchdog();
  void FailAll(const std::string& text, bool remote, int origin, bool defer = false) noexcept;
  /// A failure of this rank: tell every rank, fail every current generation here, and
  /// launch the collecting ones once every rank has acknowledged (see LaunchAbandoned).
  void FailHere(const std::string& text);
  /// After a failure: acknowledges the notices received (once their generations have
  /// failed here), sends the release once this rank's own notice is acknowledged by every
  /// rank, and launches the collecting generations once released. A generation launches
  /// with neutral elements for its missing contributions only when no rank can still
  /// complete it, so no rank takes that result for a success. Requires neither lock.
  void SettleFailure();
  int acks_needed = 0;         // acknowledgements of this rank's failure notice still awaited
  std::vector<int> acks_owed;  // ranks whose failure notice this rank has to acknowledge
  bool released = false;       // some origin's notice is acknowledged by every rank
  bool release_sent = false;
  bool launched_abandoned = false;
};

#if TRIBUTARY_HAVE_MPI
/// Why MPI's thread level `level` does not let another thread call MPI, and what to do
/// (the end of CheckThread's UsageError).
std::string ThreadLevelAdvice(int level);
#endif

/// Tributary's own schedule where the MPI library's is chosen for an object without a
/// communicator of the pool (ContextOptions::communicator_pool): order-keeping, for
/// `collective` on `bytes` bytes.
SelectionChoice LibraryStandIn(Collective collective, std::size_t bytes) noexcept;

/// The watchdog's clock: steady_clock, or under SimGrid SMPI the simulated time.
std::chrono::steady_clock::time_point WatchdogClock() noexcept;

/// True once MPI_Finalize has been called (always false in the serial build).
bool MpiFinalized() noexcept;

#if TRIBUTARY_HAVE_MPI
/// ContextOptions::device_aware_mpi resolved: `on`, or `detect` where every rank's MPI
/// library accepts device memory of the Kokkos backend in use (collective over `comm`).
/// device_aware_mpi.cpp.
bool ResolveDeviceAwareMpi(MPI_Comm comm, DeviceAwareMpi option);

/// The node layout of `comm`: shared-memory groups, or virtual nodes of `per_node` ranks;
/// hardware order within a node where asked (NodeLayout::by_hardware). Collective; counts
/// the communicators it makes in `created`. node_layout.cpp.
std::unique_ptr<NodeLayout> MakeNodeLayout(MPI_Comm comm, int rank, int size, int per_node,
                                           bool hardware_order, int* created);
/// Frees the layout's communicators.
void FreeNodeLayout(NodeLayout* nodes) noexcept;
/// Ranks per node (the largest node) and node count, from the layout or, where `needed`,
/// from a temporary shared-memory split of `comm` (counted in `created`, freed at once)
/// and messages on `p2p` at the tags of kStartupTag. Collective.
SelectionFacts NodeFacts(MPI_Comm comm, MPI_Comm p2p, int size, const NodeLayout* nodes,
                         bool needed, int* created);

/// The selection tree of a Context: the options' file, else TRIBUTARY_SELECTION, else the
/// built-in tree (*builtin set: the single-machine tree, which the Context swaps for the
/// cluster tree where the communicator spans nodes); read on rank 0 and broadcast. Throws
/// UsageError on every rank for an unreadable or invalid file. selection_source.cpp.
SelectionTree LoadSelection(MPI_Comm comm, int rank, const std::string& option, bool* builtin);
#else
SelectionTree LoadSelection(const std::string& option);
#endif

/// Ends the whole job after a report: prints `text` to stderr, gives the launcher a moment
/// to forward it (MPICH's Hydra drops a dying rank's unread output when it tears the job
/// down), then MPI_Abort on the context's user communicator (MPI_COMM_WORLD without a
/// context) when MPI is live, or _Exit.
[[noreturn]] void AbortJob(const ContextImpl* context, int code, const std::string& text) noexcept;

}  // namespace tributary::detail
