// Users' contiguous containers as values (ValueTraits for any class with data() and size()):
// a type on the pattern of Parthenon's summable arrays (tests/support/summable.hpp: not
// trivially copyable) reduced elementwise in place through AllReduce, Reduce, Batch and
// AllGather, each element in the object's determinism mode, at 1-4 ranks; a container with
// resize(n) behaves as std::vector does, and one without must keep its length.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "mpi_test.hpp"
#include "reduction_test.hpp"
#include "summable.hpp"
#include "tributary/tributary.hpp"

namespace {

using tributary::AllReduce;
using tributary::Determinism;
using tributary::ExactSum;
using tributary::testing::Rank;
using tributary::testing::SameBitsEverywhere;
using tributary::testing::Size;
using tributary::testing::SummableArray;
using tributary::testing::Wait;
using Pair = SummableArray<double, 2>;

// A container whose length is set at run time and that has no resize(n).
struct RunLength {
  using value_type = double;
  int n = 2;
  double d[4] = {};
  double* data() { return d; }
  int size() const { return n; }
};
// A container that can grow: resize(n), as std::vector.
struct Growable {
  std::vector<long> v;
  long* data() { return v.data(); }
  const long* data() const { return v.data(); }
  std::size_t size() const { return v.size(); }
  void resize(std::size_t n) { v.resize(n); }
};

using PairTraits = tributary::ValueTraits<Pair>;
static_assert(tributary::kIsReducible<Pair> && !PairTraits::dynamic &&
              std::is_same_v<PairTraits::element, double>);
static_assert(tributary::ValueTraits<Growable>::dynamic &&
              std::is_same_v<tributary::ValueTraits<Growable>::element, long>);
static_assert(!tributary::ValueTraits<RunLength>::dynamic);
// The standard types keep their own traits; text is still no value.
static_assert(!tributary::kIsReducible<std::string>);
static_assert(std::is_same_v<tributary::ValueTraits<std::vector<int>>::element, int>);

std::string ErrorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const tributary::UsageError& e) {
    return e.what();
  }
  return {};
}

std::uint64_t Bits(double x) {
  std::uint64_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}

// Two sums of one pass, as Parthenon's BiCGSTAB takes them: lists of every rank give their
// partial pairs; Sum, Min and Max act per element; a hand-wired start reduces `val` itself.
TEST(Containers, SummablePairReducesElementwiseInPlace) {
  tributary::Context ctx;
  AllReduce<Pair> dots(ctx, "dots");
  const int lists = 1 + Rank() % 3;
  for (auto op : {0, 1, 2}) {
    double want0 = op == 1 ? 1e300 : op == 2 ? -1e300 : 0, want1 = want0;
    for (int r = 0; r < Size(); ++r)
      for (int l = 0; l < 1 + r % 3; ++l) {
        const double a = 3.0 * r + l, b = -2.0 * r + 5 * l;
        want0 = op == 0 ? want0 + a : op == 1 ? std::min(want0, a) : std::max(want0, a);
        want1 = op == 0 ? want1 + b : op == 1 ? std::min(want1, b) : std::max(want1, b);
      }
    if (op == 0) dots.Expect(lists, tributary::Sum{});
    if (op == 1) dots.Expect(lists, tributary::Min{});
    if (op == 2) dots.Expect(lists, tributary::Max{});
    for (int l = lists - 1; l >= 0; --l) {
      Pair p;
      p[0] = 3.0 * Rank() + l;
      p[1] = -2.0 * Rank() + 5 * l;
      dots.Contribute(l, p);
    }
    Wait(ctx, dots);
    TRIBUTARY_EXPECT_ALL(dots.val[0] == want0 && dots.val[1] == want1);
  }
  dots.val[0] = 1.0;
  dots.val[1] = Rank();
  dots.StartReduce(tributary::Sum{});
  Wait(ctx, dots);
  TRIBUTARY_EXPECT_ALL(dots.val[0] == Size() && dots.val[1] == Size() * (Size() - 1) / 2.0);
  const std::string name = dots.Name();
  EXPECT_NE(name.find("container<double>"), std::string::npos) << name;
}

TEST(Containers, ReduceLeavesTheOtherRanksValAlone) {
  tributary::Context ctx;
  tributary::Reduce<SummableArray<int, 3>> r(ctx, "to the last rank");
  const int root = Size() - 1;
  for (int c = 0; c < 3; ++c) r.val[c] = Rank() * 10 + c;
  r.StartReduce(root, tributary::Max{});
  Wait(ctx, r);
  bool ok = true;
  for (int c = 0; c < 3; ++c)
    ok = ok && r.val[c] == (Rank() == root ? (Size() - 1) * 10 + c : Rank() * 10 + c);
  TRIBUTARY_EXPECT_ALL(ok);
}

