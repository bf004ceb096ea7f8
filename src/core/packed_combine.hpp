// The combine of packed messages (a header, then the segments of one or more values, each
// with its own combine): used by the schedules through a message's Payload, and by the
// generic MPI_Op the MPI library's schedule runs them with (mpi_registry.cpp).
#pragma once

#include <cstddef>

#include "tributary/detail/core/message_spec.hpp"

namespace tributary::detail {

/// CombineFn of packed messages: `state` is a PackedLayout. A user operator that throws
/// marks the header with this rank; ranks whose agreement hashes differ mark it as
/// disagreed. Never throws. Also behind the generic MPI_Op of the MPI library's path.
void PackedCombine(const void* state, const void* in, void* inout, std::size_t count) noexcept;

}  // namespace tributary::detail
