// What the Kokkos-free headers see of the device partials: a stage behind a small
// interface (DeviceStage in detail/device/device_stage.hpp implements it per execution space)
// and whether the Kokkos runtime still runs. A program that never includes
// tributary/kokkos.hpp compiles no Kokkos header beyond Kokkos_Macros.hpp.
#pragma once

#if !defined(TRIBUTARY_PUBLIC_INCLUDE) && !defined(TRIBUTARY_INTERNAL_INCLUDE)
#error \
    "<tributary/detail/device/device_stage_base.hpp> is internal to Tributary: include <tributary/kokkos.hpp> instead"
#endif

#include "tributary/config.hpp"

#if TRIBUTARY_HAVE_KOKKOS

#include <cstddef>
#include <typeinfo>
#include <vector>

namespace tributary::detail {

/// Kokkos::is_initialized() (compiled into the library): false before Kokkos::initialize
/// and after Kokkos::finalize, when device memory must not be touched.
bool DeviceRuntimeAlive() noexcept;

/// The stage of execution space Exec (detail/device/device_stage.hpp).
template <class E, class Exec>
class DeviceStage;

/// What the list partials see of a stage, whatever its execution space.
template <class E>
class DeviceStageBase {
 public:
  virtual ~DeviceStageBase() = default;
  /// True once the combined result is readable in host memory. Never blocks.
  virtual bool Ready() = 0;
  /// Blocks until every queued kernel and copy is done (the slots' destruction only).
  virtual void Wait() = 0;
  /// The k combined values, in host memory; valid once Ready.
  virtual const E* Result() const = 0;
  /// Queues the list-order fold with the generation's operator (see SetFold) after every
  /// list's kernel, on the instance of list `last`.
  virtual void Fold(int last) = 0;
  virtual const std::type_info& Space() const noexcept = 0;
  std::size_t count = 0;  ///< k: values per list in this generation.
};

}  // namespace tributary::detail

#endif  // TRIBUTARY_HAVE_KOKKOS
