// Block reduction patterns over k-ary rounds: blocks with global ids in a regular grid of
// 1-3 dimensions, assigned to ranks (block_grid.hpp); partners for merge-reduce, broadcast,
// swap-reduce and all-reduce, or a user's own (block_partners.hpp); an all-to-all written
// as one round and carried out over k-ary rounds. Each round of each block is a task: it
// returns incomplete until the round's messages have arrived, then runs the user's
// callback, which dequeues what arrived and enqueues what goes on (block_proxy.hpp).
// Messages between blocks of one rank never go through MPI. Blocks live in memory
// (out-of-core blocks are out of scope).
#pragma once

// Marks the internal headers below as included through a public one (detail/*: they refuse
// direct inclusion).
#ifndef TRIBUTARY_PUBLIC_INCLUDE
#define TRIBUTARY_PUBLIC_INCLUDE
#define TRIBUTARY_PUBLIC_INCLUDE_NOT_DEFINED_BLOCKS
#endif

#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "tributary/block_grid.hpp"
#include "tributary/block_partners.hpp"
#include "tributary/block_proxy.hpp"
#include "tributary/context.hpp"
#include "tributary/detail/blocks/block_all_to_all.hpp"
#include "tributary/detail/blocks/block_engine.hpp"
#include "tributary/errors.hpp"
#include "tributary/tasks.hpp"

namespace tributary {

namespace detail {

/// Adds `calls` consecutive round tasks of local block i to list i of `region` (after
/// `after[i]` when given); returns each list's last task.
template <class F>
std::vector<TaskID> AddBlockRoundTasks(TaskRegion& region, const std::vector<TaskID>& after,
                                       F round, int calls, std::size_t lists) {
  if (static_cast<std::size_t>(region.size()) != lists)
    throw UsageError("AddTasks: the region has " + std::to_string(region.size()) + " lists for " +
                     std::to_string(lists) + " local blocks");
  std::vector<TaskID> last(lists);
  for (std::size_t i = 0; i < lists; ++i) {
    TaskID dep = i < after.size() ? after[i] : TaskID();
    for (int c = 0; c < calls; ++c)
      dep = region[static_cast<int>(i)].AddTask(
          dep, [round, i, c] { return round(static_cast<int>(i), c); });
    last[i] = dep;
  }
  return last;
}

template <class Partners>
using IfPartners = std::enable_if_t<std::is_base_of_v<BlockPartners, std::decay_t<Partners>>, int>;

}  // namespace detail

/// A pattern over the blocks of a grid, run by tasks: MergePartners, BroadcastPartners,
/// SwapPartners, AllReducePartners, or partners of the user's own. Construct it on every
/// rank, in the same order as the Context's other objects (it takes a communicator of its
/// own for its lifetime, and checks that the partners' links agree); each generation
/// `Start(blocks)` with this rank's blocks as (gid, block) pairs in any order, then run
/// `Round(i, call)` for call 0..Calls()-1 as consecutive tasks of the list of the i-th pair
/// (`AddTasks` does that), or poll `Run(i)`.
template <class Block>
class BlockReduction {
 public:
  /// Called once per call of each local block: its data, its messages, the partners.
  using Callback =
      std::function<void(Block& block, BlockProxy& proxy, const BlockPartners& partners)>;
  /// `partners`: any BlockPartners subclass, copied. UsageError (on every rank) when the
  /// grid is for another number of ranks or the partners' links disagree.
  template <class Partners, detail::IfPartners<Partners> = 0>
  BlockReduction(Context& ctx, Partners&& partners, Callback callback, std::string label = {})
      : BlockReduction(
            ctx,
            std::shared_ptr<const BlockPartners>(
                std::make_shared<std::decay_t<Partners>>(std::forward<Partners>(partners))),
            std::move(callback), std::move(label)) {}
  /// Partners shared with the caller (they must not change while the object lives).
  BlockReduction(Context& ctx, std::shared_ptr<const BlockPartners> partners, Callback callback,
                 std::string label = {})
      : callback_(std::move(callback)),
        engine_(
            ctx, std::move(partners),
            [this](void* b, BlockProxy& p) {
              callback_(*static_cast<Block*>(b), p, engine_.Partners());
            },
            "BlockReduction" + (label.empty() ? std::string() : " '" + label + "'")) {}
  BlockReduction(const BlockReduction&) = delete;
  BlockReduction& operator=(const BlockReduction&) = delete;

