// Measurements for simulated clusters (scripts/run-simulation.sh runs it under SMPI; it also
// runs under a real MPI). Every time is MPI_Wtime, which under SMPI is simulated time.
//
//   bench_simulation latency  --collective allreduce|reduce|allgather --sizes B,B,...
//                             [--variants v,v,...] [--iterations N]
//   bench_simulation overlap  --sizes B,B,... [--variants v,...] [--chunks N]
//   bench_simulation regional [--lists 8] [--iterations N]
//   bench_simulation pollcost [--iterations polls]   (at 2 ranks under a real MPI: the cost of
//                             one unsuccessful CheckReduce, which SMPI's smpi/test stands for)
//   bench_simulation postcost [--iterations rounds]  (at 2 ranks under a real MPI: the cost of
//                             posting one MPI_Isend / MPI_Irecv, which SMPI does not charge)
//   --debug none|basic        DebugLevel of the Contexts (default basic; "+check" in the labels)
//   bench_simulation check    (the tree, node-aware and MPI-library paths at 8 B and 4 KiB + 8 B
//                             and the regional
//                             combine, every answer checked; exit 1 if one is wrong)
//
// Variants: tree (the built-in selection tree), node_aware[_<schedule>] (the two-level form:
// combine in the node, <schedule> among leaders, k-nomial by default), own schedules by name
// (recursive_doubling, rabenseifner, ring, knomial, binomial, reduce_bcast, pipelined_tree;
// a radix after the name for knomial and rabenseifner, e.g. knomial8, rabenseifner4: the
// plain names are knomial4 and rabenseifner2, the built-in trees' defaults),
// mpi_library (Tributary on the MPI library's non-blocking collective), MPI_Ixxx (raw non-blocking
// call + MPI_Test) and MPI_xxx (the blocking call). Rank 0 prints CSV rows on stdout:
//   latency:  latency,collective,variant,ranks,nodes,bytes,median_s,min_s,max_s
//   overlap:  overlap,allreduce,variant,ranks,nodes,bytes,t_pure,t_cpu,t_overall,osu,imb,hidden
//   regional: regional,allreduce,variant,ranks,nodes,8,median_s,min_s,max_s
// An iteration's time is the slowest rank's; the median is over iterations.
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

int NodeCount() {
  // Ranks sharing a processor name share a node (under SMPI: a simulated host).
  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int len = 0;
  MPI_Get_processor_name(name, &len);
  std::vector<char> all(static_cast<std::size_t>(g_size) * MPI_MAX_PROCESSOR_NAME);
  MPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all.data(), MPI_MAX_PROCESSOR_NAME,
                MPI_CHAR, MPI_COMM_WORLD);
  int nodes = 0;
  for (int r = 0; r < g_size; ++r) {
    bool first = true;
    for (int q = 0; q < r && first; ++q)
      first = std::strncmp(&all[static_cast<std::size_t>(q) * MPI_MAX_PROCESSOR_NAME],
                           &all[static_cast<std::size_t>(r) * MPI_MAX_PROCESSOR_NAME],
                           MPI_MAX_PROCESSOR_NAME) != 0;
    nodes += first;
  }
  return nodes;
}

// A Tributary variant run with DebugLevel::basic (the default: a std::vector value's length is
// checked on every rank by one extra small allreduce per generation) is labelled "+check".
std::string Label(const std::string& variant) {
  return variant.rfind("MPI_", 0) != 0 && g_debug != tributary::DebugLevel::none
             ? variant + "+check"
             : variant;
}

