// The reduction layer's costs at 2 ranks, each a ratio measured side by side in one run:
//  1. one AllReduce<double> per cycle through the task engine vs MPI_Iallreduce + MPI_Test;
//  2. 8 lists per rank: the regional combine vs every list starting its own reduction;
//  3. a batch of 8 scalars vs one scalar reduction;
//  4. CheckReduce on a reduction that cannot complete yet (ns per call);
//  5. a std::vector reduction with the cross-rank length check of DebugLevel::basic (the
//     default) vs without it (DebugLevel::none), on the tree's schedule and the library's;
//  6. the regional combine of 8 lists with the timeline of reductions on
//     (ContextOptions::trace, written to a temporary file) vs off.
//  7. the agreement checks (docs/reductions.md, "Ranks that disagree"): one AllReduce<double>
//     and a batch of 8 scalars at DebugLevel::none, basic and full.
// It ends with one table of those figures against their goals (docs/performance.md takes
// that table as it is). --sections picks some of them (cycle, regional, batch, length,
// trace, agreement, check).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <memory>
#include <string>
#include <vector>

#include "bench_harness.hpp"
#include "tributary/tributary.hpp"

#if defined(OPEN_MPI) && defined(__has_include)
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif
#endif
#if MPI_VERSION >= 4
#define BENCH_ALLREDUCE_INIT MPI_Allreduce_init
#elif defined(OMPI_HAVE_MPI_EXT_PCOLLREQ) && OMPI_HAVE_MPI_EXT_PCOLLREQ
#define BENCH_ALLREDUCE_INIT MPIX_Allreduce_init
#endif

namespace {

using tributary::TaskID;
using tributary::TaskStatus;
namespace tb = tributary::bench;

using tb::FormatRatio;

std::string Nanoseconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, s < 10e-9 ? "%.1f ns" : "%.0f ns", s * 1e9);
  return buf;
}
std::string Goal(const char* goal, bool met) { return tb::GoalTable::Verdict(goal, met); }

template <class R>
void Wait(R& r) {
  while (r.CheckReduce() != TaskStatus::complete) {
  }
}

