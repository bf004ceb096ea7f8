// Kernels as device partials: ContributeKernel over RangePolicy, MDRangePolicy of rank 2-6
// and TeamPolicy (with nested TeamThreadRange / ThreadVectorRange reductions), with
// functors that give the element or accumulate it, and a user's own parallel_reduce with
// ExactSumReducer feeding Determinism::rank_count_independent. The data is a Parthenon-like
// pack: blocks of a rank-3 mesh with a number of variables that varies per block, dealt to
// ranks and lists in several layouts. In rank_count_independent mode every form and every
// layout must give the bits of one exact reference at every rank count; in fast mode
// integer sums and Min / Max must equal a host reference.
#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <exception>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "mpi_test.hpp"
#include "reduction_test.hpp"
#include "tributary/kokkos.hpp"

namespace {

using tributary::AllReduce;
using tributary::ExactSum;
using tributary::ExactSumReducer;
using tributary::testing::Rank;
using tributary::testing::SameBitsEverywhere;
using tributary::testing::Size;
using tributary::testing::Wait;

using Exec = Kokkos::DefaultExecutionSpace;
using Mem = Exec::memory_space;
using Team = Kokkos::TeamPolicy<Exec>::member_type;
template <int N>
using MD = Kokkos::MDRangePolicy<Exec, Kokkos::Rank<N>>;

// Global blocks, the most variables a block has (block b has 1 + b % kVars), and the cells.
constexpr int kBlocks = 12, kVars = 3, kNk = 3, kNj = 4, kNi = 5;

inline int VarsOf(int block) { return 1 + block % kVars; }

std::uint64_t Mix(std::uint64_t h) {
  h *= 0x9E3779B97F4A7C15ull;
  return h ^ (h >> 29);
}

// Field `f` (0 or 1) of variable v at a cell of global block b. A quarter of the cells hold
// large values (field 0 up to 2^60, field 1 one) that cancel exactly between blocks b and
// b + kBlocks / 2; the others small ones of both signs. A sum rounded in any order loses
// the small values beside the large ones: its bits show the order.
double FieldAt(int f, int b, int v, int k, int j, int i) {
  const int half = kBlocks / 2;
  const std::uint64_t cell =
      ((static_cast<std::uint64_t>(v) * 7 + static_cast<std::uint64_t>(k)) * 11 +
       static_cast<std::uint64_t>(j)) *
          13 +
      static_cast<std::uint64_t>(i);
  const std::uint64_t h = Mix(static_cast<std::uint64_t>(b % half) * 1000 + cell + 1);
  if (h % 4 == 0) {
    if (f == 1) return 1.0;
    const double mant = static_cast<double>((h >> 11) | 1) / 9007199254740992.0;
    return (b < half ? 1.0 : -1.0) * std::ldexp(mant, 40 + static_cast<int>((h >> 4) % 21));
  }
  const std::uint64_t g = Mix((static_cast<std::uint64_t>(f) * 64 + b) * 100000 + cell + 7);
  const double mant = static_cast<double>((g >> 11) | 1) / 9007199254740992.0;
  return ((g & 1) ? -1.0 : 1.0) * std::ldexp(mant, static_cast<int>((g >> 3) % 21) - 10);
}

// The blocks of each list of each rank in one of four layouts: contiguous on the ranks with
// one list per rank; one list per block; rank 1 without lists and packs of 1-2 blocks
// elsewhere; blocks dealt round-robin to the ranks in packs of up to three.
std::vector<std::vector<std::vector<int>>> Layout(int kind, int ranks) {
  std::vector<std::vector<std::vector<int>>> lists(static_cast<std::size_t>(ranks));
  std::vector<std::vector<int>> blocks(static_cast<std::size_t>(ranks));
  const bool skip_one = kind == 2 && ranks > 1;
  const int holders = skip_one ? ranks - 1 : ranks;
  for (int b = 0; b < kBlocks; ++b) {
    int r = kind == 3 ? b % ranks : b * holders / kBlocks;
    if (skip_one && r >= 1) ++r;
    blocks[static_cast<std::size_t>(r)].push_back(b);
  }
  for (int r = 0; r < ranks; ++r) {
    const auto& mine = blocks[static_cast<std::size_t>(r)];
    auto& out = lists[static_cast<std::size_t>(r)];
    for (std::size_t s = 0; s < mine.size();) {
      const std::size_t n = kind == 0   ? mine.size()
                            : kind == 1 ? 1
                            : kind == 2 ? (out.size() % 2 == 0 ? 2 : 1)
                                        : 3;
      const std::size_t e = std::min(mine.size(), s + n);
      out.emplace_back(mine.begin() + static_cast<std::ptrdiff_t>(s),
                       mine.begin() + static_cast<std::ptrdiff_t>(e));
      s = e;
    }
  }
  return lists;
}

// One list's pack in device memory: u(b, v, k, j, i) for fields 0 and 1 (variables v and
// kVars + v), and the number of variables of each of its blocks.
struct Pack {
  Kokkos::View<double*****, Kokkos::LayoutRight, Mem> u;
  Kokkos::View<int*, Mem> vars;
  int blocks = 0;
};

Pack MakePack(const std::vector<int>& blocks) {
  Pack p;
  p.blocks = static_cast<int>(blocks.size());
  p.u = decltype(p.u)("pack", blocks.size(), 2 * kVars, kNk, kNj, kNi);
  p.vars = decltype(p.vars)("vars", blocks.size());
  auto hu = Kokkos::create_mirror_view(p.u);
  auto hv = Kokkos::create_mirror_view(p.vars);
  for (std::size_t b = 0; b < blocks.size(); ++b) {
    hv(b) = VarsOf(blocks[b]);
    for (int v = 0; v < 2 * kVars; ++v)
      for (int k = 0; k < kNk; ++k)
        for (int j = 0; j < kNj; ++j)
          for (int i = 0; i < kNi; ++i)
            hu(b, v, k, j, i) = v < hv(b) || (v >= kVars && v - kVars < hv(b))
                                    ? FieldAt(v / kVars, blocks[b], v % kVars, k, j, i)
                                    : 0.0;
  }
  Kokkos::deep_copy(p.u, hu);
  Kokkos::deep_copy(p.vars, hv);
  return p;
}

// The dot product of the two fields over every variable of every block, summed exactly;
// `forward` and `backward`: the same products summed in doubles in block order and in
// reverse block order.
double ExactDot(double* forward, double* backward) {
  ExactSum s;
  std::vector<double> per_block(kBlocks, 0.0);
  *forward = 0;
  for (int b = 0; b < kBlocks; ++b)
    for (int v = 0; v < VarsOf(b); ++v)
      for (int k = 0; k < kNk; ++k)
        for (int j = 0; j < kNj; ++j)
          for (int i = 0; i < kNi; ++i) {
            const double x = FieldAt(0, b, v, k, j, i) * FieldAt(1, b, v, k, j, i);
            s += x;
            *forward += x;
            per_block[static_cast<std::size_t>(b)] += x;
          }
  *backward = 0;
  for (int b = kBlocks - 1; b >= 0; --b) *backward += per_block[static_cast<std::size_t>(b)];
  return s.Round();
}

// The functors, one per form. Each gives or accumulates the products
// u(b, v, ...) * u(b, kVars + v, ...) of the variables a block has (0 beyond them).
struct Cell {
  Kokkos::View<double*****, Kokkos::LayoutRight, Mem> u;
  KOKKOS_INLINE_FUNCTION double operator()(int b, int v, int k, int j, int i) const {
    return u(b, v, k, j, i) * u(b, kVars + v, k, j, i);
  }
};

// Rank 4 (b, k, j, i), accumulating over the block's variables: Parthenon's DotProduct.
struct DotRank4 {
  Cell cell;
  Kokkos::View<int*, Mem> vars;
  KOKKOS_INLINE_FUNCTION void operator()(int b, int k, int j, int i, ExactSum& s) const {
    for (int v = 0; v < vars(b); ++v) s += cell(b, v, k, j, i);
  }
};
// Rank 5 (b, v, k, j, i), 6 (the same and an extent of one) and 3 (b, v, cell): the product.
struct DotRank5 {
  Cell cell;
  KOKKOS_INLINE_FUNCTION double operator()(int b, int v, int k, int j, int i) const {
    return cell(b, v, k, j, i);
  }
};
struct DotRank6 {
  Cell cell;
  KOKKOS_INLINE_FUNCTION double operator()(int b, int v, int k, int j, int i, int) const {
    return cell(b, v, k, j, i);
  }
};
struct DotRank3 {
  Cell cell;
  KOKKOS_INLINE_FUNCTION double operator()(int b, int v, int c) const {
    return cell(b, v, c / (kNj * kNi), c / kNi % kNj, c % kNi);
  }
};
struct DotRange {
  Cell cell;
  KOKKOS_INLINE_FUNCTION double operator()(std::int64_t n) const {
    const int c = static_cast<int>(n % (kNk * kNj * kNi));
    const int v = static_cast<int>(n / (kNk * kNj * kNi) % kVars);
    const int b = static_cast<int>(n / (kNk * kNj * kNi * kVars));
    return cell(b, v, c / (kNj * kNi), c / kNi % kNj, c % kNi);
  }
};

// A team per block: TeamThreadRange over (v, k, j), ThreadVectorRange over i, both summed
// with ExactSumReducer; the team's ExactSum is the block's partial.
KOKKOS_INLINE_FUNCTION ExactSum BlockSum(const Cell& cell, const Team& m) {
  const int b = m.league_rank();
  ExactSum block;
  Kokkos::parallel_reduce(
      Kokkos::TeamThreadRange(m, kVars * kNk * kNj),
      [&](int vkj, ExactSum& s) {
        ExactSum row;
        Kokkos::parallel_reduce(
            Kokkos::ThreadVectorRange(m, kNi),
            [&](int i, ExactSum& r) {
              r += cell(b, vkj / (kNk * kNj), vkj / kNj % kNk, vkj % kNj, i);
            },
            ExactSumReducer<>(row));
        Kokkos::single(Kokkos::PerThread(m), [&]() { s += row; });
      },
      ExactSumReducer<>(block));
  return block;
}
struct DotTeam {
  Cell cell;
  KOKKOS_INLINE_FUNCTION ExactSum operator()(const Team& m) const { return BlockSum(cell, m); }
};
struct DotTeamAccumulating {
  Cell cell;
  KOKKOS_INLINE_FUNCTION void operator()(const Team& m, ExactSum& s) const {
    const ExactSum block = BlockSum(cell, m);
    Kokkos::single(Kokkos::PerTeam(m), [&]() { s += block; });
  }
};
// A user's own kernel per block into one ExactSum each (a rank-1 View of partials).
struct DotPerBlock {
  Cell cell;
  Kokkos::View<ExactSum*, Mem> out;
  KOKKOS_INLINE_FUNCTION void operator()(const Team& m) const {
    const ExactSum block = BlockSum(cell, m);
    Kokkos::single(Kokkos::PerTeam(m), [&]() { out(m.league_rank()) = block; });
  }
};

// The ways a list contributes its pack's dot product.
enum class Form {
  rank4_accumulate,
  rank5,
  rank6,
  rank3,
  range,
  team,
  team_accumulate,
  own_mdrange_host,
  own_team_device,
  own_blocks_device,
  batch_team,
};
const char* Name(Form f) {
  static const char* names[] = {"rank-4 MDRange accumulating ExactSum",
                                "rank-5 MDRange",
                                "rank-6 MDRange",
                                "rank-3 MDRange",
                                "RangePolicy",
                                "TeamPolicy giving ExactSum",
                                "TeamPolicy accumulating",
                                "own MDRange parallel_reduce into a host ExactSum",
                                "own team parallel_reduce into a device ExactSum",
                                "own per-block sums in a device View",
                                "batch member, team"};
  return names[static_cast<int>(f)];
}

void Contribute(Form form, AllReduce<double>& dot, tributary::BatchMember<double>* member, int l,
                const Pack& p, std::vector<Kokkos::View<ExactSum, Mem>>& keep,
                std::vector<Kokkos::View<ExactSum*, Mem>>& keep_blocks) {
  const Cell cell{p.u};
  const tributary::Sum sum;
  const int nb = p.blocks;
  switch (form) {
    case Form::rank4_accumulate:
      dot.ContributeKernel(l, MD<4>(Exec(), {0, 0, 0, 0}, {nb, kNk, kNj, kNi}),
                           DotRank4{cell, p.vars}, sum);
      break;
    case Form::rank5:
      dot.ContributeKernel(l, MD<5>(Exec(), {0, 0, 0, 0, 0}, {nb, kVars, kNk, kNj, kNi}),
                           DotRank5{cell}, sum);
      break;
    case Form::rank6:
      dot.ContributeKernel(l, MD<6>(Exec(), {0, 0, 0, 0, 0, 0}, {nb, kVars, kNk, kNj, kNi, 1}),
                           DotRank6{cell}, sum);
      break;
    case Form::rank3:
      dot.ContributeKernel(l, MD<3>(Exec(), {0, 0, 0}, {nb, kVars, kNk * kNj * kNi}),
                           DotRank3{cell}, sum);
      break;
    case Form::range:
      dot.ContributeKernel(
          l, Kokkos::RangePolicy<Exec>(Exec(), 0, std::int64_t{nb} * kVars * kNk * kNj * kNi),
          DotRange{cell}, sum);
      break;
    case Form::team:
      dot.ContributeKernel(l, Kokkos::TeamPolicy<Exec>(Exec(), nb, Kokkos::AUTO), DotTeam{cell},
                           sum);
      break;
    case Form::team_accumulate:
      dot.ContributeKernel(l, Kokkos::TeamPolicy<Exec>(Exec(), nb, Kokkos::AUTO),
                           DotTeamAccumulating{cell}, sum);
      break;
    case Form::own_mdrange_host: {
      ExactSum part;
      Kokkos::parallel_reduce(tributary::FitTiles(MD<4>(Exec(), {0, 0, 0, 0}, {nb, kNk, kNj, kNi})),
                              DotRank4{cell, p.vars}, ExactSumReducer<>(part));
      dot.Contribute(l, part);
      break;
    }
    case Form::own_team_device: {
      Kokkos::View<ExactSum, Mem> part("part");
      keep.push_back(part);
      Kokkos::parallel_reduce(Kokkos::TeamPolicy<Exec>(Exec(), nb, Kokkos::AUTO),
                              DotTeamAccumulating{cell}, ExactSumReducer(part));
      dot.ContributeView(l, Exec(), part, sum);
      break;
    }
    case Form::own_blocks_device: {
      Kokkos::View<ExactSum*, Mem> blocks("blocks", static_cast<std::size_t>(nb));
      keep_blocks.push_back(blocks);
      Kokkos::parallel_for(Kokkos::TeamPolicy<Exec>(Exec(), nb, Kokkos::AUTO),
                           DotPerBlock{cell, blocks});
      dot.ContributeView(l, Exec(), blocks, sum);
      break;
    }
    case Form::batch_team:
      member->ContributeKernel(l, Kokkos::TeamPolicy<Exec>(Exec(), nb, Kokkos::AUTO), DotTeam{cell},
                               sum);
      break;
  }
}

}  // namespace

