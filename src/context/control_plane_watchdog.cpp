// The watchdog: when a generation has not completed in time, or a poll has waited that long
// for a start that has not come ("polled but never started"), it reports every reduction
// object this rank waits for, with every rank's view of each (asked for over the control
// plane, control_plane.cpp), or fails them.
#include <cstdio>
#include <iomanip>
#include <sstream>
#include <thread>
#include <vector>

#include "context/control_plane.hpp"
#include "context/registry.hpp"
#include "tributary/detail/core/reduction_core.hpp"
#include "tributary/errors.hpp"
#include "tributary/tasks/executor.hpp"

namespace tributary::detail {

void ControlPlane::Report(const std::string& text) noexcept {
  const int rank = rank_;
  try {
    if (options_.report_handler) {
      options_.report_handler("rank " + std::to_string(rank) + ": " + text);
      return;
    }
  } catch (...) {
  }
  std::fprintf(stderr, "tributary: rank %d: %s", rank, text.c_str());
  std::fflush(stderr);
}

std::string ControlPlane::WatchdogLine(const ReductionCore* core, std::uint64_t generation) {
  if (!core) return "has no such object (objects must be created in the same order on every rank)";
  const std::uint64_t current = core->Generation();
  const std::string at = "generation " + std::to_string(current) + " " + ToString(core->State());
  if (current < generation) {
    const std::string g = std::to_string(generation);
    if (core->AwaitedGeneration() >= generation)
      return "polled but never started: generation " + g + " has not started (" + at + ")";
    return "has not started generation " + g + " and has not polled it (" + at + ")";
  }
  if (current > generation)
    return "is past generation " + std::to_string(generation) + " (" + at + ")";
  return core->Status();
}

std::string ControlPlane::AnswerQuery(const std::string& asked) const {
  std::istringstream in(asked);
  std::uint64_t number = 0;
  in >> number;
  std::ostringstream out;
  out << number << "\n";
  int object = -1;
  std::uint64_t generation = 0;
  while (in >> object >> generation) {
    const ReductionCore* found = nullptr;
    for (const auto* core : registry_.objects)
      if (core->ObjectId() == object) found = core;
    out << object << " " << WatchdogLine(found, generation) << "\n";
  }
  return out.str();
}

void ControlPlane::TakeAnswer(int from, const std::string& answer) {
  std::istringstream in(answer);
  std::uint64_t number = 0;
  in >> number;
  if (number == 0 || number != query_.number) return;  // an answer to an earlier report
  auto& lines = query_.answers[from];
  std::string line;
  std::getline(in, line);
  while (std::getline(in, line)) {
    const auto space = line.find(' ');
    if (space == std::string::npos) continue;
    lines[std::stoi(line.substr(0, space))] = line.substr(space + 1);
  }
}

std::chrono::steady_clock::time_point WatchdogClock() noexcept {
#if TRIBUTARY_HAVE_SMPI
  // Simulated time: a simulated run takes far longer in wall time than it simulates. The
  // offset keeps a stamp taken at simulated time 0 apart from "not stamped yet" (0).
  return std::chrono::steady_clock::time_point(
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(
          std::chrono::duration<double>(MPI_Wtime() + 1.0)));
#else
  return std::chrono::steady_clock::now();
#endif
}

namespace {
// How long a report waits for the other ranks' views of what it names, whatever the
// time-out: a short watchdog on a loaded machine must not leave a rank that is slow to
// answer out of the report (every answer in: at once).
constexpr double kAnswerWindow = 2.0;

std::string Seconds(double s) {
  std::ostringstream o;
  o << std::setprecision(3) << s;
  return o.str();
}
}  // namespace

WatchdogQuery ControlPlane::CollectEntries(std::chrono::steady_clock::time_point now, bool all,
                                           bool* overdue) {
  const double timeout = options_.watchdog.count();
  WatchdogQuery q;
  // The entries' texts are written only where a report is made: formatting them on every
  // look cost a cycle through the MPI library's schedule about a quarter of its instructions.
  struct Waiting {
    const ReductionCore* core;
    double age;
    bool awaiting;
  };
  std::vector<Waiting> waiting;
  for (auto* core : registry_.objects) {
    const Phase phase = core->State();
    const std::uint64_t current = core->Generation();
    const std::uint64_t awaited = core->AwaitedGeneration();
    WatchdogQuery::Entry e;
    e.object = core->ObjectId();
    double age = 0;
    bool awaiting = false;
    if (phase == Phase::collecting || phase == Phase::in_flight) {
      e.generation = current;
      age = core->SecondsArmed(now);
      awaited_seen_.erase(e.object);
    } else if (awaited > current) {
      e.generation = awaited;
      awaiting = true;
      auto seen = awaited_seen_.find(e.object);
      if (seen == awaited_seen_.end() || seen->second.first != awaited)
        seen = awaited_seen_.insert_or_assign(e.object, std::make_pair(awaited, now)).first;
      age = std::chrono::duration<double>(now - seen->second.second).count();
    } else {
      awaited_seen_.erase(e.object);
      continue;
    }
    const auto done = reported_.find(e.object);
    if (!all && done != reported_.end() && done->second == std::make_pair(e.generation, awaiting))
      continue;  // once a generation
    *overdue = *overdue || age >= timeout;
    q.entries.push_back(std::move(e));
    waiting.push_back(Waiting{core, age, awaiting});
  }
  if (!all && !*overdue) return q;
  for (std::size_t i = 0; i < waiting.size(); ++i) {
    WatchdogQuery::Entry& e = q.entries[i];
    const Waiting& w = waiting[i];
    e.header =
        w.core->Name() + " generation " + std::to_string(e.generation) +
        (w.awaiting ? " is polled but has not started after " : " has not completed after ") +
        Seconds(w.age) + " s on rank " + std::to_string(rank_) + ".";
    e.mine = WatchdogLine(w.core, e.generation);
  }
  return q;
}

void ControlPlane::Ask(WatchdogQuery q) {
  q.number = ++queries_sent_;
  query_ = std::move(q);
#if TRIBUTARY_HAVE_MPI
  std::ostringstream ask;
  ask << query_.number;
  for (const auto& e : query_.entries) ask << " " << e.object << " " << e.generation;
  std::lock_guard<std::mutex> mpi(net_.mpi_mutex);
  for (int r = 0; r < size_; ++r)
    if (r != rank_) Send(r, kCtrlQuery, ask.str());
#endif
}

std::string ControlPlane::Compose() {
  std::ostringstream report;
  for (const auto& e : query_.entries) {
    report << "watchdog: " << e.header << "\n";
    for (int r = 0; r < size_; ++r) {
      report << "  rank " << r << ": ";
      if (r == rank_) {
        report << e.mine;
      } else {
        auto a = query_.answers.find(r);
        auto line = a == query_.answers.end() ? std::map<int, std::string>::const_iterator{}
                                              : a->second.find(e.object);
        report << (a == query_.answers.end() || line == a->second.end()
                       ? std::string("no answer (busy outside Tributary, or hung)")
                       : line->second);
      }
      report << "\n";
    }
    const bool awaiting = e.header.find(" is polled but ") != std::string::npos;
    reported_[e.object] = std::make_pair(e.generation, awaiting);
  }
  query_ = WatchdogQuery{};
  return report.str();
}

std::string ControlPlane::PendingTasks() {
  std::vector<Executor*> executors;
  {
    std::lock_guard<std::mutex> lock(registry_.mutex);
    executors = registry_.executors;
  }
  std::string text;
  for (Executor* executor : executors) {
    const std::string tasks = executor->ReportPending();
    if (!tasks.empty())
      text +=
          "incomplete tasks on rank " + std::to_string(rank_) + " (Context::Execute):\n" + tasks;
  }
  return text;
}

std::string ControlPlane::ObjectsReport() {
  if (failed_.load()) return {};
  const auto now = WatchdogClock();
  bool overdue = false;
  {
    std::lock_guard<std::mutex> lock(registry_.mutex);
    WatchdogQuery q = CollectEntries(now, /*all=*/true, &overdue);
    if (q.entries.empty())
      return "  no reduction object of rank " + std::to_string(rank_) + " is waited for\n";
    q.asked_at = now;
    Ask(std::move(q));
  }
  // Every rank's view, as their Contexts answer (at most kAnswerWindow).
  const auto limit = std::chrono::steady_clock::now() +
                     std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                         std::chrono::duration<double>(kAnswerWindow));
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(registry_.mutex);
      if (static_cast<int>(query_.answers.size()) == size_ - 1) break;
    }
    if (std::chrono::steady_clock::now() >= limit) break;
    ServiceOnce();
    std::this_thread::yield();
  }
  std::lock_guard<std::mutex> lock(registry_.mutex);
  return Compose();
}