void OneScalarPerCycle(const tb::Options& o, tributary::Context& ctx, MPI_Comm raw_comm,
                       tb::GoalTable& sum) {
  tb::Runner run(MPI_COMM_WORLD, "one AllReduce<double> per cycle", "MPI_Iallreduce+MPI_Test", o);
  const int p = run.Size();
  double raw = 0;
  run.Add(
      "MPI_Iallreduce+MPI_Test",
      [&] {
        raw = 1.0;
        MPI_Request req;
        MPI_Iallreduce(MPI_IN_PLACE, &raw, 1, MPI_DOUBLE, MPI_SUM, raw_comm, &req);
        int done = 0;
        while (!done) MPI_Test(&req, &done, MPI_STATUS_IGNORE);
      },
      [&] { return raw == p; });
  tributary::AllReduce<double> direct(ctx, "direct");
  run.Add(
      "StartReduce+CheckReduce",
      [&] {
        direct.val = 1.0;
        direct.StartReduce(tributary::Sum{});
        Wait(direct);
      },
      [&] { return direct.val == p; });
  // Through the task engine: a contribute task and a check task in one list.
  tributary::AllReduce<double> tasked(ctx, "tasked");
  tributary::TaskCollection tc;
  auto& tl = tc.AddRegion(1)[0];
  auto c = tl.AddTask(TaskID(), [&] { return tasked.Contribute(0, 1.0); });
  tl.AddTask(c, [&] { return tasked.CheckReduce(); });
  tributary::SerialExecutor ex;
  run.Add(
      "task engine: Expect+Contribute+CheckReduce",
      [&] {
        tasked.Expect(1, tributary::Sum{});
        ctx.Execute(tc, ex);
      },
      [&] { return tasked.val == p; });
  // The same cycle on the MPI library's own MPI_Iallreduce (the schedule forced).
  tributary::ContextOptions lib_options;
  lib_options.allreduce_schedule = tributary::ScheduleKind::mpi_library;
  tributary::Context lib_ctx(lib_options);
  tributary::AllReduce<double> lib(lib_ctx, "tasked-library");
  tributary::TaskCollection lib_tc;
  auto& lib_tl = lib_tc.AddRegion(1)[0];
  auto lc = lib_tl.AddTask(TaskID(), [&] { return lib.Contribute(0, 1.0); });
  lib_tl.AddTask(lc, [&] { return lib.CheckReduce(); });
  run.Add(
      "task engine, mpi_library schedule",
      [&] {
        lib.Expect(1, tributary::Sum{});
        lib_ctx.Execute(lib_tc, ex);
      },
      [&] { return lib.val == p; });
#ifdef BENCH_ALLREDUCE_INIT
  // The library's floor on its schedule: its persistent request (which that schedule starts
  // for messages of at most 4 KiB), started and tested in a loop.
  double persistent_value = 0;
  MPI_Request persistent = MPI_REQUEST_NULL;
  BENCH_ALLREDUCE_INIT(MPI_IN_PLACE, &persistent_value, 1, MPI_DOUBLE, MPI_SUM, raw_comm,
                       MPI_INFO_NULL, &persistent);
  run.Add(
      "MPI_Start+MPI_Test (persistent request)",
      [&] {
        persistent_value = 1.0;
        MPI_Start(&persistent);
        int done = 0;
        while (!done) MPI_Test(&persistent, &done, MPI_STATUS_IGNORE);
      },
      [&] { return persistent_value == p; });
#endif
  run.Run("8 B");
  run.Report();
#ifdef BENCH_ALLREDUCE_INIT
  MPI_Request_free(&persistent);
#endif
  if (run.Rank() == 0) {
    const auto& r = run.Results();
    std::printf(
        "\noverhead per cycle through the task engine: %.0f ns (%.2fx); on the MPI "
        "library's schedule: %.0f ns (%.2fx)\n",
        (r[2].median_s - r[0].median_s) * 1e9, r[2].ratio, (r[3].median_s - r[0].median_s) * 1e9,
        r[3].ratio);
    sum.Add("raw `MPI_Iallreduce` + `MPI_Test` loop", tb::FormatSeconds(r[0].median_s), "1.00", "");
    sum.Add("`AllReduce<double>`: `StartReduce` + `CheckReduce` loop",
            tb::FormatSeconds(r[1].median_s), FormatRatio(r[1].ratio), "");
    sum.Add(
        "`AllReduce<double>` per cycle through the task engine (`Expect`, contribute task, check "
        "task, "
        "`Context::Execute`)",
        tb::FormatSeconds(r[2].median_s), FormatRatio(r[2].ratio),
        Goal("≤ 1.3", r[2].ratio <= 1.3));
    sum.Add("the same cycle on the MPI library's schedule (`mpi_library` forced)",
            tb::FormatSeconds(r[3].median_s), FormatRatio(r[3].ratio),
            Goal("≤ 1.3", r[3].ratio <= 1.3));
    if (r.size() > 4)
      sum.Add("the MPI library's persistent request: `MPI_Start` + `MPI_Test` loop",
              tb::FormatSeconds(r[4].median_s), FormatRatio(r[4].ratio), "");
  }
}

