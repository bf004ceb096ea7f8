// Sweep numbers: how code that tasks call (a reduction's CheckReduce) knows whether it has
// already done its expensive check during the executor's current sweep.
#pragma once

#include <cstdint>

namespace tributary {

/// The number of the sweep the calling thread's executor is running, unique across all
/// executors and threads of the process; 0 when the caller is not inside an executor.
/// Code polled from many lists may do its costly work once per sweep and answer from a
/// cached flag otherwise. Outside an executor (0) it must always do the work.
std::uint64_t CurrentSweep() noexcept;

namespace detail {
/// Starts a new sweep on the calling thread and returns its number (never 0).
std::uint64_t BeginSweep() noexcept;
/// Marks the calling thread as outside any sweep (CurrentSweep() returns 0).
void EndSweeps() noexcept;
}  // namespace detail

}  // namespace tributary
