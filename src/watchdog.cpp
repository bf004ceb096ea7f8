// The watchdog: generations that have not completed in time are reported with every
// rank's view of them (asked for over the control plane, control_plane.cpp), or failed.
#include <cstdio>
#include <sstream>

#include "context_impl.hpp"
#include "tributary/errors.hpp"

namespace tributary::detail {

void ContextImpl::Report(const std::string& text) noexcept {
  try {
    if (options.report_handler) {
      options.report_handler("rank " + std::to_string(rank) + ": " + text);
      return;
    }
  } catch (...) {
  }
  std::fprintf(stderr, "tributary: rank %d: %s", rank, text.c_str());
  std::fflush(stderr);
}

void WatchdogReport(Context& ctx, const std::string& text) noexcept { ctx.Impl().Report(text); }

void ContextImpl::RunWatchdog() {
  const double timeout = options.watchdog.count();
  const auto now = std::chrono::steady_clock::now();
  std::vector<std::pair<ReductionCore*, std::string>> reports;
  {
    std::lock_guard<std::mutex> lock(registry_mutex);
    for (auto* core : objects) {
      const Phase phase = core->State();
      if (phase != Phase::collecting && phase != Phase::in_flight) continue;
      if (core->SecondsArmed(now) < timeout) continue;
      const auto key = std::make_pair(core->ObjectId(), core->Generation());
      auto done = reported.find(key.first);
      if (done != reported.end() && done->second == key.second) continue;  // once a generation
      auto it = watchdog.find(key);
      if (it == watchdog.end()) {
        WatchdogQuery q;
        q.object = key.first;
        q.generation = key.second;
        q.asked_at = now;
        q.mine = core->Status();
        it = watchdog.emplace(key, std::move(q)).first;
#if TRIBUTARY_HAVE_MPI
        std::lock_guard<std::mutex> mpi(mpi_mutex);
        const std::string ask = std::to_string(key.first) + " " + std::to_string(key.second);
        for (int r = 0; r < size; ++r)
          if (r != rank) SendControl(r, kTagQuery, ask);
#endif
      }
      WatchdogQuery& q = it->second;
      // Wait for every answer, or give the others as long again as the time-out (at most 2 s).
      const double waited = std::chrono::duration<double>(now - q.asked_at).count();
      const bool all = static_cast<int>(q.answers.size()) == size - 1;
      if (!all && waited < std::min(timeout, 2.0)) continue;
      std::ostringstream report;
      report << "watchdog: " << core->Name() << " generation " << q.generation
             << " has not completed after " << timeout << " s on rank " << rank << ".\n";
      for (int r = 0; r < size; ++r) {
        report << "  rank " << r << ": ";
        if (r == rank) {
          report << q.mine;
        } else {
          auto a = q.answers.find(r);
          report << (a == q.answers.end()
                         ? std::string("no answer (busy outside Tributary, or hung)")
                         : a->second);
        }
        report << "\n";
      }
      reports.emplace_back(core, report.str());
      watchdog.erase(it);
      if (options.on_watchdog == WatchdogAction::report) reported[key.first] = key.second;
    }
  }
  for (auto& [core, text] : reports) {
    if (options.on_watchdog == WatchdogAction::report) {
      Report(text + "  (reported once; the generation goes on waiting)\n");
      continue;
    }
    if (options.on_failure == FailurePolicy::abort)
      AbortJob(this, 2, "rank " + std::to_string(rank) + ": " + text);
    FailHere(text);
  }
}

}  // namespace tributary::detail
