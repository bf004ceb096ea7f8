// The HIP runtime's event calls behind detail::StreamEvent (detail/device/stream_event.hpp),
// compiled into the library where Kokkos has the HIP backend; empty otherwise.
#include "tributary/config.hpp"

#if TRIBUTARY_HAVE_KOKKOS
#include <Kokkos_Macros.hpp>
#endif

#if TRIBUTARY_HAVE_KOKKOS && defined(KOKKOS_ENABLE_HIP) && KOKKOS_VERSION >= 40000

#include <hip/hip_runtime.h>

#include <string>

#include "tributary/detail/device/stream_event.hpp"
#include "tributary/errors.hpp"

namespace tributary::detail {
namespace {

void Check(hipError_t status, const char* what) {
  if (status != hipSuccess)
    throw UsageError(std::string("tributary: ") + what + ": " + hipGetErrorString(status));
}
hipEvent_t EventOf(void* event) { return static_cast<hipEvent_t>(event); }
hipStream_t StreamOf(void* stream) { return static_cast<hipStream_t>(stream); }

void* Create() {
  hipEvent_t event = nullptr;
  Check(hipEventCreateWithFlags(&event, hipEventDisableTiming), "hipEventCreate");
  return static_cast<void*>(event);
}
void Destroy(void* event) noexcept { (void)hipEventDestroy(EventOf(event)); }
void Record(void* event, void* stream) {
  Check(hipEventRecord(EventOf(event), StreamOf(stream)), "hipEventRecord");
}
bool Query(void* event) {
  const hipError_t status = hipEventQuery(EventOf(event));
  if (status == hipErrorNotReady) return false;
  Check(status, "hipEventQuery");
  return true;
}
void Order(void* stream, void* event) {
  Check(hipStreamWaitEvent(StreamOf(stream), EventOf(event), 0), "hipStreamWaitEvent");
}
void Wait(void* event) {                                              // failure paths only
  Check(hipEventSynchronize(EventOf(event)), "hipEventSynchronize");  // tributary-fence-ok
}

}  // namespace

const StreamRuntime& HipStreamRuntime() {
  static const StreamRuntime runtime{&Create, &Destroy, &Record, &Query, &Order, &Wait};
  return runtime;
}

}  // namespace tributary::detail

#endif
