// A block pattern destroyed while a message to another rank is still in flight: the MPI
// library may still read that message's buffer after the object is gone (a large send
// completes only when the receiver takes it), so the buffer must outlive the object and the
// destruction is reported as an error, never a silent free.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "mpi_test.hpp"
#include "tributary/tributary.hpp"

namespace {

using tributary::BlockGrid;
using tributary::BlockPartners;
using tributary::BlockProxy;
using tributary::BlockReduction;
using tributary::MergePartners;
using tributary::TaskStatus;
using tributary::testing::Rank;
using tributary::testing::Size;

struct Block {
  int gid = 0;
  std::vector<std::int64_t> data;
};

// Large enough that the MPI library sends it by rendezvous: the receiver reads the
// sender's buffer when it takes the message, not when the send is posted.
constexpr std::size_t kValues = std::size_t(1) << 20;  // 8 MiB

#if TRIBUTARY_HAVE_MPI
std::int64_t Pattern(std::size_t i) { return static_cast<std::int64_t>(i * 2654435761u + 7); }

// Ranks 0 and 1 share a two-block merge: block 1 (rank 1) sends 8 MiB to block 0 (rank 0).
// Rank 1 runs its send and destroys the object before rank 0 has taken the message, then
// writes over freed memory of that size; rank 0 takes the message afterwards and must
// receive what was sent. Rank 1 gets an error that names the object.
TEST(BlockLifetime, DestroyedWithASendInFlightKeepsItsBufferAndSaysSo) {
  if (Size() < 2) GTEST_SKIP() << "needs two ranks";
  MPI_Comm pair = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, Rank() < 2 ? 0 : MPI_UNDEFINED, Rank(), &pair);
  bool ok = true;
  std::string report;
  if (pair != MPI_COMM_NULL) {
    std::vector<std::string> errors;
    tributary::ContextOptions options;
    options.error_handler = [&](const std::string& m) { errors.push_back(m); };
    // The sender waits its drain time (the watchdog's) for a send that cannot complete
    // before the receiver reaches the barrier below: 2 s instead of the default 60 s.
    if (Rank() == 1) options.watchdog = std::chrono::seconds(2);
    {
      tributary::Context ctx(pair, options);
      const BlockGrid grid({2}, 2);
      Block mine{Rank(), {}};
      if (Rank() == 1) {
        mine.data.resize(kValues);
        for (std::size_t i = 0; i < kValues; ++i) mine.data[i] = Pattern(i);
      }
      {
        BlockReduction<Block> merge(
            ctx, MergePartners(grid, {2}),
            [](Block& b, BlockProxy& rp, const BlockPartners&) {
              for (int from : rp.InLink())
                if (from != b.gid) rp.Dequeue(from, b.data);
              for (int to : rp.OutLink())
                if (to != b.gid) rp.Enqueue(to, b.data);
            },
            "early");
        merge.Start({{mine.gid, &mine}});
        if (Rank() == 1) {
          EXPECT_EQ(merge.Round(0, 0), TaskStatus::complete);  // the send is posted
          // destroyed here, its send not taken yet
        } else {
          MPI_Barrier(pair);  // rank 1 has destroyed its object and reused the memory
          while (merge.Run(0) != TaskStatus::complete) {
          }
          ok = mine.data.size() == kValues;
          for (std::size_t i = 0; ok && i < kValues; ++i) ok = mine.data[i] == Pattern(i);
        }
      }
      if (Rank() == 1) {
        // Memory of the same size, written over: a freed send buffer is likely handed out
        // again here, and the receiver would read this instead of the message.
        std::vector<std::int64_t> other(kValues + 5, -1);
        for (std::size_t i = 0; i < 4; ++i) {
          std::vector<char> churn((kValues + i) * sizeof(std::int64_t), 'x');
          other[i] = churn[i];
        }
        MPI_Barrier(pair);
        ok = errors.size() == 1;
        if (ok) report = errors.front();
        ok = ok && report.find("BlockReduction 'early'") != std::string::npos &&
             report.find("rank 1") != std::string::npos &&
             report.find("in flight") != std::string::npos;
      } else {
        ok = ok && errors.empty();
      }
      MPI_Barrier(pair);
    }
    MPI_Comm_free(&pair);
  }
  EXPECT_TRUE(tributary::testing::AllTrue(ok)) << "rank 1's report: " << report;
}
#endif

}  // namespace
