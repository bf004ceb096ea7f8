// The engine behind BlockReduction and BlockAllToAll, without the block type: it runs the
// calls of this rank's blocks as non-blocking tasks over any BlockPartners, carries their
// messages (in memory on the rank, by MPI between ranks) and checks the links once. The
// all-to-all is an adapter over it (detail/blocks/block_all_to_all.hpp). Compiled once, in
// src/blocks/block_engine.cpp.
#pragma once

#if !defined(TRIBUTARY_PUBLIC_INCLUDE) && !defined(TRIBUTARY_INTERNAL_INCLUDE)
#error \
    "<tributary/detail/blocks/block_engine.hpp> is internal to Tributary: include <tributary/blocks.hpp> instead"
#endif

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tributary/block_partners.hpp"
#include "tributary/tasks/task_status.hpp"

namespace tributary {
class Context;
class BlockProxy;  // what the callbacks are given (tributary/block_proxy.hpp)

namespace detail {

/// Every member has the meaning of the BlockReduction member of the same name; blocks are
/// opaque pointers.
class BlockEngine {
 public:
  using Callback = std::function<void(void* block, BlockProxy& proxy)>;
  /// `name` heads every error ("BlockReduction 'merge'"). Collective: takes a communicator
  /// of its own, and every rank checks the links of its blocks (UsageError on every rank
  /// when the partners disagree on one).
  BlockEngine(Context& ctx, std::shared_ptr<const BlockPartners> partners, Callback callback,
              std::string name);
  ~BlockEngine();
  BlockEngine(const BlockEngine&) = delete;
  BlockEngine& operator=(const BlockEngine&) = delete;

  /// `blocks`: (gid, block) pairs, in any order; they must be exactly this rank's blocks.
  void Start(const std::vector<std::pair<int, void*>>& blocks);
  TaskStatus Round(int local, int call);
  TaskStatus Run(int local);
  int Calls() const noexcept;
  const BlockPartners& Partners() const noexcept;
  const std::vector<int>& Local() const noexcept;
  std::uint64_t Generation() const noexcept;
  std::uint64_t RemoteMessages() const noexcept;
  /// "name, generation g, block b, round c, rank r" for errors.
  std::string Where(int gid, int call) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

template <class Block>
std::vector<std::pair<int, void*>> ErasedBlocks(const std::vector<std::pair<int, Block*>>& blocks) {
  std::vector<std::pair<int, void*>> erased;
  erased.reserve(blocks.size());
  for (const auto& [gid, block] : blocks) erased.emplace_back(gid, static_cast<void*>(block));
  return erased;
}

}  // namespace detail
}  // namespace tributary
