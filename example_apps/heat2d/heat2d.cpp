// heat2d: nonlinear heat diffusion on a periodic 2-D grid split into blocks, one task list
// per block, several blocks per rank (or none).
//
// Every step each block's list exchanges halos with its four neighbours (non-blocking
// messages, polled), contributes its stable time step (Min of h^2 / 4 kappa(u),
// kappa(u) = kappa0 (1 + u^2)) and its conserved total as device partials (Kokkos kernels
// into per-block slots, folded in block order without a fence) to one batch (a Min and a
// Sum in one message), polls the batch, and then advances its
// cells with the global time step. The fluxes are antisymmetric bit for bit, so the total
// is conserved up to rounding in `fast` mode (checked to 1e-12 relative); in
// `rank_count_independent` mode the total is an exact sum (each block's cells summed into
// an ExactSum by Kokkos, then the cell area applied once), so its bits do not depend on the
// number of ranks or on how the grid is cut into blocks (a test compares them).
//
// Every kernel runs on Kokkos' default execution space, and the fields live in its memory
// (the GPU's in a CUDA or HIP build of Kokkos, the host's otherwise). Halo edges are packed
// into device buffers by a kernel; MPI reads those buffers directly when the Context says the
// library reads device memory, and host copies of them otherwise.
//
//   mpiexec -n 4 ./heat2d [--nx 64 --ny 64 --bx 4 --by 4 --steps 20
//                          --mode fast|run_to_run|rank_count_independent
//                          --layout contiguous|round_robin
//                          --device-aware-mpi off|on|detect]
// SimGrid SMPI defines exit(x) as a macro in every file; it would rename CLI11's App::exit.
#ifdef exit
#undef exit
#endif
#include <CLI/CLI.hpp>
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tributary/kokkos.hpp"

