// two-dots' driver and main (two_dots.hpp). Each cycle is one task collection with a region
// of one list per partition of this rank's blocks: the ghost exchange of s, then the
// partition's two dot products, t.(As) and t.t, into one AllReduce of a summable pair, in
// Parthenon's form (a reset on list 0, each partition's kernel and `val +=` once its ghosts
// are in, the start and the check on list 0, as Parthenon's DotProduct does) or, with
// Tributary's layer, in Tributary's (each partition's kernel as its contribution to the
// regional combine). Parthenon runs a region's tasks in the order they become ready (79d5d30
// refuses a thread pool of more than one thread), so at several ranks the partitions add
// their partials in the order their ghost cells arrive. Rank 0 then prints
//
//   TWO_DOTS form=parthenon ranks=2 partitions=16 cycles=20 ts=0x... tt=0x... distinct=3
//     ts_value=... tt_value=... ms_per_cycle=... check=ok
//
// with the bits of the last cycle's results and the number of distinct pairs of bits over
// the cycles (each cycle reduces the same data: more than one means the result depends on
// something else, such as the order the partitions finished in). It exits non-zero when a
// result is not the sum of the products (checked against a long double sum on the host).
#include <mpi.h>

#include <algorithm>
#include <bvals/comms/bvals_in_one.hpp>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <parthenon_manager.hpp>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "two_dots.hpp"

namespace two_dots {
namespace {

using namespace parthenon::driver::prelude;

std::uint64_t Bits(double x) {
  std::uint64_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}

class TwoDotsDriver : public Driver {
 public:
  TwoDotsDriver(ParameterInput* pin, ApplicationInput* app_in, Mesh* pm)
      : Driver(pin, app_in, pm) {}

