// Must not compile: enqueueing a type that is not trivially copyable and has neither Save /
// Load nor a BlockSerialization specialisation.
#include <string>

#include "tributary/tributary.hpp"

struct Named {
  std::string name;
};

int main() {
  tributary::BlockProxy* rp = nullptr;
  rp->Enqueue(0, Named{"x"});
  return 0;
}