namespace {

using Space = Kokkos::DefaultExecutionSpace;
using Memory = Space::memory_space;
using Field = Kokkos::View<double**, Kokkos::LayoutRight, Memory>;
using Edge = Kokkos::View<double*, Memory>;
using HostEdge = Edge::HostMirror;
using Range2 = Kokkos::MDRangePolicy<Space, Kokkos::Rank<2>>;

constexpr double kPi = 3.14159265358979323846;
constexpr double kKappa0 = 0.05;
constexpr double kCfl = 0.8;

// The stable time step of one cell (explicit diffusion with kappa(u) = kappa0 (1 + u^2)).
struct StableStep {
  Field u;
  double h2;
  KOKKOS_INLINE_FUNCTION double operator()(const int i, const int j) const {
    const double kappa = kKappa0 * (1.0 + u(i, j) * u(i, j));
    return kCfl * h2 / (4.0 * kappa);
  }
};

// The amount of heat in one cell.
struct CellMass {
  Field u;
  double area;
  KOKKOS_INLINE_FUNCTION double operator()(const int i, const int j) const {
    return u(i, j) * area;
  }
};

enum Side { kWest, kEast, kSouth, kNorth };
constexpr Side kOpposite[] = {kEast, kWest, kNorth, kSouth};

struct Config {
  int nx = 64, ny = 64, bx = 4, by = 4, steps = 20;
  std::string mode = "fast", layout = "contiguous", device_mpi = "off";
};

// One block: its cells with one ghost layer, and its halo messages.
struct Block {
  int id = 0, ix = 0, iy = 0;  // global id and position in the block grid
  int nx = 0, ny = 0;          // interior cells
  int x0 = 0, y0 = 0;          // global index of the first interior cell
  Field u, unew;
  int neighbour[4] = {0, 0, 0, 0};      // global ids
  Edge send[4], recv[4];                // where the kernels pack and unpack
  HostEdge send_host[4], recv_host[4];  // what MPI reads and writes when staging
  MPI_Request requests[8];
};

int Owner(const Config& c, int id, int size) {
  const int blocks = c.bx * c.by;
  if (c.layout == "round_robin") return id % size;
  return static_cast<int>(static_cast<long>(id) * size / blocks);  // contiguous, uneven
}

// Cells of block ix along a dimension of n cells in b blocks: as even as possible.
int Start(int n, int b, int i) { return static_cast<int>(static_cast<long>(n) * i / b); }

double Initial(const Config& c, int gx, int gy) {
  const double x = (gx + 0.5) / c.nx, y = (gy + 0.5) / c.ny;
  const double bump = std::exp(-20.0 * ((x - 0.3) * (x - 0.3) + (y - 0.6) * (y - 0.6)));
  return 1.0 + 0.5 * std::sin(2 * kPi * x) * std::cos(4 * kPi * y) +
         0.25 * std::cos(6 * kPi * (x + y)) + 0.3 * bump;
}

// Copies edge cells into the send buffers (`to_ghosts` false) or received edges into the
// ghost cells (`to_ghosts` true), one kernel over the longer edge.
struct Halo {
  Field u;
  Edge west, east, south, north;
  int nx, ny;
  bool to_ghosts;
  KOKKOS_INLINE_FUNCTION void operator()(const int k) const {
    if (to_ghosts) {
      if (k < ny) u(0, k + 1) = west(k), u(nx + 1, k + 1) = east(k);
      if (k < nx) u(k + 1, 0) = south(k), u(k + 1, ny + 1) = north(k);
    } else {
      if (k < ny) west(k) = u(1, k + 1), east(k) = u(nx, k + 1);
      if (k < nx) south(k) = u(k + 1, 1), north(k) = u(k + 1, ny);
    }
  }
};

void PackEdges(const Block& b) {
  Kokkos::parallel_for(
      "heat2d::pack", Kokkos::RangePolicy<Space>(0, std::max(b.nx, b.ny)),
      Halo{b.u, b.send[kWest], b.send[kEast], b.send[kSouth], b.send[kNorth], b.nx, b.ny, false});
}

void UnpackGhosts(const Block& b) {
  Kokkos::parallel_for(
      "heat2d::unpack", Kokkos::RangePolicy<Space>(0, std::max(b.nx, b.ny)),
      Halo{b.u, b.recv[kWest], b.recv[kEast], b.recv[kSouth], b.recv[kNorth], b.nx, b.ny, true});
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  Config c;
  CLI::App app{
      "Nonlinear heat diffusion on a periodic 2-D grid, one Tributary task list per block."};
  app.add_option("--nx", c.nx, "Cells along x")->check(CLI::PositiveNumber);
  app.add_option("--ny", c.ny, "Cells along y")->check(CLI::PositiveNumber);
  app.add_option("--bx", c.bx, "Blocks along x")->check(CLI::PositiveNumber);
  app.add_option("--by", c.by, "Blocks along y")->check(CLI::PositiveNumber);
  app.add_option("--steps", c.steps, "Time steps")->check(CLI::NonNegativeNumber);
  app.add_option("--mode", c.mode, "Determinism mode")
      ->check(CLI::IsMember({"fast", "run_to_run", "rank_count_independent"}));
  app.add_option("--layout", c.layout, "Blocks to ranks")
      ->check(CLI::IsMember({"contiguous", "round_robin"}));
  app.add_option("--device-aware-mpi", c.device_mpi,
                 "Hand device memory to MPI (ContextOptions::device_aware_mpi)")
      ->check(CLI::IsMember({"off", "on", "detect"}));
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  try {
    app.parse(argc, argv);
    if (c.bx > c.nx || c.by > c.ny)
      throw CLI::ValidationError("--bx/--by", "more blocks than cells along a dimension");
  } catch (const CLI::ParseError& e) {
    const int code = rank == 0 ? app.exit(e) : (e.get_exit_code() == 0 ? 0 : 2);
    MPI_Finalize();
    return code;
  }
  Kokkos::initialize(argc, argv);
  int rc = 0;
  {
    tributary::ContextOptions options;
    options.determinism = c.mode == "fast"         ? tributary::Determinism::fast
                          : c.mode == "run_to_run" ? tributary::Determinism::run_to_run
                                                   : tributary::Determinism::rank_count_independent;
    options.device_aware_mpi = c.device_mpi == "on"       ? tributary::DeviceAwareMpi::on
                               : c.device_mpi == "detect" ? tributary::DeviceAwareMpi::detect
                                                          : tributary::DeviceAwareMpi::off;
    tributary::Context ctx(options);
    const bool exact = options.determinism == tributary::Determinism::rank_count_independent;
    // MPI is handed the device buffers themselves when the Context says the library reads
    // device memory (or the memory is the host's); otherwise host copies of them.
    const bool staged = !ctx.MpiReadsDeviceMemory() &&
                        !Kokkos::SpaceAccessibility<Kokkos::HostSpace, Memory>::accessible;
    const double hx = 1.0 / c.nx, hy = 1.0 / c.ny;

    // This rank's blocks, in global id order; list k works on blocks[k].
    std::vector<std::unique_ptr<Block>> blocks;
    for (int id = 0; id < c.bx * c.by; ++id) {
      if (Owner(c, id, size) != rank) continue;
      auto b = std::make_unique<Block>();
      b->id = id;
      b->ix = id % c.bx;
      b->iy = id / c.bx;
      b->x0 = Start(c.nx, c.bx, b->ix);
      b->y0 = Start(c.ny, c.by, b->iy);
      b->nx = Start(c.nx, c.bx, b->ix + 1) - b->x0;
      b->ny = Start(c.ny, c.by, b->iy + 1) - b->y0;
      b->u = Field("u", b->nx + 2, b->ny + 2);
      b->unew = Field("unew", b->nx + 2, b->ny + 2);
      {  // the initial state is computed on the host once and copied to the field
        const auto init = Kokkos::create_mirror_view(b->u);
        for (int i = 0; i < b->nx; ++i)
          for (int j = 0; j < b->ny; ++j) init(i + 1, j + 1) = Initial(c, b->x0 + i, b->y0 + j);
        Kokkos::deep_copy(b->u, init);
      }
      b->neighbour[kWest] = b->iy * c.bx + (b->ix + c.bx - 1) % c.bx;
      b->neighbour[kEast] = b->iy * c.bx + (b->ix + 1) % c.bx;
      b->neighbour[kSouth] = ((b->iy + c.by - 1) % c.by) * c.bx + b->ix;
      b->neighbour[kNorth] = ((b->iy + 1) % c.by) * c.bx + b->ix;
      for (int s = 0; s < 4; ++s) {
        const std::size_t n = static_cast<std::size_t>(s < 2 ? b->ny : b->nx);
        b->send[s] = Edge("send", n);
        b->recv[s] = Edge("recv", n);
        // Staged: host copies; otherwise MPI uses the device buffers themselves.
        b->send_host[s] = staged ? HostEdge("send_host", n) : HostEdge();
        b->recv_host[s] = staged ? HostEdge("recv_host", n) : HostEdge();
      }
      blocks.push_back(std::move(b));
    }
    const int lists = static_cast<int>(blocks.size());

    tributary::Batch batch(ctx, "step");
    auto& dt = batch.Add<double>(tributary::Min{}, "dt");
    auto& total = batch.Add<double>(tributary::Sum{}, "total");

    double initial_total = 0.0, total_now = 0.0;
    for (int step = 0; step <= c.steps; ++step) {
      batch.Expect(lists);
      tributary::TaskCollection tc;
      tributary::TaskRegion& region = tc.AddRegion(lists);
      for (int k = 0; k < lists; ++k) {
        Block* b = blocks[static_cast<std::size_t>(k)].get();
        auto& tl = region[k];
        auto post = tl.AddTask(tributary::TaskID(), "post halos", [b, &c, size, staged] {
          PackEdges(*b);
          if (staged)
            for (int s = 0; s < 4; ++s) Kokkos::deep_copy(Space(), b->send_host[s], b->send[s]);
          // MPI reads the buffers as soon as the send is posted: the pack (and the copy)
          // must be done. This is the halo exchange's one wait for the device.
          Space().fence();
          for (int s = 0; s < 4; ++s) {
            // The tag names the receiving block and the side its ghost is on.
            const int from = b->neighbour[s], to = b->neighbour[s];  // the same block
            double* recv = staged ? b->recv_host[s].data() : b->recv[s].data();
            double* send = staged ? b->send_host[s].data() : b->send[s].data();
            const int n = static_cast<int>(b->recv[s].extent(0));
            MPI_Irecv(recv, n, MPI_DOUBLE, Owner(c, from, size), 4 * b->id + s, MPI_COMM_WORLD,
                      &b->requests[s]);
            MPI_Isend(send, n, MPI_DOUBLE, Owner(c, to, size), 4 * to + kOpposite[s],
                      MPI_COMM_WORLD, &b->requests[4 + s]);
          }
          return tributary::TaskStatus::complete;
        });
        auto halos = tl.AddTask(post, "wait for halos", [b, staged] {
          int done = 0;
          MPI_Testall(8, b->requests, &done, MPI_STATUSES_IGNORE);
          if (!done) return tributary::TaskStatus::incomplete;
          // Queued on the default space in order: the copies to the device, then the unpack;
          // the kernels that read the ghosts come after them on the same space.
          if (staged)
            for (int s = 0; s < 4; ++s) Kokkos::deep_copy(Space(), b->recv[s], b->recv_host[s]);
          UnpackGhosts(*b);
          return tributary::TaskStatus::complete;
        });
        auto contribute = tl.AddTask(halos, "contribute", [b, k, &dt, &total, exact, hx, hy] {
          // The stable step of this block: a device partial, reduced by Kokkos over its
          // cells into the block's slot; the batch folds the blocks' slots in block order.
          const Field u = b->u;
          const Range2 cells({1, 1}, {b->nx + 1, b->ny + 1});
          dt.ContributeKernel(k, cells, StableStep{u, std::min(hx, hy) * std::min(hx, hy)},
                              tributary::Min{});
          if (exact) {  // the block's cells summed exactly where they live: the same bits
                        // whatever the blocks; the cell area is applied to the result
            const auto interior =
                Kokkos::subview(u, std::make_pair(1, b->nx + 1), std::make_pair(1, b->ny + 1));
            total.ContributeView(k, interior, tributary::Sum{});
          } else {
            total.ContributeKernel(k, cells, CellMass{u, hx * hy}, tributary::Sum{});
          }
          return tributary::TaskStatus::complete;
        });
        auto check = tl.AddTask(contribute, "check", [&batch] { return batch.CheckReduce(); });
        if (step == c.steps) continue;  // the last pass only measures the final state
        tl.AddTask(check, "advance", [b, &dt, hx, hy] {
          // Face fluxes are antisymmetric bit for bit: the same formula from either side.
          const Field u = b->u, unew = b->unew;
          const double step = dt.val, cx = step / (hx * hx), cy = step / (hy * hy);
          Kokkos::parallel_for(
              "heat2d::advance", Range2({1, 1}, {b->nx + 1, b->ny + 1}),
              KOKKOS_LAMBDA(int i, int j) {
                const auto kappa = [](double v) { return kKappa0 * (1.0 + v * v); };
                const auto face = [&](double a, double n) {
                  return 0.5 * (kappa(a) + kappa(n)) * (n - a);
                };
                const double c0 = u(i, j);
                unew(i, j) = c0 + cx * (face(c0, u(i - 1, j)) + face(c0, u(i + 1, j))) +
                             cy * (face(c0, u(i, j - 1)) + face(c0, u(i, j + 1)));
              });
          // The new state becomes the field (ghosts are refreshed next step); swapping the
          // Views instead of copying keeps the host from waiting for the kernel.
          std::swap(b->u, b->unew);
          return tributary::TaskStatus::complete;
        });
      }
      if (ctx.Execute(tc) != tributary::TaskStatus::complete) rc = 1;
      // A rank without blocks has no list that polls: it waits for its copy here.
      while (batch.CheckReduce() != tributary::TaskStatus::complete) ctx.Progress();
      total_now = exact ? total.val * (hx * hy) : total.val;  // exact: Σu, then the cell area
      if (step == 0) initial_total = total_now;
      const double drift = std::abs(total_now - initial_total) / std::abs(initial_total);
      if (rank == 0 && (step % std::max(1, c.steps / 10) == 0 || step == c.steps))
        std::printf("step %3d: dt = %.6e  total = %.17g  drift = %.1e\n", step, dt.val, total_now,
                    drift);
      if (!(drift <= 1e-12)) rc = 1;
    }
    std::uint64_t bits = 0;
    std::memcpy(&bits, &total_now, sizeof bits);
    if (rank == 0) {
      std::printf("final total bits: 0x%016" PRIx64 "\n", bits);
      std::printf(
          "%s: %d steps of a %dx%d grid in %dx%d blocks on %d ranks (%s, %s), conservation %s\n",
          rc ? "FAILED" : "OK", c.steps, c.nx, c.ny, c.bx, c.by, size, c.mode.c_str(),
          c.layout.c_str(), rc ? "violated" : "holds to 1e-12");
    }
  }
  Kokkos::finalize();
  MPI_Finalize();
  return rc;
}
