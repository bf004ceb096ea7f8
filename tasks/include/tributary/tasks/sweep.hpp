// Sweep numbers: how code that tasks call (a reduction's CheckReduce) knows whether it has
// already done its expensive check during the executor's current sweep.
#pragma once

#include <cstdint>

namespace tributary {

/// The number of the sweep the calling thread's executor is running (a foreign executor's:
/// ForeignSweep), unique across all executors and threads of the process; 0 when the
/// caller is not inside a sweep.
/// Code polled from many lists may do its costly work once per sweep and answer from a
/// cached flag otherwise. Outside an executor (0) it must always do the work.
std::uint64_t CurrentSweep() noexcept;

/// The cycle the calling thread runs in: each run of an executor (Executor::Run,
/// Context::Execute) is a new cycle, numbered across the process, and so is each cycle a
/// foreign executor declares (ForeignCycle, seen by every thread outside Tributary's
/// executors); 0 outside any.
/// A reduction checked in a cycle reports complete only for a generation started or
/// completed in that cycle, never with an earlier cycle's value.
std::uint64_t CurrentCycle() noexcept;

namespace detail {
/// The cycle an event on the calling thread belongs to: the caller's cycle inside an
/// executor; outside, the cycle running now on another thread (a progress thread), or else
/// the next one to begin (a driver that arms a reduction before Execute).
std::uint64_t CycleStamp() noexcept;
/// Begins a new cycle (an executor's run) and returns its number (never 0).
std::uint64_t BeginCycle() noexcept;
/// Ends a cycle begun by BeginCycle.
void EndCycle() noexcept;
/// The calling thread runs in `cycle` (0: outside any executor).
void EnterCycle(std::uint64_t cycle) noexcept;

/// Told, on the thread that ends it, that foreign cycle `cycle` has ended (ForeignCycle's
/// destruction, after its tasks): what must be done before the driver goes on is done here
/// (a Context completes the generations no list of its rank polls). Never throws.
using CycleEndFn = void (*)(void* self, std::uint64_t cycle) noexcept;
/// Registers `fn` for every foreign cycle that ends from now on; returns a handle.
int AddCycleEndObserver(void* self, CycleEndFn fn);
/// Removes the observer `handle` (no call of it runs after this returns).
void RemoveCycleEndObserver(int handle) noexcept;

/// Starts a new sweep on the calling thread and returns its number (never 0).
std::uint64_t BeginSweep() noexcept;
/// Marks the calling thread as outside any sweep (CurrentSweep() returns 0).
void EndSweeps() noexcept;
}  // namespace detail

}  // namespace tributary
