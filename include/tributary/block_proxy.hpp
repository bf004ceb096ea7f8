// What a block's callback sees in one call of a block pattern: its links, the messages that
// arrived from the blocks of its in-link, and the messages it sends to its out-link.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <type_traits>
#include <vector>

namespace tributary {

namespace detail {
class BlockEngine;
class AllToAllAdapter;
}  // namespace detail

/// What a block's callback sees in one call: its links and its messages. Enqueued values
/// are copied as bytes (trivially copyable values and std::vector of them); a block
/// dequeues values from one sender in the order they were enqueued.
class BlockProxy {
 public:
  int Gid() const noexcept { return gid_; }
  int Round() const noexcept { return call_; }
  const std::vector<int>& InLink() const noexcept { return in_; }
  const std::vector<int>& OutLink() const noexcept { return out_; }

  template <class T>
  void Enqueue(int to, const T& value) {
    static_assert(std::is_trivially_copyable_v<T>,
                  "Enqueue: a trivially copyable value or a std::vector of them");
    Append(to, &value, sizeof(T));
  }
  template <class T>
  void Enqueue(int to, const std::vector<T>& values) {
    static_assert(std::is_trivially_copyable_v<T>,
                  "Enqueue: a std::vector of trivially copyable values");
    const std::uint64_t n = values.size();
    Append(to, &n, sizeof n);
    Append(to, values.data(), n * sizeof(T));
  }
  template <class T>
  void Dequeue(int from, T& value) {
    static_assert(std::is_trivially_copyable_v<T>,
                  "Dequeue: a trivially copyable value or a std::vector of them");
    Take(from, &value, sizeof(T));
  }
  template <class T>
  void Dequeue(int from, std::vector<T>& values) {
    static_assert(std::is_trivially_copyable_v<T>,
                  "Dequeue: a std::vector of trivially copyable values");
    std::uint64_t n = 0;
    Take(from, &n, sizeof n);
    values.resize(static_cast<std::size_t>(n));
    Take(from, values.data(), static_cast<std::size_t>(n) * sizeof(T));
  }
  /// Bytes not yet dequeued from `from`.
  std::size_t Remaining(int from) const;

 private:
  friend class detail::BlockEngine;
  friend class detail::AllToAllAdapter;
  void Append(int to, const void* data, std::size_t bytes);
  void Take(int from, void* data, std::size_t bytes);

  std::string Where() const;

  int gid_ = 0;
  int call_ = 0;
  const detail::BlockEngine* engine_ = nullptr;  // names the object in errors
  std::vector<int> in_, out_;
  std::map<int, std::vector<char>> incoming_;
  std::map<int, std::size_t> read_;
  std::map<int, std::vector<char>> outgoing_;
};

}  // namespace tributary
