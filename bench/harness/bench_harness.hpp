// The benchmark harness every Tributary MPI benchmark uses.
//
//  - Iteration counts are fixed and identical on every rank (checked): adaptive counts
//    deadlock collectives.
//  - Variants run interleaved (A B A B ...) within each repetition, after warm-up, with a
//    barrier before every iteration. An iteration's time is the slowest rank's.
//  - Per variant: median over repetitions of the mean time per iteration, with min, max
//    and inter-quartile range; ratios to a baseline measured in the same run.
//  - Every variant's result is checked after each repetition; a wrong result aborts.
//  - Output: a markdown table on stdout (rank 0) and CSV rows appended to a file.
#pragma once

#include "tributary/config.hpp"
#if TRIBUTARY_HAVE_MPI
#include <mpi.h>
#else
#include "one_process_mpi.hpp"
#endif

// SimGrid SMPI defines exit(x) as a macro in every file; it would rename CLI11's App::exit.
#ifdef exit
#undef exit
#endif
#include <CLI/CLI.hpp>
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace tributary::bench {

struct Options {
  int warmup = 20;       ///< Untimed iterations per variant before the first repetition.
  int iterations = 200;  ///< Timed iterations per variant per repetition.
  int repetitions = 7;   ///< Repetitions; the median is reported.
  std::string csv;       ///< CSV file to append to (empty: none).
  bool progress = true;  ///< Progress lines on stderr (rank 0).
};

/// One measured variant at one parameter value.
struct Result {
  std::string benchmark, parameter, variant;
  double median_s = 0, min_s = 0, max_s = 0, q1_s = 0, q3_s = 0;
  double ratio = 1.0;                 ///< median / baseline's median (same run, same parameter)
  std::vector<double> repetitions_s;  ///< the mean time per iteration of each repetition
};

/// The median over repetitions of `a`'s time / `b`'s time in the same repetition: for two
/// variants run one after the other within each repetition, the ratio with the machine's
/// drift between repetitions taken out.
double PairedRatio(const Result& a, const Result& b);

class Runner {
 public:
  /// `benchmark` names the table; `baseline` is the variant ratios refer to.
  Runner(MPI_Comm comm, std::string benchmark, std::string baseline, Options options = {});

  /// Adds a variant: `body` runs one iteration; `check` (optional) validates the result
  /// after each repetition and must return true on every rank.
  void Add(std::string variant, std::function<void()> body, std::function<bool()> check = {});
  /// Runs every variant at `parameter` and records the results; clears the variants.
  void Run(const std::string& parameter);
  /// The results so far.
  const std::vector<Result>& Results() const noexcept { return results_; }
  /// Prints the markdown table (rank 0) and appends CSV rows (rank 0).
  void Report() const;
  int Rank() const noexcept { return rank_; }
  int Size() const noexcept { return size_; }
  const Options& Opts() const noexcept { return options_; }

 private:
  struct Variant {
    std::string name;
    std::function<void()> body;
    std::function<bool()> check;
  };
  MPI_Comm comm_;
  std::string benchmark_, baseline_;
  Options options_;
  int rank_ = 0, size_ = 1;
  std::vector<Variant> variants_;
  std::vector<Result> results_;
};

/// A benchmark's command line (CLI11): the options every benchmark takes, --iterations N
/// --repetitions N --warmup N --csv FILE --quick, plus the program's own, added to `app`
/// before Parse. --help prints the usage; an unknown option is an error.
class CommandLine {
 public:
  CommandLine(std::string description, Options defaults);
  CommandLine(const CommandLine&) = delete;
  CommandLine& operator=(const CommandLine&) = delete;

  /// Parses argv on every rank (after MPI_Init). Returns -1 when the program goes on, else
  /// the code to exit with (after MPI_Finalize): 0 after --help, non-zero after a bad or
  /// unknown option. Only rank 0 prints the usage or the error.
  int Parse(int argc, char** argv);

  CLI::App app;
  /// The harness options; after --quick, very few iterations (unless given explicitly).
  Options options;
  /// --quick: very few iterations and small messages, every result still checked.
  bool quick = false;

 private:
  CLI::Option* iterations_;
  CLI::Option* repetitions_;
  CLI::Option* warmup_;
};

/// `base` with iteration and warm-up counts for one message of `bytes` that keep a
/// variant's repetition near 0.4-10 ms at 2 ranks on the development machine (`quick`:
/// unchanged).
Options ForMessage(Options base, std::size_t bytes, bool quick);

/// The median of `values` (the mean of the middle two for an even count), 0 when empty.
double Median(std::vector<double> values);

/// The median time of `variant` among `results` (the first such row), 0 when absent.
double MedianOf(const std::vector<Result>& results, const std::string& variant);

/// The closing table of a benchmark program: one row per comparison, its figures against
/// their goals. docs/performance.md takes it as printed, by its heading.
class GoalTable {
 public:
  struct Row {
    std::string comparison, median, ratio, goal;
  };
  void Add(std::string comparison, std::string median, std::string ratio = {},
           std::string goal = {});
  /// Prints "### <title>" and the table on stdout (the goal column only when a row has a
  /// goal); call on rank 0 only.
  void Print(const char* title = "Against the goals") const;
  /// "≤ 1.3 — met", "≥ 5x — **not met**".
  static std::string Verdict(const char* goal, bool met);

 private:
  std::vector<Row> rows_;
};

/// "0.87".
std::string FormatRatio(double r);
/// "8 B", "64 KiB", "16 MiB".
std::string FormatBytes(std::size_t bytes);
/// "1.23 µs", "4.5 ms".
std::string FormatSeconds(double s);

}  // namespace tributary::bench
