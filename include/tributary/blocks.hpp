// Block reduction patterns over k-ary rounds: blocks with global ids arranged in a regular
// grid of 1-3 dimensions and assigned to ranks; partners for merge-reduce, broadcast,
// swap-reduce and all-reduce; an all-to-all written as one round and carried out over
// k-ary rounds. Each round of each block is a task: it returns incomplete until the
// round's messages have arrived, then runs the user's callback, which dequeues what
// arrived and enqueues what goes on. Messages between blocks of one rank never go through
// MPI. Blocks live in memory (out-of-core blocks are out of scope).
#pragma once

#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "tributary/config.hpp"
#include "tributary/context.hpp"
#include "tributary/errors.hpp"
#include "tributary/tasks.hpp"

namespace tributary {

namespace detail {
class BlockEngine;
struct BlockEngineShared;
}  // namespace detail

/// How blocks are assigned to ranks.
enum class BlockAssignment {
  contiguous,  ///< rank r owns a contiguous run of gids (the first blocks % ranks get one more)
  round_robin  ///< gid g belongs to rank g % ranks
};

/// Blocks 0..n-1 in a regular grid of 1-3 dimensions, and their ranks. gid = c0 + d0 (c1 +
/// d1 c2) for coordinates c and divisions d.
class BlockGrid {
 public:
  /// `divisions` blocks along each dimension (1 to 3 of them, each >= 1); their product is
  /// the block count. UsageError otherwise, or when `ranks` < 1.
  BlockGrid(std::vector<int> divisions, int ranks,
            BlockAssignment assignment = BlockAssignment::contiguous);
  /// `blocks` blocks in `dims` dimensions, divided as evenly as the factors allow (the
  /// larger factors first). UsageError when `blocks` < 1 or `dims` is not 1-3.
  static BlockGrid Regular(int blocks, int dims, int ranks,
                           BlockAssignment assignment = BlockAssignment::contiguous);
  /// Checks that `blocks` equals the grid's block count (UsageError naming both otherwise).
  void RequireBlocks(int blocks) const;

  int Blocks() const noexcept { return blocks_; }
  int Dims() const noexcept { return static_cast<int>(divisions_.size()); }
  int Ranks() const noexcept { return ranks_; }
  const std::vector<int>& Divisions() const noexcept { return divisions_; }
  std::vector<int> Coords(int gid) const;
  int Gid(const std::vector<int>& coords) const;
  /// The rank that owns `gid`.
  int Owner(int gid) const;
  /// The gids `rank` owns, ascending (may be empty).
  std::vector<int> LocalBlocks(int rank) const;

 private:
  std::vector<int> divisions_;
  int blocks_ = 1;
  int ranks_ = 1;
  BlockAssignment assignment_;
};

/// The communication patterns with partners.
enum class BlockPattern { merge, broadcast, swap, all_reduce };

/// Who talks to whom in each round of a pattern over a grid. A pattern of S k-ary steps
/// has S + 1 calls of the callback (2S + 1 for all_reduce): call c receives what was sent
/// in step c - 1 (`InLink`) and sends for step c (`OutLink`); call 0 receives nothing and
/// the last call sends nothing.
///
/// Steps: the dimensions take turns (0, 1, 2, 0, ...) while blocks remain along them; a
/// step along a dimension with d blocks left uses the largest divisor of d that is at most
/// that step's radix, and when there is none the smallest prime factor of d (a prime d is
/// one step). `contiguous` = true: distance doubling (the first step along a dimension
/// groups neighbours); false: distance halving.
class BlockPartners {
 public:
  struct Step {
    int dim;     ///< the dimension this step groups along
    int k;       ///< the group size
    int stride;  ///< distance between group members along `dim`
  };
  /// `radix`: one k for every step, or a list (step i uses radix[i], the last repeating).
  /// UsageError for an empty list or a radix below 2.
  BlockPartners(BlockPattern pattern, const BlockGrid& grid, std::vector<int> radix,
                bool contiguous = true);

  BlockPattern Pattern() const noexcept { return pattern_; }
  const std::vector<Step>& Steps() const noexcept { return steps_; }
  /// Calls of the callback per block: S + 1, or 2S + 1 for all_reduce.
  int Calls() const noexcept;
  /// all_reduce: true for the calls of the merge half (call S, the turn, is both).
  bool InMerge(int call) const noexcept;
  /// Whether block `gid` takes part in `call` (merge: the groups' roots; broadcast: the
  /// blocks reached so far; swap: all).
  bool Active(int call, int gid) const;
  /// The gids `gid` receives from in `call` (in ascending gid order; itself included where
  /// it sends to itself).
  std::vector<int> InLink(int call, int gid) const;
  /// The gids `gid` sends to in `call`.
  std::vector<int> OutLink(int call, int gid) const;
  /// The group of `gid` in step `step` (ascending gids, itself included).
  std::vector<int> Group(int step, int gid) const;
  /// The member of `gid`'s group in `step` whose position along the step's dimension
  /// matches `target`'s (the next hop toward `target`).
  int Toward(int step, int gid, int target) const;
  const BlockGrid& Grid() const noexcept { return grid_; }

