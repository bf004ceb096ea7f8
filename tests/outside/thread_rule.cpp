// One thread rule for every entry point, the same at every rank count. With plain MPI_Init
// (MPI_THREAD_SINGLE) only the thread that created the Context may call its objects: every
// call from another thread -- Expect, Contribute (the last one too), StartReduce,
// CheckReduce of a done generation, CheckGeneration, a Batch's and its members', a keyed
// collective's, a block pattern's, Context::Wait, WaitAll, Progress and Execute -- is a
// UsageError that names the thread level and what to do, and changes nothing: the same
// calls then made on the Context's thread complete the generation with the right values.
// With --level=serialized the other thread's calls are taken. Objects on the MPI library's
// schedule, which keep persistent requests (and a packed datatype) between generations, are
// destroyed on another thread: below SERIALIZED that thread makes no MPI call (counted here
// through PMPI), and the Context goes on reducing right.
// Exits 0 when every rank saw exactly that, else 1.
#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "outside_support.hpp"

namespace {

using outside::Contains;
using outside::Rank;
using outside::Size;
using tributary::TaskStatus;
constexpr const char* kProgram = "thread_rule";

struct Block {
  double value = 0;
};

// MPI calls that free what an object keeps, made on a thread other than the one that
// initialised MPI.
std::thread::id g_main;
std::atomic<int> g_frees_elsewhere{0};
void CountFree() {
  if (std::this_thread::get_id() != g_main) g_frees_elsewhere.fetch_add(1);
}

}  // namespace

extern "C" int MPI_Request_free(MPI_Request* request) {
  CountFree();
  return PMPI_Request_free(request);
}

extern "C" int MPI_Type_free(MPI_Datatype* type) {
  CountFree();
  return PMPI_Type_free(type);
}