// Terms whose rounded sum shows its order in the bits: triples of a large term (2^53 and
// more), a small one that a rounded sum beside it loses, and the large one negated.
double Term(int e, int g) {
  const double big = std::ldexp(1.0 + 0.25 * (g / 3 % 3), 53 + g / 3 % 2);
  if (g % 3 == 1) return std::ldexp(1.0 + e + 0.0625 * g, -3 - g % 4);
  return g % 3 ? -big : big;
}

// rank_count_independent: each element is the correctly rounded sum of all terms, the
// same bits whatever the split of 12 terms over ranks and lists; run_to_run: the same bits
// whatever order the lists contribute in.
TEST(Containers, DeterminismModesHoldPerElement) {
  constexpr int kTerms = 12;
  ExactSum exact[2];
  double forward[2] = {0, 0};
  for (int g = 0; g < kTerms; ++g)
    for (int e = 0; e < 2; ++e) {
      exact[e] += Term(e, g);
      forward[e] += Term(e, g);
    }
  ASSERT_TRUE(Bits(forward[0]) != Bits(exact[0].Round()) ||
              Bits(forward[1]) != Bits(exact[1].Round()));
  tributary::ContextOptions o;
  o.determinism = Determinism::rank_count_independent;
  tributary::Context ctx(o);
  AllReduce<Pair> dots(ctx, "exact pair");
  // Terms dealt to the ranks in contiguous ranges, each rank's cut into one or two lists.
  const int first = kTerms * Rank() / Size(), last = kTerms * (Rank() + 1) / Size();
  for (int lists = 1; lists <= 2; ++lists) {
    const int n = last > first ? lists : 0;
    dots.Expect(n, tributary::Sum{});
    for (int l = 0; l < n; ++l) {
      Pair p;
      const int mid = (first + last) / 2;
      const int a = lists == 1 ? first : l == 0 ? first : mid;
      const int b = lists == 1 ? last : l == 0 ? mid : last;
      for (int g = a; g < b; ++g)
        for (int e = 0; e < 2; ++e) p[e] += Term(e, g);
      dots.Contribute(l, p);
    }
    Wait(ctx, dots);
    // Each list's partial was rounded where the list summed it: only the ranks' and lists'
    // partials are summed exactly; a split that keeps every term alone is exact overall.
    ExactSum partials[2];
    for (int r = 0; r < Size(); ++r) {
      const int f = kTerms * r / Size(), t = kTerms * (r + 1) / Size();
      if (t <= f) continue;
      const int mid = (f + t) / 2;
      for (int l = 0; l < lists; ++l) {
        const int a = lists == 1 ? f : l == 0 ? f : mid;
        const int b = lists == 1 ? t : l == 0 ? mid : t;
        double s[2] = {0, 0};
        for (int g = a; g < b; ++g)
          for (int e = 0; e < 2; ++e) s[e] += Term(e, g);
        for (int e = 0; e < 2; ++e) partials[e] += s[e];
      }
    }
    TRIBUTARY_EXPECT_ALL(Bits(dots.val[0]) == Bits(partials[0].Round()) &&
                         Bits(dots.val[1]) == Bits(partials[1].Round()));
  }
  // One list per term: exact overall, the same bits at every rank count.
  dots.Expect(last - first, tributary::Sum{});
  for (int g = first; g < last; ++g) {
    Pair p;
    for (int e = 0; e < 2; ++e) p[e] = Term(e, g);
    dots.Contribute(g - first, p);
  }
  Wait(ctx, dots);
  TRIBUTARY_EXPECT_ALL(Bits(dots.val[0]) == Bits(exact[0].Round()) &&
                       Bits(dots.val[1]) == Bits(exact[1].Round()));
  // ExactSum partials per element (Contribute(list, std::vector<ExactSum>)).
  dots.Expect(1, tributary::Sum{});
  std::vector<ExactSum> mine(2);
  for (int g = first; g < last; ++g)
    for (int e = 0; e < 2; ++e) mine[static_cast<std::size_t>(e)] += Term(e, g);
  dots.Contribute(0, mine);
  Wait(ctx, dots);
  TRIBUTARY_EXPECT_ALL(Bits(dots.val[0]) == Bits(exact[0].Round()) &&
                       Bits(dots.val[1]) == Bits(exact[1].Round()));

  tributary::ContextOptions rr;
  rr.determinism = Determinism::run_to_run;
  tributary::Context rctx(rr);
  AllReduce<Pair> repeat(rctx, "run_to_run pair");
  std::vector<double> first_bits;
  for (int rep = 0; rep < 4; ++rep) {
    repeat.Expect(3, tributary::Sum{});
    for (int k = 0; k < 3; ++k) {
      const int l = rep % 2 ? 2 - k : (k + rep) % 3;
      Pair p;
      for (int e = 0; e < 2; ++e) p[e] = Term(e, 3 * Rank() + l);
      repeat.Contribute(l, p);
    }
    Wait(rctx, repeat);
    std::vector<double> got = {repeat.val[0], repeat.val[1]};
    if (rep == 0) first_bits = got;
    TRIBUTARY_EXPECT_ALL(std::memcmp(got.data(), first_bits.data(), 2 * sizeof(double)) == 0 &&
                         SameBitsEverywhere(got));
  }
}

