// Must not compile: std::string is not a reducible value type.
#include <string>

#include "tributary/tributary.hpp"

int main() {
  tributary::Context ctx;
  tributary::AllReduce<std::string> r(ctx);
  return 0;
}