// Every form, every layout: the exact dot product, bit for bit, at every rank count.
TEST(DeviceKernels, ExactSumsDoNotDependOnRanksLayoutsOrForms) {
  tributary::ContextOptions o;
  o.determinism = tributary::Determinism::rank_count_independent;
  tributary::Context ctx(o);
  double forward = 0, backward = 0;
  const double expect = ExactDot(&forward, &backward);
  // The data is such that the order of a rounded sum shows in its bits.
  ASSERT_TRUE(forward != expect || backward != expect);
  ASSERT_NE(forward, backward);
  AllReduce<double> dot(ctx, "dot");
  tributary::Batch batch(ctx, "batch");
  auto& member = batch.Add<double>(tributary::Sum{}, "dot");
  auto& last = batch.Add<double>(tributary::Max{}, "last block");
  for (int kind = 0; kind < 4; ++kind) {
    const auto lists = Layout(kind, Size())[static_cast<std::size_t>(Rank())];
    std::vector<Pack> packs;
    for (const auto& blocks : lists) packs.push_back(MakePack(blocks));
    const int n = static_cast<int>(lists.size());
    std::vector<double> results;
    for (int f = 0; f <= static_cast<int>(Form::batch_team); ++f) {
      const Form form = static_cast<Form>(f);
      std::vector<Kokkos::View<ExactSum, Mem>> keep;  // alive until the generation completes
      std::vector<Kokkos::View<ExactSum*, Mem>> keep_blocks;
      double got = 0;
      try {  // a kernel that cannot launch (a backend's limit) names its form
        if (form == Form::batch_team) {
          batch.Expect(n);
          for (int l = 0; l < n; ++l) {
            Contribute(form, dot, &member, l, packs[static_cast<std::size_t>(l)], keep,
                       keep_blocks);
            last.Contribute(l, static_cast<double>(lists[static_cast<std::size_t>(l)].back()));
          }
          while (batch.CheckReduce() != tributary::TaskStatus::complete) ctx.Progress();
          got = member.val;
          EXPECT_EQ(last.val, static_cast<double>(kBlocks - 1));
        } else {
          dot.Expect(n, tributary::Sum{});
          for (int l = 0; l < n; ++l)
            Contribute(form, dot, nullptr, l, packs[static_cast<std::size_t>(l)], keep,
                       keep_blocks);
          Wait(ctx, dot);
          got = dot.val;
        }
      } catch (const std::exception& e) {
        FAIL() << Name(form) << ", layout " << kind << ": " << e.what();
      }
      EXPECT_EQ(std::memcmp(&got, &expect, sizeof got), 0)
          << Name(form) << ", layout " << kind << ": " << got << " vs " << expect;
      results.push_back(got);
    }
    EXPECT_TRUE(SameBitsEverywhere(results)) << "layout " << kind;
  }
}

