// The selection tree: valid trees choose what they say (through real reductions at 1-4
// ranks), every kind of invalid file gives its message and position, pruning removes
// exactly what the communicator fixes, and every rank chooses the same.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "context/network_profile.hpp"
#include "mpi_test.hpp"
#include "reduction_test.hpp"
#include "test_types.hpp"
#include "tributary/tributary.hpp"

namespace {

using tributary::Collective;
using tributary::ScheduleKind;
using tributary::SelectionInput;
using tributary::SelectionTree;
using tributary::TaskStatus;
using tributary::testing::Rank;
using tributary::testing::Size;

using tributary::testing::Wait;

std::string ErrorOf(const std::string& json) {
  try {
    SelectionTree::Parse(json, "t.json");
  } catch (const tributary::UsageError& e) {
    return e.what();
  }
  return "";
}

bool Has(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// A file written by rank 0 for this test (all ranks read it through the Context).
std::string WriteFile(const std::string& name, const std::string& text) {
  const std::string path = std::string(TRIBUTARY_TEST_TMP) + "/" + name;
  if (Rank() == 0) std::ofstream(path) << text;
  MPI_Barrier(MPI_COMM_WORLD);
  return path;
}

const char* kTree = R"({"tree": [
  {"collective": "allreduce", "then": [
    {"msg_size": "<= 64", "then": {"schedule": "binomial"}},
    {"msg_size": "<= 1KiB", "then": {"schedule": "recursive_doubling"}},
    {"msg_size": "any", "then": [
      {"commutative": true, "then": {"schedule": "ring", "segment_bytes": 4096}},
      {"commutative": "any", "then": {"schedule": "rabenseifner"}}]}]},
  {"collective": "reduce", "then": [
    {"comm_size": "<= 2", "then": {"schedule": "pipelined_tree", "segment_bytes": 1024}},
    {"comm_size": "any", "then": {"schedule": "knomial", "radix": 3}}]},
  {"collective": "any", "then": {"schedule": "recursive_doubling"}}
]})";

TEST(Selection, ValidTreesChooseWhatTheySayInRealReductions) {
  tributary::ContextOptions o;
  o.selection_file = WriteFile("valid.json", kTree);
  tributary::Context ctx(o);
  tributary::AllReduce<std::vector<double>> a(ctx, "a");
  const struct {
    std::size_t n;
    ScheduleKind expect;
  } cases[] = {{1, ScheduleKind::binomial},
               {8, ScheduleKind::binomial},
               {9, ScheduleKind::recursive_doubling},
               {128, ScheduleKind::recursive_doubling},
               {129, ScheduleKind::ring},
               {5000, ScheduleKind::ring}};
  for (const auto& c : cases) {
    a.val.assign(c.n, 1.0 + Rank());
    a.StartReduce(tributary::Sum{});
    Wait(ctx, a);
    const bool right = a.val.size() == c.n && a.val.back() == Size() * (Size() + 1) / 2.0;
    TRIBUTARY_EXPECT_ALL(right);
    if (Size() > 1) TRIBUTARY_EXPECT_ALL(a.ScheduleUsed() == c.expect);
  }
  // A non-commutative operator at a size where the tree says ring for commutative ones.
  tributary::AllReduce<std::vector<tributary::testing::Perm>> perm(ctx, "perm");
  perm.val.assign(300, tributary::testing::Perm::Of(static_cast<unsigned>(Rank())));
  perm.StartReduce(tributary::testing::PermCompose{});
  Wait(ctx, perm);
  if (Size() > 1) TRIBUTARY_EXPECT_ALL(perm.ScheduleUsed() == ScheduleKind::rabenseifner);
  // Rank 0's · rank 1's · ...: fold from the last rank down, inout = in · inout.
  tributary::testing::Perm expect = tributary::testing::Perm::Of(static_cast<unsigned>(Size() - 1));
  for (int q = Size() - 2; q >= 0; --q)
    tributary::testing::PermCompose{}(tributary::testing::Perm::Of(static_cast<unsigned>(q)),
                                      expect);
  TRIBUTARY_EXPECT_ALL(perm.val[299] == expect);
  // Reduce depends on the communicator size, fixed at pruning.
  tributary::Reduce<std::vector<int>> r(ctx, "r");
  r.val.assign(2000, 1);
  r.StartReduce(Size() - 1, tributary::Sum{});
  Wait(ctx, r);
  if (Size() > 1)
    TRIBUTARY_EXPECT_ALL(r.ScheduleUsed() ==
                         (Size() <= 2 ? ScheduleKind::pipelined_tree : ScheduleKind::knomial));
  if (Rank() == Size() - 1) {
    EXPECT_EQ(r.val[1999], Size());
  }
  tributary::AllGather<int> g(ctx, "g");
  g.local = Rank();
  g.StartReduce();
  Wait(ctx, g);
  if (Size() > 1) TRIBUTARY_EXPECT_ALL(g.ScheduleUsed() == ScheduleKind::recursive_doubling);
  TRIBUTARY_EXPECT_ALL(g.val.size() == static_cast<std::size_t>(Size()) &&
                       g.val.back() == Size() - 1);
}

