// cg_poisson: conjugate gradients for the 2-D Poisson problem (5-point Laplacian, zero
// boundary values) on an N x N grid cut into strips of rows, several strips per rank (or
// none), one task list per strip. The dot products are regional reductions: every list
// contributes its strip's partial and one network reduction per dot product starts per rank.
//
// Two variants from the same start:
//  - classic CG: two reductions per iteration (p.Ap, then r.r), each awaited;
//  - pipelined CG (Ghysels and Vanroose): one reduction per iteration (r.r and w.r in one
//    batch), in flight while every list computes the next matrix-vector product.
// The right-hand side is A u* for a known u*, so both must reach u* (max error below
// --max-error) in the same number of iterations (within 2); the program exits non-zero
// otherwise. It prints the time per iteration of both.
//
//   mpiexec -n 4 ./cg_poisson [--n 128 --strips 8 --tol 1e-10 --max-iter 2000]
//   --iterations N runs exactly N iterations of each (timing only: no convergence is asked).
// Under SimGrid SMPI (scripts/run-simulation.sh) the arithmetic is charged as simulated
// computation, flops at the simulated host's speed, since the simulator does not charge
// the CPU time itself.
// SimGrid SMPI defines exit(x) as a macro in every file; it would rename CLI11's App::exit.
#ifdef exit
#undef exit
#endif
#include <CLI/CLI.hpp>
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "tributary/tributary.hpp"

