#include "tributary/tasks/sweep.hpp"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "tributary/tasks/foreign.hpp"

namespace tributary {
namespace {
// Sweep numbers are unique across threads without a shared counter per sweep (a locked
// add in every sweep): a thread's numbers carry its own tag, taken once, above a count of
// its sweeps. The count wraps after 2^40 sweeps (about 30 hours at 100 ns per sweep); a
// number seen again that late could at most skip one poll.
std::atomic<std::uint64_t> g_next_thread{1};
thread_local std::uint64_t t_thread_tag = 0;
thread_local std::uint64_t t_sweeps = 0;
thread_local std::uint64_t t_current_sweep = 0;
std::atomic<std::uint64_t> g_cycles{0};
std::atomic<int> g_running{0};
thread_local std::uint64_t t_cycle = 0;
// The cycle a foreign executor declared (ForeignCycle), seen by every thread that is not
// inside one of Tributary's executors; 0 when none is declared.
std::atomic<std::uint64_t> g_foreign{0};

// Who is told that a foreign cycle ended. The mutex is held while they run, so that a
// removal waits for a call in progress.
struct CycleObserver {
  int handle;
  void* self;
  detail::CycleEndFn fn;
};
std::mutex& ObserversMutex() {
  static std::mutex m;
  return m;
}
std::vector<CycleObserver>& Observers() {
  static std::vector<CycleObserver> v;
  return v;
}
int g_next_observer = 1;
}  // namespace

std::uint64_t CurrentSweep() noexcept { return t_current_sweep; }
std::uint64_t CurrentCycle() noexcept {
  return t_cycle != 0 ? t_cycle : g_foreign.load(std::memory_order_acquire);
}

namespace detail {
std::uint64_t CycleStamp() noexcept {
  const std::uint64_t cycle = CurrentCycle();
  if (cycle != 0) return cycle;
  const std::uint64_t last = g_cycles.load(std::memory_order_acquire);
  return g_running.load(std::memory_order_acquire) > 0 ? last : last + 1;
}
std::uint64_t BeginCycle() noexcept {
  g_running.fetch_add(1, std::memory_order_acq_rel);
  return g_cycles.fetch_add(1, std::memory_order_acq_rel) + 1;
}
void EndCycle() noexcept { g_running.fetch_sub(1, std::memory_order_acq_rel); }
void EnterCycle(std::uint64_t cycle) noexcept { t_cycle = cycle; }

int AddCycleEndObserver(void* self, CycleEndFn fn) {
  std::lock_guard<std::mutex> lock(ObserversMutex());
  Observers().push_back(CycleObserver{g_next_observer, self, fn});
  return g_next_observer++;
}

void RemoveCycleEndObserver(int handle) noexcept {
  std::lock_guard<std::mutex> lock(ObserversMutex());
  auto& v = Observers();
  v.erase(std::remove_if(v.begin(), v.end(),
                         [handle](const CycleObserver& o) { return o.handle == handle; }),
          v.end());
}

std::uint64_t BeginSweep() noexcept {
  if (t_thread_tag == 0) t_thread_tag = g_next_thread.fetch_add(1, std::memory_order_relaxed) << 40;
  t_sweeps = (t_sweeps + 1) & ((std::uint64_t(1) << 40) - 1);
  if (t_sweeps == 0) t_sweeps = 1;
  t_current_sweep = t_thread_tag | t_sweeps;
  return t_current_sweep;
}
void EndSweeps() noexcept {
  t_current_sweep = 0;
  t_cycle = 0;
}
}  // namespace detail

ForeignCycle::ForeignCycle() : number_(0) {
  const std::uint64_t number = detail::BeginCycle();
  std::uint64_t none = 0;
  if (!g_foreign.compare_exchange_strong(none, number, std::memory_order_acq_rel)) {
    detail::EndCycle();
    throw std::logic_error("tributary::ForeignCycle: cycle " + std::to_string(none) +
                           " is still declared; foreign cycles do not nest or overlap "
                           "(destroy the ForeignCycle of the previous run first)");
  }
  number_ = number;
}

ForeignCycle::~ForeignCycle() {
  {
    std::lock_guard<std::mutex> lock(ObserversMutex());
    for (const CycleObserver& o : Observers()) o.fn(o.self, number_);
  }
  g_foreign.store(0, std::memory_order_release);
  detail::EndCycle();
}

ForeignSweep::ForeignSweep() noexcept : number_(0), outer_(t_current_sweep) {
  number_ = detail::BeginSweep();
}

ForeignSweep::~ForeignSweep() { t_current_sweep = outer_; }

}  // namespace tributary