// A batch member of container type travels beside a scalar member; AllGather gathers
// containers in rank order.
TEST(Containers, BatchMembersAndAllGather) {
  tributary::Context ctx;
  tributary::Batch batch(ctx, "batch");
  auto& pair = batch.Add<Pair>(tributary::Sum{}, "pair");
  auto& count = batch.Add<int>(tributary::Sum{}, "count");
  batch.Expect(2);
  for (int l = 0; l < 2; ++l) {
    Pair p;
    p[0] = l + 1;
    p[1] = Rank();
    pair.Contribute(l, p);
    count.Contribute(l, 1);
  }
  Wait(ctx, batch);
  TRIBUTARY_EXPECT_ALL(pair.val[0] == 3.0 * Size() && pair.val[1] == Size() * (Size() - 1.0) &&
                       count.val == 2 * Size());

  tributary::AllGather<Pair> gather(ctx, "gather");
  gather.local[0] = Rank();
  gather.local[1] = -Rank();
  gather.StartReduce();
  Wait(ctx, gather);
  bool ok = static_cast<int>(gather.val.size()) == Size();
  for (int r = 0; ok && r < Size(); ++r)
    ok = gather.val[static_cast<std::size_t>(r)][0] == r &&
         gather.val[static_cast<std::size_t>(r)][1] == -r;
  TRIBUTARY_EXPECT_ALL(ok);
}

// With resize(n) the length follows the lists' values as a std::vector's does; without it a
// `val` whose length differs from a default-constructed value's is refused at the start, and
// so are partials of another length.
TEST(Containers, LengthsOfGrowableAndFixedContainers) {
  tributary::Context ctx;
  AllReduce<Growable> grow(ctx, "growable");
  grow.Expect(2, tributary::Sum{});
  for (int l = 0; l < 2; ++l) grow.Contribute(l, Growable{{1, 2, 3, 4, 5}});
  Wait(ctx, grow);
  const std::vector<long> twice = {2L * Size(), 4L * Size(), 6L * Size(), 8L * Size(),
                                   10L * Size()};
  TRIBUTARY_EXPECT_ALL(grow.val.v == twice);

  AllReduce<RunLength> fixed(ctx, "run length");
  fixed.val.n = 3;
  std::string e = ErrorOf([&] { fixed.StartReduce(tributary::Sum{}); });
  EXPECT_NE(e.find("without resize(n) must hold the same number"), std::string::npos) << e;
  e = ErrorOf([&] { fixed.Expect(1, tributary::Sum{}); });
  EXPECT_NE(e.find("without resize(n)"), std::string::npos) << e;
  fixed.val.n = 2;
  fixed.Expect(1, tributary::Sum{});
  RunLength three;
  three.n = 3;
  e = ErrorOf([&] { fixed.Contribute(0, three); });
  EXPECT_NE(e.find("values of 3 elements to a value of 2"), std::string::npos) << e;
  AllReduce<RunLength> again(ctx, "run length, again");
  again.val.d[0] = 1.5;
  again.val.d[1] = Rank();
  again.StartReduce(tributary::Sum{});
  Wait(ctx, again);
  TRIBUTARY_EXPECT_ALL(again.val.d[0] == 1.5 * Size() &&
                       again.val.d[1] == Size() * (Size() - 1) / 2.0);
}

}  // namespace
