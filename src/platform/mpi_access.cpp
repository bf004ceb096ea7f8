// The thread rule's checks and the state of MPI (mpi_access.hpp).
#include "platform/mpi_access.hpp"

#include "tributary/errors.hpp"

namespace tributary::detail {

bool MpiFinalized() noexcept {
#if TRIBUTARY_HAVE_MPI
  int finalized = 0;
  MPI_Finalized(&finalized);
  return finalized != 0;
#else
  return false;
#endif
}

void MpiAccess::CheckThread(int rank) const {
  if (!MayCallMpi()) ThrowWrongThread("rank " + std::to_string(rank));
}

void MpiAccess::ThrowWrongThread(const std::string& who) const {
#if TRIBUTARY_HAVE_MPI
  throw UsageError(who +
                   ": called from a thread other than the one that created its Context, but " +
                   ThreadLevelAdvice(thread_level) + "; the call was refused and changed nothing");
#else
  (void)who;
#endif
}

#if TRIBUTARY_HAVE_MPI
std::string ThreadLevelAdvice(int level) {
  if (TRIBUTARY_HAVE_SMPI)
    return "under SimGrid SMPI a simulated rank calls MPI from its own thread only: start "
           "and check reductions on the thread that created the Context";
  const std::string name = level == MPI_THREAD_FUNNELED ? "MPI_THREAD_FUNNELED"
                           : level == MPI_THREAD_SINGLE ? "MPI_THREAD_SINGLE"
                                                        : std::to_string(level);
  return "MPI provides only " + name +
         " (plain MPI_Init gives no more), under which no other thread may call MPI. "
         "Initialise MPI first, before any library does: `int provided = 0; "
         "MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);` and check "
         "provided >= MPI_THREAD_SERIALIZED (a framework that calls MPI_Init only when "
         "MPI_Initialized says no, such as Parthenon's ParthenonInit, keeps it); or start and "
         "check reductions only on the thread that created the Context (docs/reductions.md, "
         "\"Threads\")";
}
#endif

}  // namespace tributary::detail
