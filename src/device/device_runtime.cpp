// Whether the Kokkos runtime runs, for the Kokkos-free headers
// (detail/device/device_stage_base.hpp): objects destroyed after Kokkos::finalize must leave their
// device memory alone.
#include "tributary/detail/device/device_stage_base.hpp"

#if TRIBUTARY_HAVE_KOKKOS

#include <Kokkos_Core.hpp>

namespace tributary::detail {

bool DeviceRuntimeAlive() noexcept { return Kokkos::is_initialized(); }

}  // namespace tributary::detail

#endif  // TRIBUTARY_HAVE_KOKKOS
