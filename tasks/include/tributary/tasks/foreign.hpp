// Foreign executors: how a task system other than Tributary's executors (a framework's own
// executor, serial or with worker threads) declares its cycles and sweeps, so that the
// reductions its tasks poll keep the cycle rule, answer cheaply once per sweep and are
// watched as inside Tributary's executors (docs/tasks.md, "Foreign executors").
#pragma once

#include <cstdint>

namespace tributary {

/// One cycle of a foreign executor: one run of its task lists. The driver makes one before
/// the cycle's tasks run and destroys it after the last has completed; nothing is needed per
/// task or per thread. While it lives, every thread of the process that is not inside one of
/// Tributary's executors runs in this cycle (CurrentCycle() returns its number, on the
/// executor's worker threads too), so a reduction checked there never reports a generation
/// that both started and completed in an earlier cycle: it waits for this cycle's start. A
/// generation started before the cycle is declared (the driver's Expect at the top of a
/// step) belongs to it. Its destruction ends the cycle as Context::Execute ends one: a
/// generation that expects no contribution on this rank (a rank with no lists) is driven to
/// completion there, so that its result is in `val` on every rank when the driver goes on.
/// Foreign cycles do not nest or overlap: making a second one while one lives throws
/// std::logic_error. Not copyable or movable.
class ForeignCycle {
 public:
  ForeignCycle();
  ~ForeignCycle();
  ForeignCycle(const ForeignCycle&) = delete;
  ForeignCycle& operator=(const ForeignCycle&) = delete;
  /// The cycle's number (never 0), as CurrentCycle() reports it.
  std::uint64_t Number() const noexcept { return number_; }

 private:
  std::uint64_t number_;
};

/// One sweep of a foreign executor that sweeps (calls every ready, incomplete task once per
/// pass), on the calling thread: made at the start of the pass, destroyed at its end. While
/// it lives CurrentSweep() numbers the pass, so a reduction polled from many lists tests the
/// network once in it and answers the other polls from a flag. Each worker thread that
/// sweeps makes its own. Optional: an executor without sweeps (a queue that re-runs
/// incomplete tasks) makes none, and then every poll tests. Not copyable or movable.
class ForeignSweep {
 public:
  ForeignSweep() noexcept;
  ~ForeignSweep();
  ForeignSweep(const ForeignSweep&) = delete;
  ForeignSweep& operator=(const ForeignSweep&) = delete;
  /// The sweep's number (never 0), as CurrentSweep() reports it on this thread.
  std::uint64_t Number() const noexcept { return number_; }

 private:
  std::uint64_t number_;
  std::uint64_t outer_;
};

}  // namespace tributary
