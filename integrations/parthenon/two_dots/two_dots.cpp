// two-dots' package: the fields, the problem generator and the kernels (two_dots.hpp).
#include "two_dots.hpp"

#include <cstdint>
#include <kokkos_abstraction.hpp>
#include <memory>
#include <parthenon/package.hpp>
#include <string>
#include <type_traits>
#include <vector>

using namespace parthenon::package::prelude;
using parthenon::Real;

namespace two_dots {
namespace {

// Field `field` at global cell `cell`: a mantissa in [0.5, 1.5) of either sign times 2^e,
// e from -12 to 12, from a hash of the cell.
KOKKOS_INLINE_FUNCTION Real Wild(std::uint64_t cell, int field) {
  std::uint64_t h = (cell * 2 + static_cast<std::uint64_t>(field) + 1) * 0x9E3779B97F4A7C15ull;
  h ^= h >> 31;
  h *= 0xBF58476D1CE4E5B9ull;
  h ^= h >> 29;
  const Real mantissa = 0.5 + static_cast<Real>(h >> 11) * (1.0 / 9007199254740992.0);
  const int e = static_cast<int>((h >> 3) % 25) - 12;
  Real scale = 1.0;
  for (int k = 0; k < (e < 0 ? -e : e); ++k) scale *= e < 0 ? 0.5 : 2.0;
  return ((h & 1) ? -1.0 : 1.0) * mantissa * scale;
}

// (As)(i, j): the four neighbours of s (ghost cells at a block's edge), in one fixed order.
template <class Pack>
KOKKOS_INLINE_FUNCTION Real Stencil(const Pack& pack, int is, int b, int k, int j, int i) {
  return ((pack(b, is, k, j, i - 1) + pack(b, is, k, j, i + 1)) + pack(b, is, k, j - 1, i)) +
         pack(b, is, k, j + 1, i);
}

// The interior of the partition's blocks and the indices of t and s in its pack.
struct PartitionPack {
  IndexRange ib, jb, kb;
  int it = 0, is = 0;
};

PartitionPack Describe(MeshData<Real>* md, PackIndexMap& imap) {
  PartitionPack p;
  p.ib = md->GetBoundsI(IndexDomain::interior);
  p.jb = md->GetBoundsJ(IndexDomain::interior);
  p.kb = md->GetBoundsK(IndexDomain::interior);
  p.it = imap["t"].first;
  p.is = imap["s"].first;
  return p;
}

}  // namespace

std::shared_ptr<StateDescriptor> Initialize(ParameterInput* pin) {
  auto pkg = std::make_shared<StateDescriptor>("two_dots");
  const std::string form = pin->GetOrAddString("two_dots", "form", "parthenon");
  if (form != "parthenon" && form != "tributary")
    PARTHENON_THROW("two_dots/form: 'parthenon' or 'tributary'");
  pkg->AddParam<>("form", form);
  pkg->AddParam<>("cycles", pin->GetOrAddInteger("two_dots", "cycles", 10));
  pkg->AddField("t", Metadata({Metadata::Cell, Metadata::Independent}));
  pkg->AddField("s", Metadata({Metadata::Cell, Metadata::Independent, Metadata::FillGhost}));
#ifdef TRIBUTARY_PARTHENON_LAYER
  // <tributary> determinism and terms: before the driver makes its AllReduce.
  tributary::parthenon_interop::ConfigureFromInput(pin);
#endif
  return pkg;
}

void ProblemGenerator(Mesh* pm, ParameterInput* pin, MeshData<Real>* md) {
  const Real x1min = pin->GetReal("parthenon/mesh", "x1min");
  const Real x2min = pin->GetReal("parthenon/mesh", "x2min");
  const int nx1 = pin->GetInteger("parthenon/mesh", "nx1");
  const int nx2 = pin->GetInteger("parthenon/mesh", "nx2");
  const Real dx1 = (pin->GetReal("parthenon/mesh", "x1max") - x1min) / nx1;
  const Real dx2 = (pin->GetReal("parthenon/mesh", "x2max") - x2min) / nx2;
  PackIndexMap imap;
  const auto& pack = md->PackVariables(std::vector<std::string>({"t", "s"}), imap);
  const int it = imap["t"].first, is = imap["s"].first;
  const IndexRange ib = md->GetBoundsI(IndexDomain::interior);
  const IndexRange jb = md->GetBoundsJ(IndexDomain::interior);
  const IndexRange kb = md->GetBoundsK(IndexDomain::interior);
  parthenon::par_for(
      PARTHENON_AUTO_LABEL, 0, pack.GetDim(5) - 1, kb.s, kb.e, jb.s, jb.e, ib.s, ib.e,
      KOKKOS_LAMBDA(const int b, const int k, const int j, const int i) {
        const auto& coords = pack.GetCoords(b);
        // The global cell, from the cell's centre (the same in every decomposition).
        const auto gi = static_cast<std::uint64_t>((coords.Xc<1>(i) - x1min) / dx1);
        const auto gj = static_cast<std::uint64_t>((coords.Xc<2>(j) - x2min) / dx2);
        const std::uint64_t cell = gj * static_cast<std::uint64_t>(nx1) + gi;
        pack(b, it, k, j, i) = Wild(cell, 0);
        pack(b, is, k, j, i) = Wild(cell, 1);
      });
  (void)pm;
}

TaskStatus AddPartitionDots(MeshData<Real>* md, parthenon::AllReduce<Dots>* dots) {
  PackIndexMap imap;
  const auto& pack = md->PackVariables(std::vector<std::string>({"t", "s"}), imap);
  const PartitionPack p = Describe(md, imap);
  const int it = p.it, is = p.is;
  Dots partial;
  parthenon::par_reduce(
      parthenon::loop_pattern_mdrange_tag, "two_dots::AddPartitionDots", DevExecSpace(), 0,
      pack.GetDim(5) - 1, p.kb.s, p.kb.e, p.jb.s, p.jb.e, p.ib.s, p.ib.e,
      KOKKOS_LAMBDA(const int b, const int k, const int j, const int i, Dots& sum) {
        const Real t = pack(b, it, k, j, i);
        sum[0] += t * Stencil(pack, is, b, k, j, i);
        sum[1] += t * t;
      },
      Kokkos::Sum<Dots>(partial));
  dots->val += partial;
  return TaskStatus::complete;
}

#ifdef TRIBUTARY_PARTHENON_LAYER
namespace {
// Both sums of one cell into whatever the mode gives: Dots in fast and run_to_run,
// tributary::ExactSums<2> in rank_count_independent.
template <class Pack>
struct CellDots {
  Pack pack;
  int it, is;
  template <class Acc>
  KOKKOS_INLINE_FUNCTION void operator()(const int b, const int k, const int j, const int i,
                                         Acc& acc) const {
    const Real t = pack(b, it, k, j, i);
    acc[0] += t * Stencil(pack, is, b, k, j, i);
    acc[1] += t * t;
  }
};
}  // namespace

TaskStatus ContributePartitionDots(MeshData<Real>* md, parthenon::AllReduce<Dots>* dots,
                                   int partition) {
  PackIndexMap imap;
  const auto& pack = md->PackVariables(std::vector<std::string>({"t", "s"}), imap);
  const PartitionPack p = Describe(md, imap);
  using Policy = Kokkos::MDRangePolicy<DevExecSpace, Kokkos::Rank<4>>;
  const Policy policy(DevExecSpace(), {0, p.kb.s, p.jb.s, p.ib.s},
                      {pack.GetDim(5), p.kb.e + 1, p.jb.e + 1, p.ib.e + 1});
  using PackT = std::decay_t<decltype(pack)>;
  dots->Tributary().ContributeKernel(partition, policy, CellDots<PackT>{pack, p.it, p.is},
                                     tributary::Sum{});
  return TaskStatus::complete;
}
#endif

void ReferenceDots(Mesh* pm, long double* ts, long double* tt) {
  *ts = *tt = 0;
  for (auto& pmb : pm->block_list) {
    auto& data = pmb->meshblock_data.Get();
    auto t = data->Get("t").data.GetHostMirrorAndCopy();
    auto s = data->Get("s").data.GetHostMirrorAndCopy();
    const IndexRange ib = pmb->cellbounds.GetBoundsI(IndexDomain::interior);
    const IndexRange jb = pmb->cellbounds.GetBoundsJ(IndexDomain::interior);
    const IndexRange kb = pmb->cellbounds.GetBoundsK(IndexDomain::interior);
    for (int k = kb.s; k <= kb.e; ++k)
      for (int j = jb.s; j <= jb.e; ++j)
        for (int i = ib.s; i <= ib.e; ++i) {
          const Real as = ((s(k, j, i - 1) + s(k, j, i + 1)) + s(k, j - 1, i)) + s(k, j + 1, i);
          *ts += static_cast<long double>(t(k, j, i)) * as;
          *tt += static_cast<long double>(t(k, j, i)) * t(k, j, i);
        }
  }
}

}  // namespace two_dots