int main(int argc, char** argv) {
  const bool serialized = outside::Arg(argc, argv, "level", "single") == "serialized";
  int provided = 0;
  if (serialized)
    MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
  else
    MPI_Init(&argc, &argv);
  MPI_Query_thread(&provided);
  g_main = std::this_thread::get_id();
  const bool refused_expected = provided < MPI_THREAD_SERIALIZED;
  bool ok = true;
  int refused = 0, taken = 0;
  auto note = [&](bool cond, const std::string& what) {
    if (!cond) {
      ok = false;
      outside::Say(kProgram, "UNEXPECTED: " + what);
    }
  };
  {
    tributary::Context ctx;
    tributary::AllReduce<double> r(ctx, "r");
    tributary::Batch step(ctx, "step");
    auto& member = step.Add<double>(tributary::Sum{}, "member");
    tributary::KeyedReduction<double> keyed(ctx, "keyed");
    const tributary::BlockGrid grid = tributary::BlockGrid::Regular(Size(), 1, Size());
    tributary::BlockReduction<Block> merge(
        ctx, tributary::MergePartners(grid, {2}),
        [](Block&, tributary::BlockProxy&, const tributary::BlockPartners&) {});
    Block mine;
    // Runs `call` on another thread: refused below SERIALIZED (and then the message must
    // say why and that nothing changed), taken at SERIALIZED.
    auto elsewhere = [&](const std::string& what, const std::function<void()>& call) {
      std::string message;
      bool threw = false;
      std::thread t([&] {
        try {
          call();
        } catch (const tributary::UsageError& e) {
          threw = true;
          message = e.what();
        } catch (const std::exception& e) {
          message = std::string("not a UsageError: ") + e.what();
        }
      });
      t.join();
      if (refused_expected) {
        note(threw && Contains(message, "MPI_THREAD_SINGLE") &&
                 Contains(message, "MPI_Init_thread") && Contains(message, "changed nothing"),
             what + " from another thread: " + (threw ? message : "was taken"));
        ++refused;
      } else {
        note(!threw && message.empty(), what + " from another thread was refused: " + message);
        ++taken;
      }
    };

    // A generation of two lists: list 0 contributes here; list 1, the last one, elsewhere.
    r.Expect(2, tributary::Sum{});
    r.Contribute(0, 1.0 + Rank());
    elsewhere("the last Contribute", [&] { r.Contribute(1, 2.0); });
    if (refused_expected) r.Contribute(1, 2.0);  // the retry the message advises is taken
    ctx.Wait(r);
    double want = 0;
    for (int q = 0; q < Size(); ++q) want += 3.0 + q;
    note(r.val == want, "the generation's value is wrong: " + std::to_string(r.val));
    // Calls on a done generation.
    elsewhere("CheckReduce", [&] { r.CheckReduce(); });
    elsewhere("CheckGeneration", [&] { r.CheckGeneration(r.Generation()); });
    const auto generation = r.Generation();
    if (refused_expected) {
      elsewhere("Expect", [&] { r.Expect(1, tributary::Sum{}); });
      elsewhere("StartReduce", [&] { r.StartReduce(tributary::Sum{}); });
      note(r.Generation() == generation && r.State() == tributary::Phase::done,
           "a refused start changed the object");
      elsewhere("Batch::Expect", [&] { step.Expect(1); });
      elsewhere("Context::Wait", [&] { ctx.Wait(r); });
      elsewhere("Context::WaitAll", [&] { ctx.WaitAll(); });
      elsewhere("Context::Progress", [&] { ctx.Progress(); });
      elsewhere("Context::Execute", [&] {
        tributary::TaskCollection tc;
        tc.AddRegion(1)[0].AddTask(tributary::TaskID(), [] { return TaskStatus::complete; });
        ctx.Execute(tc);
      });
      elsewhere("KeyedReduction::Declare", [&] {
        keyed.Declare(7, tributary::Sum{}, tributary::KeyOptions{Size(), 1, {0}, {}});
      });
      elsewhere("BlockReduction::Start", [&] {
        merge.Start({{grid.LocalBlocks(Rank()).front(), &mine}});
      });
    }
    // The batch: one member's contribution elsewhere, then the rest here.
    step.Expect(1);
    elsewhere("BatchMember::Contribute", [&] { member.Contribute(0, 1.0); });
    if (refused_expected) member.Contribute(0, 1.0);
    elsewhere("Batch::CheckReduce", [&] {
      while (step.CheckReduce() != TaskStatus::complete) {
      }
    });
    ctx.Wait(step);
    note(member.val == Size(), "the batch's value is wrong: " + std::to_string(member.val));
    // A keyed collective and a block pattern, started here, checked elsewhere.
    keyed.Declare(7, tributary::Sum{}, tributary::KeyOptions{Size(), 1, {0}, {}});
    keyed.Contribute(7, Rank(), 1.0);
    elsewhere("KeyedReduction::Check", [&] { keyed.Check(7); });
    while (keyed.Check(7) != TaskStatus::complete) ctx.Progress();
    if (Rank() == 0) note(keyed.Result(7) == Size(), "the keyed sum is wrong");
    merge.Start({{grid.LocalBlocks(Rank()).front(), &mine}});
    elsewhere("BlockReduction::Run", [&] { merge.Run(0); });
    while (merge.Run(0) != TaskStatus::complete) ctx.Progress();
    ctx.WaitAll();
  }
  {
    // Objects at rest on the library's schedule, destroyed on another thread.
    tributary::ContextOptions options;
    options.allreduce_schedule = tributary::ScheduleKind::mpi_library;
    tributary::Context lib(options);
    auto kept = std::make_unique<tributary::AllReduce<double>>(lib, "kept");
    auto packed = std::make_unique<tributary::AllReduce<std::vector<double>>>(lib, "packed");
    for (int i = 0; i < 3; ++i) {
      kept->val = 1.0;
      kept->StartReduce(tributary::Sum{});
      lib.Wait(*kept);
      packed->val.assign(3, 1.0);
      packed->StartReduce(tributary::Sum{});
      lib.Wait(*packed);
    }
    note(kept->val == Size() && packed->val == std::vector<double>(3, Size()),
         "wrong values on the library's schedule");
    std::thread t([&] {
      kept.reset();
      packed.reset();
    });
    t.join();
    if (refused_expected)
      note(g_frees_elsewhere.load() == 0, std::to_string(g_frees_elsewhere.load()) +
                                              " MPI frees on a thread that may not call MPI");
    tributary::AllReduce<double> after(lib, "after");
    for (int i = 0; i < 3; ++i) {
      after.val = i;
      after.StartReduce(tributary::Sum{});
      lib.Wait(after);
      note(after.val == i * Size(), "wrong value after the destruction elsewhere");
    }
  }
  outside::Say(kProgram, std::string(ok ? "as expected: " : "NOT as expected: ") +
                             std::to_string(refused) + " calls refused, " + std::to_string(taken) +
                             " taken (thread level " + std::to_string(provided) + ")");
  const bool all = outside::AllTrue(ok);
  MPI_Finalize();
  return all ? 0 : 1;
}
