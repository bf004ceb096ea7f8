// Data-driven (keyed) collectives through the public API: seeded random contribution
// patterns (counts per rank from zero to bursts) with distinct integers compared exactly,
// known and unknown local counts, reducer and consumer sets smaller than the communicator,
// several keys in flight, a key reused as a new generation, non-commutative operators and
// run_to_run sums giving the serial left fold's bits, and the errors.
#include <gtest/gtest.h>

#if defined(__linux__)
#include <pthread.h>
#include <sched.h>
#endif
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "mpi_test.hpp"
#include "tributary/tributary.hpp"

// Two structs of a double and an int: one type map.
struct Energy {
  double joules;
  int cells;
};
struct Heat {
  double amount;
  int count;
};
template <>
struct tributary::TypeMap<Energy> {
  using type = std::tuple<double, int>;
};
template <>
struct tributary::TypeMap<Heat> {
  using type = std::tuple<double, int>;
};

namespace {

using tributary::KeyedReduction;
using tributary::KeyOptions;
using tributary::TaskStatus;
using tributary::testing::Rank;
using tributary::testing::Size;

// The rank that contributes order index i in pattern `seed`: random, with some ranks
// getting nothing and one rank a burst.
std::vector<int> OwnersOf(std::int64_t count, unsigned seed) {
  std::mt19937 gen(seed);
  std::vector<int> owner(static_cast<std::size_t>(count));
  const int idle = Size() > 1 ? static_cast<int>(seed % static_cast<unsigned>(Size())) : -1;
  const int burst = Size() > 2 ? (idle + 1) % Size() : 0;
  for (auto& o : owner) {
    do {
      o = gen() % 3 == 0 ? burst : static_cast<int>(gen() % static_cast<unsigned>(Size()));
    } while (o == idle);
  }
  return owner;
}

std::int64_t ValueOf(std::int64_t i) { return i * 7919 + 17; }

template <class R>
void WaitKey(R& r, std::uint64_t key) {
  while (r.Check(key) != TaskStatus::complete) {
  }
}

struct Pattern {
  std::int64_t count;
  bool known_local;
  std::vector<int> reducers, consumers;
};

std::vector<Pattern> Patterns() {
  const int p = Size();
  std::vector<Pattern> out;
  for (bool known : {true, false}) {
    out.push_back({57, known, {}, {}});
    out.push_back({200, known, {p - 1}, {0}});
    if (p >= 3) out.push_back({131, known, {1, 2}, {0, p - 1}});
    out.push_back({1, known, {0}, {}});
  }
  return out;
}

TEST(Keyed, RandomPatternsSumExactly) {
  tributary::Context ctx;
  KeyedReduction<std::int64_t> r(ctx, "totals");
  unsigned seed = 1;
  for (const Pattern& pat : Patterns()) {
    for (int rep = 0; rep < 3; ++rep, ++seed) {
      const std::uint64_t key = 100 + rep;  // keys reused across patterns: new generations
      const auto owner = OwnersOf(pat.count, seed);
      std::vector<std::int64_t> mine;
      for (std::int64_t i = 0; i < pat.count; ++i)
        if (owner[static_cast<std::size_t>(i)] == Rank()) mine.push_back(i);
      std::shuffle(mine.begin(), mine.end(),
                   std::mt19937(seed + 100 * static_cast<unsigned>(Rank())));
      KeyOptions o;
      o.count = pat.count;
      o.local = pat.known_local ? static_cast<std::int64_t>(mine.size()) : -1;
      o.reducers = pat.reducers;
      o.consumers = pat.consumers;
      r.Declare(key, tributary::Sum{}, o);
      for (std::int64_t i : mine) {
        r.Contribute(key, i, ValueOf(i));
        r.Progress();
      }
      WaitKey(r, key);
      std::int64_t want = 0;
      for (std::int64_t i = 0; i < pat.count; ++i) want += ValueOf(i);
      const bool consumer =
          pat.consumers.empty() ||
          std::find(pat.consumers.begin(), pat.consumers.end(), Rank()) != pat.consumers.end();
      if (consumer) {
        EXPECT_EQ(r.Result(key), want) << "count " << pat.count << ", seed " << seed;
      } else {
        EXPECT_THROW(r.Result(key), tributary::UsageError);
      }
      tributary::testing::Barrier();  // the next declaration of the key is a new generation
    }
  }
}

TEST(Keyed, SeveralKeysInFlight) {
  tributary::Context ctx;
  KeyedReduction<std::int64_t> r(ctx, "many");
  const std::vector<std::uint64_t> keys = {7, 8, 9, 1234567};
  std::vector<std::vector<int>> owners;
  for (std::size_t k = 0; k < keys.size(); ++k) {
    owners.push_back(
        OwnersOf(40 + static_cast<std::int64_t>(k) * 13, 50 + static_cast<unsigned>(k)));
    KeyOptions o;
    o.count = 40 + static_cast<std::int64_t>(k) * 13;
    o.reducers = {static_cast<int>(k) % Size()};
    r.Declare(keys[k], tributary::Sum{}, o);
  }
  // Contributions to the keys interleaved.
  for (std::int64_t i = 0; i < 100; ++i)
    for (std::size_t k = 0; k < keys.size(); ++k)
      if (i < static_cast<std::int64_t>(owners[k].size()) &&
          owners[k][static_cast<std::size_t>(i)] == Rank())
        r.Contribute(keys[k], i, ValueOf(i) * static_cast<std::int64_t>(k + 1));
  for (std::size_t k = keys.size(); k-- > 0;) WaitKey(r, keys[k]);
  for (std::size_t k = 0; k < keys.size(); ++k) {
    std::int64_t want = 0;
    for (std::int64_t i = 0; i < static_cast<std::int64_t>(owners[k].size()); ++i)
      want += ValueOf(i) * static_cast<std::int64_t>(k + 1);
    EXPECT_EQ(r.Result(keys[k]), want);
  }
}

// a ∘ b = a·M + b (mod 2^64): neither commutative nor associative, so only the left fold
// over the order index gives the expected value.
constexpr std::uint64_t kM = 1000003;
auto Chain() {
  return tributary::MakeOp<tributary::Commutes::no>(
      [](const std::uint64_t& in, std::uint64_t& inout) { inout = in * kM + inout; },
      std::uint64_t(0));
}

TEST(Keyed, NonCommutativeOperatorsFoldLeftOverTheOrderIndex) {
  tributary::Context ctx;
  KeyedReduction<std::uint64_t> r(ctx, "chain");
  const std::int64_t count = 77;
  std::uint64_t want = 1;
  for (std::int64_t i = 1; i < count; ++i) want = want * kM + static_cast<std::uint64_t>(i + 1);
  std::vector<std::uint64_t> results;
  for (int run = 0; run < 3; ++run) {
    const auto owner = OwnersOf(count, 900 + static_cast<unsigned>(run));
    std::vector<std::int64_t> mine;
    for (std::int64_t i = 0; i < count; ++i)
      if (owner[static_cast<std::size_t>(i)] == Rank()) mine.push_back(i);
    std::shuffle(mine.begin(), mine.end(), std::mt19937(static_cast<unsigned>(run * 10 + Rank())));
    KeyOptions o;
    o.count = count;
    o.local = run == 1 ? static_cast<std::int64_t>(mine.size()) : -1;
    o.reducers = {Size() - 1};
    r.Declare(5, Chain(), o);
    for (std::int64_t i : mine) r.Contribute(5, i, static_cast<std::uint64_t>(i + 1));
    WaitKey(r, 5);
    results.push_back(r.Result(5));
    tributary::testing::Barrier();
  }
  for (std::uint64_t x : results) EXPECT_EQ(x, want);
}

TEST(Keyed, RunToRunSumsHaveTheSerialLeftFoldsBits) {
  tributary::ContextOptions options;
  options.determinism = tributary::Determinism::run_to_run;
  tributary::Context ctx(options);
  KeyedReduction<double> r(ctx, "doubles");
  const std::int64_t count = 300;
  std::vector<double> values(static_cast<std::size_t>(count));
  std::mt19937_64 gen(3);
  std::uniform_real_distribution<double> dist(-1, 1);
  for (double& v : values) v = dist(gen) * std::pow(10.0, static_cast<int>(dist(gen) * 12));
  double want = values[0];
  for (std::size_t i = 1; i < values.size(); ++i) want = want + values[i];
  for (int run = 0; run < 2; ++run) {
    const auto owner = OwnersOf(count, 77 + static_cast<unsigned>(run));
    KeyOptions o;
    o.count = count;
    r.Declare(11, tributary::Sum{}, o);
    for (std::int64_t i = count; i-- > 0;)
      if (owner[static_cast<std::size_t>(i)] == Rank())
        r.Contribute(11, i, values[static_cast<std::size_t>(i)]);
    WaitKey(r, 11);
    const double got = r.Result(11);
    EXPECT_EQ(std::memcmp(&got, &want, sizeof got), 0) << got << " vs " << want;
    tributary::testing::Barrier();
  }
}

// A producer's contribution reaching the head before the head declared the key is kept.
TEST(Keyed, ContributionsBeforeTheReducerDeclaresAreKept) {
  tributary::Context ctx;
  KeyedReduction<std::int64_t> r(ctx, "early");
  KeyOptions o;
  o.count = Size();
  o.local = 1;
  if (Rank() != 0) {
    r.Declare(3, tributary::Sum{}, o);
    r.Contribute(3, Rank(), 10 + Rank());
  }
  tributary::testing::Barrier();  // the others' messages are sent before rank 0 declares
  if (Rank() == 0) {
    r.Declare(3, tributary::Sum{}, o);
    r.Contribute(3, 0, 10);
  }
  WaitKey(r, 3);
  EXPECT_EQ(r.Result(3), 10 * Size() + Size() * (Size() - 1) / 2);
}

TEST(Keyed, InputsOfDifferentTypesWithOneTypeMap) {
  tributary::Context ctx;
  KeyedReduction<Energy> r(ctx, "mixed");
  const auto add = tributary::MakeOp<tributary::Commutes::yes>(
      [](const Energy& in, Energy& inout) {
        inout.joules = in.joules + inout.joules;
        inout.cells = in.cells + inout.cells;
      },
      Energy{0, 0});
  KeyOptions o;
  o.count = 2 * Size();
  o.local = 2;
  r.Declare(4, add, o);
  r.Contribute(4, 2 * Rank(), Energy{1.5, 1});
  r.Contribute(4, 2 * Rank() + 1, Heat{0.25, 2});
  WaitKey(r, 4);
  EXPECT_EQ(r.Result(4).joules, 1.75 * Size());
  EXPECT_EQ(r.Result(4).cells, 3 * Size());
}

#if TRIBUTARY_HAVE_HWLOC && defined(__linux__)
// Contributions from threads on CPUs of different NUMA domains fill one accumulator per
// domain, folded into the rank's message; the domains come from hwloc, here from a
// synthetic topology (HWLOC_SYNTHETIC) with one CPU per NUMA node, then one node for both.
std::int64_t DomainsFilled(const char* synthetic) {
  setenv("HWLOC_SYNTHETIC", synthetic, 1);
  tributary::Context ctx;
  KeyedReduction<std::int64_t> r(ctx, "numa");
  unsetenv("HWLOC_SYNTHETIC");
  KeyOptions o;
  o.count = 2 * Size();
  o.local = 2;
  r.Declare(1, tributary::Sum{}, o);
  auto on_cpu = [&](int cpu, std::int64_t index) {
    std::thread t([&, cpu, index] {
      cpu_set_t set;
      CPU_ZERO(&set);
      CPU_SET(cpu, &set);
      pthread_setaffinity_np(pthread_self(), sizeof set, &set);
      r.Contribute(1, index, index + 1);
    });
    t.join();
  };
  on_cpu(0, 2 * Rank());
  on_cpu(1, 2 * Rank() + 1);
  WaitKey(r, 1);
  EXPECT_EQ(r.Result(1), Size() * (2 * Size() + 1));
  return r.DomainsUsed(1);
}

TEST(Keyed, CommutativeContributionsCombineWithinNumaDomainsFirst) {
  if (std::thread::hardware_concurrency() < 2) GTEST_SKIP() << "needs two CPUs";
  EXPECT_EQ(DomainsFilled("numa:2 pu:1"), 2);
  EXPECT_EQ(DomainsFilled("numa:1 pu:2"), 1);
}
#endif

struct NoNeutral {
  static constexpr bool commutative = true;
  void operator()(const std::int64_t& in, std::int64_t& inout) const {
    inout = std::max(in, inout);
  }
};

TEST(Keyed, BadInputIsAClearError) {
  tributary::Context ctx;
  KeyedReduction<std::int64_t> r(ctx, "errors");
  KeyOptions o;
  o.count = 100;  // never reached here
  o.local = 1;
  o.reducers = {0};
  r.Declare(1, tributary::Sum{}, o);
  EXPECT_THROW(r.Contribute(1, 100, 1), tributary::UsageError);  // index out of range
  EXPECT_THROW(r.Contribute(1, -1, 1), tributary::UsageError);
  EXPECT_THROW(r.Contribute(2, 0, 1), tributary::UsageError);  // key not declared
  r.Contribute(1, Rank() % 4, 1);
  try {
    r.Contribute(1, Rank() % 4, 1);
    ADD_FAILURE() << "no error for a repeated index";
  } catch (const tributary::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("contributed twice"), std::string::npos) << e.what();
  }
  try {
    r.Contribute(1, (Rank() + 1) % 4, 1);
    ADD_FAILURE() << "no error past the local count";
  } catch (const tributary::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("local count"), std::string::npos) << e.what();
  }
  KeyOptions zero;
  zero.count = 0;
  try {
    r.Declare(9, NoNeutral{}, zero);
    ADD_FAILURE() << "no error for count 0 without a neutral element";
  } catch (const tributary::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("neutral element"), std::string::npos) << e.what();
  }
  KeyOptions bad = o;
  bad.reducers = {Size()};
  EXPECT_THROW(r.Declare(10, tributary::Sum{}, bad), tributary::UsageError);
  EXPECT_THROW(r.Declare(1, tributary::Sum{}, o),
               tributary::UsageError);  // generation 1 still runs
  tributary::testing::Barrier();
}

