// The ordering contract: objects are created in the same order on every rank; their starts
// may come in any order, many in flight at once, generation after generation, and no
// communicator is created per cycle (counted with PMPI wrappers).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <memory>
#include <numeric>
#include <random>
#include <vector>

#include "mpi_test.hpp"
#include "tributary/tributary.hpp"

#if TRIBUTARY_HAVE_MPI
// PMPI interposition: every way of creating a communicator is counted.
namespace {
std::atomic<int> g_comm_creations{0};
}
extern "C" {
int MPI_Comm_dup(MPI_Comm comm, MPI_Comm* out) {
  ++g_comm_creations;
  return PMPI_Comm_dup(comm, out);
}
int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm* out) {
  ++g_comm_creations;
  return PMPI_Comm_split(comm, color, key, out);
}
int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm* out) {
  ++g_comm_creations;
  return PMPI_Comm_create(comm, group, out);
}
int MPI_Comm_idup(MPI_Comm comm, MPI_Comm* out, MPI_Request* request) {
  ++g_comm_creations;
  return PMPI_Comm_idup(comm, out, request);
}
int MPI_Comm_split_type(MPI_Comm comm, int type, int key, MPI_Info info, MPI_Comm* out) {
  ++g_comm_creations;
  return PMPI_Comm_split_type(comm, type, key, info, out);
}
}
int CommCreations() { return g_comm_creations.load(); }
#else
int CommCreations() { return 0; }
#endif

namespace {

using tributary::TaskStatus;
using tributary::testing::Rank;
using tributary::testing::Size;

struct Pair {
  int a;
  double b;
};
struct PairOp {
  static constexpr bool commutative = true;
  static Pair identity() { return {0, 0.0}; }
  void operator()(const Pair& in, Pair& inout) const {
    inout.a += in.a;
    inout.b = std::max(inout.b, in.b);
  }
};

TEST(Ordering, EightObjectsStartedInADifferentRandomOrderOnEveryRank) {
  tributary::Context ctx;
  const int after_context = CommCreations();
  // Eight objects of different types and lengths, created in the same order everywhere.
  tributary::AllReduce<double> o0(ctx, "o0");
  tributary::AllReduce<std::vector<double>> o1(ctx, "o1");
  tributary::AllReduce<int> o2(ctx, "o2");
  tributary::AllReduce<std::array<long, 5>> o3(ctx, "o3");
  tributary::Reduce<std::vector<int>> o4(ctx, "o4");
  tributary::AllReduce<Pair> o5(ctx, "o5");
  tributary::AllGather<float> o6(ctx, "o6");
  tributary::AllReduce<std::vector<long>> o7(ctx, "o7");
  std::mt19937 rng(1234u + 7919u * static_cast<unsigned>(Rank()));
  const int p = Size(), me = Rank();
  bool all_ok = true;
  for (int gen = 0; gen < 60; ++gen) {
    std::array<int, 8> order;
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), rng);
    const int root = gen % p;
    for (int k : order) {
      switch (k) {
        case 0:
          o0.val = me + gen;
          o0.StartReduce(tributary::Sum{});
          break;
        case 1:
          o1.val.assign(static_cast<std::size_t>(3 + gen % 5), 1.0 * me);
          o1.StartReduce(tributary::Max{});
          break;
        case 2:
          o2.Expect(me % 2 ? 0 : 2, tributary::Sum{});
          if (me % 2 == 0) {
            o2.Contribute(1, gen);
            o2.Contribute(0, 1);
          }
          break;
        case 3:
          o3.val.fill(me - gen);
          o3.StartReduce(tributary::Min{});
          break;
        case 4:
          o4.val.assign(static_cast<std::size_t>(1000 + gen), 1);
          o4.StartReduce(root, tributary::Sum{});
          break;
        case 5:
          o5.val = {1, 0.5 * me};
          o5.StartReduce(PairOp{});
          break;
        case 6:
          o6.local = static_cast<float>(me * gen);
          o6.StartReduce();
          break;
        case 7:
          o7.val.assign(static_cast<std::size_t>(1 + (gen * 37) % 4096), gen);
          o7.StartReduce(tributary::Sum{});
          break;
      }
    }
    // Poll in yet another order until all are done.
    std::shuffle(order.begin(), order.end(), rng);
    int done = 0;
    std::array<bool, 8> finished{};
    while (done < 8) {
      for (int k : order) {
        if (finished[static_cast<std::size_t>(k)]) continue;
        TaskStatus s = TaskStatus::incomplete;
        switch (k) {
          case 0:
            s = o0.CheckReduce();
            break;
          case 1:
            s = o1.CheckReduce();
            break;
          case 2:
            s = o2.CheckReduce();
            break;
          case 3:
            s = o3.CheckReduce();
            break;
          case 4:
            s = o4.CheckReduce();
            break;
          case 5:
            s = o5.CheckReduce();
            break;
          case 6:
            s = o6.CheckReduce();
            break;
          case 7:
            s = o7.CheckReduce();
            break;
        }
        if (s == TaskStatus::complete) {
          finished[static_cast<std::size_t>(k)] = true;
          ++done;
        }
      }
    }
    bool ok = o0.val == p * gen + p * (p - 1) / 2.0;
    ok = ok && o1.val.size() == static_cast<std::size_t>(3 + gen % 5) && o1.val[0] == p - 1;
    ok = ok && o2.val == ((p + 1) / 2) * (gen + 1);
    ok = ok && o3.val[4] == -gen;
    ok = ok && (me != root ||
                (o4.val.size() == static_cast<std::size_t>(1000 + gen) && o4.val.back() == p));
    ok = ok && o5.val.a == p && o5.val.b == 0.5 * (p - 1);
    ok = ok && o6.val.size() == static_cast<std::size_t>(p) &&
         o6.val[static_cast<std::size_t>(p - 1)] == static_cast<float>((p - 1) * gen);
    ok = ok && o7.val.back() == static_cast<long>(gen) * p;
    all_ok = all_ok && ok;
  }
  TRIBUTARY_EXPECT_ALL(all_ok);
  TRIBUTARY_EXPECT_ALL(CommCreations() == after_context);
}

