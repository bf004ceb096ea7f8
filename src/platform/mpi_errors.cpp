// CheckMpi: an MPI error code as an exception that names the call.
#include "tributary/config.hpp"
#include "tributary/errors.hpp"

#if TRIBUTARY_HAVE_MPI
#include <mpi.h>
#endif

namespace tributary::detail {

void CheckMpi(int rc, const char* call) {
#if TRIBUTARY_HAVE_MPI
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING] = {};
  int len = 0;
  if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS) len = 0;
  throw MpiError(rc, std::string(call) + " failed (MPI error " + std::to_string(rc) +
                         "): " + std::string(text, static_cast<std::size_t>(len)));
#else
  if (rc != 0) throw MpiError(rc, std::string(call) + " failed");
#endif
}

}  // namespace tributary::detail
