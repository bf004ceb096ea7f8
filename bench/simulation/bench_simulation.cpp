// Measurements for simulated clusters (scripts/run-simulation.sh runs it under SMPI; it also
// runs under a real MPI). Every time is MPI_Wtime, which under SMPI is simulated time.
//
//   bench_simulation latency  --collective allreduce|reduce|allgather --sizes B,B,...
//                             [--variants v,v,...] [--iterations N]
//   bench_simulation overlap  --sizes B,B,... [--variants v,...] [--chunks N]
//   bench_simulation regional [--lists 8] [--iterations N]
//   bench_simulation pingpong --sizes B,B,...   (one-way time between ranks 0 and 1 and between
//                             rank 0 and another node's first rank: the α-β check)
//   bench_simulation calibrate [--iterations N]  (at 2 ranks under a real MPI: what a test,
//                             a post, a combined byte and a generation's start cost here, the
//                             charges of simulation/smpirun.sh)
//   --debug none|basic        DebugLevel of the Contexts (default basic; "+check" in the labels)
//   --warmup N                untimed iterations before the timed ones (default 1)
//   bench_simulation check    (the tree, node-aware and MPI-library paths at 8 B and 4 KiB + 8 B
//                             and the regional
//                             combine, every answer checked; exit 1 if one is wrong)
//
// Variants: tree (the built-in selection tree), node_aware[_<schedule>] (the two-level form:
// combine in the node, <schedule> among leaders, k-nomial by default), own schedules by name
// (recursive_doubling, recursive_multiplying, rabenseifner, ring, knomial, binomial,
// reduce_bcast, pipelined_tree; a radix after the name for those that take one, e.g.
// knomial8, rabenseifner4, recursive_multiplying4: the plain names are radix 4 and
// rabenseifner2, the built-in trees' defaults),
// mpi_library (Tributary on the MPI library's non-blocking collective), MPI_Ixxx (raw non-blocking
// call + MPI_Test) and MPI_xxx (the blocking call). Rank 0 prints CSV rows on stdout:
//   latency:  latency,collective,variant,ranks,nodes,bytes,median_s,min_s,max_s
//   overlap:  overlap,allreduce,variant,ranks,nodes,bytes,t_pure,t_cpu,t_overall,osu,imb,hidden,
//             t_test
//   regional: regional,allreduce,variant,ranks,nodes,lists,median_s,min_s,max_s
// Timing (docs/simulation.md, "How a figure is measured"): every rank starts at one common
// instant (CommonStart) and an iteration's time is the latest completion after it, over all
// ranks; the median is over iterations. Computation is charged as flops. Under SMPI the raw
// MPI rows reduce with a user MPI_Op that charges its combine like Tributary's schedules.
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "tributary/tributary.hpp"

#ifdef SMPI_H
#include <simgrid/actor.h>
#include <simgrid/host.h>
#endif