 private:
  int Digit(int step, int gid) const;
  bool MergeActive(int call, int gid) const;
  bool BroadcastActive(int call, int gid) const;
  BlockPattern pattern_;
  BlockGrid grid_;
  std::vector<Step> steps_;
};

/// What a block's callback sees in one call: its links and its messages. Enqueued values
/// are copied as bytes (trivially copyable values and std::vector of them); a block
/// dequeues values from one sender in the order they were enqueued.
class BlockProxy {
 public:
  int Gid() const noexcept { return gid_; }
  int Round() const noexcept { return call_; }
  const std::vector<int>& InLink() const noexcept { return in_; }
  const std::vector<int>& OutLink() const noexcept { return out_; }

  template <class T>
  void Enqueue(int to, const T& value) {
    static_assert(std::is_trivially_copyable_v<T>,
                  "Enqueue: a trivially copyable value or a std::vector of them");
    Append(to, &value, sizeof(T));
  }
  template <class T>
  void Enqueue(int to, const std::vector<T>& values) {
    static_assert(std::is_trivially_copyable_v<T>,
                  "Enqueue: a std::vector of trivially copyable values");
    const std::uint64_t n = values.size();
    Append(to, &n, sizeof n);
    Append(to, values.data(), n * sizeof(T));
  }
  template <class T>
  void Dequeue(int from, T& value) {
    static_assert(std::is_trivially_copyable_v<T>,
                  "Dequeue: a trivially copyable value or a std::vector of them");
    Take(from, &value, sizeof(T));
  }
  template <class T>
  void Dequeue(int from, std::vector<T>& values) {
    static_assert(std::is_trivially_copyable_v<T>,
                  "Dequeue: a std::vector of trivially copyable values");
    std::uint64_t n = 0;
    Take(from, &n, sizeof n);
    values.resize(static_cast<std::size_t>(n));
    Take(from, values.data(), static_cast<std::size_t>(n) * sizeof(T));
  }
  /// Bytes not yet dequeued from `from`.
  std::size_t Remaining(int from) const;

 private:
  friend class detail::BlockEngine;
  void Append(int to, const void* data, std::size_t bytes);
  void Take(int from, void* data, std::size_t bytes);

  std::string Where() const;

  int gid_ = 0;
  int call_ = 0;
  const detail::BlockEngine* engine_ = nullptr;  // names the object in errors
  std::vector<int> in_, out_;
  std::map<int, std::vector<char>> incoming_;
  std::map<int, std::size_t> read_;
  std::map<int, std::vector<char>> outgoing_;
};

namespace detail {

/// The engine behind BlockReduction and BlockAllToAll, without the block type.
class BlockEngine {
 public:
  using Callback = std::function<void(void* block, BlockProxy& proxy)>;
  /// `all_to_all`: the partners are swap partners; the callback runs at the first call (to
  /// enqueue to any block) and at the last (to dequeue from every block); the calls between
  /// route the messages.
  BlockEngine(Context& ctx, BlockPartners partners, Callback callback, bool all_to_all,
              std::string what, std::string label);
  ~BlockEngine();
  BlockEngine(const BlockEngine&) = delete;
  BlockEngine& operator=(const BlockEngine&) = delete;

  /// `blocks`: (gid, block) pairs, in any order; they must be exactly this rank's blocks.
  void Start(const std::vector<std::pair<int, void*>>& blocks);
  TaskStatus Round(int local, int call);
  TaskStatus Run(int local);
  int Calls() const noexcept;
  const BlockPartners& Partners() const noexcept { return partners_; }
  const std::vector<int>& Local() const noexcept { return local_; }
  std::uint64_t Generation() const noexcept { return generation_; }
  /// Messages this object sent through MPI so far (the others stayed on the rank).
  std::uint64_t RemoteMessages() const noexcept;

 private:
  struct Message;
  struct State;
  void CheckBlockSet(const std::vector<std::pair<int, void*>>& blocks) const;
  std::string Where(int gid, int call) const;
  /// The links of local block `local` in `call`, computed once per object.
  struct Links {
    std::vector<int> in, out;
    bool runs = false;
    bool remote_in = false;  // some input comes from another rank
  };
  const Links& LinksOf(int local, int call);
  friend class tributary::BlockProxy;
  TaskStatus RoundLocked(int local, int call);
  static void PollThunk(void* self) noexcept;
  void Poll();
  void Deliver(std::uint64_t generation, int call, int to, int from, std::vector<char> bytes);
  void Send(int call, int from, int to, std::vector<char> bytes);
  bool SendsDone();
  std::vector<int> Inputs(int call, int gid) const;
  std::vector<int> Outputs(int call, int gid) const;
  bool Runs(int call, int gid) const;

