// One cell of the failure matrix, written as a user's program: the README's loop (a Batch of a
// Min and a Sum, an AllReduce every list polls, an AllReduce with a user operator, an
// AllGather that block 0 starts, an AllReduce and a Reduce of 5 KiB vectors; one task list per
// block) runs cycles until a fault is injected on
// the last rank in cycle 2, the program catches what reaches it and tears down in the order asked.
// It prints what it caught and exits with its own code on every rank:
//   3  the fault was caught on every rank with a report naming what is missing, and the
//      teardown did what the documentation says (more cycles: a failed Context refuses them
//      with the same report; a new Context: its cycles are right);
//   0  no fault was asked for and every cycle was right;
//   5  anything else (a wrong value, a report that names nothing, an unexpected error).
// Under FailurePolicy::abort the job ends at the fault instead: MPI_Abort with 1 (a failure)
// or 2 (the watchdog), after the report on stderr.
//
//   failure_matrix --policy=abort|propagate
//                  --fault=none|missing_list|never_started|task_exception|usage_error|remote_failure
//                  --teardown=objects_then_context|context_first|waitall_first|more_cycles|new_context
//                  --executor=serial|threaded|foreign [--watchdog=SECONDS] [--blocks=N]
#include <array>
#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "outside_support.hpp"

namespace {

using outside::Contains;
using outside::Rank;
using outside::Size;
using tributary::TaskStatus;

constexpr int kFaultCycle = 2;
constexpr const char* kProgram = "failure_matrix";

struct Options {
  std::string policy, fault, teardown, executor;
  double watchdog = 1.0;
  int blocks = 2;
  int cycles = 4;
};

// The user operator of `energy`: a sum that refuses to combine on the faulty rank and cycle.
std::atomic<bool> g_operator_throws{false};
struct CheckedSum {
  static constexpr bool commutative = true;
  static double identity() { return 0.0; }
  void operator()(const double& in, double& inout) const {
    if (g_operator_throws.load())
      throw std::runtime_error("injected fault: the user operator refused a value");
    inout += in;
  }
};

double BlockDt(int cycle, int rank, int block) {
  return 1.0 + 0.125 * ((rank * 7 + block * 3 + cycle) % 11);
}
double BlockMass(int cycle, int rank, int block) { return rank + block + cycle + 1.0; }

// Every rank's census: more than 64 bytes, which the built-in tree gives to the MPI library's
// MPI_Iallgather above 2 ranks (a collective that cannot be cancelled).
using Census = std::array<double, 24>;
Census CensusOf(int cycle, int rank) {
  Census c{};
  for (std::size_t i = 0; i < c.size(); ++i) c[i] = cycle * 1000.0 + rank * 100.0 + i;
  return c;
}

// A field of 640 doubles (5 KiB: above what the MPI library's schedule runs on a persistent
// request of its own, so MPI_Iallreduce and MPI_Ireduce work in the objects' buffers).
constexpr std::size_t kFieldLength = 640;
std::vector<double> FieldOf(int cycle, int rank, int block) {
  std::vector<double> f(kFieldLength);
  for (std::size_t i = 0; i < f.size(); ++i) f[i] = cycle + rank * 0.5 + block * 0.25 + i;
  return f;
}

struct Expected {
  double dt = 1e300, mass = 0, aux = 0, energy = 0;
  std::vector<Census> census;
  std::vector<double> field = std::vector<double>(kFieldLength, 0.0);
};
Expected ExpectedValues(int cycle, int blocks) {
  Expected e;
  for (int r = 0; r < Size(); ++r)
    for (int b = 0; b < blocks; ++b) {
      e.dt = std::min(e.dt, BlockDt(cycle, r, b));
      e.mass += BlockMass(cycle, r, b);
      e.aux += 1.0;
      e.energy += b + 1.0;
      const std::vector<double> f = FieldOf(cycle, r, b);
      for (std::size_t i = 0; i < kFieldLength; ++i) e.field[i] += f[i];
    }
  for (int r = 0; r < Size(); ++r) e.census.push_back(CensusOf(cycle, r));
  return e;
}

// The program's reductions, created in the same order on every rank.
struct Objects {
  explicit Objects(tributary::Context& ctx)
      : step(ctx, "step"),
        dt(step.Add<double>(tributary::Min{}, "dt")),
        mass(step.Add<double>(tributary::Sum{}, "mass")),
        aux(ctx, "aux"),
        energy(ctx, "energy"),
        census(ctx, "census"),
        field(ctx, "field"),
        profile(ctx, "profile") {}
  tributary::Batch step;
  tributary::BatchMember<double>& dt;
  tributary::BatchMember<double>& mass;
  tributary::AllReduce<double> aux;
  tributary::AllReduce<double> energy;
  tributary::AllGather<Census> census;
  tributary::AllReduce<std::vector<double>> field;
  tributary::Reduce<std::vector<double>> profile;  // to rank 0
};

class Driver {
 public:
  Driver(const Options& o, bool inject) : o_(o), inject_(inject) {}

