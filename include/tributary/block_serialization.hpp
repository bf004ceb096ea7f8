// How a value travels in a block pattern's message: BlockSerialization<T> writes it into a
// BlockWriter and reads it back from a BlockReader. Trivially copyable values travel as
// their bytes; std::vector, std::basic_string, std::pair and std::array as their elements;
// a type of the user's own through two free functions or a specialisation.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace tributary {

class BlockProxy;

namespace detail {
struct RecordFrame;
}  // namespace detail

/// The bytes of one outgoing message; a user's Save writes into it.
class BlockWriter {
 public:
  /// Appends `bytes` bytes.
  void Write(const void* data, std::size_t bytes);
  /// Appends `value` through BlockSerialization<T>.
  template <class T>
  void Save(const T& value);

 private:
  friend class BlockProxy;
  explicit BlockWriter(std::vector<char>& bytes) : bytes_(&bytes) {}
  explicit BlockWriter(detail::RecordFrame& frame) : frame_(&frame) {}
  std::vector<char>* bytes_ = nullptr;
  detail::RecordFrame* frame_ = nullptr;  // writes go into a record of an all-to-all bundle
};

/// The bytes of one incoming message, read in the order they were written; a user's Load
/// reads from it. Reading more than is left is a UsageError naming the block, round,
/// generation, rank and sender.
class BlockReader {
 public:
  /// Copies the next `bytes` bytes to `data`.
  void Read(void* data, std::size_t bytes);
  /// Reads `value` through BlockSerialization<T>.
  template <class T>
  void Load(T& value);
  /// The next `bytes` bytes where they lie in the message, without copying them (valid
  /// until the callback returns); UsageError when fewer are left or when they do not start
  /// at a multiple of `align`.
  const char* ReadInPlace(std::size_t bytes, std::size_t align = 1);
  /// Bytes not read yet.
  std::size_t Remaining() const noexcept { return size_ - *pos_; }

 private:
  friend class BlockProxy;
  BlockReader(const BlockProxy& proxy, int from, const char* data, std::size_t size,
              std::size_t& pos)
      : proxy_(&proxy), from_(from), data_(data), size_(size), pos_(&pos) {}
  [[noreturn]] void Short(std::size_t bytes) const;
  [[noreturn]] void Misaligned(std::size_t align) const;
  const BlockProxy* proxy_;
  int from_;
  const char* data_;
  std::size_t size_;
  std::size_t* pos_;
};

namespace detail {
namespace block_adl {
// Unqualified calls below find the user's Save / Load by argument-dependent lookup only.
void Save() = delete;
void Load() = delete;

template <class T, class = void>
struct HasSaveLoad : std::false_type {};
template <class T>
struct HasSaveLoad<
    T, std::void_t<decltype(Save(std::declval<BlockWriter&>(), std::declval<const T&>())),
                   decltype(Load(std::declval<BlockReader&>(), std::declval<T&>()))>>
    : std::true_type {};

template <class T>
void CallSave(BlockWriter& out, const T& value) {
  Save(out, value);
}
template <class T>
void CallLoad(BlockReader& in, T& value) {
  Load(in, value);
}
}  // namespace block_adl

template <class T>
constexpr bool kUserSerialized = block_adl::HasSaveLoad<T>::value;

/// Whether values of T travel as their bytes (trivially copyable, no Save / Load of the
/// user's own).
template <class T>
constexpr bool kBytewise = std::is_trivially_copyable_v<T> && !kUserSerialized<T>;

template <class T>
struct DependentFalse : std::false_type {};
}  // namespace detail

/// How values of T travel in block messages. For a type of your own, either write two free
/// functions in its namespace (found by argument-dependent lookup):
///
///     void Save(tributary::BlockWriter& out, const T& value);
///     void Load(tributary::BlockReader& in, T& value);
///
/// or specialise this trait with static functions `Save` and `Load` of those signatures.
/// Built in: trivially copyable types (as their bytes, unless they have Save / Load),
/// std::vector, std::basic_string, std::pair and std::array of serializable elements.
template <class T, class = void>
struct BlockSerialization {
  /// Writes `value` to `out`.
  static void Save(BlockWriter& out, const T& value) {
    if constexpr (detail::kUserSerialized<T>) {
      detail::block_adl::CallSave(out, value);
    } else if constexpr (std::is_trivially_copyable_v<T>) {
      out.Write(&value, sizeof(T));
    } else {
      static_assert(detail::DependentFalse<T>::value,
                    "this type does not travel in block messages: write Save(BlockWriter&, "
                    "const T&) and Load(BlockReader&, T&), or specialise BlockSerialization");
    }
  }
  /// Reads `value` from `in`, as Save wrote it.
  static void Load(BlockReader& in, T& value) {
    if constexpr (detail::kUserSerialized<T>) {
      detail::block_adl::CallLoad(in, value);
    } else if constexpr (std::is_trivially_copyable_v<T>) {
      in.Read(&value, sizeof(T));
    } else {
      static_assert(detail::DependentFalse<T>::value,
                    "this type does not travel in block messages: write Save(BlockWriter&, "
                    "const T&) and Load(BlockReader&, T&), or specialise BlockSerialization");
    }
  }
};