void ControlPlane::RunWatchdog() {
  if (failed_.load()) return;  // after a failure nothing waits any more
  const ContextOptions& options = options_;
  const int rank = rank_;
  const auto now = WatchdogClock();
  std::string text;
  {
    std::lock_guard<std::mutex> lock(registry_.mutex);
    if (query_.number == 0) {
      // What this rank waits for: generations started and not complete, and polls waiting
      // for a start. One report names them all once one of them is overdue.
      bool overdue = false;
      WatchdogQuery q = CollectEntries(now, /*all=*/false, &overdue);
      if (!overdue) return;
      q.asked_at = now;
      Ask(std::move(q));
    }
    // Wait for every answer, at most kAnswerWindow.
    const double waited = std::chrono::duration<double>(now - query_.asked_at).count();
    const bool all = static_cast<int>(query_.answers.size()) == size_ - 1;
    if (!all && waited < kAnswerWindow) return;
    text = Compose();
  }
  // The tasks that wait for them, where an executor of Context::Execute runs.
  text += PendingTasks();
  if (options.on_watchdog == WatchdogAction::report) {
    Report(text + "  (reported once; the generations go on waiting)\n");
    return;
  }
  if (options.on_failure == FailurePolicy::abort)
    AbortJob(&net_, 2, "rank " + std::to_string(rank) + ": " + text);
  FailHere(text);
}

}  // namespace tributary::detail