  /// A new generation over this rank's blocks, given as (gid, block) pairs in any order;
  /// local block i below is the i-th pair. Throws UsageError while the previous generation
  /// runs, or when the gids are not exactly this rank's (naming the missing, extra and
  /// repeated gids).
  void Start(const std::vector<std::pair<int, Block*>>& blocks) {
    engine_.Start(detail::ErasedBlocks(blocks));
  }
  /// The task of `call` for local block `local` (the `local`-th pair given to Start):
  /// incomplete until the messages of that call have arrived (it never waits inside), then
  /// the callback runs and the call's messages leave; complete after that. Calls of one
  /// block run in order.
  TaskStatus Round(int local, int call) { return engine_.Round(local, call); }
  /// Advances local block `local` as far as its messages allow; complete after its last call.
  TaskStatus Run(int local) { return engine_.Run(local); }
  /// Adds the rounds of local block i (the i-th pair given to Start) to list i of `region`
  /// (after `after[i]` when given); returns each list's last task.
  std::vector<TaskID> AddTasks(TaskRegion& region, const std::vector<TaskID>& after = {}) {
    return detail::AddBlockRoundTasks(
        region, after, [this](int i, int c) { return Round(i, c); }, engine_.Calls(),
        engine_.Local().size());
  }
  /// Calls of the callback per block (Partners().Calls()).
  int Calls() const noexcept { return engine_.Calls(); }
  /// The partners the pattern runs.
  const BlockPartners& Partners() const noexcept { return engine_.Partners(); }
  /// This rank's gids, ascending.
  const std::vector<int>& LocalBlocks() const noexcept { return engine_.Local(); }
  /// MPI messages this rank has sent to other ranks since the object was made (small
  /// messages of one call to the blocks of one rank travel as one).
  std::uint64_t RemoteMessages() const noexcept { return engine_.RemoteMessages(); }

 private:
  Callback callback_;
  detail::BlockEngine engine_;
};

/// An all-to-all among the blocks of a grid, written as one round: at its first call each
/// block's callback enqueues to any block (OutLink() lists every gid); at its last call
/// InLink() lists every gid and the block dequeues what each sent (nothing: Remaining 0).
/// Carried out over the k-ary swap steps of radix `radix` (or of `route`); each call is a
/// task as in BlockReduction.
template <class Block>
class BlockAllToAll {
 public:
  /// Called at the first call (to enqueue) and the last (to dequeue) of each local block.
  using Callback = std::function<void(Block& block, BlockProxy& proxy)>;
  /// An all-to-all over the blocks of `grid`, routed over swap steps of `radix`; a radix of
  /// at least the number of blocks sends every message straight to its block (one step).
  BlockAllToAll(Context& ctx, const BlockGrid& grid, Callback callback,
                std::vector<int> radix = {2}, bool contiguous = true, std::string label = {})
      : BlockAllToAll(ctx, detail::AllToAllPartners(grid, radix, contiguous), std::move(callback),
                      Named(label)) {}
  /// Routed over the steps of `route` (one step: straight to each block).
  BlockAllToAll(Context& ctx, const SwapPartners& route, Callback callback, std::string label = {})
      : BlockAllToAll(ctx, detail::AllToAllPartners(route), std::move(callback), Named(label)) {}
  BlockAllToAll(const BlockAllToAll&) = delete;
  BlockAllToAll& operator=(const BlockAllToAll&) = delete;

  /// As BlockReduction::Start: (gid, block) pairs in any order.
  void Start(const std::vector<std::pair<int, Block*>>& blocks) {
    engine_.Start(detail::ErasedBlocks(blocks));
  }
  /// As BlockReduction::Round.
  TaskStatus Round(int local, int call) { return engine_.Round(local, call); }
  /// As BlockReduction::Run.
  TaskStatus Run(int local) { return engine_.Run(local); }
  /// As BlockReduction::AddTasks.
  std::vector<TaskID> AddTasks(TaskRegion& region, const std::vector<TaskID>& after = {}) {
    return detail::AddBlockRoundTasks(
        region, after, [this](int i, int c) { return Round(i, c); }, engine_.Calls(),
        engine_.Local().size());
  }
  /// Calls per block: the first enqueues, the last dequeues.
  int Calls() const noexcept { return engine_.Calls(); }
  /// This rank's gids, ascending.
  const std::vector<int>& LocalBlocks() const noexcept { return engine_.Local(); }
  /// MPI messages this rank has sent to other ranks since the object was made (small
  /// messages of one call to the blocks of one rank travel as one).
  std::uint64_t RemoteMessages() const noexcept { return engine_.RemoteMessages(); }

 private:
  BlockAllToAll(Context& ctx, const std::shared_ptr<const BlockPartners>& routed, Callback callback,
                std::string name)
      : callback_(std::move(callback)),
        engine_(
            ctx, routed,
            detail::AllToAllCallback(
                routed, [this](void* b, BlockProxy& p) { callback_(*static_cast<Block*>(b), p); }),
            std::move(name)) {}
  static std::string Named(const std::string& label) {
    return "BlockAllToAll" + (label.empty() ? std::string() : " '" + label + "'");
  }
  Callback callback_;
  detail::BlockEngine engine_;
};

}  // namespace tributary

#ifdef TRIBUTARY_PUBLIC_INCLUDE_NOT_DEFINED_BLOCKS
#undef TRIBUTARY_PUBLIC_INCLUDE
#undef TRIBUTARY_PUBLIC_INCLUDE_NOT_DEFINED_BLOCKS
#endif
