// Values in device memory: AllReduce / Reduce of a View whose memory space is staged
// through the host (StageThroughHost). No GPU is needed: this test declares Kokkos'
// HostSpace staged, so the code CudaSpace and HIPSpace values take (device-kernel staging,
// host-copy staging, the copy back, device-aware MPI) runs on a host backend. Everything in
// this executable sees the same declaration.
#include <Kokkos_Core.hpp>

#include "tributary/kokkos.hpp"

namespace tributary {
template <>
struct StageThroughHost<Kokkos::HostSpace> : std::true_type {};
}  // namespace tributary

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "device_data.hpp"
#if TRIBUTARY_HAVE_MPI
#include "library_calls.hpp"
#endif
#include "mpi_test.hpp"
#include "reduction_test.hpp"

namespace {

using tributary::AllReduce;
using tributary::Reduce;
using tributary::TaskStatus;
using tributary::testing::IntAt;
using tributary::testing::ListsOn;
using tributary::testing::Rank;
using tributary::testing::SameBitsEverywhere;
using tributary::testing::Size;
using tributary::testing::Wait;

using Mem = Kokkos::DefaultExecutionSpace::memory_space;
using DView = Kokkos::View<double*, Mem>;
using IView = Kokkos::View<std::int64_t*, Mem>;

static_assert(tributary::detail::IsStagedView<DView>::value, "the test's Views must be staged");
static_assert(std::is_base_of_v<tributary::detail::StagedReduction<DView>, AllReduce<DView>>);

template <class V>
V Filled(int r, int l, std::int64_t n) {
  V v("v", static_cast<std::size_t>(n));
  auto h = Kokkos::create_mirror_view(v);
  for (std::int64_t i = 0; i < n; ++i)
    h(static_cast<std::size_t>(i)) = static_cast<typename V::value_type>(IntAt(r, l, i)) /
                                     (std::is_floating_point_v<typename V::value_type> ? 8 : 1);
  Kokkos::deep_copy(v, h);
  return v;
}

template <class V>
std::vector<typename V::value_type> ToHost(const V& v) {
  std::vector<typename V::value_type> out(v.extent(0));
  Kokkos::deep_copy(Kokkos::View<typename V::value_type*, Kokkos::HostSpace,
                                 Kokkos::MemoryTraits<Kokkos::Unmanaged>>(out.data(), out.size()),
                    v);
  return out;
}

// Sum over ranks 0..Size()-1 (list 0) of IntAt, scaled like Filled.
template <class E>
std::vector<E> SumOverRanks(std::int64_t n) {
  std::vector<E> ref(static_cast<std::size_t>(n), E(0));
  for (int r = 0; r < Size(); ++r)
    for (std::int64_t i = 0; i < n; ++i)
      ref[static_cast<std::size_t>(i)] +=
          static_cast<E>(IntAt(r, 0, i)) / (std::is_floating_point_v<E> ? 8 : 1);
  return ref;
}

// x -> a x + b composed left to right (rank 0's map first): not commutative, exact in
// integers, and not callable on a device (no commute-free shortcut: it is staged by a copy).
struct Affine {
  std::int64_t a = 1, b = 0;
};
struct Compose {
  static constexpr bool commutative = false;
  static Affine identity() { return Affine{}; }
  void operator()(const Affine& in, Affine& inout) const {
    inout = Affine{in.a * inout.a, in.b * inout.a + inout.b};
  }
};
using AView = Kokkos::View<Affine*, Mem>;

TEST(StagedView, AllReduceSumAcrossGenerationsAndLengths) {
  tributary::Context ctx;
  AllReduce<DView> total(ctx, "staged-sum");
  for (std::int64_t n : {37, 1, 0, 1000, 37}) {
    total.val = Filled<DView>(Rank(), 0, n);
    EXPECT_EQ(total.StartReduce(tributary::Sum{}), TaskStatus::complete);
    Wait(ctx, total);
    EXPECT_FALSE(total.PassedDeviceMemory());
    ASSERT_EQ(total.val.extent(0), static_cast<std::size_t>(n));
    const auto got = ToHost(total.val);
    EXPECT_EQ(got, SumOverRanks<double>(n)) << "n = " << n;
    TRIBUTARY_EXPECT_ALL(SameBitsEverywhere(got));
  }
  EXPECT_EQ(total.Generation(), 5u);
}

TEST(StagedView, NonCommutativeOperatorStagesThroughAHostCopy) {
  tributary::Context ctx;
  AllReduce<AView> maps(ctx, "staged-affine");
  for (int gen = 0; gen < 3; ++gen) {
    const std::size_t n = 5 + static_cast<std::size_t>(gen);
    maps.val = AView("maps", n);
    auto h = Kokkos::create_mirror_view(maps.val);
    for (std::size_t i = 0; i < n; ++i)
      h(i) = Affine{2 + (Rank() + gen) % 3, Rank() * 10 + static_cast<std::int64_t>(i)};
    Kokkos::deep_copy(maps.val, h);
    maps.StartReduce(Compose{});
    Wait(ctx, maps);
    const auto got = ToHost(maps.val);
    ASSERT_EQ(got.size(), n);
    for (std::size_t i = 0; i < n; ++i) {
      Affine ref;  // rank 0's map applied first
      for (int r = Size() - 1; r >= 0; --r) {
        const Affine m{2 + (r + gen) % 3, r * 10 + static_cast<std::int64_t>(i)};
        Compose{}(m, ref);
      }
      EXPECT_EQ(got[i].a, ref.a);
      EXPECT_EQ(got[i].b, ref.b);
    }
  }
}

TEST(StagedView, ReduceToEveryRootWithSeparateInput) {
  tributary::Context ctx;
  Reduce<IView> r(ctx, "staged-reduce");
  const std::int64_t n = 129;
  const IView input = Filled<IView>(Rank(), 0, n);
  for (int root = 0; root < Size(); ++root) {
    r.val = IView("val", 3);
    Kokkos::deep_copy(r.val, std::int64_t(-7));
    r.StartReduce(root, tributary::Sum{}, input);
    Wait(ctx, r);
    if (Rank() == root) {
      EXPECT_EQ(ToHost(r.val), SumOverRanks<std::int64_t>(n));
    } else {
      EXPECT_EQ(ToHost(r.val), std::vector<std::int64_t>(3, -7)) << "a non-root's val changed";
    }
    EXPECT_EQ(ToHost(input), ToHost(Filled<IView>(Rank(), 0, n))) << "the input changed";
    // In place: val is the contribution.
    r.val = Filled<IView>(Rank(), 0, n);
    r.StartReduce(root, tributary::Max{});
    Wait(ctx, r);
    if (Rank() == root) {
      std::vector<std::int64_t> ref(static_cast<std::size_t>(n), INT64_MIN);
      for (int q = 0; q < Size(); ++q)
        for (std::int64_t i = 0; i < n; ++i)
          ref[static_cast<std::size_t>(i)] =
              std::max(ref[static_cast<std::size_t>(i)], IntAt(q, 0, i));
      EXPECT_EQ(ToHost(r.val), ref);
    } else {
      EXPECT_EQ(ToHost(r.val), ToHost(Filled<IView>(Rank(), 0, n)));
    }
  }
}

TEST(StagedView, RegionalCombineFromDeviceKernelsAndDevicePartials) {
  tributary::Context ctx;
  AllReduce<IView> hist(ctx, "staged-regional");
  const std::int64_t k = 16;
  std::vector<std::int64_t> ref(static_cast<std::size_t>(k), 0);
  for (int q = 0; q < Size(); ++q)
    for (int l = 0; l < ListsOn(q); ++l)
      for (std::int64_t i = 0; i < k; ++i) ref[static_cast<std::size_t>(i)] += IntAt(q, l, i);
  const int lists = ListsOn(Rank());
  std::vector<IView> parts;
  for (int l = 0; l < lists; ++l) parts.push_back(Filled<IView>(Rank(), l, k));
  for (int pass = 0; pass < 2; ++pass) {
    hist.val = IView("hist", static_cast<std::size_t>(k));  // the length, for a rank without lists
    hist.Expect(lists, tributary::Sum{});
    for (int l = lists - 1; l >= 0; --l) {
      if (pass == 0)
        hist.ContributeView(l, parts[static_cast<std::size_t>(l)], tributary::Sum{});
      else
        hist.Contribute(l, parts[static_cast<std::size_t>(l)]);  // copied to the host first
    }
    Wait(ctx, hist);
    EXPECT_EQ(ToHost(hist.val), ref) << "pass " << pass;
  }
}

TEST(StagedView, RankCountIndependentSumsExactly) {
  tributary::ContextOptions o;
  o.determinism = tributary::Determinism::rank_count_independent;
  tributary::Context ctx(o);
  AllReduce<DView> staged(ctx, "staged-exact");
  AllReduce<std::vector<double>> host(ctx, "host-exact");
  // Element 2: 1e16 on rank 0, -1e16 on the last rank, 2^-1000 on the others; its exact sum
  // is (Size() - 2) 2^-1000 from 3 ranks on, where a float sum in rank order gives 0.
  const std::size_t n = 3;
  std::vector<double> mine(n, 0.0);
  mine[0] = Rank() == 0 ? 1e16 : 1.0;
  mine[1] = 1.0;
  mine[2] = Rank() == 0 ? 1e16 : Rank() == Size() - 1 ? -1e16 : 0x1p-1000;
  staged.val = DView("v", n);
  Kokkos::deep_copy(
      staged.val, Kokkos::View<double*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(
                      mine.data(), n));
  host.val = mine;
  staged.StartReduce(tributary::Sum{});
  host.StartReduce(tributary::Sum{});
  Wait(ctx, staged);
  Wait(ctx, host);
  const auto got = ToHost(staged.val);
  ASSERT_EQ(got.size(), n);
  EXPECT_EQ(std::memcmp(got.data(), host.val.data(), n * sizeof(double)), 0);
  EXPECT_EQ(got[1], static_cast<double>(Size()));
  EXPECT_EQ(got[2], Size() == 1 ? 1e16 : (Size() - 2) * 0x1p-1000);
  TRIBUTARY_EXPECT_ALL(SameBitsEverywhere(got));
}

#if TRIBUTARY_HAVE_MPI
TEST(StagedView, DeviceAwareMpiHandsTheViewToTheLibrary) {
  tributary::ContextOptions o;
  o.device_aware_mpi = tributary::DeviceAwareMpi::on;
  o.communicator_pool = 2;  // the library's schedule for the first two objects
  tributary::Context ctx(o);
  EXPECT_TRUE(ctx.MpiReadsDeviceMemory());
  AllReduce<DView> total(ctx, "direct-sum");
  total.val = Filled<DView>(Rank(), 0, 300);
  const double* before = total.val.data();
  const long inits = g_allreduce_inits, posts = g_iallreduces;
  total.StartReduce(tributary::Sum{});
  Wait(ctx, total);
  EXPECT_TRUE(total.PassedDeviceMemory());
  EXPECT_EQ(total.ScheduleUsed(), tributary::ScheduleKind::mpi_library);
  EXPECT_EQ(total.val.data(), before);  // reduced where it lies
  // Never on a persistent request, whose buffer is host memory the data is copied to.
  EXPECT_EQ(g_allreduce_inits, inits);
  EXPECT_EQ(g_iallreduces, posts + (Size() > 1 ? 1 : 0));
  EXPECT_EQ(ToHost(total.val), SumOverRanks<double>(300));

  Reduce<IView> r(ctx, "direct-reduce");
  const IView input = Filled<IView>(Rank(), 0, 64);
  const int root = Size() - 1;
  r.val = IView("val", 1);
  Kokkos::deep_copy(r.val, std::int64_t(5));
  r.StartReduce(root, tributary::Sum{}, input);
  Wait(ctx, r);
  EXPECT_TRUE(r.PassedDeviceMemory());
  if (Rank() == root)
    EXPECT_EQ(ToHost(r.val), SumOverRanks<std::int64_t>(64));
  else
    EXPECT_EQ(ToHost(r.val), std::vector<std::int64_t>(1, 5));

  // Not for the library: an object beyond the pool, a user operator, and run_to_run (the
  // library's order is unspecified).
  AllReduce<DView> third(ctx, "beyond-the-pool");
  third.val = Filled<DView>(Rank(), 0, 40);
  third.StartReduce(tributary::Sum{});
  Wait(ctx, third);
  EXPECT_FALSE(third.PassedDeviceMemory());
  EXPECT_EQ(ToHost(third.val), SumOverRanks<double>(40));
  AllReduce<AView> maps(ctx, "staged-anyway");
  maps.val = AView("maps", 2);
  maps.StartReduce(Compose{});
  Wait(ctx, maps);
  EXPECT_FALSE(maps.PassedDeviceMemory());
  total.SetDeterminism(tributary::Determinism::run_to_run);
  total.val = Filled<DView>(Rank(), 0, 300);
  total.StartReduce(tributary::Sum{});
  Wait(ctx, total);
  EXPECT_FALSE(total.PassedDeviceMemory());
  EXPECT_NE(total.ScheduleUsed(), tributary::ScheduleKind::mpi_library);
  EXPECT_EQ(ToHost(total.val), SumOverRanks<double>(300));
}

TEST(StagedView, DetectionAnswersForTheBackendInUse) {
  tributary::ContextOptions o;
  o.device_aware_mpi = tributary::DeviceAwareMpi::detect;
  tributary::Context ctx(o);
#if !defined(KOKKOS_ENABLE_CUDA) && !defined(KOKKOS_ENABLE_HIP)
  EXPECT_FALSE(ctx.MpiReadsDeviceMemory());  // a host backend has no device memory to hand over
#endif
  tributary::Context off;
  EXPECT_FALSE(off.MpiReadsDeviceMemory());
}
#endif

TEST(StagedView, StartWhileInFlightIsAnError) {
  tributary::Context ctx;
  AllReduce<DView> total(ctx, "staged-twice");
  total.val = Filled<DView>(Rank(), 0, 8);
  total.Expect(2, tributary::Sum{});
  total.ContributeView(0, total.val, tributary::Sum{});
  EXPECT_THROW(total.StartReduce(tributary::Sum{}), tributary::UsageError);
  total.ContributeView(1, total.val, tributary::Sum{});
  Wait(ctx, total);
  std::vector<double> ref = SumOverRanks<double>(8);
  for (double& x : ref) x *= 2;
  EXPECT_EQ(ToHost(total.val), ref);
}

// `f` throws a UsageError whose text contains `what`.
template <class F>
void ExpectUsageError(F&& f, const std::string& what) {
  try {
    f();
    ADD_FAILURE() << "no error; expected one about '" << what << "'";
  } catch (const tributary::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
  }
}

// Bad input on a value in device memory: the same clear errors as for host values, and
// the object stays usable.
TEST(StagedView, BadInputIsAClearErrorAndTheObjectStaysUsable) {
  tributary::Context ctx;
  AllReduce<IView> r(ctx, "staged-errors");
  const IView four = Filled<IView>(Rank(), 0, 4), five = Filled<IView>(Rank(), 1, 5);
  r.val = IView("val", 4);
  r.Expect(2, tributary::Sum{});
  ExpectUsageError([&] { r.ContributeView(2, four, tributary::Sum{}); }, "out of range");
  ExpectUsageError([&] { r.Contribute(-1, four); }, "out of range");
  r.ContributeView(0, four, tributary::Sum{});
  ExpectUsageError([&] { r.ContributeView(0, four, tributary::Sum{}); }, "twice");
  // Lengths that must match but differ across lists fail this rank's generation.
  ExpectUsageError([&] { r.ContributeView(1, five, tributary::Sum{}); }, "different lengths");
  EXPECT_THROW(r.CheckReduce(), tributary::UsageError);
  // Every rank failed the same way, so none entered the network phase; the next
  // generation is clean.
  r.val = Filled<IView>(Rank(), 0, 4);
  r.StartReduce(tributary::Sum{});
  Wait(ctx, r);
  EXPECT_EQ(ToHost(r.val), SumOverRanks<std::int64_t>(4));

  // Lengths that differ across ranks: every rank's CheckReduce reports it (basic checks).
  if (Size() > 1) {
    r.val = Filled<IView>(Rank(), 0, Rank() == 0 ? 3 : 4);
    r.StartReduce(tributary::Sum{});
    ExpectUsageError([&] { Wait(ctx, r); }, "lengths differ");
    r.val = Filled<IView>(Rank(), 0, 4);
    r.StartReduce(tributary::Sum{});
    Wait(ctx, r);
    EXPECT_EQ(ToHost(r.val), SumOverRanks<std::int64_t>(4));
  }
}

// Steady-state hand-wired generations with a builtin operator fence nowhere: the value is
// staged by a device kernel and an asynchronous copy, and copied back asynchronously.
std::atomic<int> fences{0};
void CountFence(const char*, std::uint32_t, std::uint64_t*) { fences.fetch_add(1); }

TEST(StagedView, NoFenceInSteadyState) {
  tributary::Context ctx;
  AllReduce<DView> total(ctx, "staged-fences");
  total.val = Filled<DView>(Rank(), 0, 4000);
  auto generation = [&] {
    total.StartReduce(tributary::Sum{});
    Wait(ctx, total);
  };
  generation();  // the first generation allocates
  Kokkos::fence();
  Kokkos::Tools::Experimental::set_begin_fence_callback(&CountFence);
  fences = 0;
  for (int i = 0; i < 5; ++i) generation();
  Kokkos::Tools::Experimental::set_begin_fence_callback(nullptr);
  EXPECT_EQ(fences.load(), 0);
}

}  // namespace