TEST(Selection, EveryRankChoosesTheSame) {
  tributary::Context ctx;  // the built-in tree
  const auto& tree = ctx.Selection(Collective::allreduce);
  std::string mine;
  for (std::size_t bytes = 1; bytes <= (std::size_t(1) << 26); bytes *= 3) {
    SelectionInput in;
    in.bytes = bytes;
    mine += tributary::ToString(tree.Select(in).kind);
    mine += ",";
  }
  const auto all = tributary::testing::AllGatherBytes(mine);
  for (const auto& other : all) EXPECT_EQ(other, mine);
}

TEST(Selection, PruningRemovesExactlyWhatTheCommunicatorFixes) {
  const SelectionTree tree = SelectionTree::Parse(kTree);
  EXPECT_EQ(tree.OperatorCount(), 10u);
  tributary::SelectionFacts two, four;
  two.comm_size = 2;
  four.comm_size = 4;
  // allreduce keeps its 3 msg_size nodes and the 2 commutative ones; the collective level goes.
  const SelectionTree all = tree.Prune(two, Collective::allreduce);
  EXPECT_EQ(all.OperatorCount(), 5u);
  EXPECT_EQ(all.ToJson().find("\"comm_size\""), std::string::npos);
  EXPECT_TRUE(Has(all.ToJson(), "\"msg_size\""));
  // reduce: collective and comm_size are both fixed, so a single leaf is left.
  const SelectionTree r2 = tree.Prune(two, Collective::reduce),
                      r4 = tree.Prune(four, Collective::reduce);
  EXPECT_EQ(r2.OperatorCount(), 0u);
  EXPECT_EQ(r2.Select({}).kind, ScheduleKind::pipelined_tree);
  EXPECT_EQ(r2.Select({}).params.segment_bytes, 1024u);
  EXPECT_EQ(r4.Select({}).kind, ScheduleKind::knomial);
  EXPECT_EQ(r4.Select({}).params.radix, 3);
  EXPECT_EQ(r4.ToJson().find("comm_size"), std::string::npos);
  EXPECT_NE(tree.ToJson().find("comm_size"), std::string::npos);
  EXPECT_EQ(tree.Prune(two, Collective::allgather).Select({}).kind,
            ScheduleKind::recursive_doubling);
  // The pruned tree is printable and loads again.
  EXPECT_NO_THROW(SelectionTree::Parse(all.ToJson()));
  // The Context prunes for its own communicator.
  tributary::ContextOptions o;
  o.selection_file = WriteFile("prune.json", kTree);
  tributary::Context ctx(o);
  EXPECT_EQ(ctx.Selection(Collective::reduce).OperatorCount(), 0u);
  EXPECT_EQ(ctx.Facts().comm_size, Size());
}

