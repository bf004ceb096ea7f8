// Process-wide MPI objects Tributary creates once: byte-block datatypes, the generic
// MPI_Ops that call packed combines, and the datatype attribute key that carries a
// PackedLayout to them. All are freed when MPI finalises (a delete callback of an
// attribute on MPI_COMM_SELF), never by a static destructor.
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

}  // namespace tributary::detail
#endif