// Busy computation of `seconds`: under SMPI a simulated burst of that length, elsewhere
// a spin on the wall clock.
void Compute(double seconds) {
#ifdef SMPI_H
  smpi_execute(seconds);
#else
  const double end = MPI_Wtime() + seconds;
  while (MPI_Wtime() < end) {
  }
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
          MPI_Allreduce(in_.data(), out_.data(), n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        else
          MPI_Iallreduce(in_.data(), out_.data(), n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &req_);
      } else if (c_ == tributary::Collective::reduce) {
        if (blocking)
          MPI_Reduce(in_.data(), out_.data(), n, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
        else
          MPI_Ireduce(in_.data(), out_.data(), n, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD, &req_);
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

// Median, min and max over iterations of the slowest rank's time of `body`.
std::vector<double> Time(int iterations, const std::function<void()>& body) {
  std::vector<double> t;
  for (int it = 0; it < iterations + 1; ++it) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    body();
    double mine = MPI_Wtime() - t0, slowest = 0;
    MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (it > 0) t.push_back(slowest);  // the first is a warm-up
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
      const auto t = Time(iters, [&] { op.Run(); });
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

int Overlap(const std::vector<std::string>& variants, const std::vector<std::size_t>& sizes,
            int chunks, int iterations) {
  for (const auto& v : variants) {
    Op op(v, "allreduce", 1);
    for (std::size_t bytes : sizes) {
      op.SetCount(CountOf(bytes));
      const double t_pure = Time(iterations, [&] { op.Run(); })[0];
      // Computation of fixed length t_cpu = t_pure in `chunks` pieces, polled between them.
      const double t_cpu = t_pure, chunk = t_cpu / chunks;
      double t_test = 0, t_overall = 0, worst_imb = 1e300;
      std::vector<double> overall;
      for (int it = 0; it < iterations + 1; ++it) {
        MPI_Barrier(MPI_COMM_WORLD);
        double tests = 0;
        const double t0 = MPI_Wtime();
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
        const double mine = MPI_Wtime() - t0;
        double slowest = 0, slow_tests = 0;
        MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        MPI_Allreduce(&tests, &slow_tests, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        if (it > 0) {
          overall.push_back(slowest);
          t_test += slow_tests;
        }
      }
      if (!op.Check()) {
        if (g_rank == 0)
          std::fprintf(stderr, "bench_simulation: wrong overlap result of %s\n", v.c_str());
        return 1;
      }
      std::sort(overall.begin(), overall.end());
      t_overall = overall[overall.size() / 2];
      t_test /= iterations;
      const double osu =
          std::max(0.0, 100 - 100 * (t_overall - (t_cpu + t_test - t_test)) / t_pure);
      worst_imb =
          100 *
          std::max(0.0, std::min(1.0, (t_pure + t_cpu - t_overall) / std::min(t_pure, t_cpu)));
      const double hidden = (t_pure + t_cpu - t_overall) / std::min(t_pure, t_cpu);
      if (g_rank == 0)
        std::printf("overlap,allreduce,%s,%d,%d,%zu,%.9g,%.9g,%.9g,%.1f,%.1f,%.3f\n",
                    Label(v).c_str(), g_size, g_nodes, bytes, t_pure, t_cpu, t_overall, osu,
                    worst_imb, hidden);
      std::fflush(stdout);
    }
  }
  return 0;
}

// What one unsuccessful CheckReduce costs: rank 0 starts an 8-byte allreduce and polls it
// `polls` times before rank 1 starts its part. Run under a real MPI at 2 ranks, it is the
// cost SMPI's smpi/test setting stands for (the simulator charges nothing else for a poll).
int PollCost(int polls) {
  tributary::ContextOptions o;
  o.debug = g_debug;
  tributary::Context ctx(MPI_COMM_WORLD, o);
  tributary::AllReduce<double> ar(ctx, "poll");
  for (int round = 0; round < 3; ++round) {
    MPI_Barrier(MPI_COMM_WORLD);
    double per_poll = 0;
    ar.val = 1.0;
    if (g_rank == 0) {
      ar.StartReduce(tributary::Sum{});
      const double t0 = MPI_Wtime();
      for (int i = 0; i < polls; ++i) ar.CheckReduce();
      per_poll = (MPI_Wtime() - t0) / polls;
      MPI_Send(nullptr, 0, MPI_BYTE, 1, 99, MPI_COMM_WORLD);
    } else {
      MPI_Recv(nullptr, 0, MPI_BYTE, 0, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      ar.StartReduce(tributary::Sum{});
    }
    while (ar.CheckReduce() != TaskStatus::complete) {
    }
    if (g_rank == 0)
      std::printf("pollcost,allreduce,CheckReduce,%d,%d,8,%.9g,%s\n", g_size, g_nodes, per_poll,
                  ar.val == g_size ? "right" : "WRONG");
  }
  return 0;
}

// What posting a message costs (at 2 ranks under a real MPI, for calibration): rank 0 posts
// 15 MPI_Isend (a round of Rabenseifner in groups of 16), rank 1 the 15 matching MPI_Irecv;
// the median time per post over `reps` rounds, per size. SMPI charges none (smpi/ois).
int PostCost(int reps) {
  constexpr int kPosts = 15;
  for (int bytes : {8, 4096, 65536}) {
    std::vector<char> buf(static_cast<std::size_t>(bytes) * kPosts);
    std::vector<double> per_post;
    for (int rep = 0; rep < reps; ++rep) {
      MPI_Request requests[kPosts];
      MPI_Barrier(MPI_COMM_WORLD);
      const double t0 = MPI_Wtime();
      for (int i = 0; i < kPosts; ++i) {
        char* b = buf.data() + static_cast<std::size_t>(i) * bytes;
        if (g_rank == 0)
          MPI_Isend(b, bytes, MPI_BYTE, 1, i, MPI_COMM_WORLD, &requests[i]);
        else if (g_rank == 1)
          MPI_Irecv(b, bytes, MPI_BYTE, 0, i, MPI_COMM_WORLD, &requests[i]);
        else
          requests[i] = MPI_REQUEST_NULL;
      }
      per_post.push_back((MPI_Wtime() - t0) / kPosts);
      MPI_Waitall(kPosts, requests, MPI_STATUSES_IGNORE);
    }
    std::sort(per_post.begin(), per_post.end());
    const double median = per_post[per_post.size() / 2];
    double other = 0;
    if (g_rank == 1) MPI_Send(&median, 1, MPI_DOUBLE, 0, 98, MPI_COMM_WORLD);
    if (g_rank == 0) {
      MPI_Recv(&other, 1, MPI_DOUBLE, 1, 98, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      std::printf("postcost,p2p,MPI_Isend,%d,%d,%d,%.9g\n", g_size, g_nodes, bytes, median);
      std::printf("postcost,p2p,MPI_Irecv,%d,%d,%d,%.9g\n", g_size, g_nodes, bytes, other);
    }
  }
  return 0;
}

// 8 lists per rank, one scalar each: the regional combine (one network reduction) against
// every list starting its own AllReduce<double>, both through the serial task executor.
int Regional(int lists, int iterations) {
  tributary::ContextOptions o;
  o.watchdog = std::chrono::duration<double>(0);  // as in MakeContext
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
  });
  const auto b = Time(iterations, [&] { ctx.Execute(per_list, ex); });
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
    } else if (mode == "postcost") {
      if (g_size < 2) {
        if (g_rank == 0) std::fprintf(stderr, "bench_simulation postcost: needs 2 ranks\n");
        rc = 2;
      } else {
        rc = PostCost(iterations < 100 ? 2000 : iterations);
      }
    } else if (mode == "pollcost") {
      rc = PollCost(iterations < 1000 ? 1000000 : iterations);
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
      if (rc == 0 && g_rank == 0)
        std::printf("check: every result right at %d ranks on %d nodes\n", g_size, g_nodes);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_simulation: rank %d: %s\n", g_rank, e.what());
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
  MPI_Finalize();
  return rc;
}