TEST(Selection, InvalidFilesSayWhatAndWhere) {
  // Syntax: line and column.
  auto e = ErrorOf("{\n  \"tree\": [\n    {\"msg_size\": \"any\" \"then\": 1}\n]}");
  EXPECT_TRUE(Has(e, "t.json:3:29: JSON syntax error")) << e;
  // Unknown schedule: the JSON pointer of its key.
  e = ErrorOf(R"({"tree": [{"msg_size": "any", "then": {"schedule": "hypercube"}}]})");
  EXPECT_TRUE(Has(e, "\"/tree/0/then/schedule\": unknown schedule \"hypercube\"")) << e;
  // Unknown predicate.
  e = ErrorOf(R"({"tree": [{"msg_sizes": "any", "then": {"schedule": "binomial"}}]})");
  EXPECT_TRUE(Has(e, "\"/tree/0/msg_sizes\": unknown predicate")) << e;
  // Mixed sibling kinds.
  e = ErrorOf(R"({"tree": [{"msg_size": "<= 8", "then": {"schedule": "binomial"}},
                           {"comm_size": "any", "then": {"schedule": "binomial"}}]})");
  EXPECT_TRUE(Has(e, "\"/tree/1/comm_size\": siblings must test one predicate")) << e;
  // A level without its catch-all.
  // A number the parser cannot hold (found by fuzzing): refused, not a stray exception.
  e = ErrorOf(R"({"tree": 1e999999})");
  EXPECT_TRUE(Has(e, "JSON error: number overflow parsing '1e999999'")) << e;
  e = ErrorOf(R"({"tree": [{"collective": "allreduce", "then": {"schedule": "binomial"}}]})");
  EXPECT_TRUE(Has(e, "\"/tree/0/collective\": this level is incomplete")) << e;
  // "any" before other siblings.
  e = ErrorOf(R"({"tree": [{"msg_size": "any", "then": {"schedule": "binomial"}},
                           {"msg_size": "<= 8", "then": {"schedule": "binomial"}}]})");
  EXPECT_TRUE(Has(e, "\"/tree/0/msg_size\": \"any\" must be the last sibling")) << e;
  // A non-order-keeping leaf reachable by a non-commutative operator.
  e = ErrorOf(R"({"tree": [{"collective": "allreduce", "then": {"schedule": "ring"}},
                           {"collective": "any", "then": {"schedule": "mpi_library"}}]})");
  EXPECT_TRUE(Has(e, "\"/tree/0/then/schedule\": schedule 'ring' does not keep rank order")) << e;
  // ... but under "commutative": true it is fine.
  EXPECT_EQ(ErrorOf(R"({"tree": [{"collective": "allreduce", "then": [
      {"commutative": true, "then": {"schedule": "ring"}},
      {"commutative": "any", "then": {"schedule": "binomial"}}]},
      {"collective": "any", "then": {"schedule": "mpi_library"}}]})"),
            "");
  // ... and so is an allgather, which combines nothing.
  EXPECT_EQ(ErrorOf(R"({"tree": [{"collective": "allgather", "then": {"schedule": "ring"}},
      {"collective": "any", "then": {"schedule": "mpi_library"}}]})"),
            "");
  // A schedule that does not implement a collective that reaches it.
  e = ErrorOf(R"({"tree": [{"msg_size": "any", "then": {"schedule": "pipelined_tree"}}]})");
  EXPECT_TRUE(Has(e, "does not implement allreduce")) << e;
  // A leaf among operator siblings, and an operator inside a leaf.
  e = ErrorOf(R"({"tree": [{"schedule": "binomial"}]})");
  EXPECT_TRUE(Has(e, "\"/tree/0/schedule\": a leaf among operator siblings")) << e;
  e = ErrorOf(
      R"({"tree": [{"msg_size": "any", "then": {"schedule": "mpi_library", "msg_size": "any"}}]})");
  EXPECT_TRUE(Has(e, "\"/tree/0/then/msg_size\": a leaf cannot hold")) << e;
  // Bad values and parameters.
  e = ErrorOf(R"({"tree": [{"msg_size": "< 8", "then": {"schedule": "binomial"}},
                           {"msg_size": "any", "then": {"schedule": "binomial"}}]})");
  EXPECT_TRUE(Has(e, "\"/tree/0/msg_size\": expected \"<= N\"")) << e;
  e = ErrorOf(R"({"tree": [{"comm_type": "inter", "then": {"schedule": "binomial"}},
                           {"comm_type": "any", "then": {"schedule": "binomial"}}]})");
  EXPECT_TRUE(Has(e, "intercommunicators are not supported")) << e;
  e = ErrorOf(
      R"({"tree": [{"msg_size": "any", "then": {"schedule": "mpi_library", "radix": 1}}]})");
  EXPECT_TRUE(Has(e, "\"/tree/0/then/radix\": radix must be")) << e;
  e = ErrorOf(R"({"tree": {"schedule": "mpi_library"}, "extra": 1})");
  EXPECT_TRUE(Has(e, "\"/extra\": unknown key")) << e;
  EXPECT_EQ(ErrorOf(SelectionTree::DefaultJson()), "");
}

