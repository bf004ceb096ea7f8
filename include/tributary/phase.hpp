// The states of a reduction object's generation (AllReduce, Reduce, AllGather, Batch:
// State()), printable: docs/reductions.md, "Objects and their states".
#pragma once

#include <cstdint>
#include <ostream>

namespace tributary {

/// The state of a reduction object's current generation.
enum class Phase : std::uint8_t {
  idle,        ///< Never started.
  collecting,  ///< Armed: waiting for this rank's contributions.
  in_flight,   ///< The network phase runs.
  done,        ///< The result is in place; the next start is a new generation.
  failed       ///< This generation failed; the next start is a new generation.
};

/// "idle", "collecting", "in flight", "done" or "failed".
const char* ToString(Phase p) noexcept;

/// Writes ToString(p).
inline std::ostream& operator<<(std::ostream& out, Phase p) { return out << ToString(p); }

}  // namespace tributary