void RegionalVersusPerList(const tb::Options& o, tributary::Context& ctx, tb::GoalTable& sum) {
  tb::Runner run(MPI_COMM_WORLD, "8 lists per rank", "per-list reductions", o);
  const int p = run.Size(), lists = 8;
  std::vector<tributary::AllReduce<double>> own;
  for (int i = 0; i < lists; ++i) own.emplace_back(ctx, "own");
  tributary::TaskCollection per_list;
  auto& pr = per_list.AddRegion(lists);
  for (int i = 0; i < lists; ++i) {
    auto s = pr[i].AddTask(TaskID(), [&own, i] {
      own[static_cast<std::size_t>(i)].val = 1.0;
      return own[static_cast<std::size_t>(i)].StartReduce(tributary::Sum{});
    });
    pr[i].AddTask(s, [&own, i] { return own[static_cast<std::size_t>(i)].CheckReduce(); });
  }
  tributary::AllReduce<double> regional(ctx, "regional");
  tributary::TaskCollection combined;
  auto& cr = combined.AddRegion(lists);
  for (int i = 0; i < lists; ++i) {
    auto s = cr[i].AddTask(TaskID(), [&regional, i] { return regional.Contribute(i, 1.0); });
    cr[i].AddTask(s, [&regional] { return regional.CheckReduce(); });
  }
  tributary::SerialExecutor ex;
  run.Add(
      "per-list reductions", [&] { ctx.Execute(per_list, ex); }, [&] { return own[7].val == p; });
  run.Add(
      "regional combine",
      [&] {
        regional.Expect(lists, tributary::Sum{});
        ctx.Execute(combined, ex);
      },
      [&] { return regional.val == static_cast<double>(lists * p); });
  run.Run("8 lists");
  run.Report();
  if (run.Rank() == 0) {
    const auto& r = run.Results();
    std::printf("\nregional combine is %.1fx faster than per-list reductions\n", 1.0 / r[1].ratio);
    sum.Add("8 lists per rank: each list starts its own reduction",
            tb::FormatSeconds(r[0].median_s), "1.00", "");
    char faster[64];
    std::snprintf(faster, sizeof faster, "%.1fx faster (%.2f)", 1.0 / r[1].ratio, r[1].ratio);
    sum.Add("8 lists per rank: regional combine", tb::FormatSeconds(r[1].median_s), faster,
            Goal("≥ 5x", r[1].ratio <= 0.2));
  }
}

void BatchVersusScalar(const tb::Options& o, tributary::Context& ctx, tb::GoalTable& sum) {
  tb::Runner run(MPI_COMM_WORLD, "batch of 8 scalars", "one scalar", o);
  const int p = run.Size();
  tributary::AllReduce<double> one(ctx, "one");
  run.Add(
      "one scalar",
      [&] {
        one.val = 1.0;
        one.StartReduce(tributary::Sum{});
        Wait(one);
      },
      [&] { return one.val == p; });
  tributary::Batch batch(ctx, "eight");
  std::vector<tributary::BatchMember<double>*> m;
  m.push_back(&batch.Add<double>(tributary::Min{}));
  m.push_back(&batch.Add<double>(tributary::Max{}));
  for (int k = 0; k < 6; ++k) m.push_back(&batch.Add<double>(tributary::Sum{}));
  run.Add(
      "batch of 8",
      [&] {
        for (auto* x : m) x->val = 1.0;
        batch.StartReduce();
        Wait(batch);
      },
      [&] { return m[7]->val == p && m[0]->val == 1.0; });
  run.Run("8 x 8 B");
  run.Report();
  if (run.Rank() == 0) {
    const auto& r = run.Results();
    sum.Add("batch of 8 scalars vs one scalar reduction",
            tb::FormatSeconds(r[1].median_s) + " vs " + tb::FormatSeconds(r[0].median_s),
            FormatRatio(r[1].ratio), Goal("≤ 1.3", r[1].ratio <= 1.3));
  }
}

