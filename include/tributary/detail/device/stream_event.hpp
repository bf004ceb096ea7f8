// Completion events on a GPU stream (CUDA, HIP) behind opaque handles, free of Kokkos and of
// every vendor header: the vendor calls are compiled into the library, in the backend's build
// only (src/device/stream_event_cuda.cpp, src/device/stream_event_hip.cpp), so that a user's
// translation unit never includes a GPU runtime header for Tributary.
// detail/device/device_events.hpp puts them behind DeviceEvent<Exec>.
#pragma once

#if !defined(TRIBUTARY_PUBLIC_INCLUDE) && !defined(TRIBUTARY_INTERNAL_INCLUDE)
#error \
    "<tributary/detail/device/stream_event.hpp> is internal to Tributary: include <tributary/kokkos.hpp> instead"
#endif

#include <utility>

namespace tributary::detail {

/// One vendor runtime's calls on events and streams; handles are the runtime's own event
/// and stream pointers. Errors are thrown as UsageError naming the call.
struct StreamRuntime {
  void* (*create)();                      ///< A new event (timing disabled).
  void (*destroy)(void* event) noexcept;  ///< Frees an event.
  void (*record)(void* event, void* stream);
  bool (*query)(void* event);                ///< True once the recorded work is done.
  void (*order)(void* stream, void* event);  ///< Later work on `stream` waits for `event`.
  void (*wait)(void* event);                 ///< Blocks until done (failure paths only).
};

/// The CUDA runtime's calls; defined only where Kokkos has the CUDA backend.
const StreamRuntime& CudaStreamRuntime();
/// The HIP runtime's calls; defined only where Kokkos (4 or later) has the HIP backend.
const StreamRuntime& HipStreamRuntime();

/// An event recorded on a stream: made at the first record, freed with the object.
class StreamEvent {
 public:
  explicit StreamEvent(const StreamRuntime& runtime) noexcept : runtime_(&runtime) {}
  StreamEvent(StreamEvent&& o) noexcept
      : runtime_(o.runtime_), event_(std::exchange(o.event_, nullptr)) {}
  StreamEvent& operator=(StreamEvent&& o) noexcept {
    std::swap(runtime_, o.runtime_);
    std::swap(event_, o.event_);
    return *this;
  }
  StreamEvent(const StreamEvent&) = delete;
  StreamEvent& operator=(const StreamEvent&) = delete;
  ~StreamEvent() {
    if (event_) runtime_->destroy(event_);
  }

  void Record(void* stream) {
    if (!event_) event_ = runtime_->create();
    runtime_->record(event_, stream);
  }
  bool Ready() const { return !event_ || runtime_->query(event_); }
  void OrderBefore(void* stream) const {
    if (event_) runtime_->order(stream, event_);
  }
  void Wait() const {
    if (event_) runtime_->wait(event_);
  }

 private:
  const StreamRuntime* runtime_;
  void* event_ = nullptr;
};

}  // namespace tributary::detail
