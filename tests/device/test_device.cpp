// Device partials through the public API: every reducer over Views of several sizes and
// shapes (empty, rank 1-3, non-contiguous subviews), MinLoc / MaxLoc ties, a user reducer
// serving the device, the rank-local combine and the network, multi-value results, list
// completion in shuffled orders, and the errors. Results must have the same bits on every
// rank; integer, min/max and logical results equal a host reference exactly, and sums equal
// a reference summed in the documented order (checked exactly on a one-rank Context, where
// no network order enters).
#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "device_data.hpp"
#include "mpi_test.hpp"
#include "reduction_test.hpp"
#include "tributary/kokkos.hpp"

namespace {

using tributary::AllReduce;
using tributary::TaskStatus;
using tributary::ValueLoc;
using tributary::testing::IntAt;
using tributary::testing::ListsOn;
using tributary::testing::Rank;
using tributary::testing::SameBitsEverywhere;
using tributary::testing::Size;
using tributary::testing::Wait;

using Exec = Kokkos::DefaultExecutionSpace;
using Mem = Exec::memory_space;

template <class E>
E ValueAt(int r, int l, std::int64_t i) {
  if constexpr (std::is_same_v<E, bool>) {
    return IntAt(r, l, i) % 7 != 0;
  } else if constexpr (std::is_floating_point_v<E>) {
    return static_cast<E>(IntAt(r, l, i)) / 8;  // exact: any order gives the same sum
  } else {
    return static_cast<E>(IntAt(r, l, i));
  }
}

// A device View of n elements filled with ValueAt(r, l, .).
template <class E>
Kokkos::View<E*, Mem> MakeData(int r, int l, std::int64_t n) {
  Kokkos::View<E*, Mem> v("data", static_cast<std::size_t>(n));
  auto h = Kokkos::create_mirror_view(v);
  for (std::int64_t i = 0; i < n; ++i) h(static_cast<std::size_t>(i)) = ValueAt<E>(r, l, i);
  Kokkos::deep_copy(v, h);
  return v;
}

// The host reference over every list of every rank.
template <class E, class Op>
E Reference(const Op& op, std::int64_t n) {
  E acc = Op::template Identity<E>();
  for (int r = 0; r < Size(); ++r)
    for (int l = 0; l < ListsOn(r); ++l)
      for (std::int64_t i = 0; i < n; ++i) op(ValueAt<E>(r, l, i), acc);
  return acc;
}

// One generation: every list of this rank contributes its View on the device.
template <class E, class Op>
E RunViews(tributary::Context& ctx, AllReduce<E>& r, const Op& op, std::int64_t n) {
  std::vector<Kokkos::View<E*, Mem>> data;
  for (int l = 0; l < ListsOn(Rank()); ++l) data.push_back(MakeData<E>(Rank(), l, n));
  r.Expect(ListsOn(Rank()), op);
  for (int l = 0; l < ListsOn(Rank()); ++l)
    EXPECT_EQ(r.ContributeView(l, Exec(), data[l], op), TaskStatus::complete);
  Wait(ctx, r);
  return r.val;
}

template <class E, class Op>
void CheckReducer(const Op& op) {
  tributary::Context ctx;
  AllReduce<E> r(ctx, "device");
  for (std::int64_t n : {0, 1, 7, 8, 9, 1023, 1024, 1025, 5000}) {
    const E got = RunViews(ctx, r, op, n);
    EXPECT_EQ(got, (Reference<E>(op, n))) << "n = " << n;
    EXPECT_TRUE(SameBitsEverywhere(std::vector<E>{got}));
  }
}

TEST(DevicePartials, SumOfDoubles) { CheckReducer<double>(tributary::Sum{}); }
TEST(DevicePartials, SumOfInt64) { CheckReducer<std::int64_t>(tributary::Sum{}); }
TEST(DevicePartials, SumOfFloats) { CheckReducer<float>(tributary::Sum{}); }
TEST(DevicePartials, MinAndMax) {
  CheckReducer<double>(tributary::Min{});
  CheckReducer<double>(tributary::Max{});
  CheckReducer<int>(tributary::Min{});
  CheckReducer<int>(tributary::Max{});
}
TEST(DevicePartials, LogicalAndBitwise) {
  CheckReducer<int>(tributary::LAnd{});
  CheckReducer<int>(tributary::LOr{});
  CheckReducer<std::uint32_t>(tributary::BAnd{});
  CheckReducer<std::uint32_t>(tributary::BOr{});
}

TEST(DevicePartials, Product) {
  // Values in {1, 2, -1} keep products exact.
  tributary::Context ctx;
  AllReduce<double> r(ctx, "prod");
  const int lists = ListsOn(Rank());
  std::vector<Kokkos::View<double*, Mem>> data;
  double expect = 1;
  for (int q = 0; q < Size(); ++q)
    for (int l = 0; l < ListsOn(q); ++l)
      for (int i = 0; i < 6; ++i)
        expect *= (q + l + i) % 5 == 0 ? 2.0 : ((q + l + i) % 7 == 0 ? -1.0 : 1.0);
  for (int l = 0; l < lists; ++l) {
    Kokkos::View<double*, Mem> v("p", 6);
    auto h = Kokkos::create_mirror_view(v);
    for (int i = 0; i < 6; ++i)
      h(i) = (Rank() + l + i) % 5 == 0 ? 2.0 : ((Rank() + l + i) % 7 == 0 ? -1.0 : 1.0);
    Kokkos::deep_copy(v, h);
    data.push_back(v);
  }
  r.Expect(lists, tributary::Prod{});
  for (int l = 0; l < lists; ++l) r.ContributeView(l, data[l], tributary::Prod{});
  Wait(ctx, r);
  EXPECT_EQ(r.val, expect);
}

// Rank 2 and 3 Views, both layouts, and the interior of a block (a strided subview).
TEST(DevicePartials, ShapesAndSubviews) {
  tributary::Context ctx;
  AllReduce<std::int64_t> r(ctx, "shapes");
  const int lists = ListsOn(Rank());
  const int nx = 13, ny = 1100, nz = 5, ghost = 2;
  auto fill = [](int q, int l, auto host, int n0, int n1) {
    for (int i = 0; i < n0; ++i)
      for (int j = 0; j < n1; ++j) host(i, j) = IntAt(q, l, i * n1 + j);
  };
  // The reference: the interior [ghost, n - ghost) of each rank-2 block, plus rank-3 data.
  std::int64_t expect = 0;
  for (int q = 0; q < Size(); ++q)
    for (int l = 0; l < ListsOn(q); ++l) {
      for (int i = ghost; i < nx - ghost; ++i)
        for (int j = ghost; j < ny - ghost; ++j) expect += IntAt(q, l, i * ny + j);
      for (int i = 0; i < nx * ny * nz; ++i) expect += IntAt(q, l, i) % 3;
    }
  Kokkos::View<std::int64_t**, Kokkos::LayoutRight, Mem> right("right", nx, ny);
  Kokkos::View<std::int64_t**, Kokkos::LayoutLeft, Mem> left("left", nx, ny);
  Kokkos::View<std::int64_t***, Kokkos::LayoutRight, Mem> cube("cube", nx, ny, nz);
  std::vector<Kokkos::View<std::int64_t**, Kokkos::LayoutRight, Mem>> blocks;
  std::vector<Kokkos::View<std::int64_t***, Kokkos::LayoutLeft, Mem>> cubes;
  for (int l = 0; l < lists; ++l) {
    Kokkos::View<std::int64_t**, Kokkos::LayoutRight, Mem> b("b", nx, ny);
    auto h = Kokkos::create_mirror_view(b);
    fill(Rank(), l, h, nx, ny);
    Kokkos::deep_copy(b, h);
    blocks.push_back(b);
    Kokkos::View<std::int64_t***, Kokkos::LayoutLeft, Mem> c("c", nx, ny, nz);
    auto hc = Kokkos::create_mirror_view(c);
    for (int i = 0; i < nx; ++i)
      for (int j = 0; j < ny; ++j)
        for (int k = 0; k < nz; ++k) hc(i, j, k) = IntAt(Rank(), l, (i * ny + j) * nz + k) % 3;
    Kokkos::deep_copy(c, hc);
    cubes.push_back(c);
  }
  // Two generations per list: its block's interior, then its cube (in LayoutLeft).
  std::int64_t total = 0;
  r.Expect(lists, tributary::Sum{});
  for (int l = 0; l < lists; ++l) {
    auto interior = Kokkos::subview(blocks[l], std::make_pair(ghost, nx - ghost),
                                    std::make_pair(ghost, ny - ghost));
    r.ContributeView(l, interior, tributary::Sum{});
  }
  Wait(ctx, r);
  total += r.val;
  r.Expect(lists, tributary::Sum{});
  for (int l = 0; l < lists; ++l) r.ContributeView(l, cubes[l], tributary::Sum{});
  Wait(ctx, r);
  total += r.val;
  EXPECT_EQ(total, expect);
  (void)right;
  (void)left;
  (void)cube;
}

// Sums of rounding-prone doubles equal a reference summed in the documented order: chunks
// of 1024 along the last index, 8 interleaved accumulators folded left, chunks in order,
// then lists in index order. On a one-rank Context no network order enters.
double DocumentedOrderSum(const std::vector<std::vector<double>>& lists) {
  double total = 0;
  bool first = true;
  for (const auto& data : lists) {
    double update = 0;
    const std::int64_t n = static_cast<std::int64_t>(data.size());
    for (std::int64_t begin = 0; begin < n; begin += 1024) {
      const std::int64_t end = std::min<std::int64_t>(begin + 1024, n);
      double acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
      std::int64_t j = begin;
      for (; j + 8 <= end; j += 8)
        for (int u = 0; u < 8; ++u) acc[u] = data[static_cast<std::size_t>(j + u)] + acc[u];
      for (int u = 0; j < end; ++j, ++u) acc[u] = data[static_cast<std::size_t>(j)] + acc[u];
      for (int u = 1; u < 8; ++u) acc[u] = acc[u - 1] + acc[u];
      update = update + acc[7];
    }
    total = first ? update : total + update;
    first = false;
  }
  return total;
}

TEST(DevicePartials, SumInTheDocumentedOrder) {
  if (!std::is_same_v<Exec, Kokkos::Serial>) GTEST_SKIP() << "the documented order is Serial's";
#if TRIBUTARY_HAVE_MPI
  tributary::Context ctx(MPI_COMM_SELF);
#else
  tributary::Context ctx;
#endif
  AllReduce<double> r(ctx, "order");
  std::mt19937_64 gen(42 + static_cast<unsigned>(Rank()));
  std::uniform_real_distribution<double> dist(-1e6, 1e6);
  for (int lists : {1, 3, 8}) {
    std::vector<std::vector<double>> host(static_cast<std::size_t>(lists));
    std::vector<Kokkos::View<double*, Mem>> dev;
    for (int l = 0; l < lists; ++l) {
      const std::size_t n = 3000 + 517 * static_cast<std::size_t>(l);
      host[l].resize(n);
      for (double& x : host[l]) x = dist(gen) * std::pow(10.0, static_cast<int>(dist(gen)) % 9);
      Kokkos::View<double*, Mem> v("v", n);
      auto h = Kokkos::create_mirror_view(v);
      for (std::size_t i = 0; i < n; ++i) h(i) = host[l][i];
      Kokkos::deep_copy(v, h);
      dev.push_back(v);
    }
    r.Expect(lists, tributary::Sum{});
    for (int l = lists - 1; l >= 0; --l) r.ContributeView(l, dev[l], tributary::Sum{});
    Wait(ctx, r);
    const double want = DocumentedOrderSum(host);
    EXPECT_EQ(std::memcmp(&r.val, &want, sizeof want), 0) << r.val << " vs " << want;
  }
}

// A host copy of a device View of any layout (a strided subview is first copied into a
// contiguous device View: Kokkos copies across spaces only between contiguous Views).
template <class View>
auto HostCopy(const View& v) {
  using D = typename View::non_const_data_type;
  Kokkos::View<D, Kokkos::LayoutRight, Mem> c;
  if constexpr (View::rank == 1) c = decltype(c)("contiguous", v.extent(0));
  if constexpr (View::rank == 2) c = decltype(c)("contiguous", v.extent(0), v.extent(1));
  if constexpr (View::rank == 3)
    c = decltype(c)("contiguous", v.extent(0), v.extent(1), v.extent(2));
  Kokkos::deep_copy(c, v);
  auto h = Kokkos::create_mirror_view(c);
  Kokkos::deep_copy(h, c);
  return h;
}

// Both ways a kernel over every element splits a View into work items — contiguous chunks
// (host backends) and interleaved items (GPU backends) — run here on whatever backend the
// suite has, so that the GPU layout is checked on a host backend too: every element of
// rank 1-3 Views (a LayoutLeft subview among them, sizes around the item lengths) is
// reduced once, MinLoc ties go to the lowest index, and exact sums (contiguous chunks on
// every backend, checked once per View) equal a host ExactSum.
template <bool Interleaved, class View>
void CheckItemLayout(const View& v, const std::string& what) {
  using tributary::detail::ExactAllKernel;
  using tributary::detail::ReduceAllKernel;
  using tributary::detail::ShapeAllElements;
  using Range = Kokkos::RangePolicy<Exec, Kokkos::IndexType<std::int64_t>>;
  const std::int64_t per =
      Interleaved ? tributary::detail::kInterleavedElements : tributary::detail::kDeviceChunk;
  const auto h = HostCopy(v);
  // The host reference, row-major over the extents.
  std::int64_t sum = 0, min_index = -1;
  double min = std::numeric_limits<double>::infinity();
  tributary::ExactSum exact;
  std::int64_t i = 0;
  auto visit = [&](double x) {
    sum += static_cast<std::int64_t>(x);
    exact += x * 0.125;
    if (x < min) min = x, min_index = i;
    ++i;
  };
  if constexpr (View::rank == 1)
    for (std::size_t a = 0; a < v.extent(0); ++a) visit(h(a));
  if constexpr (View::rank == 2)
    for (std::size_t a = 0; a < v.extent(0); ++a)
      for (std::size_t b = 0; b < v.extent(1); ++b) visit(h(a, b));
  if constexpr (View::rank == 3)
    for (std::size_t a = 0; a < v.extent(0); ++a)
      for (std::size_t b = 0; b < v.extent(1); ++b)
        for (std::size_t c = 0; c < v.extent(2); ++c) visit(h(a, b, c));
  SCOPED_TRACE(what + (Interleaved ? ", interleaved items" : ", contiguous chunks"));
  ReduceAllKernel<View, double, tributary::Sum, Interleaved> add{tributary::Sum{}, 0.0, v, 0};
  double got = -1;
  Kokkos::parallel_reduce(Range(0, ShapeAllElements(add, v, per)), add, got);
  EXPECT_EQ(got, static_cast<double>(sum));
  using Loc = ValueLoc<double>;
  const Loc none = tributary::MinLoc::Identity<Loc>();
  ReduceAllKernel<View, Loc, tributary::MinLoc, Interleaved> low{tributary::MinLoc{}, none, v, 0};
  Loc lowest = none;
  Kokkos::parallel_reduce(Range(0, ShapeAllElements(low, v, per)), low, lowest);
  EXPECT_EQ(lowest.value, min);
  EXPECT_EQ(lowest.index, min_index);
  if constexpr (Interleaved) return;  // exact sums have one layout
  // Exact: the View's values scaled by 1/8 on the device, so that the sum has a fraction.
  Kokkos::View<double***, Mem> scaled("scaled", View::rank == 3 ? v.extent(0) : 1,
                                      View::rank >= 2 ? v.extent(View::rank - 2) : 1,
                                      v.extent(View::rank - 1));
  auto hs = Kokkos::create_mirror_view(scaled);
  std::int64_t k = 0;
  for (std::size_t a = 0; a < scaled.extent(0); ++a)
    for (std::size_t b = 0; b < scaled.extent(1); ++b)
      for (std::size_t c = 0; c < scaled.extent(2); ++c, ++k) {
        if constexpr (View::rank == 1) hs(a, b, c) = h(c) * 0.125;
        if constexpr (View::rank == 2) hs(a, b, c) = h(b, c) * 0.125;
        if constexpr (View::rank == 3) hs(a, b, c) = h(a, b, c) * 0.125;
      }
  Kokkos::deep_copy(scaled, hs);
  ExactAllKernel<decltype(scaled)> sums{scaled};
  tributary::ExactSum total;
  Kokkos::parallel_reduce(Range(0, ShapeAllElements(sums, scaled)), sums, total);
  EXPECT_EQ(total.Round(), exact.Round());
}

TEST(DevicePartials, BothItemLayoutsReduceEveryElementOnce) {
  auto fill = [](auto v) {
    auto h = Kokkos::create_mirror_view(v);
    std::int64_t i = 0;
    auto* p = h.data();
    for (std::size_t a = 0; a < h.span(); ++a, ++i) p[a] = static_cast<double>((i * 37) % 23) - 11;
    Kokkos::deep_copy(v, h);
    return v;
  };
  for (std::size_t n : {1, 7, 8, 9, 31, 33, 1023, 1025, 5000}) {
    const auto v = fill(Kokkos::View<double*, Mem>("v", n));
    CheckItemLayout<false>(v, "rank 1, " + std::to_string(n));
    CheckItemLayout<true>(v, "rank 1, " + std::to_string(n));
  }
  const auto m = fill(Kokkos::View<double**, Mem>("m", 37, 1100));
  const auto left = fill(Kokkos::View<double**, Kokkos::LayoutLeft, Mem>("left", 40, 19));
  const auto sub = Kokkos::subview(left, Kokkos::make_pair(3, 38), Kokkos::make_pair(2, 17));
  const auto cube = fill(Kokkos::View<double***, Mem>("cube", 5, 6, 9));
  CheckItemLayout<false>(m, "rank 2");
  CheckItemLayout<true>(m, "rank 2");
  CheckItemLayout<false>(sub, "LayoutLeft subview");
  CheckItemLayout<true>(sub, "LayoutLeft subview");
  CheckItemLayout<false>(cube, "rank 3");
  CheckItemLayout<true>(cube, "rank 3");
}

// The exact sum of a View on GPU backends (a thread's own ExactSum, carried, the team's
// words summed in shared memory, then the teams' partials word by word), run here on the
// host backend at the team sizes it allows: every element once, exactly, infinities and
// NaNs counted.
template <class View>
void CheckExactTeams(const View& v, const std::string& what) {
  using Partials = Kokkos::View<tributary::ExactSum*, Mem>;
  using Source = tributary::detail::ExactViewSource<View>;
  using Kernel = tributary::detail::ExactTeamsKernel<Source, Exec, Partials>;
  const auto h = HostCopy(v);
  tributary::ExactSum want;
  if constexpr (View::rank == 1)
    for (std::size_t a = 0; a < v.extent(0); ++a) want += static_cast<double>(h(a));
  if constexpr (View::rank == 2)
    for (std::size_t a = 0; a < v.extent(0); ++a)
      for (std::size_t b = 0; b < v.extent(1); ++b) want += static_cast<double>(h(a, b));
  if constexpr (View::rank == 3)
    for (std::size_t a = 0; a < v.extent(0); ++a)
      for (std::size_t b = 0; b < v.extent(1); ++b)
        for (std::size_t c = 0; c < v.extent(2); ++c) want += static_cast<double>(h(a, b, c));
  const int most = Kokkos::TeamPolicy<Exec>(1, 1).team_size_max(Kernel{Source(v), Partials()},
                                                                Kokkos::ParallelForTag());
  ASSERT_GE(most, 1);
  EXPECT_EQ(tributary::detail::ExactTeamSizeOn(Exec(), Source(v)), std::min(most, 64));
  int checked = 0;
  for (int team : {1, 2, 3, 64}) {
    if (team > most) continue;
    ++checked;
    SCOPED_TRACE(what + ", team of " + std::to_string(team));
    const Source source(v);
    const std::int64_t threads = tributary::detail::ExactTeamThreads(source.Total(), team);
    EXPECT_EQ(threads % team, 0);
    EXPECT_LE(threads, 32768 + team);
    Partials partials("partials", static_cast<std::size_t>(threads / team) + 1);
    Kokkos::View<tributary::ExactSum, Mem> out("out");
    tributary::detail::QueueExactTeams(Exec(), source, source.Total(), partials, out, team);
    tributary::ExactSum got;
    Kokkos::deep_copy(got, out);
    EXPECT_TRUE(got.SameValue(want)) << got.Round() << " vs " << want.Round();
    const double a = got.Round(), b = want.Round();
    EXPECT_EQ(std::memcmp(&a, &b, sizeof a), 0);
  }
  EXPECT_GE(checked, 1);
}

TEST(DevicePartials, ExactTeamKernelsAddEveryElementOnce) {
  auto fill = [](auto v, bool specials) {
    auto h = Kokkos::create_mirror_view(v);
    using T = typename decltype(v)::non_const_value_type;
    std::int64_t i = 0;
    auto* p = h.data();
    for (std::size_t a = 0; a < h.span(); ++a, ++i)  // signs and exponents mixed
      p[a] = static_cast<T>((i % 2 ? -1.0 : 1.0) * (1.0 + static_cast<double>(i % 7) / 8.0) *
                            std::ldexp(1.0, static_cast<int>((i * 13) % 120) - 60));
    if (specials && h.span() > 2) {
      p[1] = std::numeric_limits<T>::infinity();
      p[h.span() - 1] = std::numeric_limits<T>::quiet_NaN();
    }
    Kokkos::deep_copy(v, h);
    return v;
  };
  for (std::size_t n : {0, 1, 63, 64, 65, 1000, 4099, 200000})
    CheckExactTeams(fill(Kokkos::View<double*, Mem>("v", n), false),
                    "rank 1, " + std::to_string(n));
  CheckExactTeams(fill(Kokkos::View<float*, Mem>("f", 3001), false), "float");
  CheckExactTeams(fill(Kokkos::View<double*, Mem>("s", 500), true), "an infinity and a NaN");
  const auto m = fill(Kokkos::View<double**, Mem>("m", 37, 1100), false);
  const auto left = fill(Kokkos::View<double**, Kokkos::LayoutLeft, Mem>("left", 40, 19), false);
  const auto sub = Kokkos::subview(left, Kokkos::make_pair(3, 38), Kokkos::make_pair(2, 17));
  const auto cube = fill(Kokkos::View<double***, Mem>("cube", 5, 6, 9), false);
  CheckExactTeams(m, "rank 2");
  CheckExactTeams(sub, "LayoutLeft subview");
  CheckExactTeams(cube, "rank 3");
}

// An exact sum over an MDRangePolicy on a GPU backend: the tiles are halved until a block's
// values fit its shared memory (Kokkos' default 4x4x4x4 tiles launch 256 threads, and 258
// ExactSums need 148 KiB); the rule itself runs here on the host.
TEST(DevicePartials, ExactSumTilesFitSharedMemory) {
  using tributary::detail::TilesFittingSharedMemory;
  using Tiles = std::array<std::int64_t, 4>;
  const std::size_t exact = sizeof(tributary::ExactSum), shared = 48 * 1024;
  auto block = [](const Tiles& t, int rank) {
    std::size_t p = 1, b = 1;
    for (int d = 0; d < rank; ++d) p *= static_cast<std::size_t>(t[static_cast<std::size_t>(d)]);
    while (b < p) b *= 2;
    return b;
  };
  EXPECT_EQ(exact, 576u);
  const Tiles four = TilesFittingSharedMemory(Tiles{4, 4, 4, 4}, 4, exact, shared);
  EXPECT_EQ(block(four, 4), 64u);  // (64 + 2) x 576 = 38016 bytes; 128 threads would not fit
  EXPECT_LE((block(four, 4) + 2) * exact, shared);
  const Tiles three = TilesFittingSharedMemory(Tiles{32, 8, 1, 0}, 3, 2 * exact, shared);
  EXPECT_EQ(block(three, 3), 32u);  // ExactSums<2>: (32 + 2) x 1152 = 39168 bytes
  EXPECT_EQ(three[2], 1);
  const Tiles odd = TilesFittingSharedMemory(Tiles{7, 5, 3, 0}, 3, exact, shared);
  EXPECT_LE((block(odd, 3) + 2) * exact, shared);
  const Tiles small = TilesFittingSharedMemory(Tiles{16, 16, 0, 0}, 2, sizeof(double), shared);
  EXPECT_EQ(small, (Tiles{16, 16, 0, 0}));  // plain values keep the user's tiles
  const Tiles huge = TilesFittingSharedMemory(Tiles{2, 2, 0, 0}, 2, 64 * 1024, shared);
  EXPECT_EQ(huge, (Tiles{1, 1, 0, 0}));  // stops at one thread: Kokkos reports the rest
  // The public form: a host backend keeps the user's tiles; on a GPU backend the tiles of
  // an exact MDRange reduction fit (the launch itself runs in DeviceKernels' suite).
  using MD3 = Kokkos::MDRangePolicy<Kokkos::DefaultExecutionSpace, Kokkos::Rank<3>>;
  const MD3 md({0, 0, 0}, {64, 64, 64}, {8, 8, 8});
  const MD3 fitted = tributary::FitTiles(md);
  std::size_t threads = 1;
  for (int d = 0; d < 3; ++d) threads *= static_cast<std::size_t>(fitted.m_tile[d]);
  if (Kokkos::SpaceAccessibility<Kokkos::HostSpace,
                                 Kokkos::DefaultExecutionSpace::memory_space>::accessible)
    EXPECT_EQ(threads, 512u);
  else
    EXPECT_LE((threads + 2) * exact, shared);
  const MD3 pairs = tributary::FitTiles<tributary::ExactSums<2>>(md);
  EXPECT_EQ(pairs.m_upper[2], 64);  // the bounds stay
}

// MinLoc / MaxLoc: equal extremes in several lists and ranks; the lowest global index wins.
TEST(DevicePartials, MinLocMaxLocTiesGoToTheLowestIndex) {
  tributary::Context ctx;
  AllReduce<ValueLoc<double>> lo(ctx, "minloc"), hi(ctx, "maxloc");
  const std::int64_t n = 3000;
  const int lists = ListsOn(Rank());
  // Global numbering: rank-major, then list, then element.
  std::vector<std::int64_t> first(static_cast<std::size_t>(Size()) * 4, 0);
  std::int64_t offset = 0;
  for (int q = 0; q < Size(); ++q)
    for (int l = 0; l < 3; ++l) {
      first[static_cast<std::size_t>(q) * 4 + l] = offset;
      offset += l < ListsOn(q) ? n : 0;
    }
  // Data: values in {-5, ..., 5}; -5 and 5 occur in many places, lists from higher ranks
  // first hold them at lower local positions.
  std::int64_t want_min = -1, want_max = -1;
  std::vector<Kokkos::View<double*, Mem>> data;
  for (int q = 0; q < Size(); ++q)
    for (int l = 0; l < ListsOn(q); ++l) {
      Kokkos::View<double*, Mem> v("v", n);
      auto h = Kokkos::create_mirror_view(v);
      for (std::int64_t i = 0; i < n; ++i) {
        const std::int64_t x = IntAt(q, l, i) % 6;
        h(static_cast<std::size_t>(i)) =
            static_cast<double>((i * 7 + 3 * (Size() - q)) % 97 == 0 ? -5 : x);
        if (i % 89 == 11 * (q + 1)) h(static_cast<std::size_t>(i)) = 5;
        const std::int64_t g = first[static_cast<std::size_t>(q) * 4 + l] + i;
        if (h(static_cast<std::size_t>(i)) == -5 && want_min < 0) want_min = g;
        if (h(static_cast<std::size_t>(i)) == 5 && want_max < 0) want_max = g;
      }
      Kokkos::deep_copy(v, h);
      if (q == Rank()) data.push_back(v);
    }
  lo.Expect(lists, tributary::MinLoc{});
  hi.Expect(lists, tributary::MaxLoc{});
  for (int l = lists - 1; l >= 0; --l) {
    const std::int64_t f = first[static_cast<std::size_t>(Rank()) * 4 + l];
    lo.ContributeView(l, data[l], tributary::MinLoc{}, f);
    hi.ContributeView(l, data[l], tributary::MaxLoc{}, f);
  }
  Wait(ctx, lo);
  Wait(ctx, hi);
  EXPECT_EQ(lo.val.value, -5.0);
  EXPECT_EQ(lo.val.index, want_min);
  EXPECT_EQ(hi.val.value, 5.0);
  EXPECT_EQ(hi.val.index, want_max);
  EXPECT_TRUE(SameBitsEverywhere(std::vector<ValueLoc<double>>{lo.val, hi.val}));
}

// A kernel contribution: the policy's functor gives each element (here with its index).
struct ValueWithIndex {
  Kokkos::View<double**, Mem> data;
  std::int64_t first;
  std::int64_t ny;
  KOKKOS_INLINE_FUNCTION ValueLoc<double> operator()(const std::int64_t i,
                                                     const std::int64_t j) const {
    return {data(i, j), first + i * ny + j};
  }
};

struct Square {
  Kokkos::View<double*, Mem> data;
  KOKKOS_INLINE_FUNCTION double operator()(const std::int64_t i) const { return data(i) * data(i); }
};

TEST(DevicePartials, KernelsOverRangeAndMDRange) {
  tributary::Context ctx;
  AllReduce<double> norm(ctx, "norm2");
  AllReduce<ValueLoc<double>> where(ctx, "minloc2d");
  const int lists = ListsOn(Rank());
  const std::int64_t nx = 37, ny = 41;
  std::vector<Kokkos::View<double*, Mem>> flat;
  std::vector<Kokkos::View<double**, Mem>> grid;
  for (int l = 0; l < lists; ++l) {
    flat.push_back(MakeData<double>(Rank(), l, nx * ny));
    Kokkos::View<double**, Mem> g("g", nx, ny);
    auto h = Kokkos::create_mirror_view(g);
    for (std::int64_t i = 0; i < nx; ++i)
      for (std::int64_t j = 0; j < ny; ++j) h(i, j) = ValueAt<double>(Rank(), l, i * ny + j);
    Kokkos::deep_copy(g, h);
    grid.push_back(g);
  }
  double want_norm = 0;
  ValueLoc<double> want_loc{1e300, 0};
  std::int64_t offset = 0;
  for (int q = 0; q < Size(); ++q)
    for (int l = 0; l < ListsOn(q); ++l, offset += nx * ny)
      for (std::int64_t i = 0; i < nx * ny; ++i) {
        const double x = ValueAt<double>(q, l, i);
        want_norm += x * x;
        tributary::MinLoc{}(ValueLoc<double>{x, offset + i}, want_loc);
      }
  std::int64_t mine = 0;
  for (int q = 0; q < Rank(); ++q) mine += ListsOn(q) * nx * ny;
  norm.Expect(lists, tributary::Sum{});
  where.Expect(lists, tributary::MinLoc{});
  for (int l = 0; l < lists; ++l) {
    norm.ContributeKernel(l, Kokkos::RangePolicy<Exec>(Exec(), 0, nx * ny), Square{flat[l]},
                          tributary::Sum{});
    where.ContributeKernel(l,
                           Kokkos::MDRangePolicy<Exec, Kokkos::Rank<2>>(Exec(), {0, 0}, {nx, ny}),
                           ValueWithIndex{grid[l], mine + l * nx * ny, ny}, tributary::MinLoc{});
  }
  Wait(ctx, norm);
  Wait(ctx, where);
  EXPECT_EQ(norm.val, want_norm);  // squares of k/8: exact
  EXPECT_EQ(where.val, want_loc);
}

// A user reducer: one type for the device kernel, the rank-local combine and the network
// operator (Tributary's own schedule and the MPI library's, through an MPI_Op).
struct AbsMax {
  static constexpr bool commutative = true;
  template <class T>
  static T Identity() {
    return T(0);
  }
  KOKKOS_INLINE_FUNCTION void operator()(const double& in, double& inout) const {
    const double a = in < 0 ? -in : in;
    const double b = inout < 0 ? -inout : inout;
    inout = a > b ? a : b;
  }
};

TEST(DevicePartials, UserReducerServesDeviceRankAndNetwork) {
  for (auto schedule :
       {tributary::ScheduleKind::mpi_library, tributary::ScheduleKind::recursive_doubling}) {
    tributary::ContextOptions options;
    options.allreduce_schedule = schedule;
    tributary::Context ctx(options);
    AllReduce<double> r(ctx, "absmax");
    const double got = RunViews(ctx, r, AbsMax{}, 777);
    double want = 0;
    for (int q = 0; q < Size(); ++q)
      for (int l = 0; l < ListsOn(q); ++l)
        for (int i = 0; i < 777; ++i) AbsMax{}(ValueAt<double>(q, l, i), want);
    EXPECT_EQ(got, want) << tributary::ToString(schedule);
  }
}

// Several values per list: a histogram from rows of a rank-2 View, and k values given as
// a rank-1 View, into std::vector, std::array and a host View.
TEST(DevicePartials, MultiValueResults) {
  tributary::Context ctx;
  const int lists = ListsOn(Rank());
  const int bins = 6;
  const std::int64_t rows = 2500;
  AllReduce<std::vector<std::int64_t>> hist(ctx, "histogram");
  AllReduce<std::array<double, 4>> norms(ctx, "norms");
  AllReduce<Kokkos::View<double*, Kokkos::HostSpace>> maxima(ctx, "maxima");
  std::vector<std::int64_t> want_hist(bins, 0);
  std::array<double, 4> want_norms{};
  std::vector<double> want_max(bins, -1e300);
  for (int q = 0; q < Size(); ++q)
    for (int l = 0; l < ListsOn(q); ++l) {
      for (std::int64_t i = 0; i < rows; ++i)
        for (int b = 0; b < bins; ++b) {
          want_hist[b] += (IntAt(q, l, i * bins + b) + 1000) % 5;
          want_max[b] = std::max(want_max[b], static_cast<double>(IntAt(q, l, i * bins + b)));
        }
      for (int c = 0; c < 4; ++c) want_norms[c] += ValueAt<double>(q, l, c);
    }
  std::vector<Kokkos::View<std::int64_t**, Mem>> counts;
  std::vector<Kokkos::View<double**, Mem>> values;
  std::vector<Kokkos::View<double*, Mem>> four;
  for (int l = 0; l < lists; ++l) {
    Kokkos::View<std::int64_t**, Mem> c("c", rows, bins);
    Kokkos::View<double**, Mem> v("v", rows, bins);
    auto hc = Kokkos::create_mirror_view(c);
    auto hv = Kokkos::create_mirror_view(v);
    for (std::int64_t i = 0; i < rows; ++i)
      for (int b = 0; b < bins; ++b) {
        hc(i, b) = (IntAt(Rank(), l, i * bins + b) + 1000) % 5;
        hv(i, b) = static_cast<double>(IntAt(Rank(), l, i * bins + b));
      }
    Kokkos::deep_copy(c, hc);
    Kokkos::deep_copy(v, hv);
    counts.push_back(c);
    values.push_back(v);
    four.push_back(MakeData<double>(Rank(), l, 4));
  }
  hist.val.assign(bins, 0);  // the length a rank without lists takes part with
  maxima.val = Kokkos::View<double*, Kokkos::HostSpace>("maxima", bins);
  hist.Expect(lists, tributary::Sum{});
  norms.Expect(lists, tributary::Sum{});
  maxima.Expect(lists, tributary::Max{});
  for (int l = 0; l < lists; ++l) {
    hist.ContributeView(l, counts[l], tributary::Sum{});
    norms.ContributeView(l, four[l], tributary::Sum{});
    maxima.ContributeView(l, values[l], tributary::Max{});
  }
  Wait(ctx, hist);
  Wait(ctx, norms);
  Wait(ctx, maxima);
  EXPECT_EQ(hist.val, want_hist);
  EXPECT_EQ(norms.val, want_norms);
  ASSERT_EQ(maxima.val.extent(0), static_cast<std::size_t>(bins));
  for (int b = 0; b < bins; ++b) EXPECT_EQ(maxima.val(b), want_max[b]);
}

// The list-order combine: lists finishing in any order give the same bits.
TEST(DevicePartials, CompletionOrderDoesNotChangeTheBits) {
  tributary::Context ctx;
  AllReduce<double> r(ctx, "shuffled");
  const int lists = 6;
  std::mt19937 gen(7);
  std::uniform_real_distribution<double> dist(-1, 1);
  std::vector<Kokkos::View<double*, Mem>> data;
  for (int l = 0; l < lists; ++l) {
    Kokkos::View<double*, Mem> v("v", 999);
    auto h = Kokkos::create_mirror_view(v);
    for (int i = 0; i < 999; ++i) h(i) = dist(gen) * std::pow(2.0, 40 * dist(gen));
    Kokkos::deep_copy(v, h);
    data.push_back(v);
  }
  std::vector<int> order(lists);
  std::iota(order.begin(), order.end(), 0);
  std::vector<double> results;
  std::mt19937 shuffle(static_cast<unsigned>(Rank()) + 1);
  for (int round = 0; round < 8; ++round) {
    std::shuffle(order.begin(), order.end(), shuffle);
    r.Expect(lists, tributary::Sum{});
    for (int l : order) r.ContributeView(l, data[l], tributary::Sum{});
    Wait(ctx, r);
    results.push_back(r.val);
  }
  for (double x : results) EXPECT_EQ(std::memcmp(&x, &results[0], sizeof x), 0);
  EXPECT_TRUE(SameBitsEverywhere(results));
}

// Adversarial doubles: huge values and their negatives, tiny ones, subnormals, mixed signs.
std::vector<double> HardToSum(std::size_t n, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> mant(0.5, 1.0);
  std::uniform_int_distribution<int> expo(-1060, 1000), kind(0, 4);
  std::vector<double> v;
  while (v.size() < n) {
    switch (kind(rng)) {
      case 0: {
        const double x = std::ldexp(mant(rng), 990 + static_cast<int>(rng() % 20));
        v.push_back(x);
        v.insert(v.begin() + static_cast<long>(rng() % v.size()), -x);
        break;
      }
      case 1:
        v.push_back(std::ldexp(mant(rng), -1000 - static_cast<int>(rng() % 60)));
        break;
      case 2:
        v.push_back(std::numeric_limits<double>::denorm_min() * static_cast<double>(rng() % 1000));
        break;
      default:
        v.push_back((rng() & 1 ? -1.0 : 1.0) * std::ldexp(mant(rng), expo(rng)));
        break;
    }
  }
  v.resize(n);
  return v;
}

struct ValueOfView {
  Kokkos::View<double*, Mem> v;
  KOKKOS_INLINE_FUNCTION double operator()(std::int64_t i) const { return v(i); }
};

// rank_count_independent: each list's values summed exactly on the device. The same global
// values, split into any number of lists per rank, as rank-1, rank-2 or rank-3 Views, give
// the correctly rounded sum, with the same bits at every rank count; k values per list
// (the columns of a rank-2 View) too, and a Reduce's root alike.
TEST(DevicePartials, ExactSumsOnTheDeviceDoNotDependOnTheSplit) {
  tributary::ContextOptions o;
  o.determinism = tributary::Determinism::rank_count_independent;
  tributary::Context ctx(o);
  const std::size_t n = 6000;
  const std::vector<double> all = HardToSum(n, 11);
  tributary::ExactSum exact;
  for (double x : all) exact.Add(x);
  const double expect = exact.Round();
  AllReduce<double> total(ctx, "exact total");
  for (int lists_per_rank : {1, 3, 5}) {
    for (int rank_of_view : {1, 2, 3}) {
      // Rank 1 has no list when there are 3 per rank; global list g of all L owns the
      // values [g n / L, (g + 1) n / L).
      const auto lists_of = [&](int q) {
        return lists_per_rank == 3 && Size() > 1 && q == 1 ? 0 : lists_per_rank;
      };
      const int lists = lists_of(Rank());
      int total_lists = 0, first = 0;
      for (int q = 0; q < Size(); ++q) {
        if (q < Rank()) first += lists_of(q);
        total_lists += lists_of(q);
      }
      total.Expect(lists, tributary::Sum{});
      std::vector<Kokkos::View<double*, Mem>> keep;
      for (int l = 0; l < lists; ++l) {
        const std::size_t g = static_cast<std::size_t>(first + l);
        const std::size_t lo = g * n / static_cast<std::size_t>(total_lists);
        const std::size_t hi = (g + 1) * n / static_cast<std::size_t>(total_lists);
        Kokkos::View<double*, Mem> v("part", hi - lo);
        auto h = Kokkos::create_mirror_view(v);
        for (std::size_t i = lo; i < hi; ++i) h(i - lo) = all[i];
        Kokkos::deep_copy(v, h);
        keep.push_back(v);
        const std::size_t m = hi - lo;
        if (rank_of_view == 1 || m % 6 != 0) {
          total.ContributeView(l, Exec(), v, tributary::Sum{});
        } else if (rank_of_view == 2) {
          Kokkos::View<double**, Kokkos::LayoutRight, Mem, Kokkos::MemoryTraits<Kokkos::Unmanaged>>
              two(v.data(), m / 6, 6);
          total.ContributeView(l, Exec(), two, tributary::Sum{});
        } else {
          Kokkos::View<double***, Kokkos::LayoutRight, Mem, Kokkos::MemoryTraits<Kokkos::Unmanaged>>
              three(v.data(), m / 6, 2, 3);
          total.ContributeView(l, Exec(), three, tributary::Sum{});
        }
      }
      Wait(ctx, total);
      EXPECT_EQ(std::memcmp(&total.val, &expect, sizeof expect), 0)
          << lists_per_rank << " lists per rank, rank-" << rank_of_view << " Views: " << total.val
          << " vs " << expect;
      EXPECT_TRUE(SameBitsEverywhere(std::vector<double>{total.val}));
    }
  }
  // Three sums per list: column c of list l's (rows x 3) View holds values c, c + 3, ... of
  // its part; the three results are the exact sums of the three residues mod 3 of the
  // parts, whatever the split.
  AllReduce<std::vector<double>> three(ctx, "three exact totals");
  tributary::ExactSum by_column[3];
  const std::size_t rows = n / 3 / Size() / 2;
  for (int q = 0; q < Size(); ++q)
    for (int l = 0; l < 2; ++l)
      for (std::size_t r = 0; r < rows; ++r)
        for (int c = 0; c < 3; ++c)
          by_column[c].Add(all[((static_cast<std::size_t>(q) * 2 + l) * rows + r) * 3 + c]);
  three.val.assign(3, 0.0);
  three.Expect(2, tributary::Sum{});
  std::vector<Kokkos::View<double**, Kokkos::LayoutRight, Mem>> parts;
  for (int l = 0; l < 2; ++l) {
    Kokkos::View<double**, Kokkos::LayoutRight, Mem> v("columns", rows, 3);
    auto h = Kokkos::create_mirror_view(v);
    for (std::size_t r = 0; r < rows; ++r)
      for (int c = 0; c < 3; ++c)
        h(r, c) = all[((static_cast<std::size_t>(Rank()) * 2 + l) * rows + r) * 3 + c];
    Kokkos::deep_copy(v, h);
    parts.push_back(v);
    three.ContributeView(l, Exec(), v, tributary::Sum{});
  }
  Wait(ctx, three);
  const std::vector<double> expect3 = {by_column[0].Round(), by_column[1].Round(),
                                       by_column[2].Round()};
  EXPECT_EQ(std::memcmp(three.val.data(), expect3.data(), 3 * sizeof(double)), 0);
  // A Reduce: the root gets the exact sum, the others keep their val.
  tributary::Reduce<double> to_root(ctx, "exact to a root");
  const std::size_t lo = static_cast<std::size_t>(Rank()) * n / static_cast<std::size_t>(Size());
  const std::size_t hi =
      static_cast<std::size_t>(Rank() + 1) * n / static_cast<std::size_t>(Size());
  Kokkos::View<double*, Mem> mine("mine", hi - lo);
  auto hm = Kokkos::create_mirror_view(mine);
  for (std::size_t i = lo; i < hi; ++i) hm(i - lo) = all[i];
  Kokkos::deep_copy(mine, hm);
  for (int root = 0; root < Size(); ++root) {
    to_root.val = -1.0;
    to_root.Expect(1, root, tributary::Sum{});
    to_root.ContributeView(0, mine, tributary::Sum{});
    Wait(ctx, to_root);
    if (Rank() == root)
      EXPECT_EQ(std::memcmp(&to_root.val, &expect, sizeof expect), 0);
    else
      EXPECT_EQ(to_root.val, -1.0);
  }
  // A kernel's values are added exactly too: the same bits as the View's.
  total.Expect(1, tributary::Sum{});
  total.ContributeKernel(0, Kokkos::RangePolicy<Exec>(0, static_cast<std::int64_t>(mine.extent(0))),
                         ValueOfView{mine}, tributary::Sum{});
  Wait(ctx, total);
  EXPECT_EQ(std::memcmp(&total.val, &expect, sizeof expect), 0);
}

// A batch in rank_count_independent mode: a total and three column sums summed exactly on
// the device beside a Min, in one message; the same bits whatever the split into ranks and
// lists (rank 1 has none where there are two or more ranks).
TEST(DevicePartials, BatchMembersSumExactlyOnTheDevice) {
  tributary::ContextOptions o;
  o.determinism = tributary::Determinism::rank_count_independent;
  tributary::Context ctx(o);
  tributary::Batch step(ctx, "exact step");
  auto& low = step.Add<double>(tributary::Min{}, "low");
  auto& total = step.Add<double>(tributary::Sum{}, "total");
  auto& columns = step.Add<std::array<double, 3>>(tributary::Sum{}, "columns");
  const std::size_t rows = 300;
  const int per_rank = 3;
  const auto lists_of = [&](int q) { return Size() > 1 && q == 1 ? 0 : per_rank; };
  int all_lists = 0, first = 0;
  for (int q = 0; q < Size(); ++q) {
    if (q < Rank()) first += lists_of(q);
    all_lists += lists_of(q);
  }
  const std::vector<double> all = HardToSum(rows * 3 * static_cast<std::size_t>(all_lists), 23);
  tributary::ExactSum whole, by_column[3];
  double want_low = std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < all.size(); ++i) {
    whole.Add(all[i]);
    by_column[i % 3].Add(all[i]);
    want_low = std::min(want_low, all[i]);
  }
  std::vector<Kokkos::View<double**, Kokkos::LayoutRight, Mem>> parts;
  for (int l = 0; l < lists_of(Rank()); ++l) {
    Kokkos::View<double**, Kokkos::LayoutRight, Mem> v("part", rows, 3);
    auto h = Kokkos::create_mirror_view(v);
    for (std::size_t r = 0; r < rows; ++r)
      for (int c = 0; c < 3; ++c)
        h(r, c) = all[(static_cast<std::size_t>(first + l) * rows + r) * 3 + c];
    Kokkos::deep_copy(v, h);
    parts.push_back(v);
  }
  for (int cycle = 0; cycle < 2; ++cycle) {
    step.Expect(lists_of(Rank()));
    for (int l = lists_of(Rank()) - 1; l >= 0; --l) {
      low.ContributeView(l, parts[l], tributary::Min{});
      total.ContributeView(l, parts[l], tributary::Sum{});
      columns.ContributeView(l, parts[l], tributary::Sum{});
    }
    Wait(ctx, step);
    const double want_total = whole.Round();
    EXPECT_EQ(low.val, want_low);
    EXPECT_EQ(std::memcmp(&total.val, &want_total, sizeof want_total), 0)
        << total.val << " vs " << want_total;
    for (int c = 0; c < 3; ++c) {
      const double want = by_column[c].Round();
      EXPECT_EQ(std::memcmp(&columns.val[c], &want, sizeof want), 0) << "column " << c;
    }
    EXPECT_TRUE(SameBitsEverywhere(
        std::vector<double>{total.val, columns.val[0], columns.val[1], columns.val[2]}));
  }
}

