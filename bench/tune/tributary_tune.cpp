// tributary-tune: measures every schedule of every collective on this machine and
// communicator, and writes a selection tree that picks the fastest at each message size.
//
//   mpiexec -n 8 tributary-tune --output tuned.json [--max-bytes 4194304] [--runs 5] [--quick]
//   then: TRIBUTARY_SELECTION=tuned.json  (or ContextOptions::selection_file)
//   mpiexec -n 32 tributary-tune --network profile.json   (two nodes or more)
//   then: TRIBUTARY_NETWORK=profile.json  (the cluster selection's cost model reads it)
//
// The written tree holds the measured choices under "comm_size" for this communicator's
// size and the built-in tree for every other size. Per collective and message size the
// candidates run interleaved through the benchmark harness (median of repetitions, every
// result checked); a non-commutative operator gets the fastest order-keeping schedule. With
// --runs N every size is measured in N sweeps and the schedule that took more than 1.1x the
// fastest in the fewest of them wins (Winner). Message sizes between two measured ones
// switch at their geometric mean. Before it exits
// the tuner loads the written file into a Context and checks that it selects the measured
// winners.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench_harness.hpp"
#include "tributary/tributary.hpp"

namespace {

using tributary::Collective;
using tributary::ScheduleKind;
using tributary::TaskStatus;
using Json = nlohmann::ordered_json;
namespace tb = tributary::bench;

/// A schedule measured; Rabenseifner at radix 2 (the single-machine tree's), named without it.
struct Candidate {
  ScheduleKind kind;
  int radix = 4;
  std::string Name() const {
    return kind == ScheduleKind::knomial || kind == ScheduleKind::reduce_scatter_gather
               ? tributary::ToString(kind) + std::to_string(radix)
               : tributary::ToString(kind);
  }
  Json Leaf() const {
    Json leaf;
    leaf["schedule"] = tributary::ToString(kind);
    if (tributary::TakesRadix(kind)) leaf["radix"] = radix;
    return leaf;
  }
};

const std::string kTreeVariant = "tree in use";

constexpr struct {
  const char* name;
  Collective collective;
} kCollectives[] = {{"allreduce", Collective::allreduce},
                    {"reduce", Collective::reduce},
                    {"allgather", Collective::allgather}};

std::vector<Candidate> CandidatesFor(Collective c) {
  std::vector<Candidate> out;
  for (auto kind :
       {ScheduleKind::mpi_library, ScheduleKind::binomial, ScheduleKind::knomial,
        ScheduleKind::pipelined_tree, ScheduleKind::recursive_doubling, ScheduleKind::rabenseifner,
        ScheduleKind::ring, ScheduleKind::reduce_bcast, ScheduleKind::reduce_scatter_gather}) {
    if (!tributary::Supports(kind, c)) continue;
    if (kind == ScheduleKind::knomial) {
      out.push_back({kind, 4});
      out.push_back({kind, 8});
    } else {
      out.push_back({kind, kind == ScheduleKind::rabenseifner ? 2 : 4});
    }
  }
  return out;
}

tributary::ContextOptions OptionsFor(const Candidate& s, Collective c) {
  tributary::ContextOptions o;
  o.debug = tributary::DebugLevel::none;
  (c == Collective::reduce      ? o.reduce_schedule
   : c == Collective::allgather ? o.allgather_schedule
                                : o.allreduce_schedule) = s.kind;
  o.schedule_params.radix = s.radix;
  return o;
}

template <class R>
void Wait(R& r) {
  while (r.CheckReduce() != TaskStatus::complete) {
  }
}

// One variant per candidate, and one for the tree in use (`contexts.back()`, choosing per
// start): a reduction of `n` doubles per rank, checked after each repetition. Returns the
// results per candidate, then the tree's.
std::vector<tb::Result> Measure(Collective c, const std::vector<Candidate>& candidates,
                                const std::vector<std::unique_ptr<tributary::Context>>& contexts,
                                std::size_t bytes, const tb::Options& o) {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const std::size_t n = bytes / sizeof(double);
  std::vector<double> input(n);
  for (std::size_t i = 0; i < n; ++i)
    input[i] = static_cast<double>(i % 5 + static_cast<std::size_t>(rank));
  const auto sum_at = [&](std::size_t i) {
    return static_cast<double>(size) * static_cast<double>(i % 5) + size * (size - 1) / 2.0;
  };
  tb::Runner run(MPI_COMM_WORLD,
                 "tune: " + std::string(kCollectives[static_cast<int>(c)].name) + " of " +
                     tb::FormatBytes(bytes),
                 candidates.front().Name(), o);
  std::vector<std::unique_ptr<tributary::AllReduce<std::vector<double>>>> ar;
  std::vector<std::unique_ptr<tributary::Reduce<std::vector<double>>>> rd;
  std::vector<std::unique_ptr<tributary::AllGather<std::vector<double>>>> ag;
  for (std::size_t k = 0; k < contexts.size(); ++k) {
    auto& ctx = *contexts[k];
    const std::string name = k < candidates.size() ? candidates[k].Name() : kTreeVariant;
    if (c == Collective::allreduce) {
      auto* r =
          ar.emplace_back(std::make_unique<tributary::AllReduce<std::vector<double>>>(ctx, name))
              .get();
      r->val.resize(n);
      run.Add(
          name,
          [r, &input] {
            std::copy(input.begin(), input.end(), r->val.begin());
            r->StartReduce(tributary::Sum{});
            Wait(*r);
          },
          [r, n, &sum_at] {
            for (std::size_t i = 0; i < n; ++i)
              if (r->val[i] != sum_at(i)) return false;
            return true;
          });
    } else if (c == Collective::reduce) {
      auto* r = rd.emplace_back(std::make_unique<tributary::Reduce<std::vector<double>>>(ctx, name))
                    .get();
      r->val.resize(n);
      run.Add(
          name,
          [r, &input] {
            std::copy(input.begin(), input.end(), r->val.begin());
            r->StartReduce(0, tributary::Sum{});
            Wait(*r);
          },
          [r, n, rank, &sum_at] {
            for (std::size_t i = 0; rank == 0 && i < n; ++i)
              if (r->val[i] != sum_at(i)) return false;
            return true;
          });
    } else {
      auto* r =
          ag.emplace_back(std::make_unique<tributary::AllGather<std::vector<double>>>(ctx, name))
              .get();
      r->local = input;
      run.Add(
          name,
          [r] {
            r->StartReduce();
            Wait(*r);
          },
          [r, n, size] {
            if (static_cast<int>(r->val.size()) != size) return false;
            for (int q = 0; q < size; ++q)
              for (std::size_t i = 0; i < n; ++i)
                if (r->val[static_cast<std::size_t>(q)][i] !=
                    static_cast<double>(i % 5 + static_cast<std::size_t>(q)))
                  return false;
            return true;
          });
    }
  }
  run.Run(tb::FormatBytes(bytes));
  run.Report();
  return run.Results();  // in the order added: the candidates, then the tree
}

// The harness's iterations for one message, times four (with nine repetitions by default):
// a winner is picked among some ten variants a few percent apart, and with fewer samples
// the runs disagreed more than that (docs/selection.md, "Tools").
tb::Options ForTune(std::size_t bytes, const tb::Options& base, bool quick) {
  tb::Options o = tb::ForMessage(base, bytes, quick);
  if (!quick) {
    o.iterations *= 4;
    o.warmup *= 2;
  }
  return o;
}

// A ratio above this to the fastest schedule counts as a miss.
constexpr double kMissRatio = 1.1;

// The candidate picked at one size from its runs ([run][variant], the candidates first):
// among those allowed, the one that took more than kMissRatio times the run's fastest
// allowed candidate in the fewest runs, then the one with the lowest median of those
// ratios. With one run, the fastest.
std::size_t Winner(const std::vector<std::vector<tb::Result>>& runs,
                   const std::vector<Candidate>& cands, bool order_keeping_only) {
  const auto allowed = [&](std::size_t k) {
    return !order_keeping_only || tributary::IsOrderKeeping(cands[k].kind);
  };
  std::vector<int> misses(cands.size(), 0);
  std::vector<std::vector<double>> ratios(cands.size());
  for (const auto& run : runs) {
    double fastest = 0;
    for (std::size_t k = 0; k < cands.size(); ++k)
      if (allowed(k) && (fastest == 0 || run[k].median_s < fastest)) fastest = run[k].median_s;
    for (std::size_t k = 0; k < cands.size(); ++k) {
      if (!allowed(k) || fastest <= 0) continue;
      ratios[k].push_back(run[k].median_s / fastest);
      misses[k] += ratios[k].back() > kMissRatio;
    }
  }
  std::size_t best = cands.size();
  double best_median = 0;
  for (std::size_t k = 0; k < cands.size(); ++k) {
    if (!allowed(k)) continue;
    const double m = tb::Median(ratios[k]);
    if (best == cands.size() || misses[k] < misses[best] ||
        (misses[k] == misses[best] && m < best_median)) {
      best = k;
      best_median = m;
    }
  }
  return best;
}

// A msg_size level (or a single leaf): the winner at sizes[i] covers sizes up to the
// geometric mean of sizes[i] and sizes[i+1]; equal neighbours merge.
Json SizeLevel(const std::vector<std::size_t>& sizes, const std::vector<std::size_t>& winners,
               const std::vector<Candidate>& cands) {
  Json level = Json::array();
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    const bool last = i + 1 == sizes.size();
    if (!last && winners[i] == winners[i + 1]) continue;
    Json node;
    node["msg_size"] =
        last ? std::string("any")
             : "<= " + std::to_string(static_cast<std::size_t>(std::sqrt(
                           static_cast<double>(sizes[i]) * static_cast<double>(sizes[i + 1]))));
    node["then"] = cands[winners[i]].Leaf();
    level.push_back(node);
  }
  if (level.size() == 1) return level[0]["then"];
  return level;
}