  // Runs cycles first .. first + count - 1; returns at the first that throws (its message in
  // `caught`). Counts the reads of a wrong value in wrong_.
  bool RunCycles(tributary::Context& ctx, Objects& obj, int first, int count, std::string* caught) {
    for (int c = first; c < first + count; ++c) {
      try {
        RunCycle(ctx, obj, c);
      } catch (const std::exception& e) {
        *caught = e.what();
        return false;
      }
    }
    return true;
  }
  int Wrong() const { return wrong_.load(); }

 private:
  bool Faulty(int cycle, const char* fault) const {
    return inject_ && cycle == kFaultCycle && o_.fault == fault && Rank() == Size() - 1;
  }

  void RunCycle(tributary::Context& ctx, Objects& obj, int cycle) {
    const int n = o_.blocks;
    const Expected want = ExpectedValues(cycle, n);
    g_operator_throws = Faulty(cycle, "remote_failure");
    obj.step.Expect(n);
    if (!Faulty(cycle, "never_started")) obj.aux.Expect(n, tributary::Sum{});
    obj.energy.Expect(n, CheckedSum{});
    obj.field.Expect(n, tributary::Sum{});
    obj.profile.Expect(n, 0, tributary::Sum{});
    // Each block's tasks, in order.
    std::vector<std::vector<std::pair<std::string, outside::Task>>> lists(
        static_cast<std::size_t>(n));
    for (int b = 0; b < n; ++b) {
      auto& tl = lists[static_cast<std::size_t>(b)];
      tl.emplace_back("advance block " + std::to_string(b), [this, b, cycle] {
        if (b == 0 && Faulty(cycle, "task_exception"))
          throw std::runtime_error("injected fault: block 0 cannot advance");
        return TaskStatus::complete;
      });
      tl.emplace_back("contribute", [this, &obj, b, cycle] {
        const int r = Rank();
        if (!(b == 1 && Faulty(cycle, "missing_list"))) {
          obj.dt.Contribute(b, BlockDt(cycle, r, b));
          if (b == 0 && Faulty(cycle, "usage_error")) obj.dt.Contribute(b, 0.0);
          obj.mass.Contribute(b, BlockMass(cycle, r, b));
        }
        if (!Faulty(cycle, "never_started")) obj.aux.Contribute(b, 1.0);
        obj.energy.Contribute(b, b + 1.0);
        obj.field.Contribute(b, FieldOf(cycle, r, b));
        obj.profile.Contribute(b, FieldOf(cycle, r, b));
        if (b == 0) {
          obj.census.local = CensusOf(cycle, r);
          obj.census.StartReduce();
        }
        return TaskStatus::complete;
      });
      tl.emplace_back("poll step", [&obj] { return obj.step.CheckReduce(); });
      tl.emplace_back("poll aux", [&obj] { return obj.aux.CheckReduce(); });
      tl.emplace_back("poll census", [&obj] { return obj.census.CheckReduce(); });
      tl.emplace_back("poll field", [&obj] { return obj.field.CheckReduce(); });
      tl.emplace_back("poll profile", [&obj] { return obj.profile.CheckReduce(); });
      tl.emplace_back("poll energy", [&obj] { return obj.energy.CheckReduce(); });
      tl.emplace_back("read the results", [this, &obj, want] {
        if (obj.dt.val != want.dt || obj.mass.val != want.mass || obj.aux.val != want.aux ||
            obj.energy.val != want.energy || obj.census.val != want.census ||
            obj.field.val != want.field || (Rank() == 0 && obj.profile.val != want.field))
          ++wrong_;
        return TaskStatus::complete;
      });
    }
    if (o_.executor == "foreign") {
      outside::Lists pool_lists(lists.size());
      for (std::size_t l = 0; l < lists.size(); ++l)
        for (auto& [label, task] : lists[l]) pool_lists[l].push_back(task);
      try {
        tributary::ForeignCycle declared;
        pool_->Run(pool_lists);
      } catch (const tributary::RemoteError&) {
        throw;  // another rank's failure (or the watchdog's): every rank knows already
      } catch (const std::exception& e) {
        ctx.ReportFailure(e.what());  // this rank's: the failure policy applies
        throw;
      }
      return;
    }
    tributary::TaskCollection tc;
    auto& region = tc.AddRegion(n);
    for (int b = 0; b < n; ++b) {
      tributary::TaskID prev;
      for (auto& [label, task] : lists[static_cast<std::size_t>(b)])
        prev = region[b].AddTask(prev, label, task);
    }
    TaskStatus status = TaskStatus::fail;
    if (o_.executor == "threaded") {
      tributary::ExecutorOptions eo;
      eo.watchdog = ctx.Options().watchdog;
      eo.on_watchdog = ctx.Options().on_watchdog;
      tributary::ThreadedExecutor threaded(2, false, eo);
      status = ctx.Execute(tc, threaded);
    } else {
      status = ctx.Execute(tc);
    }
    if (status != TaskStatus::complete)
      throw std::runtime_error("Execute returned fail: " + std::string("no exception"));
  }