TEST(DevicePartials, ReduceToARoot) {
  tributary::Context ctx;
  tributary::Reduce<std::int64_t> r(ctx, "reduce");
  const int lists = ListsOn(Rank());
  std::vector<Kokkos::View<std::int64_t*, Mem>> data;
  for (int l = 0; l < lists; ++l) data.push_back(MakeData<std::int64_t>(Rank(), l, 300));
  const int root = Size() - 1;
  r.val = -12345;
  r.Expect(lists, root, tributary::Sum{});
  for (int l = 0; l < lists; ++l) r.ContributeView(l, data[l], tributary::Sum{});
  Wait(ctx, r);
  if (Rank() == root)
    EXPECT_EQ(r.val, (Reference<std::int64_t>(tributary::Sum{}, 300)));
  else
    EXPECT_EQ(r.val, -12345);
}

// Bad input: clear errors, and the generation still completes with every contribution.
TEST(DevicePartials, BadInputIsAClearErrorAndLosesNothing) {
  tributary::Context ctx;
  AllReduce<double> r(ctx, "errors");
  AllReduce<std::vector<double>> multi(ctx, "multi");
  auto a = MakeData<double>(Rank(), 0, 100);
  auto b = MakeData<double>(Rank(), 1, 100);
  r.Expect(2, tributary::Sum{});
  try {
    r.ContributeView(2, a, tributary::Sum{});
    ADD_FAILURE() << "no error for a list index out of range";
  } catch (const tributary::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("out of range"), std::string::npos) << e.what();
  }
  try {
    r.ContributeView(0, a, tributary::Max{});
    ADD_FAILURE() << "no error for another operator";
  } catch (const tributary::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("operator"), std::string::npos) << e.what();
  }
  r.ContributeView(0, a, tributary::Sum{});
  try {
    r.ContributeView(0, a, tributary::Sum{});
    ADD_FAILURE() << "no error for a second contribution";
  } catch (const tributary::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("twice"), std::string::npos) << e.what();
  }
  try {
    r.Contribute(1, 1.0);
    ADD_FAILURE() << "no error for a host value among device contributions";
  } catch (const tributary::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("same way"), std::string::npos) << e.what();
  }
  r.ContributeView(1, b, tributary::Sum{});
  Wait(ctx, r);
  double want = 0;
  for (int q = 0; q < Size(); ++q)
    for (int l = 0; l < 2; ++l)
      for (int i = 0; i < 100; ++i) want += ValueAt<double>(q, l, i);
  EXPECT_EQ(r.val, want);

  // Lengths that must match differ across lists.
  Kokkos::View<double*, Mem> three("three", 3), four("four", 4);
  multi.Expect(2, tributary::Sum{});
  multi.ContributeView(0, three, tributary::Sum{});
  try {
    multi.ContributeView(1, four, tributary::Sum{});
    ADD_FAILURE() << "no error for different lengths";
  } catch (const tributary::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("different lengths"), std::string::npos) << e.what();
  }
  // A value of one element takes no rank-2 rows, and an array its own length only.
  AllReduce<std::array<double, 3>> fixed(ctx, "fixed");
  fixed.Expect(1, tributary::Sum{});
  EXPECT_THROW(fixed.ContributeView(0, four, tributary::Sum{}), tributary::UsageError);
  fixed.ContributeView(0, three, tributary::Sum{});
  Wait(ctx, fixed);
}

