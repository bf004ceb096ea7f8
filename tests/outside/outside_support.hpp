// What the outside programs share, written as a user's program would write it: MPI started
// by the program (at the thread level it asks for), a collective verdict, and a task system
// of the program's own (a pool of worker threads that runs ready tasks and queues an
// incomplete one again, as Parthenon's does) that declares its cycles with ForeignCycle.
#pragma once

#include <mpi.h>

#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <tributary/tributary.hpp>
#include <vector>

namespace outside {

inline int Rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}
inline int Size() {
  int s = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
}

/// Prints one line, prefixed with the program and the rank, and flushes it.
inline void Say(const char* program, const std::string& line) {
  std::printf("%s: rank %d: %s\n", program, Rank(), line.c_str());
  std::fflush(stdout);
}

/// True on every rank when `ok` holds on every rank.
inline bool AllTrue(bool ok) {
  int mine = ok ? 1 : 0, all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return all != 0;
}

/// The text of `argv` after `--name=`, or `fallback`.
inline std::string Arg(int argc, char** argv, const std::string& name,
                       const std::string& fallback) {
  const std::string prefix = "--" + name + "=";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.rfind(prefix, 0) == 0) return a.substr(prefix.size());
  }
  return fallback;
}

inline bool Contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

using Task = std::function<tributary::TaskStatus()>;
using Lists = std::vector<std::vector<Task>>;  // each list's tasks run in order

/// A pool of worker threads: a queue of ready tasks; a worker runs one and queues the list's
/// next task when it completes, the same task again when it does not. Run waits, and
/// rethrows the first exception a task threw once every worker has let go of its task.
class Pool {
 public:
  explicit Pool(int threads) {
    for (int t = 0; t < threads; ++t) workers_.emplace_back([this] { Work(); });
  }
  ~Pool() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      exit_ = true;
    }
    ready_.notify_all();
    for (auto& w : workers_) w.join();
  }
  Pool(const Pool&) = delete;
  Pool& operator=(const Pool&) = delete;

  void Run(Lists& lists) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      lists_ = &lists;
      left_ = 0;
      busy_ = 0;
      error_ = nullptr;
      for (std::size_t l = 0; l < lists.size(); ++l)
        if (!lists[l].empty()) {
          queue_.push_back({l, 0});
          ++left_;
        }
    }
    ready_.notify_all();
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [this] { return (left_ == 0 || error_) && busy_ == 0; });
    queue_.clear();
    lists_ = nullptr;
    if (error_) std::rethrow_exception(error_);
  }

 private:
  struct Item {
    std::size_t list, task;
  };
  void Work() {
    for (;;) {
      Item item{};
      {
        std::unique_lock<std::mutex> lock(mutex_);
        ready_.wait(lock, [this] { return exit_ || (!queue_.empty() && !error_); });
        if (exit_) return;
        item = queue_.front();
        queue_.pop_front();
        ++busy_;
      }
      tributary::TaskStatus status = tributary::TaskStatus::fail;
      std::exception_ptr error;
      try {
        status = (*lists_)[item.list][item.task]();
      } catch (...) {
        error = std::current_exception();
      }
      std::lock_guard<std::mutex> lock(mutex_);
      --busy_;
      if (!error && status == tributary::TaskStatus::fail)
        error = std::make_exception_ptr(std::runtime_error("a task returned fail"));
      if (error) {
        if (!error_) error_ = error;
        done_.notify_all();
      } else if (status != tributary::TaskStatus::complete) {
        queue_.push_back(item);
        ready_.notify_one();
      } else if (item.task + 1 < (*lists_)[item.list].size()) {
        queue_.push_back({item.list, item.task + 1});
        ready_.notify_one();
      } else if (--left_ == 0) {
        done_.notify_all();
      }
      if (busy_ == 0) done_.notify_all();
    }
  }
  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable ready_, done_;
  std::deque<Item> queue_;
  Lists* lists_ = nullptr;
  int left_ = 0;
  int busy_ = 0;
  bool exit_ = false;
  std::exception_ptr error_;
};

}  // namespace outside
