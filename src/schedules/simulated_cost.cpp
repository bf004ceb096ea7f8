#include "schedules/simulated_cost.hpp"

#if TRIBUTARY_HAVE_SMPI
#include <mpi.h>
#include <simgrid/host.h>

#include <cstdlib>

namespace tributary::detail {

namespace {

// The defaults are this machine's measured values (`bench_simulation calibrate` under Open
// MPI 4.1 at 2 ranks): summing 1 MiB of doubles 0.023 ns per byte (2026-11-25); a
// generation's own work outside its posts, tests and combine 0.236 µs (2026-11-29). Each simulated
// rank reads them once (its statics are its own under SMPI's privatisation).
double Setting(const char* name, double fallback) {
  const char* text = std::getenv(name);
  if (!text || !*text) return fallback;
  char* end = nullptr;
  const double v = std::strtod(text, &end);
  return end != text && v >= 0 ? v : fallback;
}

void Charge(double seconds) {
  if (seconds > 0) smpi_execute_flops(seconds * sg_host_get_speed(sg_host_self()));
}

}  // namespace

void ChargeCombine(std::size_t bytes) {
  static const double per_byte = Setting("TRIBUTARY_SMPI_COMBINE_COST", 2.3e-11);
  Charge(per_byte * static_cast<double>(bytes));
}

void ChargeStart() {
  static const double cost = Setting("TRIBUTARY_SMPI_START_COST", 2.36e-7);
  Charge(cost);
}

}  // namespace tributary::detail
#endif