// A batch with device members beside a host member: one message, list-order folds.
TEST(DevicePartials, BatchWithDeviceMembers) {
  tributary::Context ctx;
  tributary::Batch step(ctx, "step");
  auto& dt = step.Add<double>(tributary::Min{}, "dt");
  auto& mass = step.Add<double>(tributary::Sum{}, "mass");
  auto& moments = step.Add<std::array<std::int64_t, 3>>(tributary::Sum{}, "moments");
  const int lists = ListsOn(Rank());
  const std::int64_t n = 2000;
  std::vector<Kokkos::View<double*, Mem>> data;
  std::vector<Kokkos::View<std::int64_t**, Mem>> rows;
  for (int l = 0; l < lists; ++l) {
    data.push_back(MakeData<double>(Rank(), l, n));
    Kokkos::View<std::int64_t**, Mem> r("rows", 50, 3);
    auto h = Kokkos::create_mirror_view(r);
    for (int i = 0; i < 50; ++i)
      for (int c = 0; c < 3; ++c) h(i, c) = IntAt(Rank(), l, i * 3 + c);
    Kokkos::deep_copy(r, h);
    rows.push_back(r);
  }
  double want_dt = 1e300, want_mass = 0;
  std::array<std::int64_t, 3> want_moments{};
  for (int q = 0; q < Size(); ++q)
    for (int l = 0; l < ListsOn(q); ++l) {
      for (std::int64_t i = 0; i < n; ++i) want_dt = std::min(want_dt, ValueAt<double>(q, l, i));
      want_mass += l + 1;
      for (int i = 0; i < 50; ++i)
        for (int c = 0; c < 3; ++c) want_moments[c] += IntAt(q, l, i * 3 + c);
    }
  for (int cycle = 0; cycle < 3; ++cycle) {
    step.Expect(lists);
    for (int l = lists - 1; l >= 0; --l) {
      dt.ContributeView(l, Exec(), data[l], tributary::Min{});
      mass.Contribute(l, l + 1.0);
      moments.ContributeView(l, rows[l], tributary::Sum{});
    }
    Wait(ctx, step);
    EXPECT_EQ(dt.val, want_dt);
    EXPECT_EQ(mass.val, want_mass);
    EXPECT_EQ(moments.val, want_moments);
  }
  if (lists >= 2) {  // a member's lists contribute one way
    step.Expect(lists);
    dt.ContributeView(0, data[0], tributary::Min{});
    EXPECT_THROW(dt.Contribute(1, 0.0), tributary::UsageError);
    EXPECT_THROW(dt.ContributeView(0, data[0], tributary::Min{}), tributary::UsageError);
    EXPECT_THROW(mass.ContributeView(0, data[0], tributary::Max{}), tributary::UsageError);
    for (int l = 1; l < lists; ++l) dt.ContributeView(l, data[l], tributary::Min{});
    for (int l = 0; l < lists; ++l) {
      mass.Contribute(l, l + 1.0);
      moments.ContributeView(l, rows[l], tributary::Sum{});
    }
  } else {
    step.Expect(lists);
    for (int l = 0; l < lists; ++l) {
      dt.ContributeView(l, data[l], tributary::Min{});
      mass.Contribute(l, l + 1.0);
      moments.ContributeView(l, rows[l], tributary::Sum{});
    }
  }
  Wait(ctx, step);
  EXPECT_EQ(dt.val, want_dt);
  EXPECT_EQ(mass.val, want_mass);
}

