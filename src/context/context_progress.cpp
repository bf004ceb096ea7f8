// Who advances the operations in flight on a Context: Context::Progress (the executors'
// hook) and WaitAll, AdvanceOthers (the progress rule of detail/core/progress.hpp: a poll that
// finds its own operation incomplete advances another), and the progress thread
// (ProgressPolicy::thread).
#include <chrono>
#include <thread>

#include "context/context_impl.hpp"
#include "tributary/context.hpp"
#include "tributary/errors.hpp"
#include "tributary/tasks/sweep.hpp"

namespace tributary {
namespace detail {

void AdvanceOthers(Context& ctx, const void* self) noexcept { StateOf(ctx).AdvanceOthers(self); }

// A program that only polls objects (a foreign executor, a wait loop) calls this on every
// 256th incomplete poll; every 16th of these calls looks at the control plane (every 4,096th
// poll), not every 64th as the executors' idle hook does: such a program may poll slowly,
// and a watchdog's query must be answered within its window.
void ContextImpl::ProgressAll() {
  if (--registry.poll_countdown <= 0) {
    registry.poll_countdown = 16;
    registry.control_countdown.store(0, std::memory_order_relaxed);
  }
  self->Progress();
}

void ContextImpl::AdvanceOthers(const void* caller) noexcept {
  Registry& r = registry;
  if (size == 1 || r.members.load(std::memory_order_relaxed) <= 1 || !net.MayCallMpi()) return;
  if (CurrentSweep() != 0 && r.hooked_runs.load(std::memory_order_relaxed) > 0) return;
  // Busy: another thread is progressing the Context (or registering); it advances them.
  std::unique_lock<std::mutex> lock(r.mutex, std::try_to_lock);
  if (!lock) return;
  const std::size_t n = r.objects.size() + r.pollers.size();
  for (std::size_t step = 1; step <= n; ++step) {
    const std::size_t k = (r.next_turn + step) % n;
    if (k < r.objects.size()) {
      ReductionCore* core = r.objects[k];
      if (core == caller || !core->NetworkActive()) continue;
      r.next_turn = k;
      core->Advance();
      return;
    }
    const Registry::Poller& p = r.pollers[k - r.objects.size()];
    if (p.self == caller) continue;
    r.next_turn = k;
    p.poll(p.self);
    return;
  }
}

#if TRIBUTARY_HAVE_MPI
namespace {

void ProgressLoop(Context* ctx) {
  auto& d = StateOf(*ctx);
  while (!d.registry.progress_stop.load(std::memory_order_acquire)) {
    try {
      ctx->Progress();
    } catch (...) {
      // A failure reported by another rank: the reductions themselves carry it to the
      // user's polls; the thread goes on draining.
    }
    std::this_thread::sleep_for(d.options.progress_interval);
  }
}

}  // namespace

void ContextImpl::StartProgressThread(Context* ctx) {
  if (TRIBUTARY_HAVE_SMPI)
    throw UsageError(
        "ProgressPolicy::thread is not available under SimGrid SMPI: a "
        "simulated rank cannot call MPI from a std::thread; use polling");
  if (size > 1 && net.thread_level < MPI_THREAD_SERIALIZED)
    throw UsageError("ProgressPolicy::thread calls MPI from a thread of its own, but " +
                     ThreadLevelAdvice(net.thread_level));
  registry.progress_thread = std::thread(ProgressLoop, ctx);
}
#endif

void Registry::StopProgressThread() noexcept {
  if (!progress_thread.joinable()) return;
  progress_stop.store(true, std::memory_order_release);
  progress_thread.join();
}

}  // namespace detail

void Context::Progress() {
  auto& d = *impl_;
  if (!d.net.MayCallMpi())
    d.net.ThrowWrongThread("tributary::Context::Progress on rank " + std::to_string(d.rank));
  {
    std::lock_guard<std::mutex> lock(d.registry.mutex);
    const std::uint64_t sweep = CurrentSweep();
    for (auto* core : d.registry.objects)
      if (core->NetworkActive() && (sweep == 0 || !core->PolledInSweep(sweep))) core->Advance();
    if (d.net.MayCallMpi())
      for (const auto& p : d.registry.pollers) p.poll(p.self);
  }
  // Failure notices, watchdog queries and the watchdog's clock are rare and not urgent:
  // they are looked at on every 64th call only (some 20-60 µs of idle sweeps), which keeps
  // an idle sweep's hook cheap: a look costs about 2,100 instructions (MPI_Iprobe on the
  // control communicator, the clock, the objects' ages), a hook without one about 70.
  const bool poll_control = --d.registry.control_countdown <= 0;
  if (poll_control) d.registry.control_countdown = 64;
#if TRIBUTARY_HAVE_MPI
  if (d.size > 1 && poll_control) {
    d.net.CheckThread(d.rank);
    d.control.Receive();
  }
#endif
  if (poll_control && d.options.watchdog.count() > 0) d.control.RunWatchdog();
  if (d.control.Failed() && d.control.FailureOrigin() != d.rank)
    throw RemoteError(d.control.FailureOrigin(), d.control.FailureText());
}

void Context::WaitAll() {
  auto& d = *impl_;
  if (!d.net.MayCallMpi())
    d.net.ThrowWrongThread("tributary::Context::WaitAll on rank " + std::to_string(d.rank));
  // After a failure the failed generations' requests settle (cancelled receives; sends that
  // complete as the other ranks drop what they receive unasked), within the drain time.
  std::chrono::steady_clock::time_point give_up{};
  for (;;) {
    bool active = false;
    {
      std::lock_guard<std::mutex> lock(d.registry.mutex);
      for (auto* core : d.registry.objects) {
        if (core->AwaitingClient()) core->PollClient();
        active = active || core->NetworkActive() || core->AwaitingClient();
      }
    }
    if (!active) break;
    if (d.control.Failed()) {
      const auto now = std::chrono::steady_clock::now();
      if (give_up == std::chrono::steady_clock::time_point{})
        give_up =
            now + std::chrono::duration_cast<std::chrono::steady_clock::duration>(d.DrainTime());
      if (now >= give_up) break;  // the other ranks no longer take part: the failure says why
      d.ServiceControl();
      std::lock_guard<std::mutex> lock(d.registry.mutex);
      for (auto* core : d.registry.objects) core->Advance();
      continue;
    }
    Progress();
  }
  if (d.control.Failed()) throw RemoteError(d.control.FailureOrigin(), d.control.FailureText());
}

}  // namespace tributary