  DriverStatus Execute() override {
    auto pkg = pmesh->packages.Get("two_dots");
    const std::string form = pkg->Param<std::string>("form");
    const int cycles = std::max(1, pkg->Param<int>("cycles"));
#ifndef TRIBUTARY_PARTHENON_LAYER
    if (form == "tributary") {
      if (parthenon::Globals::my_rank == 0)
        std::fprintf(stderr, "two_dots/form=tributary needs Tributary's Parthenon layer\n");
      return DriverStatus::failed;
    }
#endif
    auto partitions = pmesh->GetDefaultBlockPartitions();
    const int num_partitions = static_cast<int>(partitions.size());
    std::vector<std::pair<std::uint64_t, std::uint64_t>> results;
    std::vector<double> seconds;
    for (int cycle = 0; cycle < cycles; ++cycle) {
      TaskCollection tc;
      TaskID none(0);
      TaskRegion& region = tc.AddRegion(num_partitions);
      for (int i = 0; i < num_partitions; ++i) {
        auto& md = pmesh->mesh_data.Add("base", partitions[i]);
        TaskList& tl = region[i];
        // The ghost cells of s, as before a solver's matrix-vector product.
        auto start_recv = tl.AddTask(none, parthenon::StartReceiveBoundaryBuffers, md);
        auto send = tl.AddTask(none, parthenon::SendBoundaryBuffers, md);
        auto recv = tl.AddTask(start_recv, parthenon::ReceiveBoundaryBuffers, md);
        auto ghosts = tl.AddTask(recv | send, parthenon::SetBoundaries, md);
        if (form == "parthenon") {
          auto reset = tl.AddTask(
              TaskQualifier::once_per_region | TaskQualifier::local_sync, none,
              [](AllReduce<Dots>* r) {
                r->val = Dots();
                return TaskStatus::complete;
              },
              &dots_);
          auto add = tl.AddTask(TaskQualifier::local_sync, reset | ghosts, AddPartitionDots,
                                md.get(), &dots_);
          auto start = tl.AddTask(TaskQualifier::once_per_region, add,
                                  &AllReduce<Dots>::StartReduce, &dots_, MPI_SUM);
          tl.AddTask(TaskQualifier::once_per_region | TaskQualifier::local_sync, start,
                     &AllReduce<Dots>::CheckReduce, &dots_);
        } else {
#ifdef TRIBUTARY_PARTHENON_LAYER
          auto expect = tl.AddTask(
              TaskQualifier::once_per_region | TaskQualifier::local_sync, none,
              [num_partitions](AllReduce<Dots>* r) {
                r->Tributary().Expect(num_partitions, tributary::Sum{});
                return TaskStatus::complete;
              },
              &dots_);
          auto contribute = tl.AddTask(TaskQualifier::local_sync, expect | ghosts,
                                       ContributePartitionDots, md.get(), &dots_, i);
          tl.AddTask(TaskQualifier::once_per_region | TaskQualifier::local_sync, contribute,
                     &AllReduce<Dots>::CheckReduce, &dots_);
#endif
        }
      }
      MPI_Barrier(MPI_COMM_WORLD);
      const double t0 = MPI_Wtime();
      if (tc.Execute() != TaskListStatus::complete) return DriverStatus::failed;
      double t = MPI_Wtime() - t0;
      MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      seconds.push_back(t);
      results.emplace_back(Bits(dots_.val[0]), Bits(dots_.val[1]));
    }

    long double ref[2] = {0, 0};
    ReferenceDots(pmesh, &ref[0], &ref[1]);
    MPI_Allreduce(MPI_IN_PLACE, ref, 2, MPI_LONG_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    bool ok = true;
    for (int c = 0; c < 2; ++c) {
      const long double got = dots_.val[c];
      if (!(std::fabs(static_cast<double>(got - ref[c])) <=
            1e-12 * std::fabs(static_cast<double>(ref[c]))))
        ok = false;
    }
    const std::set<std::pair<std::uint64_t, std::uint64_t>> distinct(results.begin(),
                                                                     results.end());
    std::sort(seconds.begin(), seconds.end());
    int total_partitions = num_partitions;
    MPI_Allreduce(MPI_IN_PLACE, &total_partitions, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (parthenon::Globals::my_rank == 0)
      std::printf("TWO_DOTS form=%s ranks=%d partitions=%d cycles=%d ts=0x%016" PRIx64
                  " tt=0x%016" PRIx64
                  " distinct=%zu ts_value=%.17g tt_value=%.17g "
                  "ms_per_cycle=%.3f check=%s\n",
                  form.c_str(), parthenon::Globals::nranks, total_partitions, cycles,
                  results.back().first, results.back().second, distinct.size(),
                  static_cast<double>(dots_.val[0]), static_cast<double>(dots_.val[1]),
                  1e3 * seconds[seconds.size() / 2], ok ? "ok" : "FAILED");
    return ok ? DriverStatus::complete : DriverStatus::failed;
  }

 private:
  AllReduce<Dots> dots_;
};

Packages_t ProcessPackages(std::unique_ptr<ParameterInput>& pin) {
  Packages_t packages;
  packages.Add(Initialize(pin.get()));
  return packages;
}

}  // namespace
}  // namespace two_dots

int main(int argc, char* argv[]) {
  using parthenon::ParthenonManager;
  using parthenon::ParthenonStatus;
  ParthenonManager pman;
  pman.app_input->ProcessPackages = two_dots::ProcessPackages;
  pman.app_input->MeshProblemGenerator = two_dots::ProblemGenerator;
  auto status = pman.ParthenonInitEnv(argc, argv);
  if (status == ParthenonStatus::complete) {
    pman.ParthenonFinalize();
    return 0;
  }
  if (status == ParthenonStatus::error) {
    pman.ParthenonFinalize();
    return 1;
  }
  pman.ParthenonInitPackagesAndMesh();
  bool ok = true;
  {
    two_dots::TwoDotsDriver driver(pman.pinput.get(), pman.app_input.get(), pman.pmesh.get());
    ok = driver.Execute() == parthenon::DriverStatus::complete;
  }
  pman.ParthenonFinalize();
  return ok ? 0 : 1;
}