// The length check of variable-size values: DebugLevel::basic against none, on the tree's
// schedule and on the MPI library's, side by side. After the first generation the length
// rides on the messages (docs/reductions.md, "Ranks that disagree"). A difference of a few
// percent against a goal of 1.1: each ratio is the median of the per-repetition ratios
// (basic runs right after none in every repetition), over at least 25 repetitions.
void LengthCheckCost(tb::Options o, tb::GoalTable& sum) {
  o.repetitions = std::max(o.repetitions, 25);
  tributary::ContextOptions options[4];
  const char* names[4] = {"DebugLevel::none", "DebugLevel::basic (length check)",
                          "mpi_library, DebugLevel::none", "mpi_library, DebugLevel::basic"};
  for (int k = 0; k < 4; ++k) {
    options[k].debug = k % 2 ? tributary::DebugLevel::basic : tributary::DebugLevel::none;
    if (k >= 2) options[k].allreduce_schedule = tributary::ScheduleKind::mpi_library;
  }
  std::vector<std::unique_ptr<tributary::Context>> ctx;
  for (const auto& opt : options) ctx.push_back(std::make_unique<tributary::Context>(opt));
  for (std::size_t n : {std::size_t(1), std::size_t(16), std::size_t(128)}) {
    tb::Runner run(MPI_COMM_WORLD, "vector allreduce with the length check", names[0], o);
    const int p = run.Size();
    std::vector<std::unique_ptr<tributary::AllReduce<std::vector<double>>>> a;
    for (int k = 0; k < 4; ++k) {
      a.push_back(std::make_unique<tributary::AllReduce<std::vector<double>>>(*ctx[k], names[k]));
      auto& r = *a.back();
      run.Add(
          names[k],
          [&r, n] {
            r.val.assign(n, 1.0);
            r.StartReduce(tributary::Sum{});
            Wait(r);
          },
          [&r, n, p] { return r.val.size() == n && r.val[0] == p; });
    }
    run.Run(tb::FormatBytes(n * sizeof(double)));
    run.Report();
    if (run.Rank() == 0) {
      const auto& r = run.Results();
      const std::string size = tb::FormatBytes(n * sizeof(double));
      const double own = tb::PairedRatio(r[1], r[0]), lib = tb::PairedRatio(r[3], r[2]);
      sum.Add("`std::vector<double>` of " + size +
                  ": the length check of `DebugLevel::basic` vs `DebugLevel::none` (median of "
                  "the per-repetition ratios)",
              tb::FormatSeconds(r[1].median_s) + " vs " + tb::FormatSeconds(r[0].median_s),
              FormatRatio(own), Goal("≤ 1.1", own <= 1.1));
      sum.Add("the same on the MPI library's schedule (`mpi_library` forced)",
              tb::FormatSeconds(r[3].median_s) + " vs " + tb::FormatSeconds(r[2].median_s),
              FormatRatio(lib), Goal("≤ 1.1", lib <= 1.1));
    }
  }
}

// The regional cycle of 8 lists on two Contexts, one with a timeline (written to a file
// under $TMPDIR, removed afterwards), side by side.
void TraceCost(const tb::Options& o, tb::GoalTable& sum) {
  tb::Runner run(MPI_COMM_WORLD, "8 lists per rank, timeline", "timeline off", o);
  const int p = run.Size(), lists = 8;
  const char* tmp = std::getenv("TMPDIR");
  const std::string prefix = std::string(tmp && *tmp ? tmp : "/tmp") + "/tributary-bench-trace-" +
                             std::to_string(static_cast<long>(std::time(nullptr)));
  tributary::ContextOptions traced;
  traced.trace = prefix;
  {
    tributary::Context off, on(traced);
    tributary::AllReduce<double> quiet(off, "regional"), loud(on, "regional");
    tributary::TaskCollection quiet_tc, loud_tc;
    auto& qr = quiet_tc.AddRegion(lists);
    auto& lr = loud_tc.AddRegion(lists);
    for (int i = 0; i < lists; ++i) {
      auto q = qr[i].AddTask(TaskID(), [&quiet, i] { return quiet.Contribute(i, 1.0); });
      qr[i].AddTask(q, [&quiet] { return quiet.CheckReduce(); });
      auto l = lr[i].AddTask(TaskID(), [&loud, i] { return loud.Contribute(i, 1.0); });
      lr[i].AddTask(l, [&loud] { return loud.CheckReduce(); });
    }
    tributary::SerialExecutor ex;
    run.Add(
        "timeline off",
        [&] {
          quiet.Expect(lists, tributary::Sum{});
          off.Execute(quiet_tc, ex);
        },
        [&] { return quiet.val == static_cast<double>(lists * p); });
    run.Add(
        "timeline on",
        [&] {
          loud.Expect(lists, tributary::Sum{});
          on.Execute(loud_tc, ex);
        },
        [&] { return loud.val == static_cast<double>(lists * p); });
    run.Run("8 lists");
    run.Report();
  }
  std::remove((prefix + "." + std::to_string(run.Rank()) + ".json").c_str());
  if (run.Rank() == 0) {
    const auto& r = run.Results();
    std::printf("\ntimeline on: %.0f ns more per cycle of 8 contributions (%.2fx)\n",
                (r[1].median_s - r[0].median_s) * 1e9, r[1].ratio);
    sum.Add("8 lists per rank, regional combine: timeline on (`ContextOptions::trace`) vs off",
            tb::FormatSeconds(r[1].median_s) + " vs " + tb::FormatSeconds(r[0].median_s),
            FormatRatio(r[1].ratio), "");
  }
}

