// The partners of the regular block patterns: k-ary steps over a grid, and who talks to
// whom in each call of merge, broadcast, swap and all-reduce.
#include "tributary/block_partners.hpp"

#include <algorithm>
#include <string>

#include "tributary/errors.hpp"

namespace tributary {

bool BlockPartners::Active(int call, int) const { return call >= 0 && call < Calls(); }

bool BlockPartners::InMerge(int) const { return false; }

// ---------------------------------------------------------------------------------------
// RegularPartners

RegularPartners::RegularPartners(const BlockGrid& grid, std::vector<int> radix, bool contiguous)
    : BlockPartners(grid), contiguous_(contiguous) {
  if (radix.empty()) throw UsageError("BlockPartners: give one radix or a list of them");
  for (int k : radix)
    if (k < 2) throw UsageError("BlockPartners: a radix must be >= 2, not " + std::to_string(k));
  const int dims = grid.Dims();
  std::vector<int> left = grid.Divisions();
  for (bool more = true; more;) {
    more = false;
    for (int d = 0; d < dims; ++d) {
      int& n = left[static_cast<std::size_t>(d)];
      if (n == 1) continue;
      const int k = radix[std::min(steps_.size(), radix.size() - 1)];
      int f = 1;
      for (int c = std::min(k, n); c >= 2; --c)
        if (n % c == 0) {
          f = c;
          break;
        }
      if (f == 1)  // no divisor up to k: the smallest prime factor, one step
        for (int c = 2; c <= n; ++c)
          if (n % c == 0) {
            f = c;
            break;
          }
      steps_.push_back(Step{d, f, 1});
      n /= f;
      more = more || n > 1;
    }
  }
  SetStrides();
}

RegularPartners::RegularPartners(const BlockGrid& grid, const BlockSteps& steps, bool contiguous)
    : BlockPartners(grid), contiguous_(contiguous) {
  const std::vector<int>& divisions = grid.Divisions();
  std::vector<long long> product(divisions.size(), 1);
  for (const BlockStep& s : steps.List()) {
    if (s.dim < 0 || s.dim >= grid.Dims())
      throw UsageError("BlockSteps: dimension " + std::to_string(s.dim) + " of a grid of " +
                       std::to_string(grid.Dims()));
    if (s.k < 2)
      throw UsageError("BlockSteps: a step's k must be >= 2, not " + std::to_string(s.k));
    long long& p = product[static_cast<std::size_t>(s.dim)];
    p = std::min<long long>(p * s.k, 1LL << 40);  // stays above any division
    steps_.push_back(Step{s.dim, s.k, 1});
  }
  for (std::size_t d = 0; d < divisions.size(); ++d)
    if (product[d] != divisions[d])
      throw UsageError("BlockSteps: the steps along dimension " + std::to_string(d) +
                       " multiply to " + std::to_string(product[d]) + ", the grid has " +
                       std::to_string(divisions[d]) + " blocks along it");
  SetStrides();
}

// Strides: doubling multiplies the group sizes of the earlier steps along the same
// dimension; halving those of the later ones.
void RegularPartners::SetStrides() {
  for (int d = 0; d < Grid().Dims(); ++d) {
    std::vector<std::size_t> idx;
    for (std::size_t i = 0; i < steps_.size(); ++i)
      if (steps_[i].dim == d) idx.push_back(i);
    if (!contiguous_) std::reverse(idx.begin(), idx.end());
    int stride = 1;
    for (std::size_t i : idx) {
      steps_[i].stride = stride;
      stride *= steps_[i].k;
    }
  }
}

int RegularPartners::Digit(int step, int gid) const {
  const Step& s = steps_[static_cast<std::size_t>(step)];
  return Grid().Coords(gid)[static_cast<std::size_t>(s.dim)] / s.stride % s.k;
}

std::vector<int> RegularPartners::Group(int step, int gid) const {
  const Step& s = steps_[static_cast<std::size_t>(step)];
  std::vector<int> c = Grid().Coords(gid);
  const int base = c[static_cast<std::size_t>(s.dim)] - Digit(step, gid) * s.stride;
  std::vector<int> group(static_cast<std::size_t>(s.k));
  for (int j = 0; j < s.k; ++j) {
    c[static_cast<std::size_t>(s.dim)] = base + j * s.stride;
    group[static_cast<std::size_t>(j)] = Grid().Gid(c);
  }
  return group;
}

int RegularPartners::Toward(int step, int gid, int target) const {
  return Group(step, gid)[static_cast<std::size_t>(Digit(step, target))];
}

bool RegularPartners::Leads(int steps, int gid) const {
  for (int s = 0; s < steps; ++s)
    if (Digit(s, gid) != 0) return false;
  return true;
}

// ---------------------------------------------------------------------------------------
// The patterns. Call c of a merge receives the groups of step c - 1 and sends for step c;
// a broadcast runs the steps backwards.

bool MergePartners::Active(int call, int gid) const {
  return call >= 0 && call < Calls() && Leads(call, gid);
}

std::vector<int> MergePartners::InLink(int call, int gid) const {
  if (call <= 0 || !Active(call, gid)) return {};
  return Group(call - 1, gid);
}

std::vector<int> MergePartners::OutLink(int call, int gid) const {
  if (call >= StepCount() || !Active(call, gid)) return {};
  return {Group(call, gid)[0]};
}

bool BroadcastPartners::Active(int call, int gid) const {
  return call >= 0 && call < Calls() && Leads(StepCount() - call, gid);
}

std::vector<int> BroadcastPartners::InLink(int call, int gid) const {
  if (call <= 0 || !Active(call, gid)) return {};
  return {Group(StepCount() - call, gid)[0]};
}

std::vector<int> BroadcastPartners::OutLink(int call, int gid) const {
  if (call >= StepCount() || !Active(call, gid)) return {};
  return Group(StepCount() - 1 - call, gid);
}

std::vector<int> SwapPartners::InLink(int call, int gid) const {
  if (call <= 0 || call >= Calls()) return {};
  return Group(call - 1, gid);
}

std::vector<int> SwapPartners::OutLink(int call, int gid) const {
  if (call < 0 || call >= StepCount()) return {};
  return Group(call, gid);
}

bool AllReducePartners::Active(int call, int gid) const {
  const int s = StepCount();
  if (call < 0 || call >= Calls()) return false;
  return call <= s ? Leads(call, gid) : Leads(2 * s - call, gid);
}

std::vector<int> AllReducePartners::InLink(int call, int gid) const {
  const int s = StepCount();
  if (call <= 0 || !Active(call, gid)) return {};
  if (call <= s) return Group(call - 1, gid);
  return {Group(2 * s - call, gid)[0]};
}

std::vector<int> AllReducePartners::OutLink(int call, int gid) const {
  const int s = StepCount();
  if (call >= 2 * s || !Active(call, gid)) return {};
  if (call < s) return {Group(call, gid)[0]};
  return Group(2 * s - 1 - call, gid);
}

}  // namespace tributary
