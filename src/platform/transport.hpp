// Point-to-point byte messages for objects that talk rank to rank outside the collective
// schedules (keyed collectives, block patterns).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tributary/config.hpp"
#include "tributary/context.hpp"

namespace tributary::detail {

/// Byte buffers kept with their capacity for reuse: a large buffer allocated fresh for every
/// message is faulted in page by page each time (memory returned to the system comes back
/// zeroed), which dominated large patterns. Holds at most `limit` buffers, the largest.
class BufferPool {
 public:
  explicit BufferPool(std::size_t limit) : limit_(limit) {}
  /// A buffer whose capacity holds `bytes`: a kept one less than twice as large when there
  /// is one, else the smallest larger one, else a new one; its contents and size are
  /// unspecified (what it held last: resizing it up to that size writes nothing).
  std::vector<char> Take(std::size_t bytes);
  /// Keeps `buffer` for a later Take (dropped when the pool is full of larger ones).
  void Give(std::vector<char>&& buffer);

 private:
  static constexpr int kClasses = 64;  // class c: capacities in [2^c, 2^(c+1))
  std::vector<std::vector<char>> kept_[kClasses];
  std::size_t limit_, count_ = 0;
};

/// Byte messages between the ranks of a Context on a communicator of the object's own
/// (duplicated at construction, collective; freed with it), received by matched probe;
/// every message carries a nonce agreed at construction, so leftovers of a freed
/// communicator the MPI library reused are dropped. Messages to this rank stay in memory.
/// Used by the keyed collectives and the block patterns.
class Transport {
 public:
  /// `owner` names the object in the error of a destruction with sends in flight.
  explicit Transport(Context& ctx, std::string owner = {});
  /// Sends still in flight get the Context's drain time (its watchdog's, 60 s without one)
  /// to complete, messages arriving meanwhile dropped; those that still have not (a large
  /// one completes only when its receiver takes it) keep their buffers, which the MPI
  /// library may still read: they are never freed, and the destruction is reported through
  /// the Context's error handler, naming the owner.
  ~Transport();
  Transport(const Transport&) = delete;
  Transport& operator=(const Transport&) = delete;
  /// Bytes at the start of a buffer given to SendBuffer that belong to the transport.
  static constexpr std::size_t kPrefix = sizeof(std::uint64_t);

  /// The Context goes first: errors of the destruction go to stderr from then on.
  void Orphan() noexcept { ctx_ = nullptr; }
  /// Sends `head` followed by `body` (either may be empty) as one message to `rank`.
  void Send(int rank, const void* head, std::size_t head_bytes, const void* body,
            std::size_t body_bytes);
  /// Sends `wire` as one message to `rank` without copying it: the message is what follows
  /// its first kPrefix bytes, which the transport overwrites. The buffer goes to Pool()
  /// once the send has completed.
  void SendBuffer(int rank, std::vector<char>&& wire);
  /// The next message that has arrived, or false.
  bool Receive(std::vector<char>& bytes);
  /// The next message that has arrived, in a buffer from Pool() whose message begins at
  /// kPrefix (as SendBuffer took it), or false.
  bool ReceiveBuffer(std::vector<char>& wire);
  /// Whether every send has completed (completed sends give their buffers to Pool()).
  bool SendsDone();
  /// The buffers of completed sends, and any a user of the transport gives back.
  BufferPool& Pool() noexcept;
  /// Collective (blocking) on the object's communicator: the lowest rank where `ok` is
  /// false, or -1 when it is true on every rank.
  int FirstFailing(bool ok);
  int Rank() const noexcept { return rank_; }
  int Size() const noexcept { return size_; }
  std::uint64_t RemoteMessages() const noexcept { return remote_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  Context* ctx_;
  std::string owner_;
  std::chrono::duration<double> drain_{60};  // how long the destruction waits for sends
  int rank_ = 0, size_ = 1;
  std::uint64_t remote_ = 0;
};

#if TRIBUTARY_HAVE_MPI
/// A number drawn on rank 0 of `comm` and broadcast (collective): tags one object's
/// messages.
std::uint64_t AgreedNonce(MPI_Comm comm);
#endif

}  // namespace tributary::detail