template <class T>
void BlockWriter::Save(const T& value) {
  BlockSerialization<T>::Save(*this, value);
}
template <class T>
void BlockReader::Load(T& value) {
  BlockSerialization<T>::Load(*this, value);
}

namespace detail {
// n elements: their bytes at once when they travel bytewise, else one by one.
template <class T>
void SaveElements(BlockWriter& out, const T* values, std::size_t n) {
  if constexpr (kBytewise<T>) {
    out.Write(values, n * sizeof(T));
  } else {
    for (std::size_t i = 0; i < n; ++i) out.Save(values[i]);
  }
}
template <class T>
void LoadElements(BlockReader& in, T* values, std::size_t n) {
  if constexpr (kBytewise<T>) {
    in.Read(values, n * sizeof(T));
  } else {
    for (std::size_t i = 0; i < n; ++i) in.Load(values[i]);
  }
}
// A count, then that many elements (each at least one byte when bytewise: a count larger
// than what is left is refused before anything is allocated).
template <class T, class Container>
void LoadCounted(BlockReader& in, Container& c) {
  std::uint64_t n = 0;
  in.Read(&n, sizeof n);
  if (kBytewise<T> && n > in.Remaining() / sizeof(T))  // reports the shortfall, reads nothing
    in.Read(nullptr, n > std::numeric_limits<std::size_t>::max() / sizeof(T)
                         ? std::numeric_limits<std::size_t>::max()
                         : static_cast<std::size_t>(n) * sizeof(T));
  c.resize(static_cast<std::size_t>(n));
  LoadElements(in, c.data(), c.size());
}
}  // namespace detail

template <class T, class A>
struct BlockSerialization<std::vector<T, A>,
                          std::enable_if_t<!detail::kUserSerialized<std::vector<T, A>>>> {
  static void Save(BlockWriter& out, const std::vector<T, A>& v) {
    const std::uint64_t n = v.size();
    out.Write(&n, sizeof n);
    detail::SaveElements(out, v.data(), v.size());
  }
  static void Load(BlockReader& in, std::vector<T, A>& v) { detail::LoadCounted<T>(in, v); }
};

/// A string travels as its length, then its characters.
template <class C, class Tr, class A>
struct BlockSerialization<std::basic_string<C, Tr, A>> {
  /// Writes the length, then the characters.
  static void Save(BlockWriter& out, const std::basic_string<C, Tr, A>& s) {
    const std::uint64_t n = s.size();
    out.Write(&n, sizeof n);
    out.Write(s.data(), s.size() * sizeof(C));
  }
  /// Reads the length, then the characters.
  static void Load(BlockReader& in, std::basic_string<C, Tr, A>& s) {
    detail::LoadCounted<C>(in, s);
  }
};

/// A pair travels as its first, then its second element.
template <class A, class B>
struct BlockSerialization<std::pair<A, B>> {
  /// Writes `first`, then `second`.
  static void Save(BlockWriter& out, const std::pair<A, B>& p) {
    out.Save(p.first);
    out.Save(p.second);
  }
  /// Reads `first`, then `second`.
  static void Load(BlockReader& in, std::pair<A, B>& p) {
    in.Load(p.first);
    in.Load(p.second);
  }
};

template <class T, std::size_t N>
struct BlockSerialization<std::array<T, N>,
                          std::enable_if_t<!detail::kBytewise<std::array<T, N>>>> {
  static void Save(BlockWriter& out, const std::array<T, N>& a) {
    detail::SaveElements(out, a.data(), N);
  }
  static void Load(BlockReader& in, std::array<T, N>& a) { detail::LoadElements(in, a.data(), N); }
};

}  // namespace tributary
