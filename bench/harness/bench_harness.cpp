#include "bench_harness.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <utility>

namespace tributary::bench {

Runner::Runner(MPI_Comm comm, std::string benchmark, std::string baseline, Options options)
    : comm_(comm),
      benchmark_(std::move(benchmark)),
      baseline_(std::move(baseline)),
      options_(options) {
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
  int counts[3] = {options_.warmup, options_.iterations, options_.repetitions};
  int mins[3], maxs[3];
  MPI_Allreduce(counts, mins, 3, MPI_INT, MPI_MIN, comm_);
  MPI_Allreduce(counts, maxs, 3, MPI_INT, MPI_MAX, comm_);
  if (std::memcmp(mins, maxs, sizeof mins) != 0) {
    if (rank_ == 0) std::fprintf(stderr, "bench: iteration counts differ across ranks\n");
    MPI_Abort(comm_, 3);
  }
}

void Runner::Add(std::string variant, std::function<void()> body, std::function<bool()> check) {
  variants_.push_back(Variant{std::move(variant), std::move(body), std::move(check)});
}

namespace {
double Quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(pos);
  const std::size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (pos - static_cast<double>(lo)) * (v[hi] - v[lo]);
}
}  // namespace

double Median(std::vector<double> values) {
  return values.empty() ? 0.0 : Quantile(std::move(values), 0.5);
}

double PairedRatio(const Result& a, const Result& b) {
  std::vector<double> ratios;
  for (std::size_t k = 0; k < a.repetitions_s.size() && k < b.repetitions_s.size(); ++k)
    if (b.repetitions_s[k] > 0) ratios.push_back(a.repetitions_s[k] / b.repetitions_s[k]);
  return Median(std::move(ratios));
}

void Runner::Run(const std::string& parameter) {
  const std::size_t nv = variants_.size();
  std::vector<std::vector<double>> per_rep(nv);
  std::vector<double> times(static_cast<std::size_t>(options_.iterations));
  std::vector<double> slowest(times.size());
  for (std::size_t v = 0; v < nv; ++v)
    for (int i = 0; i < options_.warmup; ++i) {
      MPI_Barrier(comm_);
      variants_[v].body();
    }
  for (int rep = 0; rep < options_.repetitions; ++rep) {
    if (options_.progress && rank_ == 0)
      std::fprintf(stderr, "  %s, %s: repetition %d/%d\n", benchmark_.c_str(), parameter.c_str(),
                   rep + 1, options_.repetitions);
    for (std::size_t v = 0; v < nv; ++v) {  // interleaved: A B A B across repetitions
      for (int i = 0; i < options_.iterations; ++i) {
        MPI_Barrier(comm_);
        const double t0 = MPI_Wtime();
        variants_[v].body();
        times[static_cast<std::size_t>(i)] = MPI_Wtime() - t0;
      }
      MPI_Allreduce(times.data(), slowest.data(), options_.iterations, MPI_DOUBLE, MPI_MAX, comm_);
      double sum = 0;
      for (double t : slowest) sum += t;
      per_rep[v].push_back(sum / options_.iterations);
      int ok = !variants_[v].check || variants_[v].check() ? 1 : 0, all_ok = 0;
      MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, comm_);
      if (!all_ok) {
        if (rank_ == 0)
          std::fprintf(stderr, "bench %s: variant '%s' at %s gave a wrong result\n",
                       benchmark_.c_str(), variants_[v].name.c_str(), parameter.c_str());
        MPI_Abort(comm_, 4);
      }
    }
  }
  double base = 0;
  for (std::size_t v = 0; v < nv; ++v)
    if (variants_[v].name == baseline_) base = Quantile(per_rep[v], 0.5);
  for (std::size_t v = 0; v < nv; ++v) {
    Result r;
    r.benchmark = benchmark_;
    r.parameter = parameter;
    r.variant = variants_[v].name;
    r.median_s = Quantile(per_rep[v], 0.5);
    r.q1_s = Quantile(per_rep[v], 0.25);
    r.q3_s = Quantile(per_rep[v], 0.75);
    r.min_s = *std::min_element(per_rep[v].begin(), per_rep[v].end());
    r.max_s = *std::max_element(per_rep[v].begin(), per_rep[v].end());
    r.ratio = base > 0 ? r.median_s / base : 0.0;
    r.repetitions_s = per_rep[v];
    results_.push_back(r);
  }
  variants_.clear();
}

