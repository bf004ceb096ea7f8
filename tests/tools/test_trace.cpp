// The timeline of reductions (ContextOptions::trace): each rank's file is valid Chrome
// trace-event JSON and holds, per object and generation, every list's contribution, the
// collect and combine phases, the network phase named by its schedule with its rounds
// inside it, in that order in time.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "mpi_test.hpp"
#include "tributary/tributary.hpp"

namespace {

using nlohmann::json;
using tributary::TaskID;
using tributary::TaskStatus;
namespace tt = tributary::testing;

std::string Prefix(const std::string& name) {
  return std::string(TRIBUTARY_TRACE_DIR) + "/" + name + "-np" + std::to_string(tt::Size());
}

json ReadTrace(const std::string& path) {
  std::ifstream in(path);
  if (!in) return json();
  try {
    return json::parse(in);
  } catch (const json::exception&) {
    return json();
  }
}

// The slices ("X") of one object lane, by generation and name.
struct Slice {
  double start = 0, end = 0;
  json args;
};

std::vector<Slice> Slices(const json& doc, const std::string& object, std::uint64_t generation,
                          const std::string& name_prefix) {
  std::vector<Slice> out;
  for (const json& e : doc["traceEvents"]) {
    if (e.value("ph", "") != "X" || !e.contains("args")) continue;
    const json& a = e["args"];
    if (a.value("object", "").find(object) == std::string::npos) continue;
    if (a.value("generation", std::uint64_t{0}) != generation) continue;
    if (e.value("name", "").rfind(name_prefix, 0) != 0) continue;
    const double ts = e["ts"].get<double>();
    out.push_back({ts, ts + e["dur"].get<double>(), a});
  }
  return out;
}

std::vector<double> Contributions(const json& doc, const std::string& object,
                                  std::uint64_t generation, std::vector<int>* lists) {
  std::vector<double> out;
  for (const json& e : doc["traceEvents"]) {
    if (e.value("ph", "") != "i" || !e.contains("args")) continue;
    const json& a = e["args"];
    if (a.value("object", "").find(object) == std::string::npos) continue;
    if (a.value("generation", std::uint64_t{0}) != generation) continue;
    out.push_back(e["ts"].get<double>());
    lists->push_back(a["list"].get<int>());
    if (e["tid"].get<int>() != a["list"].get<int>()) lists->push_back(-1);  // wrong lane
  }
  return out;
}

// Three lists per rank contribute to a regional sum, twice.
void RegionalCycles(tributary::Context& ctx, tributary::AllReduce<double>& sum, int cycles) {
  const int lists = 3;
  for (int cycle = 0; cycle < cycles; ++cycle) {
    sum.Expect(lists, tributary::Sum{});
    tributary::TaskCollection tc;
    auto& region = tc.AddRegion(lists);
    for (int i = 0; i < lists; ++i) {
      auto c = region[i].AddTask(TaskID(), [&sum, i] { return sum.Contribute(i, 1.0 + i); });
      region[i].AddTask(c, [&sum] { return sum.CheckReduce(); });
    }
    ASSERT_EQ(ctx.Execute(tc), TaskStatus::complete);
  }
}

TEST(Trace, EveryPhaseOfEveryGenerationInItsFile) {
  const std::string prefix = Prefix("phases");
  const int p = tt::Size();
  {
    tributary::ContextOptions options;
    options.trace = prefix;
    options.allreduce_schedule = tributary::ScheduleKind::recursive_doubling;
    tributary::Context ctx(options);
    tributary::AllReduce<double> sum(ctx, "regional sum");
    RegionalCycles(ctx, sum, 2);
    TRIBUTARY_EXPECT_ALL(sum.val == 6.0 * p);
  }
  const json doc = ReadTrace(prefix + "." + std::to_string(tt::Rank()) + ".json");
  TRIBUTARY_EXPECT_ALL(doc.is_object() && doc.contains("traceEvents"));
  if (!tt::AllTrue(doc.is_object() && doc.contains("traceEvents"))) return;
  TRIBUTARY_EXPECT_ALL(doc["otherData"]["rank"].get<int>() == tt::Rank());
  for (std::uint64_t g = 1; g <= 2; ++g) {
    const auto collect = Slices(doc, "'regional sum'", g, "collect");
    const auto combine = Slices(doc, "'regional sum'", g, "combine");
    // One rank sends nothing: no schedule runs ("network (none)").
    const auto network =
        Slices(doc, "'regional sum'", g, p == 1 ? "network (none)" : "network recursive_doubling");
    const auto rounds = Slices(doc, "'regional sum'", g, "round ");
    std::vector<int> lists;
    const auto contributions = Contributions(doc, "'regional sum'", g, &lists);
    TRIBUTARY_EXPECT_ALL(collect.size() == 1 && combine.size() == 1 && network.size() == 1);
    const std::vector<int> all{0, 1, 2};
    TRIBUTARY_EXPECT_ALL(lists.size() == 3 &&
                         std::is_permutation(lists.begin(), lists.end(), all.begin()));
    if (!tt::AllTrue(collect.size() == 1 && combine.size() == 1 && network.size() == 1)) return;
    // In time: armed, the contributions, the combine, the network phase with its rounds.
    bool ordered =
        collect[0].end <= combine[0].start + 0.001 && combine[0].end <= network[0].start + 0.001;
    for (double t : contributions)
      ordered = ordered && t >= collect[0].start - 0.001 && t <= collect[0].end + 0.001;
    TRIBUTARY_EXPECT_ALL(ordered);
    // With MPI the sum travels as its 8 bytes; without MPI there is no MPI_Op, so the
    // operator travels packed behind the header that carries failures.
    const int bytes = network[0].args["bytes"].get<int>();
    TRIBUTARY_EXPECT_ALL(TRIBUTARY_HAVE_MPI ? bytes == 8 : bytes > 8);
    TRIBUTARY_EXPECT_ALL(network[0].args["schedule"] == (p == 1 ? "none" : "recursive_doubling") &&
                         network[0].args["failed"] == false);
    // Recursive doubling: at least one round with a message on more than one rank, none
    // alone; every round inside the network phase, numbered from 0.
    bool inside = true;
    int index = 0;
    for (const Slice& r : rounds) {
      inside = inside && r.start >= network[0].start - 0.001 && r.end <= network[0].end + 0.001;
      inside = inside && r.args["round"] == index++;
      inside = inside && r.args["sends"].get<int>() + r.args["receives"].get<int>() > 0;
    }
    TRIBUTARY_EXPECT_ALL(inside);
    TRIBUTARY_EXPECT_ALL(p == 1 ? rounds.empty() : !rounds.empty());
  }
}

TEST(Trace, BatchesAndSeveralContextsGetTheirOwnFiles) {
  const std::string prefix = Prefix("contexts");
  const int p = tt::Size();
  {
    tributary::ContextOptions options;
    options.trace = prefix;
    tributary::Context first(options);
    tributary::Context second(options);  // the same prefix: "<prefix>-1.<rank>.json"
    tributary::Batch step(second, "step");
    auto& dt = step.Add<double>(tributary::Min{}, "dt");
    auto& mass = step.Add<double>(tributary::Sum{}, "mass");
    step.Expect(2);
    tributary::TaskCollection tc;
    auto& region = tc.AddRegion(2);
    for (int i = 0; i < 2; ++i) {
      auto c = region[i].AddTask(TaskID(), [&, i] {
        dt.Contribute(i, 1.0 + i);
        return mass.Contribute(i, 1.0);
      });
      region[i].AddTask(c, [&] { return step.CheckReduce(); });
    }
    TRIBUTARY_EXPECT_ALL(second.Execute(tc) == TaskStatus::complete);
    TRIBUTARY_EXPECT_ALL(dt.val == 1.0 && mass.val == 2.0 * p);
    tributary::AllReduce<long> count(first, "count");
    count.val = 1;
    count.StartReduce(tributary::Sum{});
    while (count.CheckReduce() != TaskStatus::complete) {
    }
    TRIBUTARY_EXPECT_ALL(count.val == p);
  }
  const std::string rank = std::to_string(tt::Rank());
  const json one = ReadTrace(prefix + "." + rank + ".json");
  const json two = ReadTrace(prefix + "-1." + rank + ".json");
  TRIBUTARY_EXPECT_ALL(one.is_object() && two.is_object());
  if (!tt::AllTrue(one.is_object() && two.is_object())) return;
  TRIBUTARY_EXPECT_ALL(Slices(one, "'count'", 1, "network").size() == 1 &&
                       Slices(one, "'step'", 1, "network").empty());
  std::vector<int> lists;
  TRIBUTARY_EXPECT_ALL(Slices(two, "'step'", 1, "network").size() == 1 &&
                       Contributions(two, "'step'", 1, &lists).size() == 4);
}

TEST(Trace, OffWritesNothing) {
  const std::string prefix = Prefix("off");
  {
    tributary::Context ctx;  // no ContextOptions::trace; TRIBUTARY_TRACE is not set here
    tributary::AllReduce<int> r(ctx, "quiet");
    r.val = 1;
    r.StartReduce(tributary::Sum{});
    while (r.CheckReduce() != TaskStatus::complete) {
    }
  }
  TRIBUTARY_EXPECT_ALL(!std::ifstream(prefix + "." + std::to_string(tt::Rank()) + ".json"));
}

}  // namespace
