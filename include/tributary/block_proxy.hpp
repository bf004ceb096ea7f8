// What a block's callback sees in one call of a block pattern: its links, the messages that
// arrived from the blocks of its in-link, and the messages it sends to its out-link.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "tributary/block_serialization.hpp"

namespace tributary {

namespace detail {
class BlockEngine;
class AllToAllAdapter;
struct RecordFrame;  // a message of a routed all-to-all (detail/blocks/block_all_to_all.hpp)

// What the proxy needs of the engine that hands it out, so that it does not include it:
/// Appends `bytes` bytes to the frame's message (src/blocks/block_all_to_all.cpp).
void WriteRecord(RecordFrame& frame, const char* data, std::size_t bytes);
/// The frame of block `gid` among an all-to-all's frames (src/blocks/block_all_to_all.cpp).
RecordFrame& FrameOf(RecordFrame* frames, int gid);
/// The reduction, generation, block, round and rank of one call, for messages
/// (src/blocks/block_engine.cpp).
std::string BlockCallWhere(const BlockEngine& engine, int gid, int call);
}  // namespace detail

/// What a block's callback sees in one call: its links and its messages. A value travels
/// through BlockSerialization<T> (trivially copyable values as their bytes, std::vector,
/// std::string, std::pair, std::array, and types with a Save / Load of the user's own); a
/// block dequeues values from one sender in the order they were enqueued.
class BlockProxy {
 public:
  /// The block's gid.
  int Gid() const noexcept { return gid_; }
  /// The call of the pattern this is (0 .. Calls() - 1).
  int Round() const noexcept { return call_; }
  /// The gids whose messages of the previous call arrived for this call.
  const std::vector<int>& InLink() const noexcept { return in_; }
  /// The gids this call may send to.
  const std::vector<int>& OutLink() const noexcept { return out_; }

  /// Appends `value` to the message for block `to` (UsageError when `to` is not in the
  /// out-link).
  template <class T>
  void Enqueue(int to, const T& value) {
    BlockWriter out = Outgoing(to);
    out.Save(value);
  }
  /// Appends `count` values from `values`, without a count (read them back with the
  /// pointer form of Dequeue).
  template <class T>
  void Enqueue(int to, const T* values, std::size_t count) {
    BlockWriter out = Outgoing(to);
    detail::SaveElements(out, values, count);
  }
  /// Reads the next value from block `from` (UsageError when `from` is not in the in-link or
  /// its message has less left).
  template <class T>
  void Dequeue(int from, T& value) {
    BlockReader in = Incoming(from);
    in.Load(value);
  }
  /// Reads the next `count` values from block `from` into `values`.
  template <class T>
  void Dequeue(int from, T* values, std::size_t count) {
    BlockReader in = Incoming(from);
    detail::LoadElements(in, values, count);
  }
  /// The next `count` values from block `from` where they lie in its message, without
  /// copying them: valid until the callback returns. For types that travel as their bytes
  /// (read what Enqueue(to, values, count) wrote); UsageError when fewer are left, or when
  /// they are not aligned for T in the message (values of another type before them).
  template <class T>
  const T* DequeueInPlace(int from, std::size_t count) {
    static_assert(detail::kBytewise<T>,
                  "DequeueInPlace reads values that travel as their bytes; use Dequeue");
    BlockReader in = Incoming(from);
    const std::size_t bytes = count > std::numeric_limits<std::size_t>::max() / sizeof(T)
                                  ? std::numeric_limits<std::size_t>::max()
                                  : count * sizeof(T);
    return reinterpret_cast<const T*>(in.ReadInPlace(bytes, alignof(T)));
  }
  /// The message for block `to`, to write into directly.
  BlockWriter Outgoing(int to);
  /// The message from block `from`, to read from directly (reads advance Remaining).
  BlockReader Incoming(int from);
  /// Bytes not yet dequeued from `from`.
  std::size_t Remaining(int from) const;

 private:
  friend class detail::BlockEngine;
  friend class detail::AllToAllAdapter;
  friend class BlockReader;

  std::string Where() const;

  // A message that arrived: `size` bytes at `data`, which point into `bytes` or into
  // memory the engine keeps alive for the call (an all-to-all's bundle).
  struct In {
    std::vector<char> bytes;
    const char* data = nullptr;
    std::size_t size = 0;
    std::size_t read = 0;
  };

  int gid_ = 0;
  int call_ = 0;
  const detail::BlockEngine* engine_ = nullptr;  // names the object in errors
  std::vector<int> in_, out_;
  std::map<int, In> incoming_;
  // The messages this call sends, each after `prefix_` bytes that the engine fills.
  std::map<int, std::vector<char>> outgoing_;
  std::size_t prefix_ = 0;
  detail::RecordFrame* frames_ = nullptr;  // by gid: writes go into all-to-all records
};

}  // namespace tributary
