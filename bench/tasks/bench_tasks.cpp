// Cost of the task engine: per no-op task and per poll of an incomplete task, on the
// serial and the threaded executor. Google Benchmark; single process, no MPI.
#include <benchmark/benchmark.h>

// SimGrid SMPI defines exit(x) as a macro in every file; it would rename CLI11's App::exit.
#ifdef exit
#undef exit
#endif
#include <CLI/CLI.hpp>
#include <climits>
#include <string>
#include <vector>

#include "tributary/tasks.hpp"

namespace {

using tributary::TaskID;
using tributary::TaskStatus;

// A region of `lists` lists of `per_list` no-op tasks (half chained, half independent),
// built once and executed repeatedly: the time per task is the engine's overhead.
void NoOpTasks(benchmark::State& state, tributary::Executor& ex) {
  const int lists = static_cast<int>(state.range(0)), per_list = 1000;
  tributary::TaskCollection tc;
  auto& region = tc.AddRegion(lists);
  for (int l = 0; l < lists; ++l) {
    TaskID prev;
    for (int k = 0; k < per_list; ++k)
      prev = region[l].AddTask(k % 2 ? prev : TaskID(), [] { return TaskStatus::complete; });
  }
  for (auto _ : state) benchmark::DoNotOptimize(tc.Execute(ex));
  state.SetItemsProcessed(state.iterations() * lists * per_list);
  state.counters["ns_per_task"] =
      benchmark::Counter(static_cast<double>(state.iterations()) * lists * per_list,
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

// One list per region slot, each with one task that is polled `polls` times before it
// completes: the time per poll. The back-off is switched off (it would add sleeps).
void Polls(benchmark::State& state, tributary::Executor& ex) {
  const int lists = static_cast<int>(state.range(0)), polls = 1000;
  ex.Options().spin_sweeps = INT_MAX;
  tributary::TaskCollection tc;
  auto& region = tc.AddRegion(lists);
  std::vector<int> left(static_cast<std::size_t>(lists));
  for (int l = 0; l < lists; ++l) {
    int* c = &left[static_cast<std::size_t>(l)];
    region[l].AddTask(TaskID(),
                      [c] { return --*c > 0 ? TaskStatus::incomplete : TaskStatus::complete; });
  }
  for (auto _ : state) {
    std::fill(left.begin(), left.end(), polls);
    benchmark::DoNotOptimize(tc.Execute(ex));
  }
  state.counters["ns_per_poll"] =
      benchmark::Counter(static_cast<double>(state.iterations()) * lists * polls,
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

void BM_NoOpTaskSerial(benchmark::State& state) {
  tributary::SerialExecutor ex;
  NoOpTasks(state, ex);
}
void BM_NoOpTaskThreaded(benchmark::State& state) {
  tributary::ThreadedExecutor ex(2);
  NoOpTasks(state, ex);
}
void BM_PollSerial(benchmark::State& state) {
  tributary::SerialExecutor ex;
  Polls(state, ex);
}
void BM_PollThreaded(benchmark::State& state) {
  tributary::ThreadedExecutor ex(2);
  Polls(state, ex);
}

BENCHMARK(BM_NoOpTaskSerial)->Arg(1)->Arg(8)->Arg(64)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_NoOpTaskThreaded)->Arg(8)->Arg(64)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(BM_PollSerial)->Arg(1)->Arg(8)->Arg(64)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_PollThreaded)->Arg(8)->Arg(64)->Unit(benchmark::kMicrosecond)->UseRealTime();

}  // namespace

// Google Benchmark's own options (--benchmark_filter=REGEX, --benchmark_format=json, ...) are
// passed on to it; any other option is an error.
int main(int argc, char** argv) {
  CLI::App app{
      "Cost of the task engine: per no-op task and per poll of an incomplete task, on the "
      "serial and the threaded executor.\nGoogle Benchmark's options (--benchmark_filter=REGEX, "
      "--benchmark_format=json, --benchmark_list_tests, ...) are passed on to it."};
  app.allow_extras();
  std::vector<std::string> passed{argv[0]}, unknown;
  try {
    app.parse(argc, argv);
    for (std::string& arg : app.remaining())
      (arg.rfind("--benchmark_", 0) == 0 ? passed : unknown).push_back(std::move(arg));
    if (!unknown.empty()) throw CLI::ExtrasError(unknown);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  std::vector<char*> args;
  for (std::string& arg : passed) args.push_back(arg.data());
  int nargs = static_cast<int>(args.size());
  benchmark::Initialize(&nargs, args.data());
  if (benchmark::ReportUnrecognizedArguments(nargs, args.data())) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
