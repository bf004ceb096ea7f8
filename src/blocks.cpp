// Block reduction patterns: the grid, the partners of each k-ary step, and the engine that
// runs one block's calls as non-blocking tasks.
#include "tributary/blocks.hpp"

#include <algorithm>
#include <iterator>
#include <mutex>
#include <numeric>
#include <tuple>
#include <utility>

#include "tributary/detail/progress.hpp"
#include "tributary/detail/transport.hpp"

namespace tributary {

// ---------------------------------------------------------------------------------------
// BlockGrid

BlockGrid::BlockGrid(std::vector<int> divisions, int ranks, BlockAssignment assignment)
    : divisions_(std::move(divisions)), ranks_(ranks), assignment_(assignment) {
  if (divisions_.empty() || divisions_.size() > 3)
    throw UsageError("BlockGrid: 1 to 3 dimensions, not " + std::to_string(divisions_.size()));
  if (ranks_ < 1) throw UsageError("BlockGrid: ranks must be >= 1, not " + std::to_string(ranks_));
  std::int64_t product = 1;
  for (int d : divisions_) {
    if (d < 1)
      throw UsageError("BlockGrid: every dimension needs at least one block, not " +
                       std::to_string(d));
    product *= d;
    if (product > (std::int64_t(1) << 30)) throw UsageError("BlockGrid: too many blocks");
  }
  blocks_ = static_cast<int>(product);
}

BlockGrid BlockGrid::Regular(int blocks, int dims, int ranks, BlockAssignment assignment) {
  if (blocks < 1) throw UsageError("BlockGrid: at least one block, not " + std::to_string(blocks));
  if (dims < 1 || dims > 3)
    throw UsageError("BlockGrid: 1 to 3 dimensions, not " + std::to_string(dims));
  std::vector<int> primes;
  for (int n = blocks, f = 2; n > 1;) {
    if (static_cast<std::int64_t>(f) * f > n) f = n;
    if (n % f == 0) {
      primes.push_back(f);
      n /= f;
    } else {
      ++f;
    }
  }
  std::vector<int> divisions(static_cast<std::size_t>(dims), 1);
  for (auto it = primes.rbegin(); it != primes.rend(); ++it)  // largest factor to the smallest side
    *std::min_element(divisions.begin(), divisions.end()) *= *it;
  std::sort(divisions.rbegin(), divisions.rend());
  return BlockGrid(std::move(divisions), ranks, assignment);
}

void BlockGrid::RequireBlocks(int blocks) const {
  if (blocks != blocks_) {
    std::string shape;
    for (int d : divisions_) shape += (shape.empty() ? "" : " x ") + std::to_string(d);
    throw UsageError("BlockGrid: " + std::to_string(blocks) + " blocks do not match the grid of " +
                     shape + " = " + std::to_string(blocks_) + " blocks");
  }
}

std::vector<int> BlockGrid::Coords(int gid) const {
  if (gid < 0 || gid >= blocks_)
    throw UsageError("BlockGrid: gid " + std::to_string(gid) + " is not a block (0.." +
                     std::to_string(blocks_ - 1) + ")");
  std::vector<int> c(divisions_.size());
  for (std::size_t d = 0; d < divisions_.size(); ++d) {
    c[d] = gid % divisions_[d];
    gid /= divisions_[d];
  }
  return c;
}

int BlockGrid::Gid(const std::vector<int>& coords) const {
  int gid = 0;
  for (std::size_t d = divisions_.size(); d-- > 0;) gid = gid * divisions_[d] + coords[d];
  return gid;
}

int BlockGrid::Owner(int gid) const {
  if (gid < 0 || gid >= blocks_)
    throw UsageError("BlockGrid: gid " + std::to_string(gid) + " is not a block (0.." +
                     std::to_string(blocks_ - 1) + ")");
  if (assignment_ == BlockAssignment::round_robin) return gid % ranks_;
  const int base = blocks_ / ranks_, extra = blocks_ % ranks_;
  if (gid < extra * (base + 1)) return gid / (base + 1);
  return extra + (gid - extra * (base + 1)) / base;
}

std::vector<int> BlockGrid::LocalBlocks(int rank) const {
  std::vector<int> mine;
  for (int g = 0; g < blocks_; ++g)
    if (Owner(g) == rank) mine.push_back(g);
  return mine;
}

// ---------------------------------------------------------------------------------------
// BlockPartners

BlockPartners::BlockPartners(BlockPattern pattern, const BlockGrid& grid, std::vector<int> radix,
                             bool contiguous)
    : pattern_(pattern), grid_(grid) {
  if (radix.empty()) throw UsageError("BlockPartners: give one radix or a list of them");
  for (int k : radix)
    if (k < 2) throw UsageError("BlockPartners: a radix must be >= 2, not " + std::to_string(k));
  const int dims = grid.Dims();
  std::vector<int> left = grid.Divisions();
  std::vector<std::vector<std::size_t>> by_dim(static_cast<std::size_t>(dims));
  for (bool more = true; more;) {
    more = false;
    for (int d = 0; d < dims; ++d) {
      int& n = left[static_cast<std::size_t>(d)];
      if (n == 1) continue;
      const int k = radix[std::min(steps_.size(), radix.size() - 1)];
      int f = 1;
      for (int c = std::min(k, n); c >= 2; --c)
        if (n % c == 0) {
          f = c;
          break;
        }
      if (f == 1)  // no divisor up to k: the smallest prime factor, one step
        for (int c = 2; c <= n; ++c)
          if (n % c == 0) {
            f = c;
            break;
          }
      by_dim[static_cast<std::size_t>(d)].push_back(steps_.size());
      steps_.push_back(Step{d, f, 1});
      n /= f;
      more = more || n > 1;
    }
  }
  // Strides: doubling multiplies the group sizes of the earlier steps along the same
  // dimension; halving those of the later ones.
  for (const auto& idx : by_dim) {
    int stride = 1;
    if (contiguous) {
      for (std::size_t i : idx) {
        steps_[i].stride = stride;
        stride *= steps_[i].k;
      }
    } else {
      for (auto it = idx.rbegin(); it != idx.rend(); ++it) {
        steps_[*it].stride = stride;
        stride *= steps_[*it].k;
      }
    }
  }
}

int BlockPartners::Calls() const noexcept {
  const int s = static_cast<int>(steps_.size());
  return pattern_ == BlockPattern::all_reduce ? 2 * s + 1 : s + 1;
}

bool BlockPartners::InMerge(int call) const noexcept {
  return pattern_ == BlockPattern::merge ||
         (pattern_ == BlockPattern::all_reduce && call <= static_cast<int>(steps_.size()));
}

int BlockPartners::Digit(int step, int gid) const {
  const Step& s = steps_[static_cast<std::size_t>(step)];
  return grid_.Coords(gid)[static_cast<std::size_t>(s.dim)] / s.stride % s.k;
}

std::vector<int> BlockPartners::Group(int step, int gid) const {
  const Step& s = steps_[static_cast<std::size_t>(step)];
  std::vector<int> c = grid_.Coords(gid);
  const int base = c[static_cast<std::size_t>(s.dim)] - Digit(step, gid) * s.stride;
  std::vector<int> group(static_cast<std::size_t>(s.k));
  for (int j = 0; j < s.k; ++j) {
    c[static_cast<std::size_t>(s.dim)] = base + j * s.stride;
    group[static_cast<std::size_t>(j)] = grid_.Gid(c);
  }
  return group;
}

int BlockPartners::Toward(int step, int gid, int target) const {
  return Group(step, gid)[static_cast<std::size_t>(Digit(step, target))];
}

// Merge call c: the blocks whose digits of steps 0..c-1 are all 0.
bool BlockPartners::MergeActive(int call, int gid) const {
  for (int s = 0; s < call; ++s)
    if (Digit(s, gid) != 0) return false;
  return true;
}

// Broadcast call c (steps run backwards): the blocks whose digits of steps 0..S-c-1 are 0.
bool BlockPartners::BroadcastActive(int call, int gid) const {
  const int S = static_cast<int>(steps_.size());
  for (int s = 0; s < S - call; ++s)
    if (Digit(s, gid) != 0) return false;
  return true;
}

bool BlockPartners::Active(int call, int gid) const {
  const int S = static_cast<int>(steps_.size());
  switch (pattern_) {
    case BlockPattern::swap:
      return true;
    case BlockPattern::merge:
      return MergeActive(call, gid);
    case BlockPattern::broadcast:
      return BroadcastActive(call, gid);
    case BlockPattern::all_reduce:
      return call <= S ? MergeActive(call, gid) : BroadcastActive(call - S, gid);
  }
  return false;
}

std::vector<int> BlockPartners::InLink(int call, int gid) const {
  const int S = static_cast<int>(steps_.size());
  if (call <= 0 || call >= Calls() || !Active(call, gid)) return {};
  switch (pattern_) {
    case BlockPattern::swap:
    case BlockPattern::merge:
      return Group(call - 1, gid);
    case BlockPattern::broadcast:
      return {Group(S - call, gid)[0]};
    case BlockPattern::all_reduce:
      if (call <= S) return Group(call - 1, gid);
      return {Group(2 * S - call, gid)[0]};
  }
  return {};
}

std::vector<int> BlockPartners::OutLink(int call, int gid) const {
  const int S = static_cast<int>(steps_.size());
  if (call < 0 || call >= Calls() - 1 || !Active(call, gid)) return {};
  switch (pattern_) {
    case BlockPattern::swap:
      return Group(call, gid);
    case BlockPattern::merge:
      return {Group(call, gid)[0]};
    case BlockPattern::broadcast:
      return Group(S - 1 - call, gid);
    case BlockPattern::all_reduce:
      if (call < S) return {Group(call, gid)[0]};
      return Group(2 * S - 1 - call, gid);
  }
  return {};
}

// ---------------------------------------------------------------------------------------
// BlockProxy

std::string BlockProxy::Where() const {
  return engine_ ? engine_->Where(gid_, call_)
                 : "block " + std::to_string(gid_) + ", round " + std::to_string(call_);
}

void BlockProxy::Append(int to, const void* data, std::size_t bytes) {
  if (std::find(out_.begin(), out_.end(), to) == out_.end()) {
    std::string link;
    for (int g : out_) link += " " + std::to_string(g);
    throw UsageError(Where() + ": enqueue to block " + std::to_string(to) +
                     ", which is not a partner in this round (out-link:" +
                     (link.empty() ? std::string(" none") : link) + ")");
  }
  auto& buf = outgoing_[to];
  const auto* p = static_cast<const char*>(data);
  buf.insert(buf.end(), p, p + bytes);
}

void BlockProxy::Take(int from, void* data, std::size_t bytes) {
  auto it = incoming_.find(from);
  std::size_t& pos = read_[from];
  if (it == incoming_.end() || it->second.size() - pos < bytes)
    throw UsageError(Where() + ": dequeue of " + std::to_string(bytes) + " bytes from block " +
                     std::to_string(from) +
                     (it == incoming_.end()
                          ? std::string(", which is not in the in-link")
                          : ", which has " + std::to_string(it->second.size() - pos) + " left"));
  if (bytes) std::memcpy(data, it->second.data() + pos, bytes);
  pos += bytes;
}

std::size_t BlockProxy::Remaining(int from) const {
  auto it = incoming_.find(from);
  if (it == incoming_.end()) return 0;
  auto r = read_.find(from);
  return it->second.size() - (r == read_.end() ? 0 : r->second);
}

namespace detail {

// ---------------------------------------------------------------------------------------
// BlockEngine

struct BlockEngine::State {
  void* block = nullptr;
  int gid = 0;
  int slot = 0;  // the gid's position in local_ (ascending gids): its links
  int next_call = 0;
};

// (generation, call, to, from) -> the bytes `from` sent to `to` for `call`.
using BlockKey = std::tuple<std::uint64_t, int, int, int>;

struct BlockMessageHeader {
  std::uint64_t generation;
  std::int32_t call, to, from, reserved;
};

struct BlockEngineShared {
  explicit BlockEngineShared(Context& ctx) : transport(ctx) {}
  // Message buffers keep their capacity from call to call: a large message allocated fresh
  // every round costs page faults for every page, each time (memory returned to the
  // system is faulted in again), which dominated large patterns.
  std::vector<char> Spare() {
    if (spare.empty()) return {};
    std::vector<char> v = std::move(spare.back());
    spare.pop_back();
    v.clear();
    return v;
  }
  void Recycle(std::vector<char>&& v) {
    if (v.capacity() > 0 && spare.size() < kMaxSpare) spare.push_back(std::move(v));
  }
  static constexpr std::size_t kMaxSpare = 256;