 public:
  std::unique_ptr<outside::Pool> pool_;

 private:
  const Options& o_;
  bool inject_;
  std::atomic<int> wrong_{0};
};

// What the report of each fault must name.
bool NamesWhatIsMissing(const Options& o, const std::string& text) {
  const std::string bad = std::to_string(Size() - 1);
  if (o.fault == "missing_list")
    return Contains(text, "missing lists: 1") && Contains(text, "'step'");
  if (o.fault == "never_started")
    return Contains(text, "'aux'") &&
           (Contains(text, "never started") || Contains(text, "has not started generation"));
  // The failing rank's own error names its task; the others' name the failing rank too.
  const bool named = Rank() == Size() - 1 || Contains(text, "rank " + bad + " failed");
  if (o.fault == "task_exception")  // Tributary's executors name the task; a foreign one not
    return Contains(text, "injected fault: block 0 cannot advance") &&
           (o.executor == "foreign" || Contains(text, "'advance block 0'")) && named;
  if (o.fault == "usage_error") return Contains(text, "contributed twice") && named;
  if (o.fault == "remote_failure")
    return Contains(text, "'energy'") && Contains(text, "rank " + bad);
  return false;
}

tributary::ContextOptions ContextOptionsFor(const Options& o) {
  tributary::ContextOptions co;
  co.on_failure =
      o.policy == "abort" ? tributary::FailurePolicy::abort : tributary::FailurePolicy::propagate;
  co.watchdog = std::chrono::duration<double>(o.watchdog);
  co.on_watchdog = tributary::WatchdogAction::fail;
  co.communicator_pool = 6;  // every object may take the MPI library's schedule
  return co;
}

int RunCase(const Options& o) {
  Driver driver(o, o.fault != "none");
  if (o.executor == "foreign") driver.pool_ = std::make_unique<outside::Pool>(2);
  bool ok = true;
  auto note = [&](bool cond, const std::string& what) {
    if (!cond) {
      ok = false;
      outside::Say(kProgram, "UNEXPECTED: " + what);
    }
  };
  auto ctx = std::make_unique<tributary::Context>(ContextOptionsFor(o));
  auto obj = std::make_unique<Objects>(*ctx);
  std::string caught;
  const bool clean = driver.RunCycles(*ctx, *obj, 0, o.cycles, &caught);
  if (o.fault == "none") {
    note(clean, "a cycle failed without a fault: " + caught);
  } else {
    note(!clean, "the fault was not caught");
    outside::Say(kProgram,
                 "caught: " + (Rank() == 0 ? caught : caught.substr(0, caught.find('\n'))));
    note(NamesWhatIsMissing(o, caught), "the report does not name what is missing:\n" + caught);
  }
  const bool context_failed = o.fault != "none" && o.fault != "remote_failure";
  if (o.teardown == "context_first") {
    ctx.reset();
    obj.reset();
  } else if (o.teardown == "waitall_first") {
    try {
      ctx->WaitAll();
      note(!context_failed, "WaitAll on a failed Context did not throw its failure");
    } catch (const tributary::Error& e) {
      note(context_failed && NamesWhatIsMissing(o, e.what()),
           std::string("WaitAll threw something else: ") + e.what());
    }
    obj.reset();
    ctx.reset();
  } else if (o.teardown == "more_cycles") {
    std::string again;
    const bool more = driver.RunCycles(*ctx, *obj, o.cycles, 2, &again);
    if (context_failed) {
      note(!more, "a failed Context ran more cycles");
      note(NamesWhatIsMissing(o, again),
           "the next cycle's error does not repeat the failure:\n" + again);
    } else {
      note(more, "the cycles after a failed generation failed: " + again);
    }
    obj.reset();
    ctx.reset();
  } else {
    obj.reset();
    ctx.reset();
  }
  if (o.teardown == "new_context") {
    Driver fresh(o, false);
    if (o.executor == "foreign") fresh.pool_ = std::make_unique<outside::Pool>(2);
    tributary::Context ctx2(ContextOptionsFor(o));
    Objects obj2(ctx2);
    std::string error;
    note(fresh.RunCycles(ctx2, obj2, 0, 2, &error), "a new Context failed: " + error);
    note(fresh.Wrong() == 0, "a new Context's cycle read a wrong value");
  }
  note(driver.Wrong() == 0, "a cycle before the fault read a wrong value");
  return ok ? (o.fault == "none" ? 0 : 3) : 5;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  o.policy = outside::Arg(argc, argv, "policy", "propagate");
  o.fault = outside::Arg(argc, argv, "fault", "none");
  o.teardown = outside::Arg(argc, argv, "teardown", "objects_then_context");
  o.executor = outside::Arg(argc, argv, "executor", "serial");
  o.watchdog = std::stod(outside::Arg(argc, argv, "watchdog", "1"));
  o.blocks = std::stoi(outside::Arg(argc, argv, "blocks", "2"));
  const int wanted = o.executor == "serial" ? MPI_THREAD_SINGLE : MPI_THREAD_SERIALIZED;
  int provided = 0;
  MPI_Init_thread(&argc, &argv, wanted, &provided);
  int code = 5;
  try {
    code = RunCase(o);
  } catch (const std::exception& e) {
    outside::Say(kProgram, std::string("UNEXPECTED: escaped: ") + e.what());
  }
  int worst = 0;
  MPI_Allreduce(&code, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  outside::Say(kProgram, "exit " + std::to_string(worst));
  MPI_Finalize();
  return worst;
}
