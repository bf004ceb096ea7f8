// The CUDA runtime's event calls behind detail::StreamEvent (detail/device/stream_event.hpp),
// compiled into the library where Kokkos has the CUDA backend; empty otherwise.
#include "tributary/config.hpp"

#if TRIBUTARY_HAVE_KOKKOS
#include <Kokkos_Macros.hpp>
#endif

#if TRIBUTARY_HAVE_KOKKOS && defined(KOKKOS_ENABLE_CUDA)

#include <cuda_runtime.h>

#include <string>

#include "tributary/detail/device/stream_event.hpp"
#include "tributary/errors.hpp"

namespace tributary::detail {
namespace {

void Check(cudaError_t status, const char* what) {
  if (status != cudaSuccess)
    throw UsageError(std::string("tributary: ") + what + ": " + cudaGetErrorString(status));
}
cudaEvent_t EventOf(void* event) { return static_cast<cudaEvent_t>(event); }
cudaStream_t StreamOf(void* stream) { return static_cast<cudaStream_t>(stream); }

void* Create() {
  cudaEvent_t event = nullptr;
  Check(cudaEventCreateWithFlags(&event, cudaEventDisableTiming), "cudaEventCreate");
  return static_cast<void*>(event);
}
void Destroy(void* event) noexcept { (void)cudaEventDestroy(EventOf(event)); }
void Record(void* event, void* stream) {
  Check(cudaEventRecord(EventOf(event), StreamOf(stream)), "cudaEventRecord");
}
bool Query(void* event) {
  const cudaError_t status = cudaEventQuery(EventOf(event));
  if (status == cudaErrorNotReady) return false;
  Check(status, "cudaEventQuery");
  return true;
}
void Order(void* stream, void* event) {
  Check(cudaStreamWaitEvent(StreamOf(stream), EventOf(event), 0), "cudaStreamWaitEvent");
}
void Wait(void* event) {                                                // failure paths only
  Check(cudaEventSynchronize(EventOf(event)), "cudaEventSynchronize");  // tributary-fence-ok
}

}  // namespace

const StreamRuntime& CudaStreamRuntime() {
  static const StreamRuntime runtime{&Create, &Destroy, &Record, &Query, &Order, &Wait};
  return runtime;
}

}  // namespace tributary::detail

#endif