void Runner::Report() const {
  if (rank_ != 0) return;
  std::printf("\n### %s (%d ranks; median of %d repetitions x %d iterations)\n\n",
              benchmark_.c_str(), size_, options_.repetitions, options_.iterations);
  std::printf("| parameter | variant | median | min | max | IQR | ratio to %s |\n",
              baseline_.c_str());
  std::printf("|---|---|---|---|---|---|---|\n");
  for (const auto& r : results_)
    std::printf("| %s | %s | %s | %s | %s | %s | %.2f |\n", r.parameter.c_str(), r.variant.c_str(),
                FormatSeconds(r.median_s).c_str(), FormatSeconds(r.min_s).c_str(),
                FormatSeconds(r.max_s).c_str(), FormatSeconds(r.q3_s - r.q1_s).c_str(), r.ratio);
  std::fflush(stdout);
  if (options_.csv.empty()) return;
  const bool fresh = !std::ifstream(options_.csv).good();
  std::ofstream csv(options_.csv, std::ios::app);
  if (fresh) csv << "benchmark,ranks,parameter,variant,median_s,min_s,max_s,q1_s,q3_s,ratio\n";
  for (const auto& r : results_)
    csv << '"' << r.benchmark << "\"," << size_ << ",\"" << r.parameter << "\",\"" << r.variant
        << "\"," << r.median_s << ',' << r.min_s << ',' << r.max_s << ',' << r.q1_s << ',' << r.q3_s
        << ',' << r.ratio << '\n';
}

CommandLine::CommandLine(std::string description, Options defaults)
    : app(std::move(description)), options(std::move(defaults)) {
  iterations_ = app.add_option("--iterations", options.iterations,
                               "Timed iterations per variant per repetition")
                    ->capture_default_str();
  repetitions_ =
      app.add_option("--repetitions", options.repetitions, "Repetitions; the median is reported")
          ->capture_default_str();
  warmup_ = app.add_option("--warmup", options.warmup, "Untimed iterations per variant")
                ->capture_default_str();
  app.add_option("--csv", options.csv, "CSV file to append the results to");
  app.add_flag("--quick", quick,
               "Very few iterations (5, 2 repetitions, 1 warm-up) and small messages: checks "
               "that every variant runs and is right");
}

int CommandLine::Parse(int argc, char** argv) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (rank == 0) return app.exit(e);
    return e.get_exit_code();
  }
  if (quick) {
    if (iterations_->count() == 0) options.iterations = 5;
    if (repetitions_->count() == 0) options.repetitions = 2;
    if (warmup_->count() == 0) options.warmup = 1;
  }
  return -1;
}

double MedianOf(const std::vector<Result>& results, const std::string& variant) {
  for (const auto& r : results)
    if (r.variant == variant) return r.median_s;
  return 0;
}

Options ForMessage(Options o, std::size_t bytes, bool quick) {
  if (quick) return o;
  const std::size_t it = bytes <= 1024         ? 1000
                         : bytes <= 16384      ? 300
                         : bytes <= 131072     ? 60
                         : bytes <= (1u << 20) ? 12
                         : bytes <= (4u << 20) ? 4
                                               : 2;
  o.iterations = static_cast<int>(it);
  o.warmup = static_cast<int>(std::min<std::size_t>(20, it));
  return o;
}

std::string FormatBytes(std::size_t b) {
  char buf[32];
  if (b >= (1u << 20) && b % (1u << 20) == 0)
    std::snprintf(buf, sizeof buf, "%zu MiB", b >> 20);
  else if (b >= 1024 && b % 1024 == 0)
    std::snprintf(buf, sizeof buf, "%zu KiB", b >> 10);
  else
    std::snprintf(buf, sizeof buf, "%zu B", b);
  return buf;
}

std::string FormatSeconds(double s) {
  char buf[32];
  if (s < 1e-6)
    std::snprintf(buf, sizeof buf, "%.0f ns", s * 1e9);
  else if (s < 1e-3)
    std::snprintf(buf, sizeof buf, "%.2f µs", s * 1e6);
  else if (s < 1)
    std::snprintf(buf, sizeof buf, "%.2f ms", s * 1e3);
  else
    std::snprintf(buf, sizeof buf, "%.2f s", s);
  return buf;
}

std::string FormatRatio(double r) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", r);
  return buf;
}

void GoalTable::Add(std::string comparison, std::string median, std::string ratio,
                    std::string goal) {
  rows_.push_back({std::move(comparison), std::move(median), std::move(ratio), std::move(goal)});
}

void GoalTable::Print(const char* title) const {
  const bool goals =
      std::any_of(rows_.begin(), rows_.end(), [](const Row& r) { return !r.goal.empty(); });
  std::printf("\n### %s\n\n| comparison | median | ratio |%s\n|---|---|---|%s\n", title,
              goals ? " goal |" : "", goals ? "---|" : "");
  for (const Row& r : rows_) {
    std::printf("| %s | %s | %s |", r.comparison.c_str(), r.median.c_str(), r.ratio.c_str());
    if (goals) std::printf(" %s |", r.goal.c_str());
    std::printf("\n");
  }
}

std::string GoalTable::Verdict(const char* goal, bool met) {
  return std::string(goal) + (met ? " — met" : " — **not met**");
}

}  // namespace tributary::bench
