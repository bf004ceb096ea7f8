// Must not compile: tributary/kokkos.hpp in a Tributary built without Kokkos says so.
#include "tributary/kokkos.hpp"

int main() { return 0; }