  Context* ctx_;
  BlockPartners partners_;
  Callback callback_;
  bool all_to_all_;
  std::string name_;
  int rank_ = 0;
  std::vector<int> local_;
  std::vector<std::unique_ptr<State>> states_;
  std::uint64_t generation_ = 0;
  std::unique_ptr<BlockEngineShared> shared_;
  std::vector<std::vector<Links>> links_;  // [local][call]
};

template <class Block>
std::vector<std::pair<int, void*>> ErasedBlocks(const std::vector<std::pair<int, Block*>>& blocks) {
  std::vector<std::pair<int, void*>> erased;
  erased.reserve(blocks.size());
  for (const auto& [gid, block] : blocks) erased.emplace_back(gid, static_cast<void*>(block));
  return erased;
}

}  // namespace detail

/// A merge, broadcast, swap or all-reduce pattern over the blocks of a grid, run by tasks.
/// Construct it on every rank, in the same order as the Context's other objects (it takes a
/// communicator of its own for its lifetime); each generation `Start(blocks)` with this
/// rank's blocks as (gid, block) pairs in any order, then run `Round(i, call)` for call
/// 0..Calls()-1 as consecutive tasks of the list of the i-th pair (`AddTasks` does that),
/// or poll `Run(i)`.
template <class Block>
class BlockReduction {
 public:
  using Callback =
      std::function<void(Block& block, BlockProxy& proxy, const BlockPartners& partners)>;
  BlockReduction(Context& ctx, BlockPartners partners, Callback callback, std::string label = {})
      : callback_(std::move(callback)),
        engine_(
            ctx, std::move(partners),
            [this](void* b, BlockProxy& p) {
              callback_(*static_cast<Block*>(b), p, engine_.Partners());
            },
            false, "BlockReduction", std::move(label)) {}
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
    return AddRoundTasks(
        region, after, [this](int i, int c) { return Round(i, c); }, engine_.Calls(),
        engine_.Local().size());
  }
  int Calls() const noexcept { return engine_.Calls(); }
  const BlockPartners& Partners() const noexcept { return engine_.Partners(); }
  /// This rank's gids, ascending.
  const std::vector<int>& LocalBlocks() const noexcept { return engine_.Local(); }
  std::uint64_t RemoteMessages() const noexcept { return engine_.RemoteMessages(); }

  template <class F>
  static std::vector<TaskID> AddRoundTasks(TaskRegion& region, const std::vector<TaskID>& after,
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

 private:
  Callback callback_;
  detail::BlockEngine engine_;
};

/// An all-to-all among the blocks of a grid, written as one round: at its first call each
/// block's callback enqueues to any block (OutLink() lists every gid); at its last call
/// InLink() lists every gid and the block dequeues what each sent (nothing: Remaining 0).
/// Carried out over k-ary swap steps of radix `radix`; each call is a task as in
/// BlockReduction.
template <class Block>
class BlockAllToAll {
 public:
  using Callback = std::function<void(Block& block, BlockProxy& proxy)>;
  BlockAllToAll(Context& ctx, const BlockGrid& grid, Callback callback,
                std::vector<int> radix = {2}, bool contiguous = true, std::string label = {})
      : callback_(std::move(callback)),
        engine_(
            ctx, BlockPartners(BlockPattern::swap, grid, std::move(radix), contiguous),
            [this](void* b, BlockProxy& p) { callback_(*static_cast<Block*>(b), p); }, true,
            "BlockAllToAll", std::move(label)) {}
  BlockAllToAll(const BlockAllToAll&) = delete;
  BlockAllToAll& operator=(const BlockAllToAll&) = delete;

  /// As BlockReduction::Start: (gid, block) pairs in any order.
  void Start(const std::vector<std::pair<int, Block*>>& blocks) {
    engine_.Start(detail::ErasedBlocks(blocks));
  }
  TaskStatus Round(int local, int call) { return engine_.Round(local, call); }
  TaskStatus Run(int local) { return engine_.Run(local); }
  std::vector<TaskID> AddTasks(TaskRegion& region, const std::vector<TaskID>& after = {}) {
    return BlockReduction<Block>::AddRoundTasks(
        region, after, [this](int i, int c) { return Round(i, c); }, engine_.Calls(),
        engine_.Local().size());
  }
  int Calls() const noexcept { return engine_.Calls(); }
  const std::vector<int>& LocalBlocks() const noexcept { return engine_.Local(); }
  std::uint64_t RemoteMessages() const noexcept { return engine_.RemoteMessages(); }

 private:
  Callback callback_;
  detail::BlockEngine engine_;
};

}  // namespace tributary