TEST(Selection, AnInvalidFileFailsTheContextOnEveryRankBeforeAnythingStarts) {
  tributary::ContextOptions o;
  o.selection_file =
      WriteFile("bad.json", R"({"tree": [{"msg_size": "any", "then": {"schedule": "nope"}}]})");
  std::string error;
  try {
    tributary::Context ctx(o);
  } catch (const tributary::UsageError& e) {
    error = e.what();
  }
  TRIBUTARY_EXPECT_ALL(Has(error, "bad.json: at JSON pointer \"/tree/0/then/schedule\""));
  o.selection_file = std::string(TRIBUTARY_TEST_TMP) + "/does-not-exist.json";
  error.clear();
  try {
    tributary::Context ctx(o);
  } catch (const tributary::UsageError& e) {
    error = e.what();
  }
  TRIBUTARY_EXPECT_ALL(Has(error, "cannot read the selection tree file"));
  // The environment variable replaces the built-in tree when no option is given.
  // (At 1 MiB kTree's allgather takes recursive doubling, the built-in tree the MPI library.)
  const std::string path = WriteFile("env.json", kTree);
  tributary::SelectionInput large;
  large.bytes = std::size_t(1) << 20;
  setenv("TRIBUTARY_SELECTION", path.c_str(), 1);
  {
    tributary::Context ctx;
    TRIBUTARY_EXPECT_ALL(ctx.Selection(Collective::allgather).Select(large).kind ==
                         ScheduleKind::recursive_doubling);
  }
  unsetenv("TRIBUTARY_SELECTION");
  tributary::Context plain;
  TRIBUTARY_EXPECT_ALL(plain.Selection(Collective::allgather).Select(large).kind ==
                       ScheduleKind::mpi_library);
}