// --network: what the cluster selection's cost model needs to know of this communicator's
// network (docs/simulation.md, "The cluster selection"), measured: one message's one-way
// time (half a round trip, the mean of `reps`) within a node (ranks 0 and 1) and between
// nodes (rank 0 and the first rank on another node) at every power of two from 8 B to
// 16 MiB; the node link's time per message (64 small messages per pair) and per byte (one
// of 1 MiB) when all of a node's ranks send to another node at once, against one pair
// alone; posting a
// send and a receive, and an unsuccessful test. The combine's cost per byte is measured by a
// loop here, or, under SMPI (which charges no computation), is the charge
// TRIBUTARY_SMPI_COMBINE_COST. Nodes: ranks with rank 0's processor name share its node.
int MeasureNetwork(const std::string& output, int reps) {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  char name[MPI_MAX_PROCESSOR_NAME] = {}, root[MPI_MAX_PROCESSOR_NAME] = {};
  int len = 0;
  MPI_Get_processor_name(name, &len);
  std::memcpy(root, name, sizeof root);
  MPI_Bcast(root, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 0, MPI_COMM_WORLD);
  const bool mine = std::strncmp(name, root, MPI_MAX_PROCESSOR_NAME) == 0;
  // Rank 0's node: its ranks; the other node: the ranks of the first rank off it.
  int other = mine ? size : rank, per_node = mine ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &other, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &per_node, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  int same_peer = size;  // a second rank on rank 0's node
  {
    int cand = mine && rank > 0 ? rank : size;
    MPI_Allreduce(&cand, &same_peer, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  }
  if (other >= size || same_peer >= size) {
    if (rank == 0)
      std::fprintf(stderr,
                   "tributary-tune --network: needs two ranks on rank 0's node and one on "
                   "another node\n");
    return 2;
  }
  // Ranks of the other node in order: other, other + 1, ... while they share its name.
  char other_name[MPI_MAX_PROCESSOR_NAME] = {};
  if (rank == other) std::memcpy(other_name, name, sizeof other_name);
  MPI_Bcast(other_name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, other, MPI_COMM_WORLD);
  const bool on_other = std::strncmp(name, other_name, MPI_MAX_PROCESSOR_NAME) == 0;
  int other_count = on_other ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &other_count, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  const int pairs = std::min(per_node, other_count);
  // Local indices: the i-th rank of each node, in rank order (both nodes are contiguous
  // under the launchers here; otherwise the pairs are still distinct ranks).
  int index_mine = -1, index_other = -1;
  {
    std::vector<int> flags(static_cast<std::size_t>(size) * 2, 0), all(flags.size());
    flags[static_cast<std::size_t>(rank) * 2] = mine;
    flags[static_cast<std::size_t>(rank) * 2 + 1] = on_other;
    MPI_Allreduce(flags.data(), all.data(), static_cast<int>(all.size()), MPI_INT, MPI_SUM,
                  MPI_COMM_WORLD);
    int a = 0, b = 0;
    for (int q = 0; q < size; ++q) {
      if (all[static_cast<std::size_t>(q) * 2] && q == rank) index_mine = a;
      if (all[static_cast<std::size_t>(q) * 2 + 1] && q == rank) index_other = b;
      a += all[static_cast<std::size_t>(q) * 2];
      b += all[static_cast<std::size_t>(q) * 2 + 1];
    }
  }
  std::vector<int> node0, node1;  // the paired ranks
  {
    std::vector<int> ids(static_cast<std::size_t>(size), -1), all(ids.size());
    if (index_mine >= 0 && index_mine < pairs) ids[static_cast<std::size_t>(rank)] = index_mine;
    if (index_other >= 0 && index_other < pairs)
      ids[static_cast<std::size_t>(rank)] = 1000000 + index_other;
    MPI_Allreduce(ids.data(), all.data(), size, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    node0.assign(static_cast<std::size_t>(pairs), -1);
    node1.assign(static_cast<std::size_t>(pairs), -1);
    for (int q = 0; q < size; ++q) {
      const int v = all[static_cast<std::size_t>(q)];
      if (v >= 1000000)
        node1[static_cast<std::size_t>(v - 1000000)] = q;
      else if (v >= 0)
        node0[static_cast<std::size_t>(v)] = q;
    }
  }
  std::vector<char> buf(16u << 20), ack(8);
  const auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  // Half the round trip of `bytes` from rank a to b and back: after a barrier and one
  // round trip (which lets the barrier's own messages leave the network), the mean of
  // `reps` round trips in a row.
  const auto one_way = [&](int a, int b, std::size_t bytes) {
    const auto trip = [&] {
      if (rank == a) {
        MPI_Send(buf.data(), static_cast<int>(bytes), MPI_BYTE, b, 1, MPI_COMM_WORLD);
        MPI_Recv(buf.data(), static_cast<int>(bytes), MPI_BYTE, b, 1, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
      } else if (rank == b) {
        MPI_Recv(buf.data(), static_cast<int>(bytes), MPI_BYTE, a, 1, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
        MPI_Send(buf.data(), static_cast<int>(bytes), MPI_BYTE, a, 1, MPI_COMM_WORLD);
      }
    };
    MPI_Barrier(MPI_COMM_WORLD);
    trip();
    const double t0 = MPI_Wtime();
    for (int rep = 0; rep < reps; ++rep) trip();
    double m = (MPI_Wtime() - t0) / (2.0 * reps);
    MPI_Bcast(&m, 1, MPI_DOUBLE, a, MPI_COMM_WORLD);
    return m;
  };
  // The slowest time for `count` pairs at once to send `burst` messages of `bytes` each and
  // get an 8-byte answer (after a barrier and one such round without timing).
  const auto concurrent = [&](int count, std::size_t bytes, int burst) {
    std::vector<MPI_Request> requests(static_cast<std::size_t>(burst));
    const auto round = [&] {
      double mine_t = 0;
      const double t0 = MPI_Wtime();
      for (int i = 0; i < count; ++i) {
        const int a = node0[static_cast<std::size_t>(i)], b = node1[static_cast<std::size_t>(i)];
        if (rank == a) {
          for (int k = 0; k < burst; ++k)
            MPI_Isend(buf.data(), static_cast<int>(bytes), MPI_BYTE, b, 2, MPI_COMM_WORLD,
                      &requests[static_cast<std::size_t>(k)]);
          MPI_Waitall(burst, requests.data(), MPI_STATUSES_IGNORE);
          MPI_Recv(ack.data(), 8, MPI_BYTE, b, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
          mine_t = MPI_Wtime() - t0;
        } else if (rank == b) {
          for (int k = 0; k < burst; ++k)
            MPI_Recv(buf.data(), static_cast<int>(bytes), MPI_BYTE, a, 2, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
          MPI_Send(ack.data(), 8, MPI_BYTE, a, 2, MPI_COMM_WORLD);
        }
      }
      return mine_t;
    };
    MPI_Barrier(MPI_COMM_WORLD);
    round();
    MPI_Barrier(MPI_COMM_WORLD);
    const double mine_t = round();
    double slowest = 0;
    MPI_Allreduce(&mine_t, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return slowest;
  };
  Json inter = Json::array(), intra = Json::array();
  for (std::size_t b = 8; b <= (16u << 20); b *= 2) {
    intra.push_back(Json::array({b, one_way(0, same_peer, b)}));
    inter.push_back(Json::array({b, one_way(0, other, b)}));
  }
  double injection = 0, link = 0;
  if (pairs > 1) {
    const std::size_t big = 1u << 20;
    // 64 small messages per pair: the interface's per-message cost; one large one: the
    // link's per byte.
    constexpr int kBurst = 64;
    injection = std::max(0.0, (concurrent(pairs, 8, kBurst) - concurrent(1, 8, kBurst)) /
                                  (static_cast<double>(pairs - 1) * kBurst));
    link = std::max(0.0,
                    (concurrent(pairs, big, 1) - concurrent(1, big, 1) - (pairs - 1) * injection) /
                        (static_cast<double>(pairs - 1) * big));
  }
  // Posting 15 sends and 15 receives, and an unsuccessful test, between ranks 0 and 1.
  double send = 0, receive = 0, test = 0;
  {
    std::vector<double> ts, tr, tt;
    for (int rep = 0; rep < reps * 20; ++rep) {
      MPI_Request r[15];
      MPI_Barrier(MPI_COMM_WORLD);
      const double t0 = MPI_Wtime();
      if (rank == 0) {
        for (int i = 0; i < 15; ++i)
          MPI_Isend(buf.data() + 8 * i, 8, MPI_BYTE, same_peer, 3, MPI_COMM_WORLD, &r[i]);
        ts.push_back((MPI_Wtime() - t0) / 15);
        MPI_Waitall(15, r, MPI_STATUSES_IGNORE);
      } else if (rank == same_peer) {
        for (int i = 0; i < 15; ++i)
          MPI_Irecv(buf.data() + 8 * i, 8, MPI_BYTE, 0, 3, MPI_COMM_WORLD, &r[i]);
        tr.push_back((MPI_Wtime() - t0) / 15);
        MPI_Waitall(15, r, MPI_STATUSES_IGNORE);
      }
      MPI_Barrier(MPI_COMM_WORLD);
      if (rank == 0) {
        MPI_Request q;
        MPI_Irecv(ack.data(), 8, MPI_BYTE, same_peer, 4, MPI_COMM_WORLD, &q);
        int flag = 0;
        const double t1 = MPI_Wtime();
        for (int i = 0; i < 100; ++i) MPI_Test(&q, &flag, MPI_STATUS_IGNORE);
        tt.push_back((MPI_Wtime() - t1) / 100);
        MPI_Send(ack.data(), 0, MPI_BYTE, same_peer, 5, MPI_COMM_WORLD);
        MPI_Wait(&q, MPI_STATUS_IGNORE);
      } else if (rank == same_peer) {
        MPI_Recv(ack.data(), 0, MPI_BYTE, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(ack.data(), 8, MPI_BYTE, 0, 4, MPI_COMM_WORLD);
      }
    }
    if (rank == 0) {
      send = median(ts);
      test = median(tt);
    }
    if (rank == same_peer) receive = median(tr);
    MPI_Bcast(&send, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    MPI_Bcast(&test, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    MPI_Bcast(&receive, 1, MPI_DOUBLE, same_peer, MPI_COMM_WORLD);
  }
  double combine = 0;
#ifdef SMPI_H
  if (const char* env = std::getenv("TRIBUTARY_SMPI_COMBINE_COST")) combine = std::atof(env);
#else
  {
    const std::size_t n = (1u << 20) / sizeof(double);
    std::vector<double> a(n, 1.0), b(n, 2.0), t;
    for (int rep = 0; rep < 20; ++rep) {
      const double t0 = MPI_Wtime();
      for (std::size_t i = 0; i < n; ++i) b[i] += a[i];
      t.push_back((MPI_Wtime() - t0) / (n * sizeof(double)));
    }
    combine = b[n / 2] > 0 ? median(t) : 0;
  }
#endif
  int status = 0;
  if (rank == 0) {
    Json j;
    j["tributary_network"] = 1;
    j["comment"] = "measured by tributary-tune --network at " + std::to_string(size) + " ranks, " +
                   std::to_string(per_node) + " on rank 0's node";
    j["inter_node"] = inter;
    j["intra_node"] = intra;
    j["link"] = link;
    j["injection"] = injection;
    j["send"] = send;
    j["receive"] = receive;
    j["test"] = test;
    j["combine"] = combine;
    std::ofstream out(output);
    out << j.dump(2) << "\n";
    if (!out) {
      std::fprintf(stderr, "tributary-tune: cannot write '%s'\n", output.c_str());
      status = 1;
    } else {
      std::printf(
          "tributary-tune: wrote the network profile %s (%d pairs at once: link %.3g s/B, "
          "injection %.3g s)\n",
          output.c_str(), pairs, link, injection);
    }
  }
  MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::string output = "tributary-selection.json";
  std::size_t max_bytes = 4u << 20;
  tb::Options defaults;
  defaults.repetitions = 9;
  tb::CommandLine cl(
      "Measures every schedule of every collective on this machine and communicator, and "
      "writes a selection tree that picks the fastest at each message size.\n"
      "Run as: mpiexec -n P tributary-tune [options]",
      defaults);
  cl.app.add_option("--output", output, "Selection tree to write")->capture_default_str();
  cl.app.add_option("--max-bytes", max_bytes, "Largest message in bytes (--quick: 64 KiB)")
      ->capture_default_str();
  std::vector<std::size_t> only_sizes;
  cl.app
      .add_option("--sizes", only_sizes,
                  "Measure these message sizes in bytes instead (multiples of 8: doubles; "
                  "comma-separated, e.g. 2048,4096,8192); the tree written covers them")
      ->delimiter(',');
  int runs = 1;
  cl.app
      .add_option("--runs", runs,
                  "Measure every size this many times, one sweep over the sizes after another, "
                  "and pick per size the schedule that took more than 1.1x the fastest in the "
                  "fewest runs (then the lowest median ratio): steadier where the machine's "
                  "state changes between runs")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
  std::string network;
  cl.app.add_option("--network", network,
                    "Measure the network profile of the cluster selection instead and write it "
                    "to this file (needs two ranks on rank 0's node and one on another)");
  if (const int code = cl.Parse(argc, argv); code >= 0) {
    MPI_Finalize();
    return code;
  }
  if (!network.empty()) {
    const int code = MeasureNetwork(network, std::max(3, cl.options.repetitions));
    MPI_Finalize();
    return code;
  }
  const bool quick = cl.quick;
  const tb::Options base = cl.options;
  if (quick) max_bytes = std::min<std::size_t>(max_bytes, 64u << 10);

  std::vector<std::size_t> sizes;
  for (std::size_t b = 8; b <= max_bytes; b *= 8) sizes.push_back(b);
  if (!only_sizes.empty()) {
    sizes = only_sizes;
    std::sort(sizes.begin(), sizes.end());
    sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
    if (sizes.front() < 8 || std::any_of(sizes.begin(), sizes.end(),
                                         [](std::size_t b) { return b % sizeof(double) != 0; })) {
      if (rank == 0)
        std::fprintf(stderr, "tributary-tune: --sizes takes multiples of 8 bytes (doubles)\n");
      MPI_Finalize();
      return 2;
    }
  }
  int status = 0;
  {
    Json tuned = Json::array();
    // What the file must select, checked after loading it: (collective, bytes, commutative, kind,
    // radix).
    struct Expect {
      Collective c;
      std::size_t bytes;
      bool commutative;
      Candidate choice;
    };
    std::vector<Expect> expects;
    struct TreeRow {
      Collective c;
      std::size_t bytes;
      double over_best;         // the tree in use, measured as a variant of its own
      double choice_over_best;  // the candidate it chooses (0: not among the candidates)
      double paired_over_best;  // the tree over the fastest, per repetition (median)
      int runs_within;          // the runs in which the tree took at most kMissRatio
      tributary::SelectionChoice choice;
    };
    std::vector<TreeRow> tree_rows;
    for (const auto& col : kCollectives) {
      const auto cands = CandidatesFor(col.collective);
      std::vector<std::unique_ptr<tributary::Context>> contexts;
      for (const auto& s : cands)
        contexts.push_back(std::make_unique<tributary::Context>(OptionsFor(s, col.collective)));
      tributary::ContextOptions tree_options;  // the tree in use: built-in or TRIBUTARY_SELECTION
      tree_options.debug = tributary::DebugLevel::none;
      contexts.push_back(std::make_unique<tributary::Context>(tree_options));
      // [size][run][variant]: the candidates, then the tree; one sweep over the sizes after
      // another.
      std::vector<std::vector<std::vector<tb::Result>>> measured(sizes.size());
      for (int run = 0; run < runs; ++run)
        for (std::size_t i = 0; i < sizes.size(); ++i)
          measured[i].push_back(
              Measure(col.collective, cands, contexts, sizes[i], ForTune(sizes[i], base, quick)));
      std::vector<std::size_t> any, ordered;
      for (const auto& m : measured) {
        any.push_back(Winner(m, cands, false));
        ordered.push_back(Winner(m, cands, true));
      }
      Json then;
      if (any == ordered) {
        then = SizeLevel(sizes, any, cands);
      } else {
        then =
            Json::array({Json{{"commutative", true}, {"then", SizeLevel(sizes, any, cands)}},
                         Json{{"commutative", "any"}, {"then", SizeLevel(sizes, ordered, cands)}}});
      }
      const bool last = col.collective == Collective::allgather;
      tuned.push_back(Json{{"collective", last ? "any" : col.name}, {"then", then}});
      for (std::size_t i = 0; i < sizes.size(); ++i) {
        expects.push_back({col.collective, sizes[i], true, cands[any[i]]});
        expects.push_back({col.collective, sizes[i], false, cands[ordered[i]]});
        const auto choice =
            contexts.back()->Selection(col.collective).Select(tributary::SelectionInput{sizes[i]});
        // The candidate that is the tree's choice (a pipelined chain of other segments, or
        // a node-aware leaf, is none of them).
        std::size_t chosen = cands.size();
        for (std::size_t k = 0; k < cands.size(); ++k)
          if (cands[k].kind == choice.kind && !choice.params.node_aware &&
              (!tributary::TakesRadix(choice.kind) || cands[k].radix == choice.params.radix) &&
              (choice.kind != ScheduleKind::pipelined_tree ||
               choice.params.segment_bytes == tributary::ScheduleParams{}.segment_bytes))
            chosen = k;
        // Per run, against that run's fastest candidate; the median over the runs.
        std::vector<double> tree, own, paired;
        int within = 0;
        for (const auto& run : measured[i]) {
          std::size_t fastest = 0;
          for (std::size_t k = 1; k < cands.size(); ++k)
            if (run[k].median_s < run[fastest].median_s) fastest = k;
          tree.push_back(run.back().median_s / run[fastest].median_s);
          within += tree.back() <= kMissRatio;
          if (chosen < cands.size()) own.push_back(run[chosen].median_s / run[fastest].median_s);
          paired.push_back(tb::PairedRatio(run.back(), run[fastest]));
        }
        tree_rows.push_back({col.collective, sizes[i], tb::Median(tree), tb::Median(own),
                             tb::Median(paired), within, choice});
      }
    }
    if (rank == 0) {
      const Json builtin = Json::parse(tributary::SelectionTree::DefaultJson())["tree"];
      Json tree = Json::array();
      if (size > 1)
        tree.push_back(Json{{"comm_size", "<= " + std::to_string(size - 1)}, {"then", builtin}});
      tree.push_back(Json{{"comm_size", "<= " + std::to_string(size)}, {"then", tuned}});
      tree.push_back(Json{{"comm_size", "any"}, {"then", builtin}});
      Json file;
      file["tributary_selection"] = 1;
      file["comment"] = "written by tributary-tune for " + std::to_string(size) +
                        " ranks; other sizes use the built-in tree";
      file["tree"] = tree;
      std::ofstream out(output);
      out << file.dump(2) << "\n";
      if (!out) {
        std::fprintf(stderr, "tributary-tune: cannot write '%s'\n", output.c_str());
        status = 1;
      }
    }
    MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (status == 0) {
      // The written file loads (the Context validates it) and selects what was measured.
      tributary::ContextOptions o;
      o.selection_file = output;
      tributary::Context ctx(o);
      int wrong = 0;
      for (const auto& e : expects) {
        tributary::SelectionInput in;
        in.bytes = e.bytes;
        in.commutative = e.commutative;
        const auto got = ctx.Selection(e.c).Select(in);
        if (got.kind != e.choice.kind ||
            (tributary::TakesRadix(got.kind) && got.params.radix != e.choice.radix)) {
          ++wrong;
          if (rank == 0)
            std::fprintf(stderr, "tributary-tune: %s of %zu B selects %s, measured best %s\n",
                         kCollectives[static_cast<int>(e.c)].name, e.bytes,
                         tributary::ToString(got.kind), e.choice.Name().c_str());
        }
      }
      if (rank == 0) {
        std::printf(
            "\n### Measured winners at %d ranks\n\n| collective | size | fastest | fastest "
            "order-keeping |\n|---|---|---|---|\n",
            size);
        for (std::size_t i = 0; i < expects.size(); i += 2)
          std::printf("| %s | %s | %s | %s |\n", kCollectives[static_cast<int>(expects[i].c)].name,
                      tb::FormatBytes(expects[i].bytes).c_str(), expects[i].choice.Name().c_str(),
                      expects[i + 1].choice.Name().c_str());
        const std::string over_runs =
            runs > 1 ? "; each the median over " + std::to_string(runs) + " runs" : "";
        std::printf(
            "\n### The tree in use against the fastest schedule at %d ranks (median time "
            "ratio%s)\n\n"
            "| collective | size | tree's choice | time / fastest | the choice's own variant / "
            "fastest | the tree / fastest per repetition |%s\n|---|---|---|---|---|---|%s\n",
            size, over_runs.c_str(), runs > 1 ? " runs within 1.1x |" : "", runs > 1 ? "---|" : "");
        double worst = 0, worst_choice = 0;
        for (const auto& r : tree_rows) {
          char own[32] = "—";
          if (r.choice_over_best > 0) std::snprintf(own, sizeof own, "%.2f", r.choice_over_best);
          char within[32] = "";
          if (runs > 1) std::snprintf(within, sizeof within, " %d of %d |", r.runs_within, runs);
          std::printf("| %s | %s | %s | %.2f | %s | %.2f |%s\n",
                      kCollectives[static_cast<int>(r.c)].name, tb::FormatBytes(r.bytes).c_str(),
                      tributary::ToString(r.choice.kind), r.over_best, own, r.paired_over_best,
                      within);
          worst = std::max(worst, r.over_best);
          worst_choice =
              std::max(worst_choice, r.choice_over_best > 0 ? r.choice_over_best : r.over_best);
        }
        std::printf(
            "\nWorst: %.2f (the tree in use), %.2f (its choice's own variant, where it is one; "
            "the two differ by the noise between two variants that run one schedule)\n",
            worst, worst_choice);
        // The goal: the tree within 1.1x of the fastest schedule in every cell.
        std::size_t within = 0, choice_within = 0, paired_within = 0, every_run = 0;
        const TreeRow* worst_row = nullptr;
        std::vector<double> ratios, paired;
        for (const auto& r : tree_rows) {
          paired_within += r.paired_over_best <= 1.1;
          every_run += r.runs_within == runs;
          paired.push_back(r.paired_over_best);
          within += r.over_best <= 1.1;
          choice_within += (r.choice_over_best > 0 ? r.choice_over_best : r.over_best) <= 1.1;
          if (!worst_row || r.over_best > worst_row->over_best) worst_row = &r;
          ratios.push_back(r.over_best);
        }
        tb::GoalTable goals;
        if (worst_row) {
          std::sort(ratios.begin(), ratios.end());
          const std::string cells = std::to_string(tree_rows.size());
          goals.Add(
              "the built-in tree's time over the fastest schedule's: " + std::to_string(within) +
                  " of " + cells + " cells within 1.1x; the median cell, and the worst (" +
                  kCollectives[static_cast<int>(worst_row->c)].name + " of " +
                  tb::FormatBytes(worst_row->bytes) + ")",
              tb::FormatRatio(ratios[ratios.size() / 2]), tb::FormatRatio(worst),
              tb::GoalTable::Verdict("≤ 1.1 in every cell", within == tree_rows.size()));
          goals.Add("the same with the tree's choice timed as its own variant: " +
                        std::to_string(choice_within) + " of " + cells +
                        " cells within 1.1x; the worst",
                    "", tb::FormatRatio(worst_choice));
          std::sort(paired.begin(), paired.end());
          goals.Add(
              "the tree's time over the fastest's in the same repetition (median over "
              "repetitions): " +
                  std::to_string(paired_within) + " of " + cells +
                  " cells within 1.1x; the median cell, and the worst",
              tb::FormatRatio(paired[paired.size() / 2]), tb::FormatRatio(paired.back()));
          if (runs > 1)
            goals.Add("cells where the tree took at most 1.1x the fastest in each of the " +
                          std::to_string(runs) + " runs: " + std::to_string(every_run) + " of " +
                          cells,
                      "");
        }
        goals.Print();
        if (wrong == 0)
          std::printf(
              "\ntributary-tune: wrote %s; it loads and selects the measured winners at %d ranks\n",
              output.c_str(), size);
      }
      status = wrong == 0 ? 0 : 1;
    }
  }
  MPI_Finalize();
  return status;
}
