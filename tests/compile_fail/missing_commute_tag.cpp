// Must not compile: a user operator that does not say whether it commutes.
#include "tributary/tributary.hpp"

struct Average {
  static double identity() { return 0.0; }
  void operator()(const double& in, double& inout) const { inout = 0.5 * (in + inout); }
};

int main() {
  tributary::Context ctx;
  tributary::AllReduce<double> r(ctx);
  r.StartReduce(Average{});
  return 0;
}