// A rank that never gets one list's device contribution: the watchdog fails the generation
// everywhere, the missing slot is filled with the neutral element and the network phase
// drains, on every rank (nobody hangs). The Context stays failed afterwards (by design).
TEST(DevicePartials, WatchdogAbandonsADeviceGeneration) {
  tributary::ContextOptions options;
  options.on_failure = tributary::FailurePolicy::propagate;
  options.watchdog = std::chrono::duration<double>(1.5);
  options.on_watchdog = tributary::WatchdogAction::fail;
  tributary::Context ctx(options);
  AllReduce<double> r(ctx, "withheld");
  auto a = MakeData<double>(Rank(), 0, 100), b = MakeData<double>(Rank(), 1, 100);
  const int slow = Size() - 1;
  r.Expect(2, tributary::Sum{});
  r.ContributeView(0, a, tributary::Sum{});
  if (Rank() != slow) r.ContributeView(1, b, tributary::Sum{});
  std::string report;
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (report.empty() && std::chrono::steady_clock::now() < until) {
    try {
      ctx.Progress();
      r.CheckReduce();
    } catch (const tributary::Error& e) {
      report = e.what();
    }
  }
  TRIBUTARY_EXPECT_ALL(report.find("missing lists: 1") != std::string::npos);
  const auto drain = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (r.InFlight() && std::chrono::steady_clock::now() < drain) {
    try {
      ctx.Progress();
    } catch (const tributary::Error&) {
    }
  }
  TRIBUTARY_EXPECT_ALL(!r.InFlight());
}