namespace {

using tributary::ScheduleKind;
using tributary::TaskStatus;

int g_rank = 0, g_size = 1, g_nodes = 1;
tributary::DebugLevel g_debug = tributary::DebugLevel::basic;

std::vector<std::string> Split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

// Ranks sharing a processor name share a node (under SMPI: a simulated host). The
// launchers fill nodes with consecutive ranks, so a rank whose name differs from the one
// before it starts a node (no gather of every name: O(1) memory per rank at any scale).
int NodeCount() {
  char name[MPI_MAX_PROCESSOR_NAME] = {}, before[MPI_MAX_PROCESSOR_NAME] = {};
  int len = 0;
  MPI_Get_processor_name(name, &len);
  const int next = g_rank + 1 < g_size ? g_rank + 1 : MPI_PROC_NULL;
  const int prev = g_rank > 0 ? g_rank - 1 : MPI_PROC_NULL;
  MPI_Sendrecv(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, next, 0, before, MPI_MAX_PROCESSOR_NAME,
               MPI_CHAR, prev, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  int first = g_rank == 0 || std::strncmp(name, before, MPI_MAX_PROCESSOR_NAME) != 0, nodes = 0;
  MPI_Allreduce(&first, &nodes, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  return nodes;
}

// The first rank on another node than rank 0's, or -1 when every rank shares its node.
int PeerOnOtherNode() {
  char name[MPI_MAX_PROCESSOR_NAME] = {}, root[MPI_MAX_PROCESSOR_NAME] = {};
  int len = 0;
  MPI_Get_processor_name(name, &len);
  std::memcpy(root, name, sizeof root);
  MPI_Bcast(root, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 0, MPI_COMM_WORLD);
  int mine = std::strncmp(name, root, MPI_MAX_PROCESSOR_NAME) != 0 ? g_rank : g_size, peer = 0;
  MPI_Allreduce(&mine, &peer, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return peer < g_size ? peer : -1;
}

// One-way time of a message between rank 0 and rank 1 (same node when the launcher puts two
// ranks on one) and between rank 0 and the first rank on another node: after a barrier and
// one round trip (which lets the barrier's own messages leave the network), the mean of
// `reps` round trips in a row, halved. The check of the simulator against the platform's
// α-β model.
int PingPong(const std::vector<std::size_t>& sizes, int reps) {
  const int other = PeerOnOtherNode();
  for (int peer : {1, other}) {
    if (peer < 1 || peer >= g_size) continue;
    const bool same_node = peer != other;
    for (std::size_t bytes : sizes) {
      std::vector<char> buf(bytes);
      const auto trip = [&] {
        if (g_rank == 0) {
          MPI_Send(buf.data(), static_cast<int>(bytes), MPI_BYTE, peer, 1, MPI_COMM_WORLD);
          MPI_Recv(buf.data(), static_cast<int>(bytes), MPI_BYTE, peer, 1, MPI_COMM_WORLD,
                   MPI_STATUS_IGNORE);
        } else if (g_rank == peer) {
          MPI_Recv(buf.data(), static_cast<int>(bytes), MPI_BYTE, 0, 1, MPI_COMM_WORLD,
                   MPI_STATUS_IGNORE);
          MPI_Send(buf.data(), static_cast<int>(bytes), MPI_BYTE, 0, 1, MPI_COMM_WORLD);
        }
      };
      MPI_Barrier(MPI_COMM_WORLD);
      trip();
      const double t0 = MPI_Wtime();
      for (int rep = 0; rep < reps; ++rep) trip();
      const double one_way = (MPI_Wtime() - t0) / (2.0 * reps);
      if (g_rank == 0)
        std::printf("pingpong,p2p,%s,%d,%d,%zu,%.9g\n", same_node ? "same_node" : "other_node",
                    g_size, g_nodes, bytes, one_way);
    }
  }
  return 0;
}

// A Tributary variant run with DebugLevel::basic (the default: a std::vector value's length is
// checked on every rank, on the message's header or by a small round beside a schedule that
// splits it; docs/reductions.md) is labelled "+check".
std::string Label(const std::string& variant) {
  return variant.rfind("MPI_", 0) != 0 && g_debug != tributary::DebugLevel::none
             ? variant + "+check"
             : variant;
}

// Busy computation of `seconds`. Under SMPI it is charged as flops at the host's speed
// (smpi_execute_flops), which charges every burst: smpi_execute drops any burst shorter than
// smpi/cpu-threshold. Elsewhere a spin on the wall clock.
void Compute(double seconds) {
#ifdef SMPI_H
  smpi_execute_flops(seconds * sg_host_get_speed(sg_host_self()));
#else
  const double end = MPI_Wtime() + seconds;
  while (MPI_Wtime() < end) {
  }
#endif
}

// Waits until MPI_Wtime() reaches `t` (a simulated sleep under SMPI).
void WaitUntil(double t) {
#ifdef SMPI_H
  if (t > MPI_Wtime()) sg_actor_sleep_until(t);
#else
  while (MPI_Wtime() < t) {
  }
#endif
}

// The common start of a timed iteration: every rank leaves a barrier at its own time, so
// each waits until one instant after the latest of them, t0 = max over ranks of the barrier
// exit + kStartMargin. A rank that reaches t0 only later (the allreduce that finds the
// latest exit took longer than the margin) makes the start not common: g_late_starts counts
// those, and the program fails at the end if there were any.
constexpr double kStartMargin = 1e-3;
int g_late_starts = 0;
double CommonStart() {
  MPI_Barrier(MPI_COMM_WORLD);
  double exit_time = MPI_Wtime(), latest = 0;
  MPI_Allreduce(&exit_time, &latest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  const double t0 = latest + kStartMargin;
  if (MPI_Wtime() > t0) ++g_late_starts;
  WaitUntil(t0);
  return t0;
}

// The slowest rank's time from the common start t0 to its own completion at `done`.
double SlowestFrom(double t0, double done) {
  double mine = done - t0, slowest = 0;
  MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return slowest;
}

// An MPI_Op summing doubles that charges the combine like Tributary's own schedules
// (TRIBUTARY_SMPI_COMBINE_COST seconds per byte, simulation/smpirun.sh), so that SMPI's
// collectives pay for their reduction work too; under a real MPI, MPI_SUM.
#ifdef SMPI_H
double CombineCost() {
  const char* env = std::getenv("TRIBUTARY_SMPI_COMBINE_COST");
  return env ? std::atof(env) : 0.0;
}
void ChargedSum(void* in, void* inout, int* len, MPI_Datatype*) {
  const double* a = static_cast<const double*>(in);
  double* b = static_cast<double*>(inout);
  for (int i = 0; i < *len; ++i) b[i] += a[i];
  static const double cost = CombineCost();
  if (cost > 0)
    smpi_execute_flops(cost * static_cast<double>(*len) * sizeof(double) *
                       sg_host_get_speed(sg_host_self()));
}
#endif
MPI_Op SumOp() {
#ifdef SMPI_H
  static MPI_Op op = MPI_OP_NULL;
  if (op == MPI_OP_NULL) MPI_Op_create(&ChargedSum, 1, &op);
  return op;
#else
  return MPI_SUM;
#endif
}

tributary::Collective CollectiveOf(const std::string& name) {
  if (name == "reduce") return tributary::Collective::reduce;
  if (name == "allgather") return tributary::Collective::allgather;
  return tributary::Collective::allreduce;
}

// A Context for a Tributary variant, or nullptr for the raw MPI ones.
std::unique_ptr<tributary::Context> MakeContext(const std::string& variant,
                                                tributary::Collective c) {
  if (variant.rfind("MPI_", 0) == 0) return nullptr;
  tributary::ContextOptions o;
  o.communicator_pool = 1;  // one reduction object per Context, on the Context's communicator
  o.debug = g_debug;
  // No watchdog: it would read the (simulated) clock in the measured poll loop.
  o.watchdog = std::chrono::duration<double>(0);
  std::string name = variant;
  if (variant.rfind("node_aware", 0) == 0) {
    // The two-level form around a forced leaders' schedule: node_aware_<schedule>, or the
    // tree's small-message choice (k-nomial; binomial for reduce) for plain node_aware.
    o.schedule_params.node_aware = true;
    name = variant.size() > 11                  ? variant.substr(11)
           : c == tributary::Collective::reduce ? "binomial"
                                                : "knomial";
  }
  if (name != "tree") {
    o.schedule_params.radix = name.rfind("rabenseifner", 0) == 0 ? 2 : 4;
    const std::size_t digits = name.find_first_of("0123456789");
    if (digits != std::string::npos) {
      o.schedule_params.radix = std::atoi(name.c_str() + digits);
      name.resize(digits);
    }
    ScheduleKind kind;
    if (!tributary::ParseScheduleKind(name, &kind)) {
      if (g_rank == 0)
        std::fprintf(stderr, "bench_simulation: unknown variant %s\n", variant.c_str());
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
    switch (c) {
      case tributary::Collective::allreduce:
        o.allreduce_schedule = kind;
        break;
      case tributary::Collective::reduce:
        o.reduce_schedule = kind;
        break;
      case tributary::Collective::allgather:
        o.allgather_schedule = kind;
        break;
    }
  }
  return std::make_unique<tributary::Context>(MPI_COMM_WORLD, o);
}

// One collective of `count` doubles, started and polled to completion, with `between`
// called after every unsuccessful poll (the overlap benchmark's computation chunks).
class Op {
 public:
  Op(const std::string& variant, const std::string& collective, std::size_t count)
      : variant_(variant),
        c_(CollectiveOf(collective)),
        count_(count),
        ctx_(MakeContext(variant, c_)) {
    if (ctx_) {
      if (c_ == tributary::Collective::allreduce)
        ar_ = std::make_unique<tributary::AllReduce<std::vector<double>>>(*ctx_, "bench");
      else if (c_ == tributary::Collective::reduce)
        rd_ = std::make_unique<tributary::Reduce<std::vector<double>>>(*ctx_, "bench");
      else
        ag_ = std::make_unique<tributary::AllGather<std::vector<double>>>(*ctx_, "bench");
    }
    SetCount(count);
  }
  void SetCount(std::size_t count) {
    count_ = count;
    in_.assign(count_, 0.0);
    out_.assign(c_ == tributary::Collective::allgather ? count_ * g_size : count_, 0.0);
  }
  void Fill() {
    for (std::size_t i = 0; i < count_; ++i)
      in_[i] = static_cast<double>(g_rank + 1) + static_cast<double>(i % 7);
  }
  void Start() {
    Fill();
    if (ar_) {
      ar_->val = in_;
      ar_->StartReduce(tributary::Sum{});
    } else if (rd_) {
      rd_->val = in_;
      rd_->StartReduce(0, tributary::Sum{});
    } else if (ag_) {
      ag_->local = in_;
      ag_->StartReduce();
    } else {
      const int n = static_cast<int>(count_);
      const bool blocking = variant_.find("MPI_I") != 0;
      req_ = MPI_REQUEST_NULL;
      if (c_ == tributary::Collective::allreduce) {
        if (blocking)
          MPI_Allreduce(in_.data(), out_.data(), n, MPI_DOUBLE, SumOp(), MPI_COMM_WORLD);
        else
          MPI_Iallreduce(in_.data(), out_.data(), n, MPI_DOUBLE, SumOp(), MPI_COMM_WORLD, &req_);
      } else if (c_ == tributary::Collective::reduce) {
        if (blocking)
          MPI_Reduce(in_.data(), out_.data(), n, MPI_DOUBLE, SumOp(), 0, MPI_COMM_WORLD);
        else
          MPI_Ireduce(in_.data(), out_.data(), n, MPI_DOUBLE, SumOp(), 0, MPI_COMM_WORLD, &req_);
      } else {
        if (blocking)
          MPI_Allgather(in_.data(), n, MPI_DOUBLE, out_.data(), n, MPI_DOUBLE, MPI_COMM_WORLD);
        else
          MPI_Iallgather(in_.data(), n, MPI_DOUBLE, out_.data(), n, MPI_DOUBLE, MPI_COMM_WORLD,
                         &req_);
      }
    }
  }
  bool Poll() {
    if (ar_) return ar_->CheckReduce() == TaskStatus::complete;
    if (rd_) return rd_->CheckReduce() == TaskStatus::complete;
    if (ag_) return ag_->CheckReduce() == TaskStatus::complete;
    if (req_ == MPI_REQUEST_NULL) return true;
    int done = 0;
    MPI_Test(&req_, &done, MPI_STATUS_IGNORE);
    return done != 0;
  }
  void Run(const std::function<void()>& between = {}) {
    Start();
    while (!Poll())
      if (between) between();
  }
  // True on every rank when the result is right on every rank that receives one.
  bool Check() const {
    const std::vector<double>* got = &out_;
    if (ar_) got = &ar_->val;
    if (rd_) got = &rd_->val;
    bool ok = true;
    const double p = g_size, ranks = p * (p + 1) / 2;
    if (c_ == tributary::Collective::allgather) {
      if (ag_) {
        ok = ag_->val.size() == static_cast<std::size_t>(g_size);
        for (int r = 0; ok && r < g_size; ++r)
          for (std::size_t i = 0; ok && i < count_; ++i)
            ok = ag_->val[static_cast<std::size_t>(r)][i] == (r + 1) + static_cast<double>(i % 7);
      } else {
        for (int r = 0; ok && r < g_size; ++r)
          for (std::size_t i = 0; ok && i < count_; ++i)
            ok = out_[static_cast<std::size_t>(r) * count_ + i] ==
                 (r + 1) + static_cast<double>(i % 7);
      }
    } else if (c_ == tributary::Collective::allreduce || g_rank == 0) {
      ok = got->size() == count_;
      for (std::size_t i = 0; ok && i < count_; ++i)
        ok = (*got)[i] == ranks + p * static_cast<double>(i % 7);
    }
    int mine = ok ? 1 : 0, all = 0;
    MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    return all != 0;
  }

 private:
  std::string variant_;
  tributary::Collective c_;
  std::size_t count_;
  std::unique_ptr<tributary::Context> ctx_;
  std::unique_ptr<tributary::AllReduce<std::vector<double>>> ar_;
  std::unique_ptr<tributary::Reduce<std::vector<double>>> rd_;
  std::unique_ptr<tributary::AllGather<std::vector<double>>> ag_;
  std::vector<double> in_, out_;
  MPI_Request req_ = MPI_REQUEST_NULL;
};

// Untimed iterations before the timed ones (--warmup, default 1). The simulation is
// deterministic and charges no first-touch costs, so a warm-up gives the timed iteration's
// figure; at thousands of ranks, where one iteration takes minutes of wall time, the
// sweep leaves it out (scripts/run-simulation.sh checks the equality at 64 ranks).
int g_warmup = 1;

// Median, min and max over iterations of the slowest rank's time from the common start
// to its completion of `body` (which returns its own completion time, MPI_Wtime()).
std::vector<double> Time(int iterations, const std::function<double()>& body) {
  std::vector<double> t;
  for (int it = 0; it < iterations + g_warmup; ++it) {
    const double t0 = CommonStart();
    const double slowest = SlowestFrom(t0, body());
    if (it >= g_warmup) t.push_back(slowest);
  }
  std::sort(t.begin(), t.end());
  return {t[t.size() / 2], t.front(), t.back()};
}

std::size_t CountOf(std::size_t bytes) { return std::max<std::size_t>(1, bytes / sizeof(double)); }

int Latency(const std::string& collective, const std::vector<std::string>& variants,
            const std::vector<std::size_t>& sizes, int iterations) {
  for (const auto& v : variants) {
    Op op(v, collective, 1);
    for (std::size_t bytes : sizes) {
      op.SetCount(CountOf(bytes));
      const int iters = bytes >= (1u << 20) ? std::max(1, iterations / 4) : iterations;
      const auto t = Time(iters, [&] {
        op.Run();
        return MPI_Wtime();
      });
      if (!op.Check()) {
        if (g_rank == 0)
          std::fprintf(stderr, "bench_simulation: wrong %s result of %s at %zu B\n",
                       collective.c_str(), v.c_str(), bytes);
        return 1;
      }
      if (g_rank == 0)
        std::printf("latency,%s,%s,%d,%d,%zu,%.9g,%.9g,%.9g\n", collective.c_str(),
                    Label(v).c_str(), g_size, g_nodes, bytes, t[0], t[1], t[2]);
      std::fflush(stdout);
    }
  }
  return 0;
}

// Overlap: a computation of t_cpu = t_pure (this variant's own latency at this size), in
// `chunks` pieces with one poll after each, from the common start; then polls until done.
// Every rank checks that its run took at least its computation (under SMPI a burst that is
// not charged would make it shorter): if not, the measurement fails.
int Overlap(const std::vector<std::string>& variants, const std::vector<std::size_t>& sizes,
            int chunks, int iterations) {
  for (const auto& v : variants) {
    Op op(v, "allreduce", 1);
    for (std::size_t bytes : sizes) {
      op.SetCount(CountOf(bytes));
      const double t_pure = Time(iterations, [&] {
        op.Run();
        return MPI_Wtime();
      })[0];
      const double t_cpu = t_pure, chunk = t_cpu / chunks;
      double t_test = 0, shortest_ratio = 1e300;
      std::vector<double> overall;
      for (int it = 0; it < iterations + g_warmup; ++it) {
        const double t0 = CommonStart();
        double tests = 0;
        op.Start();
        bool done = false;
        for (int c = 0; c < chunks; ++c) {
          Compute(chunk);
          if (!done) {
            const double a = MPI_Wtime();
            done = op.Poll();
            tests += MPI_Wtime() - a;
          }
        }
        while (!done) done = op.Poll();
        const double end = MPI_Wtime();
        shortest_ratio = std::min(shortest_ratio, (end - t0) / t_cpu);
        const double slowest = SlowestFrom(t0, end);
        double slow_tests = 0;
        MPI_Allreduce(&tests, &slow_tests, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        if (it >= g_warmup) {
          overall.push_back(slowest);
          t_test += slow_tests;
        }
      }
      double worst_ratio = 0;
      MPI_Allreduce(&shortest_ratio, &worst_ratio, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
      if (worst_ratio < 1 - 1e-9) {
        if (g_rank == 0)
          std::fprintf(stderr,
                       "bench_simulation: overlap of %s at %zu B: a run took %.3g of its own "
                       "computation (%.3g s): the computation was not charged\n",
                       v.c_str(), bytes, worst_ratio, t_cpu);
        return 1;
      }
      if (!op.Check()) {
        if (g_rank == 0)
          std::fprintf(stderr, "bench_simulation: wrong overlap result of %s\n", v.c_str());
        return 1;
      }
      std::sort(overall.begin(), overall.end());
      const double t_overall = overall[overall.size() / 2];
      t_test /= iterations;
      // OSU: t_compute is the computation plus the polls made during it.
      const double osu = std::max(0.0, 100 - 100 * (t_overall - t_cpu) / t_pure);
      const double hidden = (t_pure + t_cpu - t_overall) / std::min(t_pure, t_cpu);
      const double imb = 100 * std::max(0.0, std::min(1.0, hidden));
      if (g_rank == 0)
        std::printf("overlap,allreduce,%s,%d,%d,%zu,%.9g,%.9g,%.9g,%.1f,%.1f,%.3f,%.9g\n",
                    Label(v).c_str(), g_size, g_nodes, bytes, t_pure, t_cpu, t_overall, osu, imb,
                    hidden, t_test);
      std::fflush(stdout);
    }
  }
  return 0;
}

// The charges of the simulation method, measured under a real MPI at 2 ranks on one
// machine (simulation/smpirun.sh uses them; docs/simulation.md, "How a figure is measured").
// Each row: calibrate,<what>,<seconds>, the median of `reps` repetitions.
//   test          an unsuccessful MPI_Test (smpi/test, smpi/iprobe: per request tested)
//   testall_per_request  the slope of an unsuccessful MPI_Testall over 1..16 requests
//   checkreduce   an unsuccessful CheckReduce of an 8-byte AllReduce (one round in flight)
//   isend, irecv  posting one 8-byte MPI_Isend / MPI_Irecv, 15 at a time (smpi/ois, smpi/or)
//   combine       summing doubles, seconds per byte (1 MiB operands: TRIBUTARY_SMPI_COMBINE_COST)
//   copy          memcpy, seconds per byte (1 MiB; TRIBUTARY_SMPI_COPY_COST)
//   start         one 8-byte AllReduce<std::vector<double>> generation on rank 0 whose peer's
//                 message is already there (StartReduce and CheckReduce to completion), less
//                 its charged parts (one isend, one irecv, the tests, the combine):
//                 TRIBUTARY_SMPI_START_COST
double MedianOf(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int Calibrate(int reps) {
  if (g_size != 2) {
    if (g_rank == 0) std::fprintf(stderr, "bench_simulation calibrate: needs 2 ranks\n");
    return 2;
  }
  const int peer = 1 - g_rank;
  auto row = [](const char* what, double seconds) {
    if (g_rank == 0) std::printf("calibrate,%s,%.4g\n", what, seconds);
    std::fflush(stdout);
  };
  // Unsuccessful tests: rank 0 tests receives that rank 1 satisfies only afterwards.
  double test = 0, per_request = 0;
  {
    constexpr int kMax = 16, kPolls = 2000;
    std::vector<double> one, sixteen;
    char buf[kMax] = {};
    for (int rep = 0; rep < reps; ++rep) {
      MPI_Request r[kMax];
      MPI_Barrier(MPI_COMM_WORLD);
      for (int n : {1, kMax}) {
        if (g_rank == 0) {
          for (int i = 0; i < n; ++i)
            MPI_Irecv(buf + i, 1, MPI_CHAR, peer, 50 + i, MPI_COMM_WORLD, &r[i]);
          int flag = 0;
          const double t0 = MPI_Wtime();
          for (int k = 0; k < kPolls; ++k)
            if (n == 1)
              MPI_Test(&r[0], &flag, MPI_STATUS_IGNORE);
            else
              MPI_Testall(n, r, &flag, MPI_STATUSES_IGNORE);
          (n == 1 ? one : sixteen).push_back((MPI_Wtime() - t0) / kPolls);
          MPI_Send(nullptr, 0, MPI_BYTE, peer, 49, MPI_COMM_WORLD);
          MPI_Waitall(n, r, MPI_STATUSES_IGNORE);
        } else {
          MPI_Recv(nullptr, 0, MPI_BYTE, peer, 49, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
          for (int i = 0; i < n; ++i) MPI_Send(buf + i, 1, MPI_CHAR, peer, 50 + i, MPI_COMM_WORLD);
        }
      }
    }
    if (g_rank == 0) {
      test = MedianOf(one);
      per_request = (MedianOf(sixteen) - test) / (kMax - 1);
    }
    row("test", test);
    row("testall_per_request", per_request);
  }
  // Posting: 15 sends on rank 0, 15 receives on rank 1 (a round of Rabenseifner in groups
  // of 16); the receives are timed on rank 1 and reported by rank 0.
  double isend = 0, irecv = 0;
  {
    constexpr int kPosts = 15;
    std::vector<double> per_post;
    char buf[kPosts * 8] = {};
    for (int rep = 0; rep < reps; ++rep) {
      MPI_Request r[kPosts];
      MPI_Barrier(MPI_COMM_WORLD);
      const double t0 = MPI_Wtime();
      for (int i = 0; i < kPosts; ++i)
        if (g_rank == 0)
          MPI_Isend(buf + 8 * i, 8, MPI_BYTE, peer, i, MPI_COMM_WORLD, &r[i]);
        else
          MPI_Irecv(buf + 8 * i, 8, MPI_BYTE, peer, i, MPI_COMM_WORLD, &r[i]);
      per_post.push_back((MPI_Wtime() - t0) / kPosts);
      MPI_Waitall(kPosts, r, MPI_STATUSES_IGNORE);
    }
    double mine = MedianOf(per_post);
    if (g_rank == 1) MPI_Send(&mine, 1, MPI_DOUBLE, peer, 48, MPI_COMM_WORLD);
    if (g_rank == 0) {
      isend = mine;
      MPI_Recv(&irecv, 1, MPI_DOUBLE, peer, 48, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    row("isend", isend);
    row("irecv", irecv);
  }
  // Combining and copying 1 MiB operands.
  double combine = 0, copy = 0;
  {
    const std::size_t n = (1u << 20) / sizeof(double);
    std::vector<double> a(n, 1.0), b(n, 2.0);
    std::vector<double> c, m;
    for (int rep = 0; rep < std::max(5, reps / 20); ++rep) {
      double t0 = MPI_Wtime();
      for (std::size_t i = 0; i < n; ++i) b[i] += a[i];
      c.push_back((MPI_Wtime() - t0) / (n * sizeof(double)));
      t0 = MPI_Wtime();
      std::memcpy(b.data(), a.data(), n * sizeof(double));
      m.push_back((MPI_Wtime() - t0) / (n * sizeof(double)));
    }
    if (b[n / 2] < 0) std::printf("%g", b[0]);  // keeps the loops
    combine = MedianOf(c);
    copy = MedianOf(m);
    row("combine", combine);
    row("copy", copy);
  }
  // An unsuccessful CheckReduce: rank 0 polls an 8-byte allreduce that rank 1 starts only
  // afterwards.
  {
    tributary::ContextOptions o;
    o.debug = tributary::DebugLevel::none;
    o.allreduce_schedule = ScheduleKind::recursive_doubling;
    tributary::Context ctx(MPI_COMM_WORLD, o);
    tributary::AllReduce<double> ar(ctx, "poll");
    std::vector<double> per_poll;
    constexpr int kPolls = 2000;
    for (int rep = 0; rep < std::max(5, reps / 20); ++rep) {
      MPI_Barrier(MPI_COMM_WORLD);
      ar.val = 1.0;
      if (g_rank == 0) {
        ar.StartReduce(tributary::Sum{});
        const double t0 = MPI_Wtime();
        for (int i = 0; i < kPolls; ++i) ar.CheckReduce();
        per_poll.push_back((MPI_Wtime() - t0) / kPolls);
        MPI_Send(nullptr, 0, MPI_BYTE, peer, 46, MPI_COMM_WORLD);
      } else {
        MPI_Recv(nullptr, 0, MPI_BYTE, peer, 46, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        ar.StartReduce(tributary::Sum{});
        per_poll.push_back(0);
      }
      while (ar.CheckReduce() != TaskStatus::complete) {
      }
    }
    row("checkreduce", MedianOf(per_poll));
  }
  // The library's own work for one generation, with the peer's message already there.
  {
    tributary::ContextOptions o;
    o.debug = tributary::DebugLevel::none;
    o.allreduce_schedule = ScheduleKind::recursive_doubling;
    tributary::Context ctx(MPI_COMM_WORLD, o);
    tributary::AllReduce<std::vector<double>> ar(ctx, "calibrate");
    std::vector<double> gen, checks;
    for (int rep = 0; rep < reps; ++rep) {
      ar.val.assign(1, 1.0);
      MPI_Barrier(MPI_COMM_WORLD);
      if (g_rank == 1) {
        ar.StartReduce(tributary::Sum{});
        MPI_Send(nullptr, 0, MPI_BYTE, peer, 47, MPI_COMM_WORLD);
        while (ar.CheckReduce() != TaskStatus::complete) {
        }
      } else {
        MPI_Recv(nullptr, 0, MPI_BYTE, peer, 47, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        int n = 1;
        const double t0 = MPI_Wtime();
        ar.StartReduce(tributary::Sum{});
        while (ar.CheckReduce() != TaskStatus::complete) ++n;
        gen.push_back(MPI_Wtime() - t0);
        checks.push_back(n);
      }
    }
    if (g_rank == 0) {
      const double t = MedianOf(gen), polls = MedianOf(checks);
      row("generation_8B", t);
      row("generation_polls", polls);
      // Charged separately: one send and one receive posted, two requests per poll, 8 bytes
      // combined.
      row("start", std::max(0.0, t - isend - irecv - 2 * polls * test - 8 * combine));
    } else {
      row("generation_8B", 0);
      row("generation_polls", 0);
      row("start", 0);
    }
  }
  // The library's per-byte work of a generation outside the schedule (copies of the value
  // in and out): the slope between 8 B and 1 MiB of a generation on one rank (MPI_COMM_SELF).
  {
    tributary::ContextOptions o;
    o.debug = tributary::DebugLevel::none;
    tributary::Context ctx(MPI_COMM_SELF, o);
    tributary::AllReduce<std::vector<double>> ar(ctx, "calibrate");
    double at[2] = {0, 0};
    const std::size_t counts[2] = {1, (1u << 20) / sizeof(double)};
    for (int k = 0; k < 2; ++k) {
      std::vector<double> gen;
      for (int rep = 0; rep < std::max(5, reps / 20); ++rep) {
        ar.val.assign(counts[k], 1.0);
        const double t0 = MPI_Wtime();
        ar.StartReduce(tributary::Sum{});
        while (ar.CheckReduce() != TaskStatus::complete) {
        }
        gen.push_back(MPI_Wtime() - t0);
      }
      at[k] = MedianOf(gen);
    }
    row("one_rank_8B", at[0]);
    row("one_rank_1MiB", at[1]);
    row("start_per_byte", (at[1] - at[0]) / ((counts[1] - counts[0]) * sizeof(double)));
  }
  return 0;
}

// 8 lists per rank, one scalar each: the regional combine (one network reduction) against
// every list starting its own AllReduce<double>, both through the serial task executor.
int Regional(int lists, int iterations) {
  tributary::ContextOptions o;
  o.watchdog = std::chrono::duration<double>(0);  // as in MakeContext
  // Every list's object may take the MPI library's schedule, as separate reductions would.
  o.communicator_pool = lists + 1;
  tributary::Context ctx(MPI_COMM_WORLD, o);
  tributary::SerialExecutor ex;
  tributary::AllReduce<double> combined(ctx, "combined");
  tributary::TaskCollection regional;
  auto& region = regional.AddRegion(lists);
  for (int i = 0; i < lists; ++i) {
    auto c = region[i].AddTask(tributary::TaskID(), [&, i] { return combined.Contribute(i, 1.0); });
    region[i].AddTask(c, [&] { return combined.CheckReduce(); });
  }
  std::vector<std::unique_ptr<tributary::AllReduce<double>>> each;
  for (int i = 0; i < lists; ++i)
    each.push_back(
        std::make_unique<tributary::AllReduce<double>>(ctx, "list " + std::to_string(i)));
  tributary::TaskCollection per_list;
  auto& region2 = per_list.AddRegion(lists);
  for (int i = 0; i < lists; ++i) {
    auto s = region2[i].AddTask(tributary::TaskID(), [&, i] {
      each[static_cast<std::size_t>(i)]->val = 1.0;
      return each[static_cast<std::size_t>(i)]->StartReduce(tributary::Sum{});
    });
    region2[i].AddTask(s, [&, i] { return each[static_cast<std::size_t>(i)]->CheckReduce(); });
  }
  const auto a = Time(iterations, [&] {
    combined.Expect(lists, tributary::Sum{});
    ctx.Execute(regional, ex);
    return MPI_Wtime();
  });
  const auto b = Time(iterations, [&] {
    ctx.Execute(per_list, ex);
    return MPI_Wtime();
  });
  bool ok = combined.val == static_cast<double>(lists) * g_size;
  for (auto& e : each) ok = ok && e->val == g_size;
  int mine = ok, all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  if (!all) {
    if (g_rank == 0) std::fprintf(stderr, "bench_simulation: wrong regional result\n");
    return 1;
  }
  if (g_rank == 0) {
    std::printf("regional,allreduce,regional_combine,%d,%d,%d,%.9g,%.9g,%.9g\n", g_size, g_nodes,
                lists, a[0], a[1], a[2]);
    std::printf("regional,allreduce,per_list,%d,%d,%d,%.9g,%.9g,%.9g\n", g_size, g_nodes, lists,
                b[0], b[1], b[2]);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  g_nodes = NodeCount();
  std::string mode = argc > 1 ? argv[1] : "check", collective = "allreduce", variants_arg,
              sizes_arg;
  int iterations = 5, chunks = 20, lists = 8;
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--collective")
      collective = v;
    else if (k == "--variants")
      variants_arg = v;
    else if (k == "--sizes")
      sizes_arg = v;
    else if (k == "--iterations")
      iterations = std::atoi(v.c_str());
    else if (k == "--chunks")
      chunks = std::atoi(v.c_str());
    else if (k == "--lists")
      lists = std::atoi(v.c_str());
    else if (k == "--warmup")
      g_warmup = std::max(0, std::atoi(v.c_str()));
    else if (k == "--debug")
      g_debug = v == "none" ? tributary::DebugLevel::none : tributary::DebugLevel::basic;
  }
  std::vector<std::size_t> sizes;
  for (const auto& s : Split(sizes_arg.empty() ? "8,4096,1048576" : sizes_arg))
    sizes.push_back(std::stoull(s));
  std::vector<std::string> variants = Split(variants_arg);
  int rc = 0;
  try {
    if (mode == "latency") {
      if (variants.empty())
        variants = {"tree", "node_aware", "mpi_library", "MPI_Iallreduce", "MPI_Allreduce"};
      rc = Latency(collective, variants, sizes, iterations);
    } else if (mode == "overlap") {
      if (variants.empty()) variants = {"tree", "MPI_Iallreduce"};
      rc = Overlap(variants, sizes, chunks, iterations);
    } else if (mode == "pingpong") {
      rc = PingPong(sizes, std::max(20, iterations));
    } else if (mode == "calibrate") {
      rc = Calibrate(iterations < 100 ? 1000 : iterations);
    } else if (mode == "regional") {
      rc = Regional(lists, iterations);
    } else {  // check: every collective and variant once, the answer checked
      // Each family once (a Context at 64 simulated ranks costs seconds of wall time).
      const std::vector<std::pair<std::string, std::vector<std::string>>> all = {
          {"allreduce", {"tree", "node_aware", "mpi_library"}},
          {"reduce", {"tree"}},
          {"allgather", {"tree"}}};
      for (const auto& [c, vs] : all)
        if (rc == 0) rc = Latency(c, vs, {8, 4096 + 8}, 1);
      if (rc == 0) rc = Regional(lists, 1);
      // The method: computation is charged (a run shorter than its computation fails).
      if (rc == 0) rc = Overlap({"tree"}, {8}, chunks, 1);
      if (rc == 0 && g_rank == 0)
        std::printf("check: every result right at %d ranks on %d nodes\n", g_size, g_nodes);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_simulation: rank %d: %s\n", g_rank, e.what());
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
  int late = 0;
  MPI_Allreduce(&g_late_starts, &late, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (late > 0) {
    if (g_rank == 0)
      std::fprintf(stderr,
                   "bench_simulation: %d rank-iterations reached the common start late: the "
                   "figures are not from a common start\n",
                   late);
    rc = rc ? rc : 1;
  }
  MPI_Finalize();
  return rc;
}
