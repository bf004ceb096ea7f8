// When device work is done, tested without blocking: DeviceEvent<Exec> for every execution
// space (host backends: at once; CUDA and HIP: an event on the instance's stream, whose
// vendor calls the library compiles, detail/device/stream_event.hpp; others: a fence), and the
// host memory the one staging copy goes to. Part of the Kokkos layer.
#pragma once

#if !defined(TRIBUTARY_PUBLIC_INCLUDE) && !defined(TRIBUTARY_INTERNAL_INCLUDE)
#error \
    "<tributary/detail/device/device_events.hpp> is internal to Tributary: include <tributary/kokkos.hpp> instead"
#endif

#include "tributary/config.hpp"

#if TRIBUTARY_HAVE_KOKKOS

#include <Kokkos_Core.hpp>
#include <type_traits>

#include "tributary/detail/device/stream_event.hpp"

namespace tributary::detail {

/// Execution spaces whose kernels have completed when the launching call returns.
template <class Exec>
constexpr bool kSynchronousSpace =
#if defined(KOKKOS_ENABLE_SERIAL)
    std::is_same_v<Exec, Kokkos::Serial> ||
#endif
#if defined(KOKKOS_ENABLE_OPENMP)
    std::is_same_v<Exec, Kokkos::OpenMP> ||
#endif
    false;

/// The stream of an execution-space instance, for the backends that have streams (their
/// events are StreamEvents); kHasStream is false for the others.
template <class Exec>
struct StreamOf {
  static constexpr bool kHasStream = false;
};
#if defined(KOKKOS_ENABLE_CUDA)
template <>
struct StreamOf<Kokkos::Cuda> {
  static constexpr bool kHasStream = true;
  static void* Get(const Kokkos::Cuda& exec) { return static_cast<void*>(exec.cuda_stream()); }
  static const StreamRuntime& Runtime() { return CudaStreamRuntime(); }
};
#endif
#if defined(KOKKOS_ENABLE_HIP) && KOKKOS_VERSION >= 40000
template <>
struct StreamOf<Kokkos::HIP> {
  static constexpr bool kHasStream = true;
  static void* Get(const Kokkos::HIP& exec) { return static_cast<void*>(exec.hip_stream()); }
  static const StreamRuntime& Runtime() { return HipStreamRuntime(); }
};
#endif

/// Completion of the work queued so far on an execution-space instance, tested without
/// blocking. Host backends: complete at once. Backends with streams: an event recorded on
/// the instance's stream. Others: the record fences that instance (the documented
/// fallback).
template <class Exec, bool = StreamOf<Exec>::kHasStream>
class DeviceEvent {
 public:
  void Record(const Exec& exec) {
    if constexpr (!kSynchronousSpace<Exec>) exec.fence();  // tributary-fence-ok: no event API
    (void)exec;
  }
  bool Ready() const { return true; }
  /// Makes later work on `exec` wait for the recorded work.
  void OrderBefore(const Exec&) const {}
  void Wait() const {}
};

/// The backends with streams: an event recorded on the instance's stream.
template <class Exec>
class DeviceEvent<Exec, true> {
 public:
  void Record(const Exec& exec) { event_.Record(StreamOf<Exec>::Get(exec)); }
  bool Ready() const { return event_.Ready(); }
  /// Makes later work on `exec` wait for the recorded work.
  void OrderBefore(const Exec& exec) const { event_.OrderBefore(StreamOf<Exec>::Get(exec)); }
  void Wait() const { event_.Wait(); }  // failure paths only

 private:
  StreamEvent event_{StreamOf<Exec>::Runtime()};
};

/// Host memory the staging copy goes to: pinned where the backend has it, so that the
/// copy is asynchronous.
template <class Mem>
struct StagingSpace {
  using type = Kokkos::HostSpace;
};
#if defined(KOKKOS_ENABLE_CUDA)
template <>
struct StagingSpace<Kokkos::CudaSpace> {
  using type = Kokkos::CudaHostPinnedSpace;
};
#endif
#if defined(KOKKOS_ENABLE_HIP) && KOKKOS_VERSION >= 40000
template <>
struct StagingSpace<Kokkos::HIPSpace> {
  using type = Kokkos::HIPHostPinnedSpace;
};
#endif

}  // namespace tributary::detail

#endif  // TRIBUTARY_HAVE_KOKKOS
