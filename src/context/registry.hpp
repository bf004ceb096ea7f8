// What a Context advances and who advances it: the live reduction objects with their pool
// slots, the pollers (keyed collectives, block patterns), the turn of AdvanceOthers, the
// executors' runs hooked to Context::Progress, and the progress thread. One per Context
// (ContextImpl::registry); Register / Unregister in context.cpp, the progress in
// progress.cpp.
#pragma once

#include <atomic>
#include <cstddef>
#include <mutex>
#include <thread>
#include <vector>

#include "tributary/detail/core/progress.hpp"

namespace tributary {
class Executor;
}

namespace tributary::detail {

class ReductionCore;

struct Registry {
  /// Guards the objects, the pollers, the slots and the control plane's state.
  mutable std::mutex mutex;
  std::vector<ReductionCore*> objects;
  /// Pool slots in use (1) or free (0); an object takes the lowest free one.
  std::vector<char> slot_used;
  int next_object_id = 0;
  /// Keyed collectives and block patterns (detail/core/progress.hpp).
  struct Poller {
    void* self;
    PollFn poll;
    OrphanFn orphan;
  };
  std::vector<Poller> pollers;
  /// objects.size() + pollers.size(), readable without the lock (AdvanceOthers' fast exit).
  std::atomic<int> members{0};
  /// The executors Context::Execute runs now (the watchdog's report lists their tasks).
  std::vector<Executor*> executors;
  /// Context::Execute runs in progress: their executors call Progress after every sweep
  /// without progress, so polls inside their sweeps need not advance the others.
  std::atomic<int> hooked_runs{0};
  /// AdvanceOthers' turn: the index, over objects then pollers, advanced last.
  std::size_t next_turn = 0;
  /// Progress() calls left until the control plane is polled (0: at the next one).
  std::atomic<int> control_countdown{0};
  /// ProgressAll() calls left until one polls the control plane.
  std::atomic<int> poll_countdown{0};

  /// The progress thread (ProgressPolicy::thread; progress.cpp).
  std::thread progress_thread;
  std::atomic<bool> progress_stop{false};

  /// Takes the lowest free slot (a new one only below `max_slots`; false when there is
  /// none) and an object id for `core`. Requires `mutex`.
  bool Add(ReductionCore* core, int max_slots, int* id, int* slot);
  /// Removes `core` and frees its slot. Requires `mutex`.
  void Remove(ReductionCore* core, int slot) noexcept;
  /// Stops and joins the progress thread, if one runs.
  void StopProgressThread() noexcept;
};

}  // namespace tributary::detail
