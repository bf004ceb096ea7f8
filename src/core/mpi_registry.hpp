// Process-wide MPI objects Tributary creates once: byte-block datatypes, the generic
// MPI_Ops that call packed combines, and the datatype attribute key that carries a
// PackedLayout to them. All are freed when MPI finalises (a delete callback of an
// attribute on MPI_COMM_SELF), never by a static destructor.
#pragma once

#include "tributary/config.hpp"

#if TRIBUTARY_HAVE_MPI
#include <mpi.h>

namespace tributary::detail {

/// The generic MPI_Op for packed messages (commutative or not).
MPI_Op GenericMpiOp(bool commutative);
/// The attribute key under which a packed datatype carries its PackedLayout.
int PackedLayoutKeyval();

}  // namespace tributary::detail
#endif
