// Memory an object gives up for good to a collective of the MPI library left pending after
// a failure: the typed layer hands it over (ReductionClient::LeaveBuffer), the core keeps it
// with the schedule (ScheduleRun::Abandon).
#pragma once

#if !defined(TRIBUTARY_PUBLIC_INCLUDE) && !defined(TRIBUTARY_INTERNAL_INCLUDE)
#error \
    "<tributary/detail/core/kept_buffer.hpp> is internal to Tributary: include <tributary/tributary.hpp> instead"
#endif

#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

namespace tributary::detail {

/// A buffer kept, unused, until the process ends; the object that owned it makes another.
class KeptBuffer {
 public:
  KeptBuffer() = default;
  KeptBuffer(const KeptBuffer&) = delete;
  KeptBuffer& operator=(const KeptBuffer&) = delete;
  virtual ~KeptBuffer() = default;
};

/// A value whose storage is kept: moved in, so that its elements stay where they were.
template <class V>
class KeptValue final : public KeptBuffer {
 public:
  explicit KeptValue(V&& v) noexcept(std::is_nothrow_move_constructible_v<V>)
      : value(std::move(v)) {}
  V value;
};

using KeptBuffers = std::vector<std::unique_ptr<KeptBuffer>>;

/// The storage of `bytes` where it starts at `at`, moved to be kept (`bytes` is left empty);
/// null where it does not, or where there is no memory to keep it.
inline std::unique_ptr<KeptBuffer> LeaveBytes(std::vector<unsigned char>& bytes,
                                              const void* at) noexcept {
  if (bytes.empty() || at != bytes.data()) return nullptr;
  try {
    auto kept = std::make_unique<KeptValue<std::vector<unsigned char>>>(std::move(bytes));
    bytes.clear();
    return kept;
  } catch (...) {
    return nullptr;
  }
}

}  // namespace tributary::detail