  std::mutex mutex;  // guards everything below
  std::map<BlockKey, std::vector<char>> stash;
  std::vector<std::vector<char>> spare;
  std::vector<char> wire;  // the message being received
  Transport transport;     // messages to blocks of other ranks
};

namespace {
// One all-to-all record in a routed bundle: source, destination, length, bytes.
struct RouteRecord {
  std::int32_t from, to;
  std::uint64_t bytes;
};

void AppendRecord(std::vector<char>& bundle, int from, int to, const char* data,
                  std::size_t bytes) {
  RouteRecord r{from, to, bytes};
  const auto* p = reinterpret_cast<const char*>(&r);
  bundle.insert(bundle.end(), p, p + sizeof r);
  bundle.insert(bundle.end(), data, data + bytes);
}

template <class F>
void ForEachRecord(const std::vector<char>& bundle, F f) {
  std::size_t pos = 0;
  while (pos + sizeof(RouteRecord) <= bundle.size()) {
    RouteRecord r;
    std::memcpy(&r, bundle.data() + pos, sizeof r);
    pos += sizeof r;
    f(r.from, r.to, bundle.data() + pos, static_cast<std::size_t>(r.bytes));
    pos += static_cast<std::size_t>(r.bytes);
  }
}
}  // namespace

BlockEngine::BlockEngine(Context& ctx, BlockPartners partners, Callback callback, bool all_to_all,
                         std::string what, std::string label)
    : ctx_(&ctx),
      partners_(std::move(partners)),
      callback_(std::move(callback)),
      all_to_all_(all_to_all),
      shared_(std::make_unique<BlockEngineShared>(ctx)) {
  name_ = what + (label.empty() ? std::string() : " '" + label + "'");
  rank_ = ctx.Rank();
  if (partners_.Grid().Ranks() != ctx.Size())
    throw UsageError(name_ + ": the grid assigns blocks to " +
                     std::to_string(partners_.Grid().Ranks()) + " ranks, the Context has " +
                     std::to_string(ctx.Size()));
  local_ = partners_.Grid().LocalBlocks(rank_);
  AddPoller(ctx, this, &BlockEngine::PollThunk);
}

BlockEngine::~BlockEngine() { RemovePoller(*ctx_, this); }

void BlockEngine::PollThunk(void* self) noexcept {
  auto* engine = static_cast<BlockEngine*>(self);
  std::unique_lock<std::mutex> lock(engine->shared_->mutex, std::try_to_lock);
  if (!lock) return;  // its own thread is polling it
  try {
    engine->Poll();
  } catch (...) {
    // Kept for the engine's own poll, which receives the same way and throws there.
  }
}

TaskStatus BlockEngine::Round(int local, int call) {
  const TaskStatus status = RoundLocked(local, call);
  if (status == TaskStatus::incomplete) AdvanceOthers(*ctx_, this);
  return status;
}

std::uint64_t BlockEngine::RemoteMessages() const noexcept {
  return shared_->transport.RemoteMessages();
}

int BlockEngine::Calls() const noexcept {
  if (all_to_all_) return std::max<int>(static_cast<int>(partners_.Steps().size()), 1) + 1;
  return partners_.Calls();
}

std::string BlockEngine::Where(int gid, int call) const {
  return name_ + ", generation " + std::to_string(generation_) + ", block " + std::to_string(gid) +
         ", round " + std::to_string(call) + ", rank " + std::to_string(rank_);
}

namespace {
std::string GidList(const std::vector<int>& gids) {
  std::string s;
  for (int g : gids) s += (s.empty() ? "" : " ") + std::to_string(g);
  return s;
}
}  // namespace

// Blocks are identified by gid: the set must be exactly this rank's, in any order.
void BlockEngine::CheckBlockSet(const std::vector<std::pair<int, void*>>& blocks) const {
  std::vector<int> given;
  given.reserve(blocks.size());
  for (const auto& b : blocks) given.push_back(b.first);
  std::sort(given.begin(), given.end());
  std::vector<int> missing, extra, repeated;
  std::set_difference(local_.begin(), local_.end(), given.begin(), given.end(),
                      std::back_inserter(missing));
  std::vector<int> unique = given;
  unique.erase(std::unique(unique.begin(), unique.end()), unique.end());
  std::set_difference(unique.begin(), unique.end(), local_.begin(), local_.end(),
                      std::back_inserter(extra));
  for (std::size_t i = 1; i < given.size(); ++i)
    if (given[i] == given[i - 1] && (repeated.empty() || repeated.back() != given[i]))
      repeated.push_back(given[i]);
  if (missing.empty() && extra.empty() && repeated.empty()) return;
  std::string what = name_ + ", generation " + std::to_string(generation_ + 1) + ", rank " +
                     std::to_string(rank_) + ": Start got " + std::to_string(blocks.size()) +
                     " blocks that are not this rank's " + std::to_string(local_.size()) +
                     " (gids " + (local_.empty() ? std::string("none") : GidList(local_)) + ")";
  if (!missing.empty()) what += "; missing gids " + GidList(missing);
  if (!extra.empty()) what += "; extra gids " + GidList(extra);
  if (!repeated.empty()) what += "; repeated gids " + GidList(repeated);
  throw UsageError(what);
}

void BlockEngine::Start(const std::vector<std::pair<int, void*>>& blocks) {
  std::lock_guard<std::mutex> lock(shared_->mutex);
  if (generation_ > 0) {
    for (const auto& s : states_)
      if (s->next_call < Calls())
        throw UsageError(name_ + ": started again while block " + std::to_string(s->gid) +
                         " is in round " + std::to_string(s->next_call) + " of generation " +
                         std::to_string(generation_));
  }
  CheckBlockSet(blocks);
  ++generation_;
  states_.clear();
  for (const auto& [gid, block] : blocks) {
    auto s = std::make_unique<State>();
    s->block = block;
    s->gid = gid;
    s->slot =
        static_cast<int>(std::lower_bound(local_.begin(), local_.end(), gid) - local_.begin());
    states_.push_back(std::move(s));
  }
}

const BlockEngine::Links& BlockEngine::LinksOf(int local, int call) {
  if (links_.empty()) {
    links_.resize(local_.size());
    for (std::size_t i = 0; i < local_.size(); ++i) {
      links_[i].resize(static_cast<std::size_t>(Calls()));
      for (int c = 0; c < Calls(); ++c) {
        Links& l = links_[i][static_cast<std::size_t>(c)];
        const int gid = local_[i];
        l.runs = Runs(c, gid);
        if (!l.runs) continue;
        l.in = Inputs(c, gid);
        l.out = Outputs(c, gid);
        for (int from : l.in) l.remote_in = l.remote_in || partners_.Grid().Owner(from) != rank_;
      }
    }
  }
  return links_[static_cast<std::size_t>(local)][static_cast<std::size_t>(call)];
}

bool BlockEngine::Runs(int call, int gid) const {
  return all_to_all_ || partners_.Active(call, gid);
}

std::vector<int> BlockEngine::Inputs(int call, int gid) const {
  if (!all_to_all_) return partners_.InLink(call, gid);
  const int steps = static_cast<int>(partners_.Steps().size());
  if (call == 0) return {};
  if (steps == 0) return {gid};
  return partners_.Group(call - 1, gid);
}

std::vector<int> BlockEngine::Outputs(int call, int gid) const {
  if (!all_to_all_) return partners_.OutLink(call, gid);
  const int steps = static_cast<int>(partners_.Steps().size());
  if (call == Calls() - 1) return {};
  if (steps == 0) return {gid};
  return partners_.Group(call, gid);
}

void BlockEngine::Deliver(std::uint64_t generation, int call, int to, int from,
                          std::vector<char> bytes) {
  shared_->stash[BlockKey{generation, call, to, from}] = std::move(bytes);
}

void BlockEngine::Send(int call, int from, int to, std::vector<char> bytes) {
  const int owner = partners_.Grid().Owner(to);
  if (owner == rank_) {  // same rank: straight into the receiver's inbox, never through MPI
    Deliver(generation_, call, to, from, std::move(bytes));
    return;
  }
  const BlockMessageHeader h{generation_, call, to, from, 0};
  shared_->transport.Send(owner, &h, sizeof h, bytes.data(), bytes.size());
  shared_->Recycle(std::move(bytes));
}

void BlockEngine::Poll() {
  std::vector<char>& wire = shared_->wire;
  BlockMessageHeader h;
  while (shared_->transport.Receive(wire)) {
    if (wire.size() < sizeof h) continue;
    std::memcpy(&h, wire.data(), sizeof h);
    std::vector<char> bytes = shared_->Spare();
    bytes.assign(wire.begin() + sizeof h, wire.end());
    Deliver(h.generation, h.call, h.to, h.from, std::move(bytes));
  }
}

bool BlockEngine::SendsDone() { return shared_->transport.SendsDone(); }

TaskStatus BlockEngine::RoundLocked(int local, int call) {
  std::unique_lock<std::mutex> lock(shared_->mutex);
  if (generation_ == 0) throw UsageError(name_ + ": Round before Start");
  if (local < 0 || local >= static_cast<int>(states_.size()))
    throw UsageError(name_ + ": local block " + std::to_string(local) + " is out of range (rank " +
                     std::to_string(rank_) + " has " + std::to_string(states_.size()) + ")");
  if (call < 0 || call >= Calls())
    throw UsageError(name_ + ": round " + std::to_string(call) + " is out of range (0.." +
                     std::to_string(Calls() - 1) + ")");
  State& s = *states_[static_cast<std::size_t>(local)];
  const int last = Calls() - 1;
  if (call < s.next_call) {
    if (call < last) return TaskStatus::complete;
    Poll();  // the last round completes when this rank's messages have left
    return SendsDone() ? TaskStatus::complete : TaskStatus::incomplete;
  }
  if (call > s.next_call) return TaskStatus::incomplete;  // an earlier round has not run yet
  const Links& links = LinksOf(s.slot, call);
  if (links.remote_in || call == last) Poll();  // local inputs are already in the inbox
  if (!links.runs) {
    ++s.next_call;
    return call < last || SendsDone() ? TaskStatus::complete : TaskStatus::incomplete;
  }
  const std::vector<int>& inputs = links.in;
  for (int from : inputs)
    if (shared_->stash.find(BlockKey{generation_, call, s.gid, from}) == shared_->stash.end())
      return TaskStatus::incomplete;
  BlockProxy proxy;
  proxy.gid_ = s.gid;
  proxy.call_ = call;
  proxy.engine_ = this;
  for (int from : inputs) {
    auto it = shared_->stash.find(BlockKey{generation_, call, s.gid, from});
    proxy.incoming_[from] = std::move(it->second);
    shared_->stash.erase(it);
  }
  const std::vector<int>& outputs = links.out;
  const int blocks = partners_.Grid().Blocks();
  // The outgoing buffers, from the spares while the lock is held (the callback runs
  // without it).
  std::map<int, std::vector<char>> bundles;
  for (int to : outputs) bundles[to] = shared_->Spare();
  if (!all_to_all_) proxy.outgoing_.swap(bundles);
  lock.unlock();

  if (!all_to_all_) {
    proxy.in_ = inputs;
    proxy.out_ = outputs;
    callback_(s.block, proxy);
  } else {
    // The user sees one round: every block as a target at the first call, every block as a
    // source at the last; the calls between route the records one digit at a time.
    if (call == 0) {
      proxy.out_.resize(static_cast<std::size_t>(blocks));
      std::iota(proxy.out_.begin(), proxy.out_.end(), 0);
      callback_(s.block, proxy);
      for (const auto& [to, bytes] : proxy.outgoing_) {
        const int hop = partners_.Steps().empty() ? s.gid : partners_.Toward(0, s.gid, to);
        AppendRecord(bundles[hop], s.gid, to, bytes.data(), bytes.size());
      }
    } else if (call < last) {
      for (const auto& [from, bundle] : proxy.incoming_)
        ForEachRecord(bundle, [&](int src, int to, const char* data, std::size_t bytes) {
          AppendRecord(bundles[partners_.Toward(call, s.gid, to)], src, to, data, bytes);
        });
    } else {
      BlockProxy user;
      user.gid_ = s.gid;
      user.call_ = call;
      user.engine_ = this;
      user.in_.resize(static_cast<std::size_t>(blocks));
      std::iota(user.in_.begin(), user.in_.end(), 0);
      for (int g : user.in_) user.incoming_[g];
      for (const auto& [from, bundle] : proxy.incoming_)
        ForEachRecord(bundle, [&](int src, int to, const char* data, std::size_t bytes) {
          if (to != s.gid)
            throw UsageError(proxy.Where() + ": a record for block " + std::to_string(to) +
                             " arrived here");
          auto& in = user.incoming_[src];
          in.insert(in.end(), data, data + bytes);
        });
      callback_(s.block, user);
    }
    proxy.outgoing_ = std::move(bundles);
  }

  lock.lock();
  for (auto& [from, bytes] : proxy.incoming_) shared_->Recycle(std::move(bytes));
  for (int to : outputs) {
    auto it = proxy.outgoing_.find(to);
    Send(call + 1, s.gid, to,
         it == proxy.outgoing_.end() ? std::vector<char>() : std::move(it->second));
  }
  ++s.next_call;
  if (call < last) return TaskStatus::complete;
  return SendsDone() ? TaskStatus::complete : TaskStatus::incomplete;
}

TaskStatus BlockEngine::Run(int local) {
  for (int c = 0; c < Calls(); ++c) {
    const TaskStatus st = Round(local, c);  // a call that already ran is complete at once
    if (st != TaskStatus::complete) return st;
  }
  return TaskStatus::complete;
}

}  // namespace detail
}  // namespace tributary