TEST(Ordering, NoCommunicatorIsCreatedPerCycleAndTheContextsAreBounded) {
  const int before = CommCreations();
  tributary::ContextOptions options;
  options.communicator_pool = 4;
  tributary::Context ctx(options);
  const int per_context = CommCreations() - before;
  EXPECT_EQ(per_context, ctx.CommunicatorsCreated());
#if TRIBUTARY_HAVE_MPI
  // The Context's communicator and three more for the MPI library's schedule; beside
  // several ranks, the shared-memory split that tells the built-in selection tree how many
  // nodes there are (freed at once on one node).
  EXPECT_EQ(per_context, 1 + 3 + (Size() > 1 ? 1 : 0));
#endif
  for (int cycle = 0; cycle < 500; ++cycle) {
    tributary::AllReduce<int> r(ctx);
    r.val = 1;
    r.StartReduce(tributary::Sum{});
    while (r.CheckReduce() != TaskStatus::complete) {
    }
  }
  TRIBUTARY_EXPECT_ALL(CommCreations() - before == per_context);
}

// Objects an application holds in dozens: 100 live reductions of three kinds, started in a
// different random order on every rank and polled in yet another, over several generations,
// with some destroyed and created again in between (slots reused). No communicator is
// created for any of them. With the MPI library forced and a pool of 4, the first four run
// the library's collectives on their own communicators while the others run Tributary's
// schedules on the Context's.
void HundredLiveObjects(bool forced_library) {
  tributary::ContextOptions options;
  if (forced_library) {
    options.communicator_pool = 4;
    options.allreduce_schedule = tributary::ScheduleKind::mpi_library;
    options.reduce_schedule = tributary::ScheduleKind::mpi_library;
  }
  tributary::Context ctx(options);
  const int after_context = CommCreations();
  constexpr int kObjects = 100;
  // Kind by index: 0 a scalar sum, 1 a vector max (sizes up to 16 KiB), 2 a reduce to a root.
  std::vector<std::unique_ptr<tributary::AllReduce<double>>> scalars(kObjects);
  std::vector<std::unique_ptr<tributary::AllReduce<std::vector<int>>>> vectors(kObjects);
  std::vector<std::unique_ptr<tributary::Reduce<long>>> reduces(kObjects);
  auto make = [&](int k) {
    const std::string name = "o" + std::to_string(k);
    if (k % 3 == 0) scalars[k] = std::make_unique<tributary::AllReduce<double>>(ctx, name);
    if (k % 3 == 1)
      vectors[k] = std::make_unique<tributary::AllReduce<std::vector<int>>>(ctx, name);
    if (k % 3 == 2) reduces[k] = std::make_unique<tributary::Reduce<long>>(ctx, name);
  };
  auto drop = [&](int k) {
    scalars[k].reset();
    vectors[k].reset();
    reduces[k].reset();
  };
  for (int k = 0; k < kObjects; ++k) make(k);
  std::mt19937 rng(99u + 7919u * static_cast<unsigned>(Rank()));
  const int p = Size(), me = Rank();
  bool ok = true;
  int library = 0, own = 0;
  for (int gen = 0; gen < 6; ++gen) {
    if (gen == 3)  // ten objects go and come back, in the same order on every rank
      for (int k = 10; k < 20; ++k) {
        drop(k);
        make(k);
      }
    std::vector<int> order(kObjects);
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), rng);
    const int root = gen % p;
    for (int k : order) {
      if (scalars[k]) {
        scalars[k]->val = me + k + gen;
        scalars[k]->StartReduce(tributary::Sum{});
      } else if (vectors[k]) {
        vectors[k]->val.assign(static_cast<std::size_t>(1 + (k * 37 + gen) % 4096), me * k);
        vectors[k]->StartReduce(tributary::Max{});
      } else {
        reduces[k]->val = k + gen;
        reduces[k]->StartReduce(root, tributary::Sum{});
      }
    }
    std::shuffle(order.begin(), order.end(), rng);
    std::vector<char> done(kObjects, 0);
    for (int left = kObjects; left > 0;)
      for (int k : order) {
        if (done[k]) continue;
        const TaskStatus s = scalars[k]   ? scalars[k]->CheckReduce()
                             : vectors[k] ? vectors[k]->CheckReduce()
                                          : reduces[k]->CheckReduce();
        if (s == TaskStatus::complete) {
          done[k] = 1;
          --left;
        }
      }
    for (int k = 0; k < kObjects; ++k) {
      tributary::ScheduleKind used = tributary::ScheduleKind::mpi_library;
      if (scalars[k]) {
        ok = ok && scalars[k]->val == p * (k + gen) + p * (p - 1) / 2.0;
        used = scalars[k]->ScheduleUsed();
      } else if (vectors[k]) {
        ok = ok && vectors[k]->val.size() == static_cast<std::size_t>(1 + (k * 37 + gen) % 4096) &&
             vectors[k]->val.back() == (p - 1) * k;
        used = vectors[k]->ScheduleUsed();
      } else {
        ok = ok && (me != root || reduces[k]->val == static_cast<long>(p) * (k + gen));
        used = reduces[k]->ScheduleUsed();
      }
      (used == tributary::ScheduleKind::mpi_library ? library : own) += 1;
    }
  }
  TRIBUTARY_EXPECT_ALL(ok);
  // Slots 0-3 hold the library's lanes: objects 0-3 every generation.
  TRIBUTARY_EXPECT_ALL(forced_library ? library == 4 * 6 : library == 0);
  TRIBUTARY_EXPECT_ALL(CommCreations() == after_context);
}

TEST(Ordering, AHundredLiveObjectsStartedInDifferentOrdersOnEveryRank) {
  HundredLiveObjects(false);
}

TEST(Ordering, AHundredLiveObjectsWithTheMpiLibraryForcedOnAPoolOfFour) {
  HundredLiveObjects(true);
}

}  // namespace
