// 10^5 create / start / check / destroy cycles: no communicator per cycle, resident memory
// flat, and (under AddressSanitizer in CI) no leak.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "mpi_test.hpp"
#include "tributary/tributary.hpp"

namespace {

using tributary::TaskStatus;

// Resident set size in KiB (Linux), or -1.
long ResidentKiB() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  return -1;
}

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

TEST(Leaks, HundredThousandCyclesKeepMemoryAndCommunicatorsFlat) {
  tributary::Context ctx;
  const int comms = ctx.CommunicatorsCreated();
  const int cycles = kSanitized ? 20000 : 100000;
  long rss_after_warmup = 0;
  bool ok = true;
  for (int c = 0; c < cycles; ++c) {
    if (c % 3 == 0) {
      tributary::AllReduce<double> r(ctx);
      r.val = 1.0;
      r.StartReduce(tributary::Sum{});
      while (r.CheckReduce() != TaskStatus::complete) {
      }
      ok = ok && r.val == ctx.Size();
    } else if (c % 3 == 1) {
      tributary::AllReduce<std::vector<int>> r(ctx);
      r.Expect(2, tributary::Max{});
      r.Contribute(1, std::vector<int>(5, c));
      r.Contribute(0, std::vector<int>(5, 1));
      while (r.CheckReduce() != TaskStatus::complete) {
      }
      ok = ok && r.val[4] == c;
    } else {
      tributary::Batch b(ctx);
      auto& x = b.Add<double>(tributary::Min{});
      auto& y = b.Add<long>(tributary::Sum{});
      x.val = 2.0;
      y.val = 1;
      b.StartReduce();
      while (b.CheckReduce() != TaskStatus::complete) {
      }
      ok = ok && y.val == ctx.Size();
    }
    if (c == 999) rss_after_warmup = ResidentKiB();
  }
  const long rss_end = ResidentKiB();
  TRIBUTARY_EXPECT_ALL(ok);
  TRIBUTARY_EXPECT_ALL(ctx.CommunicatorsCreated() == comms);
  TRIBUTARY_EXPECT_ALL(ctx.LiveObjects() == 0);
  if (!kSanitized)  // the sanitizer's quarantine grows by design
    TRIBUTARY_EXPECT_ALL(rss_end - rss_after_warmup <= 1024);
  if (tributary::testing::Rank() == 0)
    std::printf("resident: %ld KiB after 1000 cycles, %ld KiB after %d\n", rss_after_warmup,
                rss_end, cycles);
}

}  // namespace