namespace {

// Integer data for the fast mode: exact in any order.
struct IntCells {
  Kokkos::View<std::int64_t****, Mem> v;
  KOKKOS_INLINE_FUNCTION std::int64_t operator()(int a, int b, int c, int d) const {
    return v(a, b, c, d);
  }
  KOKKOS_INLINE_FUNCTION std::int64_t operator()(int a, int b, int c, int d, int, int) const {
    return v(a, b, c, d);
  }
  KOKKOS_INLINE_FUNCTION std::int64_t operator()(int a, int b, int c, int d, int) const {
    return v(a, b, c, d);
  }
};
struct IntAccumulate {
  Kokkos::View<std::int64_t****, Mem> v;
  KOKKOS_INLINE_FUNCTION void operator()(int a, int b, int c, int d, std::int64_t& s) const {
    s += v(a, b, c, d);
  }
};
// A team per first index: its maximum from a nested TeamThreadRange reduction.
struct TeamMax {
  Kokkos::View<std::int64_t****, Mem> v;
  KOKKOS_INLINE_FUNCTION std::int64_t operator()(const Team& m) const {
    const int a = m.league_rank();
    const int nb = static_cast<int>(v.extent(1)), nc = static_cast<int>(v.extent(2)),
              nd = static_cast<int>(v.extent(3));
    std::int64_t best = 0;
    Kokkos::parallel_reduce(
        Kokkos::TeamThreadRange(m, nb * nc * nd),
        [&](int x, std::int64_t& mx) {
          const std::int64_t e = v(a, x / (nc * nd), x / nd % nc, x % nd);
          if (e > mx) mx = e;
        },
        Kokkos::Max<std::int64_t>(best));
    return best;
  }
};
struct MinAccumulate {
  Kokkos::View<std::int64_t****, Mem> v;
  KOKKOS_INLINE_FUNCTION void operator()(const Team& m, std::int64_t& low) const {
    const int a = m.league_rank();
    const int n = static_cast<int>(v.extent(1) * v.extent(2) * v.extent(3));
    const int nc = static_cast<int>(v.extent(2)), nd = static_cast<int>(v.extent(3));
    Kokkos::parallel_for(Kokkos::TeamThreadRange(m, n), [&](int x) {
      const std::int64_t e = v(a, x / (nc * nd), x / nd % nc, x % nd);
      if (e < low) low = e;
    });
  }
};

std::int64_t IntValue(int r, int l, int a, int b, int c, int d) {
  const std::uint64_t h =
      ((((static_cast<std::uint64_t>(r) * 31 + l) * 37 + a) * 41 + b) * 43 + c) * 47 + d + 1;
  return static_cast<std::int64_t>((h * 0x9E3779B97F4A7C15ull) >> 44) - 500000;
}

}  // namespace