// Over-contribution and a repeated index across ranks: the head fails the key and tells
// every consumer, so nobody waits for a result.
TEST(Keyed, CountExceededOrIndexRepeatedFailsEveryConsumer) {
  if (Size() < 2) GTEST_SKIP() << "needs two ranks";
  tributary::Context ctx;
  KeyedReduction<std::int64_t> r(ctx, "over");
  {
    KeyOptions o;
    o.count = 3;  // every rank contributes 2 (one message of 2): more than 3 in total
    o.local = 2;
    r.Declare(1, tributary::Sum{}, o);
    r.Contribute(1, 0, 1);
    r.Contribute(1, 1, 1);
    std::string error;
    while (error.empty()) {
      try {
        if (r.Check(1) == TaskStatus::complete) break;
      } catch (const tributary::Error& e) {
        error = e.what();
      }
    }
    EXPECT_NE(error.find("contributions for a count of 3"), std::string::npos) << error;
  }
  tributary::testing::Barrier();
  {
    KeyOptions o;
    o.count = 2 * Size();
    // ordered (a non-commutative operator): the head sees every index
    r.Declare(2,
              tributary::MakeOp<tributary::Commutes::no>(
                  [](const std::int64_t& in, std::int64_t& inout) { inout = in * 3 + inout; },
                  std::int64_t(0)),
              o);
    r.Contribute(2, 0, 1);  // every rank contributes index 0
    std::string error;
    while (error.empty()) {
      try {
        if (r.Check(2) == TaskStatus::complete) break;
      } catch (const tributary::Error& e) {
        error = e.what();
      }
    }
    EXPECT_NE(error.find("order index 0 was contributed twice"), std::string::npos) << error;
  }
  tributary::testing::Barrier();
  {
    // Commutative: index 0 twice and index 1 never — the count is met, the indices are not.
    KeyOptions o;
    o.count = Size();
    o.local = 1;
    r.Declare(3, tributary::Sum{}, o);
    r.Contribute(3, Rank() == 1 ? 0 : Rank(), 1);
    std::string error;
    while (error.empty()) {
      try {
        if (r.Check(3) == TaskStatus::complete) break;
      } catch (const tributary::Error& e) {
        error = e.what();
      }
    }
    EXPECT_NE(error.find("do not cover 0.." + std::to_string(Size() - 1) + " once each"),
              std::string::npos)
        << error;
  }
  tributary::testing::Barrier();
}

TEST(Keyed, WatchdogNamesTheKeyAndTheCountReached) {
  tributary::ContextOptions options;
  options.watchdog = std::chrono::duration<double>(0.3);
  options.on_watchdog = tributary::WatchdogAction::fail;
  tributary::Context ctx(options);
  KeyedReduction<std::int64_t> r(ctx, "stuck");
  KeyOptions o;
  o.count = 10 * Size();
  o.reducers = {0};
  o.consumers = {0};
  r.Declare(42, tributary::Sum{}, o);
  r.Contribute(42, Rank(), 1);  // one of ten each
  r.Progress();                 // an unknown local count: it leaves at the next poll
  if (Rank() == 0) {
    std::string error;
    while (error.empty()) {
      try {
        r.Check(42);
      } catch (const tributary::UsageError& e) {
        error = e.what();
      }
    }
    EXPECT_NE(error.find("key 42"), std::string::npos) << error;
    EXPECT_NE(error.find(std::to_string(Size()) + " of " + std::to_string(10 * Size()) +
                         " contributions"),
              std::string::npos)
        << error;
  }
  tributary::testing::Barrier();
}

}  // namespace
