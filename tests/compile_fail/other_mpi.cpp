// Compiled with another MPI library's mpi.h than the one Tributary was built with (its
// include directory comes first): config.hpp must stop it, naming Tributary's MPI.
#include <tributary/tributary.hpp>

int main() { return 0; }
