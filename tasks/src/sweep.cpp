#include "tributary/tasks/sweep.hpp"

#include <atomic>

namespace tributary {
namespace {
std::atomic<std::uint64_t> g_next_sweep{1};
thread_local std::uint64_t t_current_sweep = 0;
}  // namespace

std::uint64_t CurrentSweep() noexcept { return t_current_sweep; }

namespace detail {
std::uint64_t BeginSweep() noexcept {
  t_current_sweep = g_next_sweep.fetch_add(1, std::memory_order_relaxed);
  return t_current_sweep;
}
void EndSweeps() noexcept { t_current_sweep = 0; }
}  // namespace detail

}  // namespace tributary