// Each object in a Context of its own debug level; the same cycle on each.
void AgreementCost(const tb::Options& o, tb::GoalTable& sum) {
  const tributary::DebugLevel levels[3] = {
      tributary::DebugLevel::none, tributary::DebugLevel::basic, tributary::DebugLevel::full};
  const char* names[3] = {"DebugLevel::none", "DebugLevel::basic", "DebugLevel::full"};
  std::vector<std::unique_ptr<tributary::Context>> ctx;
  for (auto level : levels) {
    tributary::ContextOptions options;
    options.debug = level;
    ctx.push_back(std::make_unique<tributary::Context>(options));
  }
  {
    tb::Runner run(MPI_COMM_WORLD, "one AllReduce<double> per cycle by debug level", names[0], o);
    const int p = run.Size();
    std::vector<std::unique_ptr<tributary::AllReduce<double>>> a;
    for (int k = 0; k < 3; ++k) {
      a.push_back(std::make_unique<tributary::AllReduce<double>>(*ctx[k], names[k]));
      tributary::AllReduce<double>& r = *a.back();
      run.Add(
          names[k],
          [&r] {
            r.val = 1.0;
            r.StartReduce(tributary::Sum{});
            Wait(r);
          },
          [&r, p] { return r.val == p; });
    }
    run.Run("8 B");
    run.Report();
    if (run.Rank() == 0) {
      const auto& r = run.Results();
      sum.Add(
          "`AllReduce<double>`: `DebugLevel::full` (the agreement record compared before "
          "every generation) vs `DebugLevel::none`",
          tb::FormatSeconds(r[2].median_s) + " vs " + tb::FormatSeconds(r[0].median_s),
          FormatRatio(r[2].ratio), "");
      sum.Add(
          "`AllReduce<double>`: `DebugLevel::basic` (nothing to compare a plain scalar on) vs "
          "`DebugLevel::none`",
          tb::FormatSeconds(r[1].median_s) + " vs " + tb::FormatSeconds(r[0].median_s),
          FormatRatio(r[1].ratio), "");
    }
  }
  {
    tb::Runner run(MPI_COMM_WORLD, "batch of 8 scalars by debug level", names[0], o);
    const int p = run.Size();
    std::vector<std::unique_ptr<tributary::Batch>> b;
    for (int k = 0; k < 3; ++k) {
      b.push_back(std::make_unique<tributary::Batch>(*ctx[k], names[k]));
      tributary::Batch& batch = *b.back();
      std::vector<tributary::BatchMember<double>*> m;
      m.push_back(&batch.Add<double>(tributary::Min{}));
      m.push_back(&batch.Add<double>(tributary::Max{}));
      for (int j = 0; j < 6; ++j) m.push_back(&batch.Add<double>(tributary::Sum{}));
      run.Add(
          names[k],
          [&batch, m] {
            for (auto* x : m) x->val = 1.0;
            batch.StartReduce();
            Wait(batch);
          },
          [m, p] { return m[7]->val == p && m[0]->val == 1.0; });
    }
    run.Run("8 x 8 B");
    run.Report();
    if (run.Rank() == 0) {
      const auto& r = run.Results();
      sum.Add("batch of 8 scalars: `DebugLevel::full` vs `DebugLevel::none`",
              tb::FormatSeconds(r[2].median_s) + " vs " + tb::FormatSeconds(r[0].median_s),
              FormatRatio(r[2].ratio), "");
      sum.Add(
          "batch of 8 scalars: `DebugLevel::basic` (the record's hash in the header) vs "
          "`DebugLevel::none`",
          tb::FormatSeconds(r[1].median_s) + " vs " + tb::FormatSeconds(r[0].median_s),
          FormatRatio(r[1].ratio), "");
    }
  }
}

