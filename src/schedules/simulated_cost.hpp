// Under SimGrid SMPI, Tributary's own CPU work between MPI calls is charged to the simulated
// clock at rates measured on a real machine, since the simulator charges none of it
// (smpi/simulate-computation is off: docs/simulation.md, "How a figure is measured").
// Messages, tests and posts are charged by SMPI itself (smpi/test, smpi/ois, smpi/or).
// Elsewhere these do nothing.
#pragma once

#include <cstddef>

#include "tributary/config.hpp"

namespace tributary::detail {

#if TRIBUTARY_HAVE_SMPI
/// Combining `bytes` of two operands (a schedule's reduction work):
/// TRIBUTARY_SMPI_COMBINE_COST seconds per byte.
void ChargeCombine(std::size_t bytes);
/// The start of one generation's network phase (choosing and arming its schedule):
/// TRIBUTARY_SMPI_START_COST seconds.
void ChargeStart();
#else
inline void ChargeCombine(std::size_t) {}
inline void ChargeStart() {}
#endif

}  // namespace tributary::detail
