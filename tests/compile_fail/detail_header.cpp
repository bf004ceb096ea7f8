// Must not compile: the headers under tributary/detail/ are internal; a program includes
// the public header that brings them.
#include "tributary/detail/core/typed_reduction.hpp"

int main() { return 0; }
