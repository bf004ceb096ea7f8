// tributary::Determinism: how much freedom a reduction has to reorder its combines
// (docs/determinism.md). Its own header so that code which needs only the modes does not
// include the Context's.
#pragma once

namespace tributary {

/// How much freedom a reduction has to reorder its combines.
enum class Determinism {
  fast,                   ///< Any order the schedule likes.
  run_to_run,             ///< Same bits on every run with the same rank and list counts.
  rank_count_independent  ///< Same bits whatever the rank and list counts.
};

}  // namespace tributary