// The single-machine tree at 2 ranks keeps messages under Open MPI's shared-memory eager
// limit (4 KiB with its header) where it can: whole messages up to 4032 bytes, halves from
// there up to 8064 (Rabenseifner, the reduce-scatter and gather), whole ones again above;
// above 32 KiB a commutative allreduce takes the ring, another one Rabenseifner. At 4 and 8
// ranks an allreduce splits at the eager limit too, takes Rabenseifner from 64 KiB and,
// when commutative, the ring above 1 MiB; 3 ranks keep the 4-nomial tree up to 256 KiB,
// then the ring. A reduce at 3 and 4 ranks keeps the 4-nomial tree up to 2 MiB
// (docs/selection.md, "The built-in tree").
TEST(Selection, TheBuiltInTreeSplitsJustAboveTheEagerLimit) {
  const SelectionTree tree = SelectionTree::Parse(SelectionTree::DefaultJson());
  tributary::SelectionFacts two, three;
  two.comm_size = 2;
  two.ranks_per_node = 2;
  three.comm_size = 3;
  three.ranks_per_node = 3;
  auto kind = [&](const tributary::SelectionFacts& f, Collective c, std::size_t bytes,
                  bool commutative = true) {
    SelectionInput in;
    in.bytes = bytes;
    in.commutative = commutative;
    return tree.Prune(f, c).Select(in).kind;
  };
  const std::pair<std::size_t, ScheduleKind> allreduce[] = {
      {8, ScheduleKind::recursive_doubling},
      {3072, ScheduleKind::recursive_doubling},
      {4032, ScheduleKind::recursive_doubling},
      {4033, ScheduleKind::rabenseifner},
      {4096, ScheduleKind::rabenseifner},
      {8064, ScheduleKind::rabenseifner},
      {8192, ScheduleKind::recursive_doubling},
      {32768, ScheduleKind::recursive_doubling},
      {32776, ScheduleKind::ring},
      {1 << 20, ScheduleKind::ring},
      {4 << 20, ScheduleKind::ring}};
  for (const auto& [bytes, want] : allreduce)
    EXPECT_EQ(kind(two, Collective::allreduce, bytes), want) << "allreduce of " << bytes << " B";
  EXPECT_EQ(kind(two, Collective::allreduce, 32776, false), ScheduleKind::rabenseifner);
  EXPECT_EQ(kind(two, Collective::allreduce, 4 << 20, false), ScheduleKind::rabenseifner);
  const std::pair<std::size_t, ScheduleKind> reduce[] = {
      {8, ScheduleKind::binomial},
      {4032, ScheduleKind::binomial},
      {4096, ScheduleKind::reduce_scatter_gather},
      {7168, ScheduleKind::reduce_scatter_gather},
      {8192, ScheduleKind::binomial},
      {1 << 20, ScheduleKind::binomial}};
  for (const auto& [bytes, want] : reduce)
    EXPECT_EQ(kind(two, Collective::reduce, bytes), want) << "reduce of " << bytes << " B";
  EXPECT_EQ(kind(three, Collective::allreduce, 4096), ScheduleKind::knomial);
  EXPECT_EQ(kind(three, Collective::allreduce, 256 << 10), ScheduleKind::knomial);
  EXPECT_EQ(kind(three, Collective::allreduce, (256 << 10) + 8), ScheduleKind::ring);
  EXPECT_EQ(kind(three, Collective::allreduce, 1 << 20), ScheduleKind::ring);
  EXPECT_EQ(kind(three, Collective::allreduce, 1 << 20, false), ScheduleKind::rabenseifner);
  EXPECT_EQ(kind(three, Collective::reduce, 4096), ScheduleKind::knomial);
  EXPECT_EQ(kind(three, Collective::reduce, 2 << 20), ScheduleKind::knomial);
  EXPECT_EQ(kind(three, Collective::reduce, (2 << 20) + 8), ScheduleKind::pipelined_tree);
  for (const int ranks : {4, 8}) {
    tributary::SelectionFacts pow2;
    pow2.comm_size = ranks;
    pow2.ranks_per_node = ranks;
    const std::pair<std::size_t, ScheduleKind> wide[] = {
        {8, ScheduleKind::knomial},          {4032, ScheduleKind::knomial},
        {4033, ScheduleKind::rabenseifner},  {8064, ScheduleKind::rabenseifner},
        {8192, ScheduleKind::knomial},       {16384, ScheduleKind::knomial},
        {32768, ScheduleKind::knomial},      {65536, ScheduleKind::knomial},
        {65544, ScheduleKind::rabenseifner}, {1 << 20, ScheduleKind::rabenseifner},
        {(1 << 20) + 8, ScheduleKind::ring}, {4 << 20, ScheduleKind::ring}};
    for (const auto& [bytes, want] : wide)
      EXPECT_EQ(kind(pow2, Collective::allreduce, bytes), want)
          << "allreduce of " << bytes << " B at " << ranks << " ranks";
    EXPECT_EQ(kind(pow2, Collective::allreduce, 4 << 20, false), ScheduleKind::rabenseifner);
    EXPECT_EQ(kind(pow2, Collective::reduce, 4096), ScheduleKind::knomial);
    // A reduce at 4 ranks keeps the 4-nomial tree (one round) up to 2 MiB, at 8 the
    // binomial tree from 64 KiB.
    EXPECT_EQ(kind(pow2, Collective::reduce, 2 << 20),
              ranks == 4 ? ScheduleKind::knomial : ScheduleKind::binomial);
    EXPECT_EQ(kind(pow2, Collective::reduce, (2 << 20) + 8), ScheduleKind::pipelined_tree);
  }
}