// Fast mode: integer sums over MDRange of rank 4, 5 and 6, with a functor that gives the
// element and one that accumulates, a team's maximum from a nested reduction, and a team
// functor that accumulates its minimum: each equal to the host reference.
TEST(DeviceKernels, RanksAndTeamsInFastMode) {
  tributary::Context ctx;
  AllReduce<std::int64_t> total(ctx, "total");
  AllReduce<std::int64_t> high(ctx, "high");
  AllReduce<std::int64_t> low(ctx, "low");
  const int lists = 1 + Rank() % 3;
  const int n0 = 3, n1 = 4, n2 = 2, n3 = 5;
  std::vector<Kokkos::View<std::int64_t****, Mem>> data;
  std::int64_t want_total = 0, want_high = std::numeric_limits<std::int64_t>::min(),
               want_low = std::numeric_limits<std::int64_t>::max();
  for (int r = 0; r < Size(); ++r)
    for (int l = 0; l < 1 + r % 3; ++l) {
      Kokkos::View<std::int64_t****, Mem> v("v", n0, n1, n2, n3);
      auto h = Kokkos::create_mirror_view(v);
      for (int a = 0; a < n0; ++a)
        for (int b = 0; b < n1; ++b)
          for (int c = 0; c < n2; ++c)
            for (int d = 0; d < n3; ++d) {
              const std::int64_t x = IntValue(r, l, a, b, c, d);
              h(a, b, c, d) = x;
              want_total += x;
              want_high = std::max(want_high, x);
              want_low = std::min(want_low, x);
            }
      if (r == Rank()) {
        Kokkos::deep_copy(v, h);
        data.push_back(v);
      }
    }
  for (int form = 0; form < 3; ++form) {
    total.Expect(lists, tributary::Sum{});
    high.Expect(lists, tributary::Max{});
    low.Expect(lists, tributary::Min{});
    for (int l = 0; l < lists; ++l) {
      const auto& v = data[static_cast<std::size_t>(l)];
      if (form == 0)
        total.ContributeKernel(l, MD<4>(Exec(), {0, 0, 0, 0}, {n0, n1, n2, n3}), IntCells{v},
                               tributary::Sum{});
      else if (form == 1)
        total.ContributeKernel(l, MD<5>(Exec(), {0, 0, 0, 0, 0}, {n0, n1, n2, n3, 1}), IntCells{v},
                               tributary::Sum{});
      else
        total.ContributeKernel(l, MD<6>(Exec(), {0, 0, 0, 0, 0, 0}, {n0, n1, n2, n3, 1, 1}),
                               IntCells{v}, tributary::Sum{});
      high.ContributeKernel(l, Kokkos::TeamPolicy<Exec>(Exec(), n0, Kokkos::AUTO), TeamMax{v},
                            tributary::Max{});
      low.ContributeKernel(l, Kokkos::TeamPolicy<Exec>(Exec(), n0, Kokkos::AUTO), MinAccumulate{v},
                           tributary::Min{});
    }
    Wait(ctx, total);
    Wait(ctx, high);
    Wait(ctx, low);
    EXPECT_EQ(total.val, want_total) << "form " << form;
    EXPECT_EQ(high.val, want_high);
    EXPECT_EQ(low.val, want_low);
  }
  // A functor that accumulates (Kokkos' form) over rank 4.
  total.Expect(lists, tributary::Sum{});
  for (int l = 0; l < lists; ++l)
    total.ContributeKernel(l, MD<4>(Exec(), {0, 0, 0, 0}, {n0, n1, n2, n3}),
                           IntAccumulate{data[static_cast<std::size_t>(l)]}, tributary::Sum{});
  Wait(ctx, total);
  EXPECT_EQ(total.val, want_total);
}

