// What the network phase of a reduction moves and how two pieces of it combine, as the
// typed reduction layer describes it to the core (LaunchSpec) and the core hands it to a
// schedule: the schedules never learn what the bytes mean.
#pragma once

#if !defined(TRIBUTARY_PUBLIC_INCLUDE) && !defined(TRIBUTARY_INTERNAL_INCLUDE)
#error \
    "<tributary/detail/core/payload.hpp> is internal to Tributary: include <tributary/tributary.hpp> instead"
#endif

#include <cstddef>

#include "tributary/config.hpp"

#if TRIBUTARY_HAVE_MPI
#include <mpi.h>
#endif

namespace tributary::detail {

/// inout[i] = in[i] ∘ inout[i] for i < count, with `in` the operand from the lower ranks
/// (the MPI convention); the two never overlap. Must not throw: the reduction layer wraps
/// user operators.
using CombineFn = void (*)(const void* state, const void* in, void* inout, std::size_t count);

/// What a schedule moves and how two pieces of it combine.
struct Payload {
  std::size_t count = 0;      ///< Number of elements.
  std::size_t elem_size = 0;  ///< Bytes per element; own schedules send count*elem_size bytes.
  CombineFn combine = nullptr;
  const void* combine_state = nullptr;
  bool commutative = true;
#if TRIBUTARY_HAVE_MPI
  MPI_Datatype elem_type = MPI_DATATYPE_NULL;  ///< One element (MPI-library path).
  MPI_Op op = MPI_OP_NULL;                     ///< The operator (MPI-library path).
#endif
};

/// Turns combined elements into finished ones of another size: exact-sum records into the
/// rounded values. A schedule where each element is completed by one rank and then sent
/// around (Rabenseifner, ring) finishes its own elements there and moves the finished ones
/// from then on (fewer bytes, and each rank rounds only its share); other schedules leave
/// it to the reduction layer.
struct Finisher {
  /// out[i] = finished in[i] for `count` elements; `first` is in[0]'s element index.
  void (*fn)(const void* state, const void* in, void* out, std::size_t first,
             std::size_t count) = nullptr;
  const void* state = nullptr;
  void* out = nullptr;       ///< payload.count finished elements.
  std::size_t out_size = 0;  ///< Bytes per finished element.
  /// Optional, for an element's last combine: out[i] = finished (in[i] ∘ inout[i]) in one
  /// pass, for `count` elements from index `first`; false where it cannot (nothing is
  /// written; the schedule then combines and finishes).
  bool (*combine_fn)(const void* state, const void* in, const void* inout, void* out,
                     std::size_t first, std::size_t count) = nullptr;
  explicit operator bool() const noexcept { return fn != nullptr; }
};

}  // namespace tributary::detail