// The built-in tree follows the communicator's shape: the single-machine tree within one
// node, across nodes (here virtual ones of ContextOptions::ranks_per_node ranks) the tree
// the cluster model makes for that shape and network (simulation/cluster-selection.json).
TEST(Selection, TheBuiltInTreeFollowsTheShapeOfTheCommunicator) {
  tributary::SelectionFacts one, many;
  many.comm_size = 64;
  many.node_count = 4;
  many.ranks_per_node = 16;
  EXPECT_EQ(&SelectionTree::BuiltinJson(one), &SelectionTree::DefaultJson());
  EXPECT_EQ(&SelectionTree::BuiltinJson(many), &SelectionTree::BuiltinJson(many));  // made once
  EXPECT_EQ(ErrorOf(SelectionTree::BuiltinJson(many)), "");
  EXPECT_NE(SelectionTree::BuiltinJson(many).find("rabenseifner"), std::string::npos);
  const SelectionTree single = SelectionTree::Parse(SelectionTree::DefaultJson());
  const Collective all[] = {Collective::allreduce, Collective::reduce, Collective::allgather};
  for (int per_node : {0, 1, 2, 3}) {  // 0: the machine's own nodes (one here)
    tributary::ContextOptions o;
    o.ranks_per_node = per_node;
    tributary::Context ctx(o);
    const auto& f = ctx.Facts();
    const int nodes = per_node == 0 ? 1 : (Size() + per_node - 1) / per_node;
    TRIBUTARY_EXPECT_ALL(f.node_count == nodes);
    // Across nodes: the cluster model's tree on the network the Context learnt at start-up.
    const tributary::detail::NetworkProfile* net = tributary::detail::StartupNetwork();
    TRIBUTARY_EXPECT_ALL(nodes == 1 || net != nullptr);
    const SelectionTree expected = nodes > 1 && net
                                       ? SelectionTree::Parse(tributary::detail::ClusterTreeFor(
                                             f, *net, SelectionTree::ClusterJson()))
                                       : single;
    for (Collective c : all)
      TRIBUTARY_EXPECT_ALL(ctx.Selection(c).ToJson() == expected.Prune(f, c).ToJson());
    // A reduction through the chosen tree: the schedule it names, the right sum.
    tributary::AllReduce<std::vector<double>> a(ctx, "a");
    for (std::size_t n : {std::size_t(1), std::size_t(512), std::size_t(70000)}) {
      a.val.assign(n, 1.0 + Rank());
      a.StartReduce(tributary::Sum{});
      Wait(ctx, a);
      TRIBUTARY_EXPECT_ALL(a.val.size() == n && a.val.front() == Size() * (Size() + 1) / 2.0 &&
                           a.val.back() == Size() * (Size() + 1) / 2.0);
      SelectionInput in;
      in.bytes = n * sizeof(double);
      if (Size() > 1)
        TRIBUTARY_EXPECT_ALL(a.ScheduleUsed() ==
                             expected.Prune(f, Collective::allreduce).Select(in).kind);
    }
  }
}

// The model charges what each message adds where a node's ranks send at once: bytes x link,
// or the profile's burst table up to its last size. Recursive multiplying in groups of 4 at
// 64 ranks on 4 nodes of 16: its last round sends 3 messages from each of 16 ranks across
// the node's link, 47 beyond the first; every other round stays in the node.
TEST(Selection, TheModelChargesWhatABurstOfShortMessagesAdds) {
  using tributary::detail::Candidate;
  using tributary::detail::ModelTime;
  using tributary::detail::NetworkProfile;
  NetworkProfile net = NetworkProfile::Parse(SelectionTree::ClusterJson(), "built-in");
  ASSERT_TRUE(net.burst.empty());
  tributary::SelectionFacts f;
  f.comm_size = 64;
  f.node_count = 4;
  f.ranks_per_node = 16;
  Candidate rm;
  rm.kind = ScheduleKind::recursive_multiplying;
  rm.params.radix = 4;
  const double plain = ModelTime(Collective::allreduce, rm, f, 512, net);
  const double large = ModelTime(Collective::allreduce, rm, f, 1 << 20, net);
  net.burst = {{8, 0}, {512, 4e-7}, {65536, 2.2e-5}};
  EXPECT_NEAR(ModelTime(Collective::allreduce, rm, f, 512, net) - plain,
              47 * (4e-7 - 512 * net.link), 1e-12);
  EXPECT_EQ(ModelTime(Collective::allreduce, rm, f, 1 << 20, net), large);  // beyond the table
  // Never below bytes x link: a table of zeros charges what no table does.
  NetworkProfile zeros = net;
  zeros.burst = {{8, 0}, {65536, 0}};
  EXPECT_EQ(ModelTime(Collective::allreduce, rm, f, 512, zeros), plain);
  // The file format keeps it; the tree follows it (groups of 4 at 512 B only without it).
  const NetworkProfile again = NetworkProfile::Parse(net.ToJson(), "again");
  EXPECT_EQ(again.burst, net.burst);
  net.burst = {{8, 0}, {256, 1.6e-7}, {512, 4e-7}, {1024, 8.8e-7}, {65536, 2.2e-5}};
  const auto chosen = [&](const NetworkProfile& p) {
    SelectionInput in;
    in.bytes = 512;
    return SelectionTree::Parse(
               tributary::detail::ClusterTreeFor(f, p, SelectionTree::ClusterJson()))
        .Prune(f, Collective::allreduce)
        .Select(in)
        .kind;
  };
  EXPECT_EQ(chosen(zeros), ScheduleKind::recursive_multiplying);
  EXPECT_NE(chosen(net), ScheduleKind::recursive_multiplying);
  EXPECT_THROW(NetworkProfile::Parse(R"({"inter_node": [[8, 1e-6]], "intra_node": [[8, 1e-7]],
                                         "burst": [[8, -1]]})",
                                     "negative"),
               tributary::UsageError);
}