namespace {

struct RoundedAccumulate {
  Kokkos::View<double*, Mem> v;
  KOKKOS_INLINE_FUNCTION void operator()(int i, double& s) const { s += v(i); }
};
struct ExactAccumulate {
  Kokkos::View<double*, Mem> v;
  KOKKOS_INLINE_FUNCTION void operator()(int i, ExactSum& s) const { s += v(i); }
};

std::string ErrorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const tributary::UsageError& e) {
    return e.what();
  }
  return {};
}

}  // namespace

// A functor that rounds as it accumulates cannot sum exactly; ExactSum partials need the
// exact mode. Each refusal names the way out and loses nothing: the generation completes.
TEST(DeviceKernels, FormsThatCannotServeTheModeAreClearErrors) {
  Kokkos::View<double*, Mem> v("v", 10);
  Kokkos::deep_copy(v, 0.5);
  const Kokkos::RangePolicy<Exec> range(Exec(), 0, 10);
  {
    tributary::ContextOptions o;
    o.determinism = tributary::Determinism::rank_count_independent;
    tributary::Context ctx(o);
    AllReduce<double> r(ctx, "exact");
    r.Expect(1, tributary::Sum{});
    const std::string e =
        ErrorOf([&] { r.ContributeKernel(0, range, RoundedAccumulate{v}, tributary::Sum{}); });
    EXPECT_NE(e.find("accumulate into a tributary::ExactSum&"), std::string::npos) << e;
    r.ContributeKernel(0, range, ExactAccumulate{v}, tributary::Sum{});
    Wait(ctx, r);
    EXPECT_EQ(r.val, 5.0 * Size());
  }
  tributary::Context ctx;
  AllReduce<double> r(ctx, "fast");
  r.Expect(1, tributary::Sum{});
  std::string e =
      ErrorOf([&] { r.ContributeKernel(0, range, ExactAccumulate{v}, tributary::Sum{}); });
  EXPECT_NE(e.find("needs Determinism::rank_count_independent"), std::string::npos) << e;
  Kokkos::View<ExactSum, Mem> part("part");
  e = ErrorOf([&] { r.ContributeView(0, Exec(), part, tributary::Sum{}); });
  EXPECT_NE(e.find("need Determinism::rank_count_independent"), std::string::npos) << e;
  r.ContributeKernel(0, range, RoundedAccumulate{v}, tributary::Sum{});
  Wait(ctx, r);
  EXPECT_EQ(r.val, 5.0 * Size());
}
