// The tags of a Context's communicator: block 0 (tags 0 .. kTagsPerSchedule - 1) is the
// control plane's, which uses its first tag (its upper tags carry the agreement on node
// facts while the Context is created); reduction object `slot` and generation g use block
// 1 + slot * kGenerationsInTag + g % kGenerationsInTag, so consecutive generations of an
// object never share tags.
#pragma once

#include <cstdint>

namespace tributary::detail {

/// Number of consecutive tags a schedule may use, starting at ScheduleArgs::tag.
/// Offsets 0-3 carry the schedules' own messages, 4 the node-aware hand-over (on the node
/// communicator), 5-7 the pre-round that checks lengths and agrees on exact-sum windows.
inline constexpr int kTagsPerSchedule = 8;

inline constexpr int kControlTag = 0;
/// Block 0's upper tags (kStartupTag ..): the agreement on node facts while the Context is
/// created.
inline constexpr int kStartupTag = 4;
inline constexpr int kGenerationsInTag = 4;

/// The tag base of generation `generation` of the object in `slot` (own schedules).
inline int GenerationTag(int slot, std::uint64_t generation) noexcept {
  const auto g = static_cast<int>(generation % kGenerationsInTag);
  return (1 + slot * kGenerationsInTag + g) * kTagsPerSchedule;
}

}  // namespace tributary::detail
