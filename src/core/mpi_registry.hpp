// Process-wide MPI objects Tributary creates once: byte-block datatypes, the generic
// MPI_Ops that call packed combines, and the datatype attribute key that carries a
// PackedLayout to them. All are freed when MPI finalises (a delete callback of an
// attribute on MPI_COMM_SELF), never by a static destructor, unless a collective was left
// pending on them (NoteLeftPending).
#pragma once

#include "tributary/config.hpp"

#if TRIBUTARY_HAVE_MPI
#include <mpi.h>

namespace tributary::detail {

struct PackedLayout;

/// The generic MPI_Op for packed messages (commutative or not).
MPI_Op GenericMpiOp(bool commutative);
/// Names `layout` (null: none) as the layout the generic op combines `type` by.
void SetPackedLayout(MPI_Datatype type, const PackedLayout* layout);
/// Frees a packed datatype (its attribute goes with it).
void FreePackedType(MPI_Datatype* type) noexcept;
/// A collective of the MPI library is left pending (ScheduleRun::Abandon, Release): the
/// datatypes and operators here are then left to MPI at MPI_Finalize, which may still
/// progress that collective after it has called the delete callback that frees them.
void NoteLeftPending() noexcept;

}  // namespace tributary::detail
#endif
