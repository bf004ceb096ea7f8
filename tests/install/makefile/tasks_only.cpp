// The task engine alone, built with the plain C++ compiler through pkg-config (no MPI).
#include <atomic>
#include <cstdio>
#include <tributary/tasks.hpp>

int main() {
  std::atomic<int> ran{0};
  tributary::TaskCollection tc;
  auto& region = tc.AddRegion(4);
  for (int i = 0; i < 4; ++i) {
    auto a = region[i].AddTask(tributary::TaskID(), [&] {
      ++ran;
      return tributary::TaskStatus::complete;
    });
    region[i].AddTask(a, [&] {
      ++ran;
      return tributary::TaskStatus::complete;
    });
  }
  tributary::SerialExecutor executor;
  const bool ok = tc.Execute(executor) == tributary::TaskStatus::complete && ran == 8;
  std::printf("tasks_only: %d tasks ran: %s\n", ran.load(), ok ? "OK" : "WRONG");
  return ok ? 0 : 1;
}
