// Reduction objects' StartReduce and CheckReduce given to TaskList::AddTask as member
// function pointers, the way task-list codes write them:
//   tl.AddTask(dep, &AllReduce<Real>::StartReduce, &r, MPI_SUM);
//   tl.AddTask(start, &AllReduce<Real>::CheckReduce, &r);
// StartReduce is a template over the operator (and overloaded for Reduce), and CheckReduce
// lives in a base class: each spelling must compile, and the task list must run.
#include <gtest/gtest.h>

#include <vector>

#include "mpi_test.hpp"
#include "tributary/tributary.hpp"

namespace {

using tributary::TaskID;
using tributary::TaskStatus;
using tributary::testing::Rank;
using tributary::testing::Size;

double RankSum() { return Size() * (Size() + 1) / 2.0; }

// Builds one list with `build(list)` and runs it on `ctx`.
template <class Build>
TaskStatus RunOneList(tributary::Context& ctx, Build build) {
  tributary::TaskCollection tc;
  tributary::TaskRegion& region = tc.AddRegion(1);
  build(region[0]);
  return ctx.Execute(tc);
}

#if TRIBUTARY_HAVE_MPI
TEST(MemberTasks, AllReduceWithMpiOp) {
  tributary::Context ctx;
  tributary::AllReduce<double> r(ctx, "r");
  double seen = -1;
  for (int cycle = 0; cycle < 3; ++cycle) {  // reused every cycle, as a driver does
    const auto status = RunOneList(ctx, [&](tributary::TaskList& tl) {
      auto fill = tl.AddTask(TaskID(), [&] { r.val = Rank() + 1.0 + cycle; });
      auto start = tl.AddTask(fill, &tributary::AllReduce<double>::StartReduce, &r, MPI_SUM);
      auto check = tl.AddTask(start, &tributary::AllReduce<double>::CheckReduce, &r);
      tl.AddTask(check, [&] { seen = r.val; });
    });
    TRIBUTARY_EXPECT_ALL(status == TaskStatus::complete);
    TRIBUTARY_EXPECT_ALL(seen == RankSum() + cycle * Size());
  }
}

TEST(MemberTasks, ReduceWithRootAndMpiOp) {
  tributary::Context ctx;
  tributary::Reduce<double> r(ctx, "r");
  double seen = -1;
  const int root = Size() - 1;
  const auto status = RunOneList(ctx, [&](tributary::TaskList& tl) {
    auto fill = tl.AddTask(TaskID(), [&] { r.val = Rank() + 1.0; });
    auto start =
        tl.AddTask(fill, "start", &tributary::Reduce<double>::StartReduce, &r, root, MPI_SUM);
    auto check = tl.AddTask(start, "check", &tributary::Reduce<double>::CheckReduce, &r);
    tl.AddTask(check, [&] { seen = r.val; });
  });
  TRIBUTARY_EXPECT_ALL(status == TaskStatus::complete);
  TRIBUTARY_EXPECT_ALL(Rank() != root || seen == RankSum());
}
#endif

// Tributary's own operators pick the template's argument the same way (and this is the
// spelling of the serial build, which has no MPI_Op).
TEST(MemberTasks, AllReduceWithTributaryOperator) {
  tributary::Context ctx;
  tributary::AllReduce<double> sum(ctx, "sum");
  tributary::AllReduce<int> max(ctx, "max");
  double seen_sum = -1;
  int seen_max = -1;
  const auto status = RunOneList(ctx, [&](tributary::TaskList& tl) {
    auto fill = tl.AddTask(TaskID(), [&] {
      sum.val = Rank() + 1.0;
      max.val = Rank();
    });
    auto s1 = tl.AddTask(fill, &tributary::AllReduce<double>::StartReduce, &sum, tributary::Sum{});
    auto s2 = tl.AddTask(fill, "start max", &tributary::AllReduce<int>::StartReduce, &max,
                         tributary::Max{});
    auto c1 = tl.AddTask(s1, &tributary::AllReduce<double>::CheckReduce, &sum);
    auto c2 = tl.AddTask(s2, "check max", &tributary::AllReduce<int>::CheckReduce, &max);
    tl.AddTask(c1 & c2, [&] {
      seen_sum = sum.val;
      seen_max = max.val;
    });
  });
  TRIBUTARY_EXPECT_ALL(status == TaskStatus::complete);
  TRIBUTARY_EXPECT_ALL(seen_sum == RankSum());
  TRIBUTARY_EXPECT_ALL(seen_max == Size() - 1);
}

TEST(MemberTasks, AllGather) {
  tributary::Context ctx;
  tributary::AllGather<int> g(ctx, "g");
  std::vector<int> seen;
  const auto status = RunOneList(ctx, [&](tributary::TaskList& tl) {
    auto fill = tl.AddTask(TaskID(), [&] { g.local = 10 * Rank(); });
    auto start = tl.AddTask(fill, &tributary::AllGather<int>::StartReduce, &g);
    auto check = tl.AddTask(start, &tributary::AllGather<int>::CheckReduce, &g);
    tl.AddTask(check, [&] { seen = g.val; });
  });
  TRIBUTARY_EXPECT_ALL(status == TaskStatus::complete);
  bool ok = static_cast<int>(seen.size()) == Size();
  for (std::size_t r = 0; ok && r < seen.size(); ++r) ok = seen[r] == 10 * static_cast<int>(r);
  TRIBUTARY_EXPECT_ALL(ok);
}

TEST(MemberTasks, Batch) {
  tributary::Context ctx;
  tributary::Batch batch(ctx, "batch");
  auto& total = batch.Add<double>(tributary::Sum{}, "total");
  auto& lowest = batch.Add<int>(tributary::Min{}, "lowest");
  double seen_total = -1;
  int seen_lowest = -1;
  const auto status = RunOneList(ctx, [&](tributary::TaskList& tl) {
    auto fill = tl.AddTask(TaskID(), [&] {
      total.val = Rank() + 1.0;
      lowest.val = Rank() + 5;
    });
    auto start = tl.AddTask(fill, &tributary::Batch::StartReduce, &batch);
    auto c1 = tl.AddTask(start, &tributary::Batch::CheckReduce, &batch);
    auto c2 = tl.AddTask(start, &tributary::BatchMember<double>::CheckReduce, &total);
    tl.AddTask(c1 & c2, [&] {
      seen_total = total.val;
      seen_lowest = lowest.val;
    });
  });
  TRIBUTARY_EXPECT_ALL(status == TaskStatus::complete);
  TRIBUTARY_EXPECT_ALL(seen_total == RankSum());
  TRIBUTARY_EXPECT_ALL(seen_lowest == 5);
}

// The task engine alone: an overloaded member is chosen by the arguments' types, and a
// single member whose parameter types are exactly the arguments' (where both AddTask
// overloads apply) is not ambiguous.
struct Stepper {
  int ints = 0;
  double doubles = 0;
  TaskStatus Step(int k) {
    ints += k;
    return TaskStatus::complete;
  }
  TaskStatus Step(double x) {
    doubles += x;
    return TaskStatus::complete;
  }
  template <class T>
  TaskStatus Twice(T x) {
    doubles += 2 * x;
    return TaskStatus::complete;
  }
  TaskStatus Only(int k) {
    ints += 100 * k;
    return TaskStatus::complete;
  }
};

TEST(MemberTasks, OverloadsChosenByArguments) {
  Stepper s;
  tributary::TaskCollection tc;
  auto& tl = tc.AddRegion(1)[0];
  auto a = tl.AddTask(TaskID(), &Stepper::Step, &s, 2);
  auto b = tl.AddTask(a, &Stepper::Step, &s, 0.5);
  auto c = tl.AddTask(b, "twice", &Stepper::Twice, &s, 1.25);
  auto d = tl.AddTask(c, &Stepper::Only, &s, 1);
  tl.AddTask(d, "only", &Stepper::Only, &s, 2);
  EXPECT_EQ(tc.Execute(), TaskStatus::complete);
  EXPECT_EQ(s.ints, 302);
  EXPECT_EQ(s.doubles, 3.0);
}

}  // namespace
