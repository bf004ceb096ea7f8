// poisson-gmg-report: Parthenon's poisson_gmg example (its package, driver and problem
// generator, unchanged) with a main of our own that solves `TRIBUTARY_REPORT_SOLVES` times
// (default 3) and prints, on rank 0, one line that scripts/run-parthenon.sh reads:
//
//   REPORT solver=MG ranks=2 iterations=12 residual=0x3d... error=0x3e... solve_s=0.0123 ...
//
// with the final rms residual and error as the bits of the doubles (the example prints them
// with 6 digits), and the median wall time of the solves (the slowest rank's). Built into
// the stock and the Tributary build alike (cmake/ParthenonReport.cmake): it differs from
// the example's main.cpp only in what it prints and in repeating the solve.
//
// TRIBUTARY_REPORT_FUSE=1 (Tributary build only) opts in to one Tributary form Parthenon's
// solver code does not need to know about: BiCGSTAB's two dot products `ts` and `tt`,
// always started together, travel in one message (tributary::parthenon_interop::Fuse).
#include <mpi.h>

#include <algorithm>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "parthenon_manager.hpp"
#include "poisson_driver.hpp"
#include "poisson_equation.hpp"
#include "poisson_package.hpp"
#include "solvers/bicgstab_solver.hpp"
#include "solvers/mg_solver.hpp"

namespace {

#ifdef TRIBUTARY_PARTHENON_LAYER
// The solver keeps its reductions protected; a class derived from it may name them.
template <class Solver>
struct OmegaPair : Solver {
  static void Fuse(Solver& s) {
    tributary::parthenon_interop::Fuse(MPI_SUM, s.*(&OmegaPair::ts), s.*(&OmegaPair::tt));
  }
};
#endif

std::uint64_t Bits(double x) {
  std::uint64_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}

}  // namespace

int main(int argc, char* argv[]) {
  using parthenon::ParthenonManager;
  using parthenon::ParthenonStatus;
  ParthenonManager pman;
  pman.app_input->ProcessPackages = poisson_example::ProcessPackages;
  pman.app_input->MeshProblemGenerator = poisson_example::ProblemGenerator;
  auto manager_status = pman.ParthenonInitEnv(argc, argv);
  if (manager_status == ParthenonStatus::complete) {
    pman.ParthenonFinalize();
    return 0;
  }
  if (manager_status == ParthenonStatus::error) {
    pman.ParthenonFinalize();
    return 1;
  }
  pman.ParthenonInitPackagesAndMesh();

  const char* fuse = std::getenv("TRIBUTARY_REPORT_FUSE");
  if (fuse && *fuse == '1') {
#ifdef TRIBUTARY_PARTHENON_LAYER
    auto pkg = pman.pmesh->packages.Get("poisson_package");
    using Solver = parthenon::solvers::BiCGSTABSolver<poisson_package::u, poisson_package::rhs,
                                                      poisson_package::PoissonEquation>;
    OmegaPair<Solver>::Fuse(*pkg->MutableParam<Solver>("MGBiCGSTABsolver"));
#else
    std::fprintf(stderr, "TRIBUTARY_REPORT_FUSE needs the Tributary build\n");
    pman.ParthenonFinalize();
    return 1;
#endif
  }

  int solves = 3;
  if (const char* s = std::getenv("TRIBUTARY_REPORT_SOLVES")) solves = std::max(1, std::atoi(s));
  bool success = true;
  {
    poisson_example::PoissonDriver driver(pman.pinput.get(), pman.app_input.get(),
                                          pman.pmesh.get());
    std::vector<double> times;
    for (int k = 0; k < solves; ++k) {
      MPI_Barrier(MPI_COMM_WORLD);
      const double t0 = MPI_Wtime();
      const auto status = driver.Execute();
      double t = MPI_Wtime() - t0;
      MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      times.push_back(t);
      if (status != parthenon::DriverStatus::complete) success = false;
    }
    auto pkg = pman.pmesh->packages.Get("poisson_package");
    const auto solver = pkg->Param<std::string>("solver");
    int iterations = -1;
    using poisson_package::rhs;
    using poisson_package::u;
    using Equation = poisson_package::PoissonEquation;
    if (solver == "BiCGSTAB") {
      auto* s = pkg->MutableParam<parthenon::solvers::BiCGSTABSolver<u, rhs, Equation>>(
          "MGBiCGSTABsolver");
      iterations = s->GetFinalIterations();
    } else if (solver == "MG") {
      auto* s = pkg->MutableParam<parthenon::solvers::MGSolver<u, rhs, Equation>>("MGsolver");
      iterations = s->GetFinalIterations();
    }
    std::sort(times.begin(), times.end());
    int size = 1, rank = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0)
      std::printf("REPORT solver=%s ranks=%d blocks=%d iterations=%d residual=0x%016" PRIx64
                  " error=0x%016" PRIx64 " residual_value=%.17g solve_s=%.6f solves=%d\n",
                  solver.c_str(), size, static_cast<int>(pman.pmesh->nbtotal), iterations,
                  Bits(driver.final_rms_residual), Bits(driver.final_rms_error),
                  driver.final_rms_residual, times[times.size() / 2], solves);
    if (driver.final_rms_residual > 1.e-10 || driver.final_rms_error > 1.e-12) success = false;
    if (driver.final_rms_residual != driver.final_rms_residual) success = false;
  }
  pman.ParthenonFinalize();
  return success ? 0 : 1;
}
