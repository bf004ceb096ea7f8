// The network profile a Context's cluster selection models (network_profile.hpp).
//
// Measured at start-up: the leaders of the first two nodes (the lowest rank of each) time
// ping-pongs of every power of two from 8 B to 1 MiB, then the first node's two lowest
// ranks do the same; half the best round trip is one message's one-way time, posting and
// receiving included, which is what the model's tables hold. The node link's time per byte
// is the slope between the last two sizes between nodes (one pair alone has the link to
// itself). Short messages may get less of it: the first leader also sends bursts of 16
// messages of each size up to 64 KiB at once, and what each message beyond the first adds
// (posting and receiving taken out) is the profile's "burst" table. What the measurement
// cannot see cheaply keeps the built-in profile's values:
// the cost of a post, a receive, a poll and a combined byte (this library's own CPU work),
// and a network interface's per-message cost (none). Every other rank waits in one
// broadcast. Rank 0 keeps what was measured, so the later Contexts of the job (any
// communicator whose rank 0 measured before) take it without measuring again.
#include "context/network_profile.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <mutex>
#include <sstream>
#include <vector>

#include "tributary/errors.hpp"

namespace tributary::detail {

namespace {

std::mutex g_mutex;
std::unique_ptr<NetworkProfile> g_last;  // the last Context's

}  // namespace

const NetworkProfile* StartupNetwork() noexcept {
  std::lock_guard<std::mutex> lock(g_mutex);
  return g_last.get();
}

#if TRIBUTARY_HAVE_MPI
namespace {

std::unique_ptr<NetworkProfile> g_measured;  // measured by a Context of this job

const NetworkProfile& BuiltinProfile() {
  static const NetworkProfile profile =
      NetworkProfile::Parse(SelectionTree::ClusterJson(), "the built-in network profile");
  return profile;
}

constexpr int kTag = 1;  // on the node layout's communicators, which carry nothing else yet

enum Mode : long long { kMeasure = 0, kValues = 1, kError = 2 };

// Ping-pongs of kProfileSizes sizes between ranks 0 and 1 of `pair` (called by both): the
// one-way times, on rank 0. Below 64 KiB the best of three round trips (noise only adds
// time), from 64 KiB one (after the smaller ones, the path is warm); one untimed round trip
// first.
std::vector<double> PingPong(MPI_Comm pair) {
  int me = 0;
  CheckMpi(MPI_Comm_rank(pair, &me), "MPI_Comm_rank");
  const int peer = 1 - me;
  std::vector<char> buf(std::size_t(8) << (kProfileSizes - 1));
  std::vector<double> one_way;
  const auto trip = [&](std::size_t bytes) {
    const int n = static_cast<int>(bytes);
    if (me == 0) {
      CheckMpi(MPI_Send(buf.data(), n, MPI_BYTE, peer, kTag, pair), "MPI_Send");
      CheckMpi(MPI_Recv(buf.data(), n, MPI_BYTE, peer, kTag, pair, MPI_STATUS_IGNORE), "MPI_Recv");
    } else {
      CheckMpi(MPI_Recv(buf.data(), n, MPI_BYTE, peer, kTag, pair, MPI_STATUS_IGNORE), "MPI_Recv");
      CheckMpi(MPI_Send(buf.data(), n, MPI_BYTE, peer, kTag, pair), "MPI_Send");
    }
  };
  trip(8);
  for (int i = 0; i < kProfileSizes; ++i) {
    const std::size_t bytes = std::size_t(8) << i;
    const int reps = bytes < 65536 ? 3 : 1;
    double best = 1e30;
    for (int r = 0; r < reps; ++r) {
      const double t0 = MPI_Wtime();
      trip(bytes);
      best = std::min(best, MPI_Wtime() - t0);
    }
    one_way.push_back(best / 2);
  }
  return one_way;
}

// Bursts between ranks 0 and 1 of `pair` (called by both): rank 0 sends kBurstMessages
// messages of each size at once, rank 1 receives them all and answers with 8 B (below
// 16 KiB the best of three, from 16 KiB one). On rank 0, what each message beyond the first adds:
// the burst less one message and the answer (`one_way`, the ping-pong's one-way times from 8 B),
// less a post and a receive (`send`, `receive`); made non-decreasing in size (from the largest
// down), so that noise at one size cannot make a shorter message dearer.
std::vector<double> Bursts(MPI_Comm pair, const std::vector<double>& one_way, double send,
                           double receive) {
  int me = 0;
  CheckMpi(MPI_Comm_rank(pair, &me), "MPI_Comm_rank");
  const int peer = 1 - me;
  const std::size_t largest = std::size_t(8) << (kBurstSizes - 1);
  std::vector<char> buf(largest * kBurstMessages);
  char ack[8] = {};
  MPI_Request requests[kBurstMessages];
  const auto burst = [&](std::size_t bytes) {
    const int n = static_cast<int>(bytes);
    for (int i = 0; i < kBurstMessages; ++i) {
      if (me == 0)
        CheckMpi(MPI_Isend(buf.data(), n, MPI_BYTE, peer, kTag, pair, &requests[i]), "MPI_Isend");
      else
        CheckMpi(MPI_Irecv(buf.data() + bytes * static_cast<std::size_t>(i), n, MPI_BYTE, peer,
                           kTag, pair, &requests[i]),
                 "MPI_Irecv");
    }
    CheckMpi(MPI_Waitall(kBurstMessages, requests, MPI_STATUSES_IGNORE), "MPI_Waitall");
    if (me == 0)
      CheckMpi(MPI_Recv(ack, 8, MPI_BYTE, peer, kTag, pair, MPI_STATUS_IGNORE), "MPI_Recv");
    else
      CheckMpi(MPI_Send(ack, 8, MPI_BYTE, peer, kTag, pair), "MPI_Send");
  };
  std::vector<double> each(static_cast<std::size_t>(kBurstSizes));
  for (int i = 0; i < kBurstSizes; ++i) {
    const std::size_t bytes = std::size_t(8) << i;
    double best = 1e30;
    for (int r = 0; r < (bytes < 16384 ? 3 : 1); ++r) {
      const double t0 = MPI_Wtime();
      burst(bytes);
      best = std::min(best, MPI_Wtime() - t0);
    }
    const double one = one_way[static_cast<std::size_t>(i)] + one_way[0];
    each[static_cast<std::size_t>(i)] =
        std::max(0.0, (best - one) / (kBurstMessages - 1) - send - receive);
  }
  for (int i = kBurstSizes - 2; i >= 0; --i)
    each[static_cast<std::size_t>(i)] =
        std::min(each[static_cast<std::size_t>(i)], each[static_cast<std::size_t>(i) + 1]);
  return each;
}

std::vector<std::pair<double, double>> Table(const std::vector<double>& values) {
  std::vector<std::pair<double, double>> t;
  t.reserve(values.size());
  for (std::size_t i = 0; i < values.size(); ++i)
    t.emplace_back(static_cast<double>(std::size_t(8) << i), values[i]);
  return t;
}

// Rank 0 of `comm`: where the profile comes from (TRIBUTARY_NETWORK, kept, or to measure).
Mode Source(NetworkProfile* profile, std::string* text) {
  const char* file = std::getenv("TRIBUTARY_NETWORK");
  if (file && *file) {
    std::ifstream in(file, std::ios::binary);
    std::ostringstream bytes;
    if (in) bytes << in.rdbuf();
    if (!in) {
      *text = std::string("TRIBUTARY_NETWORK: cannot read the network profile '") + file + "'";
      return kError;
    }
    try {
      *profile = NetworkProfile::Parse(bytes.str(), file);
    } catch (const UsageError& e) {
      *text = e.what();
      return kError;
    }
    *text = profile->source;
    return kValues;
  }
  std::lock_guard<std::mutex> lock(g_mutex);
  if (!g_measured) return kMeasure;
  *profile = *g_measured;
  *text = profile->source;
  return kValues;
}

std::vector<double> Flatten(const NetworkProfile& p) {
  std::vector<double> v;
  for (const auto* t : {&p.inter, &p.intra, &p.burst})
    for (const auto& e : *t) {
      v.push_back(e.first);
      v.push_back(e.second);
    }
  for (double x : {p.link, p.injection, p.send, p.receive, p.test, p.combine}) v.push_back(x);
  return v;
}

void Unflatten(const std::vector<double>& v, std::size_t n_inter, std::size_t n_intra,
               std::size_t n_burst, NetworkProfile* p) {
  std::size_t k = 0;
  p->inter.clear();
  p->intra.clear();
  p->burst.clear();
  for (std::size_t i = 0; i < n_inter; ++i, k += 2) p->inter.emplace_back(v[k], v[k + 1]);
  for (std::size_t i = 0; i < n_intra; ++i, k += 2) p->intra.emplace_back(v[k], v[k + 1]);
  for (std::size_t i = 0; i < n_burst; ++i, k += 2) p->burst.emplace_back(v[k], v[k + 1]);
  for (double* x : {&p->link, &p->injection, &p->send, &p->receive, &p->test, &p->combine})
    *x = v[k++];
}

}  // namespace

std::string StartupClusterTree(MPI_Comm comm, int rank, const NodeLayout& nodes,
                               const SelectionFacts& facts) {
  NetworkProfile profile = BuiltinProfile();
  std::string text;
  long long head[5] = {kMeasure, kProfileSizes, kProfileSizes, 0, kBurstSizes};
  if (rank == 0) {
    head[0] = Source(&profile, &text);
    // The tables' sizes, for the values' broadcast: measured ones, but within a first node of
    // one rank (every rank a node) nothing is measured and the built-in table stays.
    int first_node_size = 0;
    CheckMpi(MPI_Comm_size(nodes.node, &first_node_size), "MPI_Comm_size");
    if (first_node_size < 2) head[2] = static_cast<long long>(profile.intra.size());
    if (head[0] == kValues) {
      head[1] = static_cast<long long>(profile.inter.size());
      head[2] = static_cast<long long>(profile.intra.size());
      head[4] = static_cast<long long>(profile.burst.size());
    }
    head[3] = static_cast<long long>(text.size());
  }
  CheckMpi(MPI_Bcast(head, 5, MPI_LONG_LONG, 0, comm), "MPI_Bcast");
  text.resize(static_cast<std::size_t>(head[3]));
  if (head[3])
    CheckMpi(MPI_Bcast(text.data(), static_cast<int>(head[3]), MPI_CHAR, 0, comm), "MPI_Bcast");
  if (head[0] == kError) throw UsageError("tributary::Context: " + text);
  if (head[0] == kMeasure) {
    // Between the first two nodes' leaders, then within the first node (where it has a
    // second rank); nobody else takes part.
    int node_rank = -1, node_size = 0;
    CheckMpi(MPI_Comm_rank(nodes.node, &node_rank), "MPI_Comm_rank");
    CheckMpi(MPI_Comm_size(nodes.node, &node_size), "MPI_Comm_size");
    const bool first_node = nodes.NodeOf(rank) == nodes.NodeOf(0);
    if (nodes.leaders != MPI_COMM_NULL) {
      int leader = -1;
      CheckMpi(MPI_Comm_rank(nodes.leaders, &leader), "MPI_Comm_rank");
      if (leader <= 1) {
        const std::vector<double> t = PingPong(nodes.leaders);
        const std::vector<double> b = Bursts(nodes.leaders, t, profile.send, profile.receive);
        if (rank == 0) {
          profile.inter = Table(t);
          profile.burst = Table(b);
        }
      }
    }
    if (first_node && node_size > 1 && node_rank <= 1) {
      const std::vector<double> t = PingPong(nodes.node);
      if (rank == 0) profile.intra = Table(t);
    }
    if (rank == 0) {
      const auto& in = profile.inter;
      const double slope = (in[in.size() - 1].second - in[in.size() - 2].second) /
                           (in[in.size() - 1].first - in[in.size() - 2].first);
      profile.link = std::max(0.0, slope);
      profile.injection = 0;
    }
    text = "measured at start-up by " + std::to_string(facts.comm_size) + " ranks on " +
           std::to_string(facts.node_count) + " nodes";
  }
  std::vector<double> values = Flatten(profile);
  const std::size_t n_inter = static_cast<std::size_t>(head[1]);
  const std::size_t n_intra = static_cast<std::size_t>(head[2]);
  const std::size_t n_burst = static_cast<std::size_t>(head[4]);
  values.resize(2 * (n_inter + n_intra + n_burst) + 6);
  CheckMpi(MPI_Bcast(values.data(), static_cast<int>(values.size()), MPI_DOUBLE, 0, comm),
           "MPI_Bcast");
  Unflatten(values, n_inter, n_intra, n_burst, &profile);
  profile.source = text;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    if (head[0] == kMeasure) g_measured = std::make_unique<NetworkProfile>(profile);
    g_last = std::make_unique<NetworkProfile>(profile);
  }
  const char* log = std::getenv("TRIBUTARY_LOG");
  if (rank == 0 && log && std::strstr(log, "network"))
    std::fprintf(stderr, "tributary: network profile (%s): %s\n", profile.source.c_str(),
                 profile.ToJson().c_str());
  return ClusterTreeFor(facts, profile, SelectionTree::ClusterJson());
}
#endif

}  // namespace tributary::detail
