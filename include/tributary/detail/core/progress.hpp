// MPI's progress rule for Tributary's objects: a poll of any object advances every
// operation in flight on its Context, so no order of waits across ranks can hang.
#pragma once

#if !defined(TRIBUTARY_PUBLIC_INCLUDE) && !defined(TRIBUTARY_INTERNAL_INCLUDE)
#error \
    "<tributary/detail/core/progress.hpp> is internal to Tributary: include <tributary/tributary.hpp> instead"
#endif

#include <string>

namespace tributary {
class Context;

namespace detail {

/// Receives and handles what has arrived for `self`; never blocks and never throws (an
/// object busy on another thread is skipped: that thread advances it).
using PollFn = void (*)(void* self) noexcept;

/// Told that the Context is being destroyed before `self`: `self` must not call the
/// Context again (RemovePoller included).
using OrphanFn = void (*)(void* self) noexcept;

/// Objects that talk rank to rank outside the reduction core (keyed collectives, block
/// patterns) register here so that Context::Progress and every other object's poll advance
/// them too. Remove before `self` is destroyed, unless `orphan` was called.
void AddPoller(Context& ctx, void* self, PollFn poll, OrphanFn orphan);
void RemovePoller(Context& ctx, void* self) noexcept;

/// Called by a poll of `self` that found its own operation incomplete: advances the next
/// other operation in flight on `ctx`, in turn, so that every one is advanced within as
/// many polls as there are operations in flight (whatever object the caller waits on).
void AdvanceOthers(Context& ctx, const void* self) noexcept;

/// The thread rule (docs/reductions.md, "Threads"): whether the calling thread may call the
/// objects of `ctx` (below MPI_THREAD_SERIALIZED, only the thread that created it may).
bool MayCall(const Context& ctx) noexcept;
/// The UsageError of a call from a thread that may not make it, naming `who`.
[[noreturn]] void ThrowWrongThread(const Context& ctx, const std::string& who);

/// Writes a watchdog report of an object outside the reduction core (a keyed collective)
/// through ContextOptions::report_handler, else to stderr.
void WatchdogReport(Context& ctx, const std::string& text) noexcept;

}  // namespace detail
}  // namespace tributary
