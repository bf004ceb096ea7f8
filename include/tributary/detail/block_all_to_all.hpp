// The all-to-all as an adapter over the block engine: the user's callback sees one round
// (every block as a target at the first call, every block as a source at the last); the
// engine runs swap steps whose calls route the records one digit at a time.
#pragma once

#include <memory>

#include "tributary/block_partners.hpp"
#include "tributary/detail/block_engine.hpp"

namespace tributary::detail {

/// The partners the engine runs for an all-to-all routed over `route`'s steps: every block
/// in every call; call c receives from its group of step c - 1 and sends to its group of
/// step c (a grid of one block: to itself, in one step).
std::shared_ptr<const BlockPartners> AllToAllPartners(const SwapPartners& route);

/// The engine's callback for an all-to-all over `partners` (made by AllToAllPartners):
/// calls `user` with a proxy whose out-link (first call) or in-link (last call) is every
/// block, and routes the records between.
BlockEngine::Callback AllToAllCallback(std::shared_ptr<const BlockPartners> partners,
                                       BlockEngine::Callback user);

}  // namespace tributary::detail
