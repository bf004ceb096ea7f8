// The control plane between Contexts: failure notices and the watchdog. Messages are short
// strings on the Context's control communicator, sent with MPI_Isend and received with
// MPI_Iprobe + MPI_Recv of a message that has already arrived, so nothing here blocks.
#include <cstdio>
#include <sstream>

#include "context_impl.hpp"
#include "tributary/errors.hpp"

namespace tributary::detail {

#if TRIBUTARY_HAVE_MPI
void ContextImpl::SendControl(int dest, int tag, std::string text) {
  auto send = std::make_unique<PendingSend>();
  send->text = std::move(text);
  CheckMpi(MPI_Isend(send->text.data(), static_cast<int>(send->text.size()), MPI_CHAR, dest, tag,
                     ctrl, &send->request),
           "MPI_Isend");
  ctrl_sends.push_back(std::move(send));
}

void ContextImpl::PollControl() {
  // Completed sends release their buffers.
  for (auto it = ctrl_sends.begin(); it != ctrl_sends.end();) {
    int done = 0;
    CheckMpi(MPI_Test(&(*it)->request, &done, MPI_STATUS_IGNORE), "MPI_Test");
    it = done ? ctrl_sends.erase(it) : std::next(it);
  }
  for (;;) {
    int flag = 0;
    MPI_Status status;
    CheckMpi(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, ctrl, &flag, &status), "MPI_Iprobe");
    if (!flag) return;
    int len = 0;
    CheckMpi(MPI_Get_count(&status, MPI_CHAR, &len), "MPI_Get_count");
    std::string text(static_cast<std::size_t>(len), '\0');
    CheckMpi(MPI_Recv(text.data(), len, MPI_CHAR, status.MPI_SOURCE, status.MPI_TAG, ctrl,
                      MPI_STATUS_IGNORE),
             "MPI_Recv");
    const int from = status.MPI_SOURCE;
    if (status.MPI_TAG == kTagFailure) {
      if (!failed.exchange(true)) {
        failure_text = text;
        failure_origin = from;
      }
      acks_owed.push_back(from);  // once this rank's generations have failed (SettleFailure)
    } else if (status.MPI_TAG == kTagAck) {
      if (acks_needed > 0) --acks_needed;
    } else if (status.MPI_TAG == kTagRelease) {
      released = true;
    } else if (status.MPI_TAG == kTagQuery) {
      // "object generation": answer with this rank's view of that object.
      std::istringstream in(text);
      int object = -1;
      std::uint64_t generation = 0;
      in >> object >> generation;
      std::string answer = std::to_string(object) + " " + std::to_string(generation) + " ";
      ReductionCore* found = nullptr;
      for (auto* core : objects)
        if (core->ObjectId() == object) found = core;
      if (!found) {
        answer += "has no such object";
      } else if (found->Generation() < generation) {
        answer += "has not started generation " + std::to_string(generation) + " (at generation " +
                  std::to_string(found->Generation()) + ", " + ToString(found->State()) + ")";
      } else {
        answer += found->Status();
      }
      SendControl(from, kTagStatus, answer);
    } else if (status.MPI_TAG == kTagStatus) {
      std::istringstream in(text);
      int object = -1;
      std::uint64_t generation = 0;
      in >> object >> generation;
      std::string rest;
      std::getline(in, rest);
      if (!rest.empty() && rest[0] == ' ') rest.erase(0, 1);
      auto it = watchdog.find({object, generation});
      if (it != watchdog.end()) it->second.answers[from] = rest;
    }
  }
}
#endif

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
          report << (a == q.answers.end() ? std::string("no answer (busy outside Tributary, or hung)")
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
