// The all-to-all over the block engine. Sent directly (every block to every block in one
// step) the engine runs it as it is; routed over k-ary swap steps, an adapter shows the
// user's callback one round (every block as a target at the first call, every block as a
// source at the last) while the engine's calls route the records one digit at a time.
#pragma once

#if !defined(TRIBUTARY_PUBLIC_INCLUDE) && !defined(TRIBUTARY_INTERNAL_INCLUDE)
#error \
    "<tributary/detail/blocks/block_all_to_all.hpp> is internal to Tributary: include <tributary/blocks.hpp> instead"
#endif

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "tributary/block_grid.hpp"
#include "tributary/block_partners.hpp"
#include "tributary/detail/blocks/block_engine.hpp"

namespace tributary::detail {

/// The partners the engine runs for an all-to-all over `grid` with `radix`: direct (every
/// block sends to every block at call 0, receives from every block at call 1) when the
/// radix is at least the number of blocks, else routed over the swap steps of `radix`.
std::shared_ptr<const BlockPartners> AllToAllPartners(const BlockGrid& grid,
                                                      const std::vector<int>& radix,
                                                      bool contiguous);
/// Routed over `route`'s steps; direct when they are a single step (or none: one block).
std::shared_ptr<const BlockPartners> AllToAllPartners(const SwapPartners& route);

/// The engine's callback for an all-to-all over `partners` (made by AllToAllPartners):
/// `user` itself for a direct exchange, else an adapter that calls `user` with a proxy
/// whose out-link (first call) or in-link (last call) is every block, and routes the
/// records between.
BlockEngine::Callback AllToAllCallback(std::shared_ptr<const BlockPartners> partners,
                                       BlockEngine::Callback user);

/// One record of a routed bundle: source, destination, length, then the bytes.
struct RouteRecord {
  std::int32_t from, to;
  std::uint64_t bytes;
};

/// One sender's message to one block of a routed all-to-all, written straight into the
/// bundle of its first hop as records: a write that follows another record (to another
/// block) starts a new record, so the message may arrive in several, in order.
struct RecordFrame {
  std::vector<char>* bundle = nullptr;
  std::int32_t from = 0, to = 0;
  std::size_t length_at = 0;  // where the current record's length is
  std::size_t end = 0;        // the bundle's size after the current record; 0: none yet
};

}  // namespace tributary::detail