// Across nodes the Context learns the network where it starts: the first one measures
// ping-pongs between nodes and within one (every power of two from 8 B to 1 MiB) and bursts
// between nodes (8 B to 64 KiB), the later ones take what was measured; TRIBUTARY_NETWORK
// names a profile instead.
TEST(Selection, TheNetworkIsLearntAtStartUp) {
  if (Size() < 2) GTEST_SKIP() << "one rank spans one node";
  using tributary::detail::NetworkProfile;
  tributary::ContextOptions o;
  o.ranks_per_node = 1;  // virtual nodes of one rank: every rank its own node
  NetworkProfile first;
  {
    tributary::Context ctx(o);
    const NetworkProfile* net = tributary::detail::StartupNetwork();
    TRIBUTARY_EXPECT_ALL(net && net->inter.size() == tributary::detail::kProfileSizes &&
                         net->source.find("measured at start-up") != std::string::npos);
    if (!net) return;
    first = *net;
    // Times only > 0: on ranks oversubscribing a loaded machine one size's best round
    // trip can take longer than a larger one's.
    bool sizes = first.inter[0].first == 8;
    for (std::size_t i = 0; i < first.inter.size(); ++i)
      sizes = sizes && first.inter[i].second > 0 &&
              (i == 0 || first.inter[i].first == 2 * first.inter[i - 1].first);
    TRIBUTARY_EXPECT_ALL(sizes);
    // Nodes of one rank: nothing within a node to measure; that table and the library's
    // own costs stay the built-in profile's, on every rank.
    const NetworkProfile builtin = NetworkProfile::Parse(SelectionTree::ClusterJson(), "built-in");
    TRIBUTARY_EXPECT_ALL(first.intra == builtin.intra && first.send == builtin.send &&
                         first.receive == builtin.receive && first.test == builtin.test &&
                         first.combine == builtin.combine && first.injection == 0);
    // The bursts: one figure per size, none negative, none above a larger size's.
    bool bursts = first.burst.size() == tributary::detail::kBurstSizes;
    for (std::size_t i = 0; bursts && i < first.burst.size(); ++i)
      bursts = first.burst[i].first == first.inter[i].first && first.burst[i].second >= 0 &&
               (i == 0 || first.burst[i].second >= first.burst[i - 1].second);
    TRIBUTARY_EXPECT_ALL(bursts);
  }
  {
    tributary::Context again(o);  // kept: the same figures on every rank
    const NetworkProfile* net = tributary::detail::StartupNetwork();
    TRIBUTARY_EXPECT_ALL(net && net->inter == first.inter && net->intra == first.intra &&
                         net->burst == first.burst);
  }
  const std::string file = std::string(TRIBUTARY_TEST_TMP) + "/slow-network.json";
  if (Rank() == 0) {
    std::ofstream out(file);
    out << R"({"inter_node": [[8, 2e-5], [1048576, 1e-3]], "intra_node": [[8, 1e-6], [1048576, 1e-4]],
              "burst": [[8, 1e-8], [65536, 1e-5]]})";
  }
  tributary::testing::Barrier();
  setenv("TRIBUTARY_NETWORK", file.c_str(), 1);
  {
    tributary::Context slow(o);
    const NetworkProfile* net = tributary::detail::StartupNetwork();
    TRIBUTARY_EXPECT_ALL(net && net->inter.size() == 2 && net->inter[0].second == 2e-5 &&
                         net->burst.size() == 2 && net->burst[1].second == 1e-5 &&
                         net->source == file);
  }
  if (Rank() == 0) setenv("TRIBUTARY_NETWORK", (file + ".missing").c_str(), 1);
  std::string error;
  try {
    tributary::Context refused(o);
  } catch (const tributary::UsageError& e) {
    error = e.what();
  }
  TRIBUTARY_EXPECT_ALL(error.find("cannot read the network profile") != std::string::npos);
  unsetenv("TRIBUTARY_NETWORK");
}

}  // namespace