namespace {

using tributary::TaskID;
using tributary::TaskStatus;
using Vec = std::vector<double>;

constexpr double kPi = 3.14159265358979323846;

struct Problem {
  int n = 128, strips = 8, max_iter = 2000, iterations = 0;
  double tol = 1e-10, max_error = 1e-8;
  int rank = 0, size = 1;
  int Owner(int strip) const { return static_cast<int>(static_cast<long>(strip) * size / strips); }
};

// One strip: rows [row0, row0 + rows) of the grid; every vector has a ghost row above and
// below (zero at the domain's edges).
struct Strip {
  int id = 0, row0 = 0, rows = 0, n = 0;
  int up = -1, down = -1;  // neighbouring strips (-1: the boundary)
  Vec x, r, p, q, w, z, s, b, exact;
  MPI_Request requests[4];
  std::size_t At(int i, int j) const {
    return static_cast<std::size_t>(i + 1) * static_cast<std::size_t>(n) +
           static_cast<std::size_t>(j);
  }
};

// The halo exchange of one vector: posted, then polled by a task until it is done.
void PostHalo(const Problem& pb, Strip& st, Vec& v) {
  for (auto& req : st.requests) req = MPI_REQUEST_NULL;
  if (st.up >= 0) {
    MPI_Irecv(&v[st.At(-1, 0)], st.n, MPI_DOUBLE, pb.Owner(st.up), 2 * st.id, MPI_COMM_WORLD,
              &st.requests[0]);
    MPI_Isend(&v[st.At(0, 0)], st.n, MPI_DOUBLE, pb.Owner(st.up), 2 * st.up + 1, MPI_COMM_WORLD,
              &st.requests[1]);
  }
  if (st.down >= 0) {
    MPI_Irecv(&v[st.At(st.rows, 0)], st.n, MPI_DOUBLE, pb.Owner(st.down), 2 * st.id + 1,
              MPI_COMM_WORLD, &st.requests[2]);
    MPI_Isend(&v[st.At(st.rows - 1, 0)], st.n, MPI_DOUBLE, pb.Owner(st.down), 2 * st.down,
              MPI_COMM_WORLD, &st.requests[3]);
  }
}

TaskStatus HaloDone(Strip& st) {
  int done = 0;
  MPI_Testall(4, st.requests, &done, MPI_STATUSES_IGNORE);
  return done ? TaskStatus::complete : TaskStatus::incomplete;
}

// Simulated computation: under SMPI `flops` per grid point of the strip, at the simulated
// host's speed (5-point stencil: 6 per point; dot products and vector updates: 2).
void Charge([[maybe_unused]] const Strip& st, [[maybe_unused]] double flops) {
#ifdef SMPI_H
  smpi_execute_flops(flops * st.rows * st.n);
#endif
}

// out = A v on the strip's rows (v's ghost rows filled).
void Apply(const Strip& st, const Vec& v, Vec& out) {
  Charge(st, 6);
  for (int i = 0; i < st.rows; ++i)
    for (int j = 0; j < st.n; ++j) {
      const double left = j > 0 ? v[st.At(i, j - 1)] : 0.0,
                   right = j + 1 < st.n ? v[st.At(i, j + 1)] : 0.0;
      out[st.At(i, j)] =
          4.0 * v[st.At(i, j)] - v[st.At(i - 1, j)] - v[st.At(i + 1, j)] - left - right;
    }
}

double Dot(const Strip& st, const Vec& a, const Vec& b) {
  Charge(st, 2);
  double sum = 0.0;
  for (std::size_t k = st.At(0, 0); k < st.At(st.rows, 0); ++k) sum += a[k] * b[k];
  return sum;
}

// y = a x + y over the strip's rows.
void Axpy(const Strip& st, double a, const Vec& x, Vec& y) {
  Charge(st, 2);
  for (std::size_t k = st.At(0, 0); k < st.At(st.rows, 0); ++k) y[k] += a * x[k];
}
// y = x + a y.
void Xpay(const Strip& st, const Vec& x, double a, Vec& y) {
  Charge(st, 2);
  for (std::size_t k = st.At(0, 0); k < st.At(st.rows, 0); ++k) y[k] = x[k] + a * y[k];
}

using Strips = std::vector<std::unique_ptr<Strip>>;

struct Result {
  int iterations = 0;
  double start = 0, end = 0, error = 0;  // MPI_Wtime() around the iterations on this rank
};

// Waits for `r` on a rank whose lists do not poll it (no strips here).
template <class R>
void Drain(tributary::Context& ctx, R& r) {
  while (r.CheckReduce() != TaskStatus::complete) ctx.Progress();
}

double MaxError(tributary::Context& ctx, const Strips& strips) {
  tributary::AllReduce<double> err(ctx, "error");
  err.val = 0.0;
  for (const auto& st : strips)
    for (std::size_t k = st->At(0, 0); k < st->At(st->rows, 0); ++k)
      err.val = std::max(err.val, std::abs(st->x[k] - st->exact[k]));
  err.StartReduce(tributary::Max{});
  Drain(ctx, err);
  return err.val;
}

// Classic CG: alpha needs p.Ap and beta needs r.r, each a reduction awaited before use.
Result Classic(tributary::Context& ctx, const Problem& pb, Strips& strips) {
  const int lists = static_cast<int>(strips.size());
  tributary::AllReduce<double> pq(ctx, "p.Ap"), rr(ctx, "r.r");
  for (auto& st : strips) {
    std::fill(st->x.begin(), st->x.end(), 0.0);
    st->r = st->b;
    st->p = st->b;
  }
  rr.Expect(lists, tributary::Sum{});
  for (int k = 0; k < lists; ++k)
    rr.Contribute(k,
                  Dot(*strips[static_cast<std::size_t>(k)], strips[static_cast<std::size_t>(k)]->r,
                      strips[static_cast<std::size_t>(k)]->r));
  Drain(ctx, rr);
  const double rr0 = rr.val;
  double rr_old = rr0;
  Result res;
  const double t0 = MPI_Wtime();
  while (res.iterations < pb.max_iter && std::sqrt(rr_old / rr0) > pb.tol) {
    pq.Expect(lists, tributary::Sum{});
    rr.Expect(lists, tributary::Sum{});
    tributary::TaskCollection tc;
    auto& region = tc.AddRegion(lists);
    for (int k = 0; k < lists; ++k) {
      Strip* st = strips[static_cast<std::size_t>(k)].get();
      auto& tl = region[k];
      auto post = tl.AddTask(TaskID(), "post halo of p", [&pb, st] {
        PostHalo(pb, *st, st->p);
        return TaskStatus::complete;
      });
      auto halo = tl.AddTask(post, "wait for halo", [st] { return HaloDone(*st); });
      auto apply = tl.AddTask(halo, "q = Ap; contribute p.q", [st, k, &pq] {
        Apply(*st, st->p, st->q);
        return pq.Contribute(k, Dot(*st, st->p, st->q));
      });
      auto check1 = tl.AddTask(apply, "check p.q", [&pq] { return pq.CheckReduce(); });
      auto update = tl.AddTask(check1, "x, r; contribute r.r", [st, k, &pq, &rr, rr_old] {
        const double alpha = rr_old / pq.val;
        Axpy(*st, alpha, st->p, st->x);
        Axpy(*st, -alpha, st->q, st->r);
        return rr.Contribute(k, Dot(*st, st->r, st->r));
      });
      auto check2 = tl.AddTask(update, "check r.r", [&rr] { return rr.CheckReduce(); });
      tl.AddTask(check2, "p", [st, &rr, rr_old] {
        Xpay(*st, st->r, rr.val / rr_old, st->p);
        return TaskStatus::complete;
      });
    }
    ctx.Execute(tc);
    Drain(ctx, pq);
    Drain(ctx, rr);
    rr_old = rr.val;
    ++res.iterations;
  }
  res.start = t0;
  res.end = MPI_Wtime();
  res.error = MaxError(ctx, strips);
  return res;
}

// Pipelined CG: r.r and w.r travel in one batch while q = Aw is computed; then every list
// derives alpha and beta from them and updates its vectors.
Result Pipelined(tributary::Context& ctx, const Problem& pb, Strips& strips) {
  const int lists = static_cast<int>(strips.size());
  tributary::Batch dots(ctx, "r.r and w.r");
  auto& gamma = dots.Add<double>(tributary::Sum{}, "r.r");
  auto& delta = dots.Add<double>(tributary::Sum{}, "w.r");
  // x = 0, r = b, w = A r; z, s, p start at zero.
  tributary::TaskCollection setup;
  auto& sregion = setup.AddRegion(lists);
  for (int k = 0; k < lists; ++k) {
    Strip* st = strips[static_cast<std::size_t>(k)].get();
    std::fill(st->x.begin(), st->x.end(), 0.0);
    std::fill(st->z.begin(), st->z.end(), 0.0);
    std::fill(st->s.begin(), st->s.end(), 0.0);
    std::fill(st->p.begin(), st->p.end(), 0.0);
    st->r = st->b;
    auto post = sregion[k].AddTask(TaskID(), "post halo of r", [&pb, st] {
      PostHalo(pb, *st, st->r);
      return TaskStatus::complete;
    });
    auto halo = sregion[k].AddTask(post, "wait for halo", [st] { return HaloDone(*st); });
    sregion[k].AddTask(halo, "w = Ar", [st] {
      Apply(*st, st->r, st->w);
      return TaskStatus::complete;
    });
  }
  ctx.Execute(setup);
  Result res;
  double gamma0 = 0, gamma_old = 0, alpha_old = 0;
  const double t0 = MPI_Wtime();
  for (int it = 0; it <= pb.max_iter; ++it) {
    dots.Expect(lists);
    const bool first = it == 0;
    tributary::TaskCollection tc;
    auto& region = tc.AddRegion(lists);
    for (int k = 0; k < lists; ++k) {
      Strip* st = strips[static_cast<std::size_t>(k)].get();
      auto& tl = region[k];
      auto contribute = tl.AddTask(TaskID(), "contribute r.r, w.r", [st, k, &gamma, &delta] {
        gamma.Contribute(k, Dot(*st, st->r, st->r));
        return delta.Contribute(k, Dot(*st, st->w, st->r));
      });
      // The matrix-vector product runs while the reduction is in flight.
      auto post = tl.AddTask(TaskID(), "post halo of w", [&pb, st] {
        PostHalo(pb, *st, st->w);
        return TaskStatus::complete;
      });
      auto halo = tl.AddTask(post, "wait for halo", [st] { return HaloDone(*st); });
      auto apply = tl.AddTask(halo, "q = Aw", [st] {
        Apply(*st, st->w, st->q);
        return TaskStatus::complete;
      });
      auto check = tl.AddTask(contribute & apply, "check", [&dots] { return dots.CheckReduce(); });
      tl.AddTask(check, "update", [st, &gamma, &delta, first, gamma_old, alpha_old, &pb, gamma0] {
        const double g = gamma.val, d = delta.val;
        if (!first && std::sqrt(g / gamma0) <= pb.tol) return TaskStatus::complete;  // converged
        const double beta = first ? 0.0 : g / gamma_old;
        const double alpha = first ? g / d : g / (d - beta * g / alpha_old);
        Xpay(*st, st->q, beta, st->z);
        Xpay(*st, st->w, beta, st->s);
        Xpay(*st, st->r, beta, st->p);
        Axpy(*st, alpha, st->p, st->x);
        Axpy(*st, -alpha, st->s, st->r);
        Axpy(*st, -alpha, st->z, st->w);
        return TaskStatus::complete;
      });
    }
    ctx.Execute(tc);
    Drain(ctx, dots);
    const double g = gamma.val, d = delta.val;
    if (first) gamma0 = g;
    if (!first && std::sqrt(g / gamma0) <= pb.tol) break;
    const double beta = first ? 0.0 : g / gamma_old;
    alpha_old = first ? g / d : g / (d - beta * g / alpha_old);
    gamma_old = g;
    res.iterations = it + 1;
  }
  res.start = t0;
  res.end = MPI_Wtime();
  res.error = MaxError(ctx, strips);
  return res;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  Problem pb;
  MPI_Comm_rank(MPI_COMM_WORLD, &pb.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &pb.size);
  CLI::App app{
      "Classic and pipelined conjugate gradients for 2-D Poisson, one Tributary task list per "
      "strip."};
  app.add_option("--n", pb.n, "Grid points per dimension")->check(CLI::Range(4, 1 << 14));
  app.add_option("--strips", pb.strips, "Strips of rows (task lists in all)")
      ->check(CLI::PositiveNumber);
  app.add_option("--tol", pb.tol, "Relative residual to reach")->check(CLI::Range(1e-15, 1.0));
  app.add_option("--max-iter", pb.max_iter, "Iteration limit")->check(CLI::PositiveNumber);
  app.add_option("--max-error", pb.max_error,
                 "Largest acceptable error against the known solution");
  app.add_option("--iterations", pb.iterations,
                 "Run exactly this many iterations of each (timing only; 0: until --tol)")
      ->check(CLI::NonNegativeNumber);
  try {
    app.parse(argc, argv);
    if (pb.strips > pb.n) throw CLI::ValidationError("--strips", "more strips than rows");
    if (pb.iterations > 0) {  // a fixed count: never converged, never over the limit
      pb.tol = 0.0;
      pb.max_iter = pb.iterations;
    }
  } catch (const CLI::ParseError& e) {
    const int code = pb.rank == 0 ? app.exit(e) : (e.get_exit_code() == 0 ? 0 : 2);
    MPI_Finalize();
    return code;
  }
  int rc = 0;
  {
    tributary::Context ctx;
    Strips strips;
    for (int id = 0; id < pb.strips; ++id) {
      if (pb.Owner(id) != pb.rank) continue;
      auto st = std::make_unique<Strip>();
      st->id = id;
      st->n = pb.n;
      st->row0 = static_cast<int>(static_cast<long>(pb.n) * id / pb.strips);
      st->rows = static_cast<int>(static_cast<long>(pb.n) * (id + 1) / pb.strips) - st->row0;
      st->up = id > 0 ? id - 1 : -1;
      st->down = id + 1 < pb.strips ? id + 1 : -1;
      const std::size_t len =
          static_cast<std::size_t>(st->rows + 2) * static_cast<std::size_t>(pb.n);
      for (Vec* v : {&st->x, &st->r, &st->p, &st->q, &st->w, &st->z, &st->s, &st->b, &st->exact})
        v->assign(len, 0.0);
      const double h = 1.0 / (pb.n + 1);
      for (int i = -1; i <= st->rows; ++i) {
        const int gi = st->row0 + i;
        if (gi < 0 || gi >= pb.n) continue;  // outside the domain: the zero boundary
        for (int j = 0; j < pb.n; ++j)
          st->exact[st->At(i, j)] = std::sin(kPi * (gi + 1) * h) * std::sin(2 * kPi * (j + 1) * h) +
                                    0.5 * (gi + 1) * h * (j + 1) * h;
      }
      Apply(*st, st->exact, st->b);  // the ghost rows of `exact` hold the neighbours' values
      strips.push_back(std::move(st));
    }
    const Result classic = Classic(ctx, pb, strips);
    const Result pipelined = Pipelined(ctx, pb, strips);
    // Time per iteration from the latest rank's start to the latest rank's end (ranks leave
    // the set-up at different times; each rank's own span would count that skew).
    tributary::AllReduce<std::array<double, 2>> latest(ctx, "time");
    double per_iteration[2] = {0, 0};
    for (const Result* r : {&classic, &pipelined}) {
      latest.val = {r->start, r->end};
      latest.StartReduce(tributary::Max{});
      Drain(ctx, latest);
      per_iteration[r == &pipelined] = (latest.val[1] - latest.val[0]) / std::max(1, r->iterations);
    }
    const double t_classic = per_iteration[0], t_pipelined = per_iteration[1];
    const bool ok =
        pb.iterations > 0
            ? classic.iterations == pb.iterations && pipelined.iterations >= pb.iterations
            : classic.error < pb.max_error && pipelined.error < pb.max_error &&
                  std::abs(classic.iterations - pipelined.iterations) <= 2 &&
                  classic.iterations < pb.max_iter;
    if (pb.rank == 0) {
      std::printf("classic CG:   %4d iterations, max error %.2e, %.2f us per iteration\n",
                  classic.iterations, classic.error, 1e6 * t_classic);
      std::printf(
          "pipelined CG: %4d iterations, max error %.2e, %.2f us per iteration (%.2fx of "
          "classic)\n",
          pipelined.iterations, pipelined.error, 1e6 * t_pipelined, t_pipelined / t_classic);
      std::printf("%s: %dx%d grid in %d strips on %d ranks\n", ok ? "OK" : "FAILED", pb.n, pb.n,
                  pb.strips, pb.size);
    }
    rc = ok ? 0 : 1;
  }
  MPI_Finalize();
  return rc;
}