void CheckCost(tributary::Context& ctx, tb::GoalTable& sum) {
  // Rank 0 starts; rank 1 starts only after rank 0 has timed its checks, so every check
  // below sees an incomplete reduction. The second half has 8 more reductions in flight:
  // each incomplete check also advances one of them in turn (MPI's progress rule).
  const int calls = 1000000;
  double outside[2] = {0, 0}, in_sweep[2] = {0, 0};
  for (int others = 0; others < 2; ++others) {
    tributary::AllReduce<double> r(ctx, "pending");
    std::vector<std::unique_ptr<tributary::AllReduce<double>>> more;
    for (int k = 0; k < 8 * others; ++k)
      more.push_back(std::make_unique<tributary::AllReduce<double>>(ctx, "other"));
    const auto start_all = [&] {
      r.val = 1.0;
      r.StartReduce(tributary::Sum{});
      for (auto& m : more) {
        m->val = 1.0;
        m->StartReduce(tributary::Sum{});
      }
    };
    if (ctx.Rank() == 0) {
      start_all();
      double t0 = MPI_Wtime();
      for (int i = 0; i < calls; ++i) r.CheckReduce();
      outside[others] = (MPI_Wtime() - t0) / calls;
      tributary::detail::BeginSweep();  // as inside an executor's sweep: one real test
      t0 = MPI_Wtime();
      for (int i = 0; i < calls; ++i) r.CheckReduce();
      in_sweep[others] = (MPI_Wtime() - t0) / calls;
      tributary::detail::EndSweeps();
      MPI_Send(&outside[others], 1, MPI_DOUBLE, 1, 0, MPI_COMM_WORLD);
    } else if (ctx.Rank() == 1) {
      double x;
      MPI_Recv(&x, 1, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      start_all();
    } else {
      start_all();
    }
    Wait(r);
    for (auto& m : more) Wait(*m);
  }
  if (ctx.Rank() == 0)
    std::printf(
        "\n### CheckReduce on an incomplete reduction (rank 0, %d calls)\n\n"
        "| where | alone | with 8 others in flight |\n|---|---|---|\n"
        "| outside an executor (one test each) | %.0f ns | %.0f ns |\n"
        "| within one executor sweep (flag test) | %.1f ns | %.1f ns |\n",
        calls, outside[0] * 1e9, outside[1] * 1e9, in_sweep[0] * 1e9, in_sweep[1] * 1e9);
  if (ctx.Rank() == 0) {
    sum.Add(
        "`CheckReduce` on an incomplete reduction, outside an executor (one test, and the turn of "
        "another operation)",
        Nanoseconds(outside[0]), "", Goal("< 100 ns", outside[0] < 100e-9));
    sum.Add(
        "the same with 8 other reductions in flight (each incomplete check advances one of them in "
        "turn)",
        Nanoseconds(outside[1]), "", Goal("< 100 ns", outside[1] < 100e-9));
    sum.Add("`CheckReduce` on an incomplete reduction, within one executor sweep (flag test)",
            Nanoseconds(in_sweep[0]), "", "");
  }
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  {
    tb::Options defaults;
    defaults.iterations = 2000;
    defaults.repetitions = 9;
    defaults.warmup = 200;
    tb::CommandLine cl("The reduction layer's costs against MPI_Iallreduce + MPI_Test.", defaults);
    std::string sections = "cycle,regional,batch,length,trace,agreement,check";
    cl.app
        .add_option("--sections", sections,
                    "Which comparisons to run, comma-separated: cycle, regional, batch, "
                    "length, trace, agreement, check")
        ->capture_default_str();
    if (const int code = cl.Parse(argc, argv); code >= 0) {
      MPI_Finalize();
      return code;
    }
    const tb::Options o = cl.options;
    tributary::Context ctx;
    MPI_Comm raw;
    MPI_Comm_dup(MPI_COMM_WORLD, &raw);
    tb::GoalTable sum;
    const auto wanted = [&sections](const char* name) {
      return ("," + sections + ",").find(std::string(",") + name + ",") != std::string::npos;
    };
    if (wanted("cycle")) OneScalarPerCycle(o, ctx, raw, sum);
    if (wanted("regional")) RegionalVersusPerList(o, ctx, sum);
    if (wanted("batch")) BatchVersusScalar(o, ctx, sum);
    if (wanted("length")) LengthCheckCost(o, sum);
    if (wanted("trace")) TraceCost(o, sum);
    if (wanted("agreement")) AgreementCost(o, sum);
    if (wanted("check") && ctx.Size() >= 2) CheckCost(ctx, sum);
    if (ctx.Rank() == 0) sum.Print();
    MPI_Comm_free(&raw);
  }
  MPI_Finalize();
  return 0;
}