// Steady-state generations fence nowhere on host-readable memory (the staging point is
// not needed there). Kokkos 3.4 does not report fences to tools; from 3.5 on it does.
std::atomic<int> fences{0};
void CountFence(const char*, std::uint32_t, std::uint64_t*) { fences.fetch_add(1); }

TEST(DevicePartials, NoFenceInSteadyState) {
  tributary::Context ctx;
  AllReduce<double> r(ctx, "fences");
  AllReduce<std::vector<std::int64_t>> h(ctx, "fences-multi");
  std::vector<Kokkos::View<double*, Mem>> data;
  std::vector<Kokkos::View<std::int64_t**, Mem>> rows;
  for (int l = 0; l < 3; ++l) {
    data.push_back(MakeData<double>(Rank(), l, 5000));
    rows.push_back(Kokkos::View<std::int64_t**, Mem>("rows", 100, 4));
  }
  auto generation = [&] {
    r.Expect(3, tributary::Sum{});
    h.Expect(3, tributary::Sum{});
    for (int l = 2; l >= 0; --l) {
      r.ContributeView(l, data[l], tributary::Sum{});
      h.ContributeView(l, rows[l], tributary::Sum{});
    }
    Wait(ctx, r);
    Wait(ctx, h);
  };
  generation();  // the first generation allocates the slots
  Kokkos::fence();
  Kokkos::Tools::Experimental::set_begin_fence_callback(&CountFence);
  fences = 0;
  for (int i = 0; i < 5; ++i) generation();
  Kokkos::Tools::Experimental::set_begin_fence_callback(nullptr);
  EXPECT_EQ(fences.load(), 0);
}

}  // namespace
