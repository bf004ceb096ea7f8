// The cost model behind the built-in cluster selection (cluster_model.hpp). Each schedule
// is a sequence of rounds; a round costs one message's time on the network it crosses
// (the profile's measured or derived one-way time), the posts and receives beyond the
// first, the node link's bytes and messages that the node's other ranks put through it at
// the same time, the combine and one poll. Ranks fill nodes in order, so a round at
// distance d < ranks_per_node stays in the node.
#include "selection/cluster_model.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <tuple>

#include "schedules/multiplying_core.hpp"
#include "tributary/errors.hpp"

namespace tributary::detail {

namespace {

using Json = nlohmann::ordered_json;
constexpr double kNever = 1e30;

double Interpolate(const std::vector<std::pair<double, double>>& t, double n) {
  if (t.empty()) return 0;
  if (t.size() == 1) return t[0].second;
  std::size_t i = 1;
  while (i + 1 < t.size() && t[i].first < n) ++i;
  const auto& a = t[i - 1];
  const auto& b = t[i];
  const double slope = (b.second - a.second) / (b.first - a.first);
  return std::max(0.0, a.second + slope * (n - a.first));
}

int Pow2Floor(int x) {
  int p = 1;
  while (p * 2 <= x) p *= 2;
  return p;
}

struct Shape {
  int p, nodes, per_node;
};

// One round on its critical path: `sends` messages posted and `recvs` received (one of each
// is in the message's time), `inter` of the peers on other nodes, `bytes` each; `active`
// ranks per node send to other nodes at once; `combined` bytes are combined.
double Round(const NetworkProfile& net, int sends, int recvs, int inter, double bytes, int active,
             double combined) {
  if (sends <= 0 && recvs <= 0) return 0;
  double t = inter > 0 ? net.Inter(bytes) : net.Intra(bytes);
  t += std::max(0, sends - 1) * net.send + std::max(0, recvs - 1) * net.receive;
  if (inter > 0) {
    const double through = static_cast<double>(active) * inter;
    t += (through - 1) * (net.Burst(bytes) + net.injection);
  }
  // A poll, and a test of each request as it completes (under SMPI the schedules test them
  // one by one, and SMPI charges each test).
  return t + combined * net.combine + (1 + sends + recvs) * net.test;
}

// An exchange with `peers` ranks: as many sends as receives.
double Exchange(const NetworkProfile& net, int peers, int inter, double bytes, int active,
                double combined) {
  return Round(net, peers, peers, inter, bytes, active, combined);
}

// Members of a group of `group` ranks at stride `stride` on this rank's node.
int SameNode(const Shape& s, int stride, int group) {
  if (stride >= s.per_node) return 1;
  return std::max(1, std::min(group, s.per_node / stride));
}

double RecursiveDoubling(const Shape& s, const NetworkProfile& net, double n, bool gather) {
  const int pof2 = Pow2Floor(s.p);
  double t = 0;
  if (s.p > pof2) t += 2 * Exchange(net, 1, s.per_node >= 2 ? 0 : 1, n, 1, 0);
  double m = n;
  for (int d = 1; d < pof2; d *= 2) {
    const int inter = d >= s.per_node ? 1 : 0;
    t += Exchange(net, 1, inter, m, s.per_node, gather ? 0 : m);
    if (gather) m *= 2;
  }
  return t;
}

// Recursive multiplying: the rounds of MultiplyingCore, an exchange with the group's other
// members each, after the fold of its `rem` pairs.
double RecursiveMultiplying(const Shape& s, const NetworkProfile& net, double n, int k) {
  const MultiplyingCore core(s.p, k);
  double t = 0;
  if (core.rem > 0) t += 2 * Exchange(net, 1, s.per_node >= 2 ? 0 : 1, n, 1, 0);
  long stride = 1;
  for (int round = 0; round < core.Rounds(); ++round) {
    const int group = core.Group(round);
    const int inter = group - SameNode(s, static_cast<int>(stride), group);
    t += Exchange(net, group - 1, inter, n, s.per_node, (group - 1) * n);
    stride *= group;
  }
  return t;
}

// The k-nomial tree: up (reduce) and, for an allreduce, down again.
double Knomial(const Shape& s, const NetworkProfile& net, double n, int k, bool down) {
  double t = 0;
  for (long m = 1; m < s.p; m *= k) {
    const int group = static_cast<int>(std::min<long>(k, (s.p + m - 1) / m));
    const int inter = group - SameNode(s, static_cast<int>(m), group);
    t += Round(net, 1, group - 1, inter, n, 1, (group - 1) * n);  // the parent receives
    if (down) t += Round(net, group - 1, 1, inter, n, 1, 0);      // and sends back
  }
  return t;
}

// Rabenseifner's reduce-scatter in groups of k, then its allgather (allreduce) or a gather
// to the root (reduce).
double ReduceScatter(const Shape& s, const NetworkProfile& net, double n, int k, bool all) {
  const int radix = Pow2Floor(std::max(2, k));
  const int pof2 = Pow2Floor(s.p);
  double t = 0;
  if (s.p > pof2) t += 2 * Exchange(net, 1, s.per_node >= 2 ? 0 : 1, n, 1, n / 2);
  double range = n;
  for (int stride = 1; stride < pof2;) {
    const int group = std::min(radix, pof2 / stride);
    const double part = range / group;
    const int inter = group - SameNode(s, stride, group);
    t += Exchange(net, group - 1, inter, part, s.per_node, (group - 1) * part);
    // Allgather: the same exchange back; gather: the collector receives group - 1 parts.
    t += all ? Exchange(net, group - 1, inter, part, s.per_node, 0)
             : Round(net, 1, group - 1, inter, part, s.per_node, 0);
    range = part;
    stride *= group;
  }
  return t;
}

double Ring(const Shape& s, const NetworkProfile& net, double n, bool reduce_scatter) {
  const double part = reduce_scatter ? n / s.p : n;
  const int inter = s.nodes > 1 ? 1 : 0;
  const double step = Exchange(net, 1, inter, part, 1, reduce_scatter ? part : 0);
  return (reduce_scatter ? 2.0 : 1.0) * (s.p - 1) * step;
}

double Flat(Collective c, ScheduleKind kind, int radix, const Shape& s, const NetworkProfile& net,
            double n) {
  switch (kind) {
    case ScheduleKind::recursive_doubling:
      return c == Collective::reduce ? kNever
                                     : RecursiveDoubling(s, net, n, c == Collective::allgather);
    case ScheduleKind::recursive_multiplying:
      return c == Collective::allreduce ? RecursiveMultiplying(s, net, n, radix) : kNever;
    case ScheduleKind::binomial:
      return c == Collective::allgather ? kNever
                                        : Knomial(s, net, n, 2, c == Collective::allreduce);
    case ScheduleKind::knomial:
      return c == Collective::allgather ? kNever
                                        : Knomial(s, net, n, radix, c == Collective::allreduce);
    case ScheduleKind::rabenseifner:
      return c == Collective::allreduce ? ReduceScatter(s, net, n, radix, true) : kNever;
    case ScheduleKind::reduce_scatter_gather:
      return c == Collective::reduce ? ReduceScatter(s, net, n, radix, false) : kNever;
    case ScheduleKind::ring:
      return c == Collective::reduce ? kNever : Ring(s, net, n, c == Collective::allreduce);
    default:
      return kNever;
  }
}

Json ParseJson(const std::string& text, const std::string& source) {
  try {
    return Json::parse(text);
  } catch (const Json::exception& e) {
    throw UsageError(source + ": " + e.what());
  }
}

std::vector<std::pair<double, double>> Table(const Json& j, const std::string& what,
                                             const std::string& source) {
  std::vector<std::pair<double, double>> t;
  if (!j.is_array() || j.empty())
    throw UsageError(source + ": \"" + what + "\" must be an array of [bytes, seconds] pairs");
  for (const auto& e : j) {
    if (!e.is_array() || e.size() != 2 || !e[0].is_number() || !e[1].is_number() ||
        e[0].get<double>() < 0 || e[1].get<double>() < 0 ||
        (!t.empty() && e[0].get<double>() <= t.back().first))
      throw UsageError(source + ": \"" + what +
                       "\" must hold [bytes, seconds] pairs, non-negative, bytes increasing");
    t.emplace_back(e[0].get<double>(), e[1].get<double>());
  }
  return t;
}

}  // namespace

double NetworkProfile::Inter(double bytes) const { return Interpolate(inter, bytes); }
double NetworkProfile::Intra(double bytes) const { return Interpolate(intra, bytes); }
double NetworkProfile::Burst(double bytes) const {
  if (burst.empty() || bytes > burst.back().first) return bytes * link;
  return std::max(bytes * link, Interpolate(burst, bytes));
}

NetworkProfile NetworkProfile::Parse(const std::string& json, const std::string& source) {
  Json doc = ParseJson(json, source);
  if (doc.is_object() && doc.contains("network")) doc = doc["network"];
  if (!doc.is_object()) throw UsageError(source + ": a network profile must be an object");
  NetworkProfile p;
  p.source = source;
  for (auto it = doc.begin(); it != doc.end(); ++it) {
    const std::string& k = it.key();
    if (k == "inter_node") {
      p.inter = Table(*it, k, source);
    } else if (k == "intra_node") {
      p.intra = Table(*it, k, source);
    } else if (k == "burst") {
      p.burst = Table(*it, k, source);
    } else if (k == "link" || k == "injection" || k == "send" || k == "receive" || k == "test" ||
               k == "combine") {
      if (!it->is_number() || it->get<double>() < 0)
        throw UsageError(source + ": \"" + k + "\" must be a non-negative number of seconds");
      const double v = it->get<double>();
      (k == "link"        ? p.link
       : k == "injection" ? p.injection
       : k == "send"      ? p.send
       : k == "receive"   ? p.receive
       : k == "test"      ? p.test
                          : p.combine) = v;
    } else if (k != "comment" && k != "tributary_network") {
      throw UsageError(source + ": unknown key \"" + k +
                       "\" (inter_node, intra_node, link, injection, burst, send, receive, "
                       "test, combine, comment)");
    }
  }
  if (p.inter.empty() || p.intra.empty())
    throw UsageError(source + ": a network profile needs \"inter_node\" and \"intra_node\"");
  return p;
}

std::string NetworkProfile::ToJson() const {
  Json j;
  j["tributary_network"] = 1;
  j["comment"] = source;
  const auto table = [](const std::vector<std::pair<double, double>>& t) {
    Json a = Json::array();
    for (const auto& e : t) a.push_back(Json::array({e.first, e.second}));
    return a;
  };
  j["inter_node"] = table(inter);
  j["intra_node"] = table(intra);
  j["link"] = link;
  j["injection"] = injection;
  if (!burst.empty()) j["burst"] = table(burst);
  j["send"] = send;
  j["receive"] = receive;
  j["test"] = test;
  j["combine"] = combine;
  return j.dump();
}

const NetworkProfile& ActiveNetwork() {
  static std::once_flag once;
  static NetworkProfile profile;
  std::call_once(once, [] {
    const char* file = std::getenv("TRIBUTARY_NETWORK");
    if (file && *file) {
      std::ifstream in(file, std::ios::binary);
      std::ostringstream text;
      if (in) text << in.rdbuf();
      if (!in)
        throw UsageError(std::string("TRIBUTARY_NETWORK: cannot read the network profile '") +
                         file + "'");
      profile = NetworkProfile::Parse(text.str(), file);
    } else {
      profile = NetworkProfile::Parse(SelectionTree::ClusterJson(), "the built-in network profile");
    }
  });
  return profile;
}

std::string Candidate::Name() const {
  std::string s = ToString(kind);
  if (TakesRadix(kind)) s += std::to_string(params.radix);
  if (params.node_aware) s = "node_aware(" + s + ")";
  return s;
}

double ModelTime(Collective collective, const Candidate& c, const SelectionFacts& facts,
                 double bytes, const NetworkProfile& net) {
  const Shape s{std::max(1, facts.comm_size), std::max(1, facts.node_count),
                std::max(1, facts.ranks_per_node)};
  if (s.p == 1) return 0;
  if (!c.params.node_aware || collective == Collective::allgather || s.nodes <= 1 ||
      s.per_node <= 1)
    return c.params.node_aware && collective == Collective::allgather
               ? kNever
               : Flat(collective, c.kind, c.params.radix, s, net, bytes);
  // Two levels: a binomial reduce in the node, the schedule among the leaders (one per
  // node), a binomial broadcast in the node (allreduce).
  const Shape node{s.per_node, 1, s.per_node};
  const Shape leaders{s.nodes, s.nodes, 1};
  double t = Knomial(node, net, bytes, 2, false);
  t += Flat(collective, c.kind, c.params.radix, leaders, net, bytes);
  if (collective == Collective::allreduce) {
    for (int m = 1; m < s.per_node; m *= 2) t += Round(net, 1, 1, 0, bytes, 1, 0);
  }
  return t;
}

std::vector<Candidate> CandidatesOf(const std::string& model_json, Collective collective) {
  const Json doc = ParseJson(model_json, "the cluster selection model");
  static const char* kNames[] = {"allreduce", "reduce", "allgather"};
  std::vector<Candidate> out;
  const Json& list = doc.at("candidates").at(kNames[static_cast<int>(collective)]);
  for (const auto& leaf : list) {
    Candidate c;
    if (!ParseScheduleKind(leaf.at("schedule").get<std::string>(), &c.kind))
      throw UsageError("the cluster selection model: unknown schedule " + leaf.dump());
    if (leaf.contains("radix")) c.params.radix = leaf["radix"].get<int>();
    if (leaf.contains("node_aware")) c.params.node_aware = leaf["node_aware"].get<bool>();
    out.push_back(c);
  }
  return out;
}

std::string ClusterTreeFor(const SelectionFacts& facts, const NetworkProfile& net,
                           const std::string& model_json) {
  static const char* kNames[] = {"allreduce", "reduce", "allgather"};
  const auto leaf = [](const Candidate& c) {
    Json l;
    l["schedule"] = ToString(c.kind);
    if (TakesRadix(c.kind)) l["radix"] = c.params.radix;
    if (c.params.node_aware) l["node_aware"] = true;
    return l;
  };
  // The cheapest of `cs` at each power of two, as msg_size siblings.
  const auto levels = [&](Collective col, const std::vector<Candidate>& cs) {
    std::vector<std::size_t> best;
    std::vector<double> sizes;
    for (double n = 8; n <= double(1 << 30); n *= 2) {
      std::size_t b = 0;
      for (std::size_t i = 1; i < cs.size(); ++i)
        if (ModelTime(col, cs[i], facts, n, net) < ModelTime(col, cs[b], facts, n, net)) b = i;
      sizes.push_back(n);
      best.push_back(b);
    }
    Json arr = Json::array();
    for (std::size_t i = 0; i < best.size(); ++i) {
      if (i + 1 < best.size() && best[i + 1] == best[i]) continue;
      Json node;
      if (i + 1 < best.size()) {
        const auto cut = static_cast<long long>(std::sqrt(sizes[i] * sizes[i + 1]));
        node["msg_size"] = "<= " + std::to_string(cut);
      } else {
        node["msg_size"] = "any";
      }
      node["then"] = leaf(cs[best[i]]);
      arr.push_back(node);
    }
    return arr;
  };
  Json tree = Json::array();
  for (int c = 0; c < 3; ++c) {
    const auto col = static_cast<Collective>(c);
    std::vector<Candidate> all = CandidatesOf(model_json, col), flat;
    for (const auto& cand : all)
      if (!cand.params.node_aware) flat.push_back(cand);
    Json then = levels(col, flat);
    if (flat.size() != all.size()) {
      Json with = levels(col, all);
      if (with != then)  // node-aware wins somewhere: only for commutative operators
        then = Json::array({Json{{"commutative", true}, {"then", with}},
                            Json{{"commutative", "any"}, {"then", then}}});
    }
    tree.push_back(Json{{"collective", c == 2 ? "any" : kNames[c]}, {"then", then}});
  }
  Json doc;
  doc["tributary_selection"] = 1;
  doc["comment"] = "Tributary's cluster selection for " + std::to_string(facts.comm_size) +
                   " ranks on " + std::to_string(facts.node_count) + " nodes of " +
                   std::to_string(facts.ranks_per_node) +
                   ", from the cost model on the network profile " + net.source;
  doc["tree"] = tree;
  return doc.dump(2);
}

const std::string& ClusterTree(const SelectionFacts& facts) {
  static std::mutex mutex;
  static std::map<std::tuple<int, int, int>, std::string> trees;
  const NetworkProfile& net = ActiveNetwork();
  const std::lock_guard<std::mutex> lock(mutex);
  auto key = std::make_tuple(facts.comm_size, facts.node_count, facts.ranks_per_node);
  auto it = trees.find(key);
  if (it == trees.end())
    it = trees.emplace(key, ClusterTreeFor(facts, net, SelectionTree::ClusterJson())).first;
  return it->second;
}

}  // namespace tributary::detail
