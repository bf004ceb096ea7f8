// The built-in selection for communicators across nodes: a cost model of each candidate
// schedule on the network's measured or derived parameters (a network profile), evaluated
// for the communicator's shape to give a selection tree with the crossover sizes of that
// network. No MPI here (the selection tool and its tests use it too).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "tributary/schedule_kind.hpp"
#include "tributary/selection.hpp"

namespace tributary::detail {

/// What the model knows of a network (docs/simulation.md, "The cluster selection").
struct NetworkProfile {
  /// One message's one-way time, posting and receiving included, at (bytes, seconds)
  /// points: between two nodes and within one. Interpolated linearly, extrapolated from the
  /// last two points.
  std::vector<std::pair<double, double>> inter, intra;
  double link = 8e-11;   ///< A node's link to the network: seconds per byte, shared by its ranks.
  double injection = 0;  ///< Per message through a node's link, one at a time (its message rate).
  /// What each further message of a size adds where several leave a node at once, at
  /// (bytes, seconds) points up to the last, posting and receiving not included (measured:
  /// a burst between two nodes); empty: bytes × link. Short messages may move at a fraction
  /// of the bandwidth that `link` was measured with.
  std::vector<std::pair<double, double>> burst;
  double send = 7.7e-8;      ///< Posting a send (each one beyond a round's first costs this more).
  double receive = 2.1e-8;   ///< Receiving a message, likewise.
  double test = 1.6e-8;      ///< One poll of a round.
  double combine = 2.3e-11;  ///< Combining, seconds per byte.
  std::string source;        ///< Where it came from, for messages.

  double Inter(double bytes) const;
  double Intra(double bytes) const;
  /// What one more message of `bytes` through a node's link adds: at least bytes × link.
  double Burst(double bytes) const;
  /// Parses a profile (the "network" object of a file); throws UsageError naming `source`.
  static NetworkProfile Parse(const std::string& json, const std::string& source);
  /// The profile in the file format (one line): Parse reads it back.
  std::string ToJson() const;
};

/// The profile in use: the file named by TRIBUTARY_NETWORK, else the built-in one (the
/// "network" of simulation/cluster-selection.json). Read once per process.
const NetworkProfile& ActiveNetwork();

/// A candidate of the model: a schedule and its parameters.
struct Candidate {
  ScheduleKind kind = ScheduleKind::knomial;
  ScheduleParams params;
  std::string Name() const;
};

/// The modelled time of `c` for `bytes` per rank on `facts.comm_size` ranks in
/// `facts.node_count` nodes of `facts.ranks_per_node` ranks (filled node by node); a large
/// value for a candidate that does not implement the collective.
double ModelTime(Collective collective, const Candidate& c, const SelectionFacts& facts,
                 double bytes, const NetworkProfile& net);

/// The candidates of each collective, from the "candidates" object of `model_json`
/// (simulation/cluster-selection.json).
std::vector<Candidate> CandidatesOf(const std::string& model_json, Collective collective);

/// The selection tree (JSON) for a communicator of this shape: per collective, the cheapest
/// candidate at each power of two from 8 B to 1 GiB, switching at the geometric mean of two
/// sizes where the cheapest changes. Node-aware leaves sit under "commutative": true.
std::string ClusterTreeFor(const SelectionFacts& facts, const NetworkProfile& net,
                           const std::string& model_json);

/// ClusterTreeFor(facts, ActiveNetwork(), SelectionTree::ClusterJson()), made once per
/// shape (the reference stays valid).
const std::string& ClusterTree(const SelectionFacts& facts);

}  // namespace tributary::detail
