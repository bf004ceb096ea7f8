// The engine of the block patterns: runs the calls of this rank's blocks as non-blocking
// tasks over any BlockPartners, carries their messages, and checks the partners' links once.
#include "tributary/detail/blocks/block_engine.hpp"

#include <algorithm>
#include <cstring>
#include <iterator>
#include <map>
#include <mutex>
#include <tuple>
#include <utility>

#include "platform/transport.hpp"
#include "tributary/block_proxy.hpp"
#include "tributary/context.hpp"
#include "tributary/detail/core/progress.hpp"
#include "tributary/errors.hpp"

namespace tributary::detail {

namespace {

// (generation, call, to, from) -> the bytes `from` sent to `to` for `call`.
using BlockKey = std::tuple<std::uint64_t, int, int, int>;

struct BlockMessageHeader {
  std::uint64_t generation;
  std::int32_t call, to, from;
  std::int32_t count;  // messages in a bundle (to == kBundle)
};

// Every message buffer starts with room for the transport's prefix and the header, so that
// a message to another rank leaves from the buffer the callback wrote, and arrives in the
// buffer the next callback reads, without a copy on either side.
constexpr std::size_t kHeaderAt = Transport::kPrefix;
constexpr std::size_t kPrefix = kHeaderAt + sizeof(BlockMessageHeader);

// Small messages of one call to blocks of the same rank travel as one MPI message (a
// bundle: header.to is kBundle, then per message its receiver, its length and its bytes):
// a message to another rank costs about 0.2 us at 8 B and 1-5 us from 2 KiB (a rendezvous
// beyond the MPI library's eager limit) before its bytes move, while copying 16 KiB costs
// about 1 us. Larger messages go alone, without a copy.
constexpr std::int32_t kBundle = -1;
constexpr std::size_t kBundleBody = std::size_t{16} * 1024;
struct BundleRecord {
  std::int32_t to;
  std::uint32_t bytes;
};

std::string GidList(const std::vector<int>& gids) {
  std::string s;
  for (int g : gids) s += (s.empty() ? "" : " ") + std::to_string(g);
  return s;
}

bool Lists(const std::vector<int>& link, int gid) {
  return std::find(link.begin(), link.end(), gid) != link.end();
}

}  // namespace

struct BlockEngine::Impl {
  struct State {
    void* block = nullptr;
    int gid = 0;
    int slot = 0;  // the gid's position in local (ascending gids): its links
    int next_call = 0;
  };
  // The links of one local block in one call, computed (and checked) once per object.
  struct Links {
    std::vector<int> in, out;
    std::vector<std::size_t> sent;  // bytes sent to out[j] last time: the next buffer's size
    bool runs = false;
    bool remote_in = false;  // some input comes from another rank
  };

  Impl(Context& c, std::shared_ptr<const BlockPartners> p, Callback cb, std::string n)
      : ctx(&c),
        partners(std::move(p)),
        callback(std::move(cb)),
        name(std::move(n)),
        rank(c.Rank()),
        calls(partners->Calls()),
        transport(c, name) {}

  // A message buffer of at least `bytes` after the prefix, from the buffers kept from
  // earlier calls and completed sends (transport.Pool()).
  std::vector<char> Spare(std::size_t bytes) {
    std::vector<char> v = transport.Pool().Take(kPrefix + bytes);
    v.resize(kPrefix);
    return v;
  }
  void Recycle(std::vector<char>&& v) { transport.Pool().Give(std::move(v)); }

  std::string Where(int gid, int call) const {
    return name + ", generation " + std::to_string(generation) + ", block " + std::to_string(gid) +
           ", round " + std::to_string(call) + ", rank " + std::to_string(rank);
  }
  std::string CheckLinks();
  void CheckBlockSet(const std::vector<std::pair<int, void*>>& blocks) const;
  // Throws UsageError once the Context has gone (requires mutex).
  void CheckContext() const;
  TaskStatus RoundLocked(const BlockEngine* self, int local, int call);
  void Poll();
  void Deliver(std::uint64_t gen, int call, int to, int from, std::vector<char> bytes) {
    stash[BlockKey{gen, call, to, from}] = std::move(bytes);
  }
  void Send(int call, int from, int to, std::vector<char>&& bytes);

  Context* ctx;
  std::shared_ptr<const BlockPartners> partners;
  Callback callback;
  std::string name;
  int rank = 0;
  int calls = 1;
  std::vector<int> local;
  std::vector<std::vector<Links>> links;  // [slot][call]
  std::vector<std::unique_ptr<State>> states;
  std::uint64_t generation = 0;

  std::mutex mutex;                             // guards everything below, and states
  std::map<BlockKey, std::vector<char>> stash;  // whole buffers, the message at kPrefix
  Transport transport;  // messages to blocks of other ranks, and the buffer pool
};

// Computes the links of every local block in every call and checks them against the
// partners' view of the other side: what a block sends in call c, its receiver must expect
// in call c + 1, and the reverse. Returns the first disagreement, or "".
std::string BlockEngine::Impl::CheckLinks() {
  const BlockGrid& grid = partners->Grid();
  const int blocks = grid.Blocks();
  const auto bad_gid = [&](const std::vector<int>& link) {
    std::vector<int> sorted = link;
    std::sort(sorted.begin(), sorted.end());
    for (std::size_t i = 0; i < sorted.size(); ++i)
      if (sorted[i] < 0 || sorted[i] >= blocks || (i > 0 && sorted[i] == sorted[i - 1]))
        return true;
    return false;
  };
  links.assign(local.size(), std::vector<Links>(static_cast<std::size_t>(calls)));
  for (std::size_t i = 0; i < local.size(); ++i)
    for (int c = 0; c < calls; ++c) {
      const int gid = local[i];
      Links& l = links[i][static_cast<std::size_t>(c)];
      l.runs = partners->Active(c, gid);
      if (!l.runs) continue;
      l.in = partners->InLink(c, gid);
      l.out = partners->OutLink(c, gid);
      l.sent.assign(l.out.size(), 0);
      const std::string at = "block " + std::to_string(gid) + ", call " + std::to_string(c);
      if (bad_gid(l.in) || bad_gid(l.out))
        return at +
               ": a link lists a gid twice or one that is not a block (in-link: " + GidList(l.in) +
               "; out-link: " + GidList(l.out) + ")";
      if (c == 0 && !l.in.empty()) return at + ": the first call receives nothing";
      if (c == calls - 1 && !l.out.empty()) return at + ": the last call sends nothing";
      for (int to : l.out)
        if (!partners->Active(c + 1, to) || !Lists(partners->InLink(c + 1, to), gid))
          return at + " sends to block " + std::to_string(to) + ", whose in-link of call " +
                 std::to_string(c + 1) + " does not list it";
      for (int from : l.in) {
        if (!partners->Active(c - 1, from) || !Lists(partners->OutLink(c - 1, from), gid))
          return at + " receives from block " + std::to_string(from) + ", whose out-link of call " +
                 std::to_string(c - 1) + " does not list it";
        l.remote_in = l.remote_in || grid.Owner(from) != rank;
      }
    }
  return {};
}

BlockEngine::BlockEngine(Context& ctx, std::shared_ptr<const BlockPartners> partners,
                         Callback callback, std::string name) {
  if (!partners) throw UsageError(name + ": no partners");
  if (partners->Grid().Ranks() != ctx.Size())
    throw UsageError(name + ": the grid assigns blocks to " +
                     std::to_string(partners->Grid().Ranks()) + " ranks, the Context has " +
                     std::to_string(ctx.Size()));
  if (partners->Calls() < 1)
    throw UsageError(name + ": the partners have " + std::to_string(partners->Calls()) +
                     " calls (at least 1)");
  impl_ = std::make_unique<Impl>(ctx, std::move(partners), std::move(callback), std::move(name));
  Impl& m = *impl_;
  m.local = m.partners->Grid().LocalBlocks(m.rank);
  std::string problem;
  try {
    problem = m.CheckLinks();
  } catch (const std::exception& e) {
    problem = std::string("the partners threw: ") + e.what();
  }
  const int first = m.transport.FirstFailing(problem.empty());  // every rank throws, or none
  if (!problem.empty())
    throw UsageError(m.name + ", rank " + std::to_string(m.rank) +
                     ": the partners disagree: " + problem);
  if (first >= 0)
    throw UsageError(m.name + ": the partners disagree on rank " + std::to_string(first) +
                     " (its error names the blocks)");
  AddPoller(
      ctx, this,
      [](void* self) noexcept {
        Impl& e = *static_cast<BlockEngine*>(self)->impl_;
        std::unique_lock<std::mutex> lock(e.mutex, std::try_to_lock);
        if (!lock) return;  // its own thread is polling it
        try {
          e.Poll();
        } catch (...) {
          // Kept for the engine's own poll, which receives the same way and throws there.
        }
      },
      [](void* self) noexcept {  // the Context goes first: nothing starts or completes
        Impl& e = *static_cast<BlockEngine*>(self)->impl_;
        std::lock_guard<std::mutex> lock(e.mutex);
        e.ctx = nullptr;
        e.transport.Orphan();
      });
}

BlockEngine::~BlockEngine() {
  if (impl_ && impl_->ctx) RemovePoller(*impl_->ctx, this);
}

void BlockEngine::Impl::CheckContext() const {
  if (!ctx)
    throw UsageError(name + ": its Context has been destroyed; nothing can start or complete");
  if (!MayCall(*ctx)) ThrowWrongThread(*ctx, name + ", rank " + std::to_string(rank));
}

int BlockEngine::Calls() const noexcept { return impl_->calls; }
const BlockPartners& BlockEngine::Partners() const noexcept { return *impl_->partners; }
const std::vector<int>& BlockEngine::Local() const noexcept { return impl_->local; }
std::uint64_t BlockEngine::Generation() const noexcept { return impl_->generation; }
std::uint64_t BlockEngine::RemoteMessages() const noexcept {
  return impl_->transport.RemoteMessages();
}
std::string BlockEngine::Where(int gid, int call) const { return impl_->Where(gid, call); }

std::string BlockCallWhere(const BlockEngine& engine, int gid, int call) {
  return engine.Where(gid, call);
}

// Blocks are identified by gid: the set must be exactly this rank's, in any order.
void BlockEngine::Impl::CheckBlockSet(const std::vector<std::pair<int, void*>>& blocks) const {
  std::vector<int> given;
  given.reserve(blocks.size());
  for (const auto& b : blocks) given.push_back(b.first);
  std::sort(given.begin(), given.end());
  std::vector<int> missing, extra, repeated;
  std::set_difference(local.begin(), local.end(), given.begin(), given.end(),
                      std::back_inserter(missing));
  std::vector<int> unique = given;
  unique.erase(std::unique(unique.begin(), unique.end()), unique.end());
  std::set_difference(unique.begin(), unique.end(), local.begin(), local.end(),
                      std::back_inserter(extra));
  for (std::size_t i = 1; i < given.size(); ++i)
    if (given[i] == given[i - 1] && (repeated.empty() || repeated.back() != given[i]))
      repeated.push_back(given[i]);
  if (missing.empty() && extra.empty() && repeated.empty()) return;
  std::string what = name + ", generation " + std::to_string(generation + 1) + ", rank " +
                     std::to_string(rank) + ": Start got " + std::to_string(blocks.size()) +
                     " blocks that are not this rank's " + std::to_string(local.size()) +
                     " (gids " + (local.empty() ? std::string("none") : GidList(local)) + ")";
  if (!missing.empty()) what += "; missing gids " + GidList(missing);
  if (!extra.empty()) what += "; extra gids " + GidList(extra);
  if (!repeated.empty()) what += "; repeated gids " + GidList(repeated);
  throw UsageError(what);
}

void BlockEngine::Start(const std::vector<std::pair<int, void*>>& blocks) {
  Impl& m = *impl_;
  std::lock_guard<std::mutex> lock(m.mutex);
  m.CheckContext();
  if (m.generation > 0) {
    for (const auto& s : m.states)
      if (s->next_call < m.calls)
        throw UsageError(m.name + ": started again while block " + std::to_string(s->gid) +
                         " is in round " + std::to_string(s->next_call) + " of generation " +
                         std::to_string(m.generation));
  }
  m.CheckBlockSet(blocks);
  ++m.generation;
  m.states.clear();
  for (const auto& [gid, block] : blocks) {
    auto s = std::make_unique<Impl::State>();
    s->block = block;
    s->gid = gid;
    s->slot =
        static_cast<int>(std::lower_bound(m.local.begin(), m.local.end(), gid) - m.local.begin());
    m.states.push_back(std::move(s));
  }
}

void BlockEngine::Impl::Send(int call, int from, int to, std::vector<char>&& bytes) {
  if (bytes.size() < kPrefix) bytes.resize(kPrefix);
  const int owner = partners->Grid().Owner(to);
  if (owner == rank) {  // same rank: straight into the receiver's inbox, never through MPI
    Deliver(generation, call, to, from, std::move(bytes));
    return;
  }
  const BlockMessageHeader h{generation, call, to, from, 0};
  std::memcpy(bytes.data() + kHeaderAt, &h, sizeof h);
  transport.SendBuffer(owner, std::move(bytes));
}

void BlockEngine::Impl::Poll() {
  std::vector<char> wire;
  while (transport.ReceiveBuffer(wire)) {
    if (wire.size() < kPrefix) {
      Recycle(std::move(wire));
      continue;
    }
    BlockMessageHeader h;
    std::memcpy(&h, wire.data() + kHeaderAt, sizeof h);
    if (h.to != kBundle) {
      Deliver(h.generation, h.call, h.to, h.from, std::move(wire));
      continue;
    }
    std::size_t pos = kPrefix;
    for (std::int32_t i = 0; i < h.count && pos + sizeof(BundleRecord) <= wire.size(); ++i) {
      BundleRecord r;
      std::memcpy(&r, wire.data() + pos, sizeof r);
      pos += sizeof r;
      if (r.bytes > wire.size() - pos) break;
      std::vector<char> bytes = Spare(r.bytes);
      bytes.insert(bytes.end(), wire.data() + pos, wire.data() + pos + r.bytes);
      pos += r.bytes;
      Deliver(h.generation, h.call, r.to, h.from, std::move(bytes));
    }
    Recycle(std::move(wire));
  }
}

TaskStatus BlockEngine::Round(int local, int call) {
  const TaskStatus status = impl_->RoundLocked(this, local, call);
  if (status == TaskStatus::incomplete && impl_->ctx) AdvanceOthers(*impl_->ctx, this);
  return status;
}

TaskStatus BlockEngine::Impl::RoundLocked(const BlockEngine* self, int local_index, int call) {
  std::unique_lock<std::mutex> lock(mutex);
  CheckContext();
  if (generation == 0) throw UsageError(name + ": Round before Start");
  if (local_index < 0 || local_index >= static_cast<int>(states.size()))
    throw UsageError(name + ": local block " + std::to_string(local_index) +
                     " is out of range (rank " + std::to_string(rank) + " has " +
                     std::to_string(states.size()) + ")");
  if (call < 0 || call >= calls)
    throw UsageError(name + ": round " + std::to_string(call) + " is out of range (0.." +
                     std::to_string(calls - 1) + ")");
  State& s = *states[static_cast<std::size_t>(local_index)];
  const int last = calls - 1;
  if (call < s.next_call) {
    if (call < last) return TaskStatus::complete;
    Poll();  // the last round completes when this rank's messages have left
    return transport.SendsDone() ? TaskStatus::complete : TaskStatus::incomplete;
  }
  if (call > s.next_call) return TaskStatus::incomplete;  // an earlier round has not run yet
  Links& l = links[static_cast<std::size_t>(s.slot)][static_cast<std::size_t>(call)];
  if (l.remote_in || call == last) Poll();  // local inputs are already in the inbox
  if (!l.runs) {
    ++s.next_call;
    return call < last || transport.SendsDone() ? TaskStatus::complete : TaskStatus::incomplete;
  }
  for (int from : l.in)
    if (stash.find(BlockKey{generation, call, s.gid, from}) == stash.end())
      return TaskStatus::incomplete;
  BlockProxy proxy;
  proxy.gid_ = s.gid;
  proxy.call_ = call;
  proxy.engine_ = self;
  proxy.prefix_ = kPrefix;
  for (int from : l.in) {
    auto it = stash.find(BlockKey{generation, call, s.gid, from});
    BlockProxy::In& in = proxy.incoming_[from];
    in.bytes = std::move(it->second);
    in.data = in.bytes.data() + kPrefix;
    in.size = in.bytes.size() - kPrefix;
    stash.erase(it);
  }
  // The outgoing buffers, from the pool while the lock is held (the callback runs without
  // it), each as large as what went to that block last time.
  for (std::size_t j = 0; j < l.out.size(); ++j) proxy.outgoing_[l.out[j]] = Spare(l.sent[j]);
  lock.unlock();

  proxy.in_ = l.in;
  proxy.out_ = l.out;
  callback(s.block, proxy);

  lock.lock();
  for (auto& [from, in] : proxy.incoming_) Recycle(std::move(in.bytes));
  std::vector<std::pair<int, std::size_t>> small;  // (owner, j): messages to bundle
  for (std::size_t j = 0; j < l.out.size(); ++j) {
    std::vector<char>& bytes = proxy.outgoing_[l.out[j]];
    if (bytes.size() < kPrefix) bytes.resize(kPrefix);
    l.sent[j] = bytes.size() - kPrefix;
    const int owner = partners->Grid().Owner(l.out[j]);
    if (owner != rank && l.sent[j] <= kBundleBody)
      small.emplace_back(owner, j);
    else
      Send(call + 1, s.gid, l.out[j], std::move(bytes));
  }
  std::sort(small.begin(), small.end());
  for (std::size_t a = 0, z = 0; a < small.size(); a = z) {
    std::size_t total = 0;
    for (z = a; z < small.size() && small[z].first == small[a].first; ++z)
      total += sizeof(BundleRecord) + l.sent[small[z].second];
    if (z - a == 1) {
      const std::size_t j = small[a].second;
      Send(call + 1, s.gid, l.out[j], std::move(proxy.outgoing_[l.out[j]]));
      continue;
    }
    std::vector<char> wire = Spare(total);
    for (std::size_t i = a; i < z; ++i) {
      const std::size_t j = small[i].second;
      std::vector<char>& bytes = proxy.outgoing_[l.out[j]];
      const BundleRecord r{l.out[j], static_cast<std::uint32_t>(l.sent[j])};
      const auto* rp = reinterpret_cast<const char*>(&r);
      wire.insert(wire.end(), rp, rp + sizeof r);
      wire.insert(wire.end(), bytes.begin() + kPrefix, bytes.end());
      Recycle(std::move(bytes));
    }
    const BlockMessageHeader h{generation, call + 1, kBundle, s.gid,
                               static_cast<std::int32_t>(z - a)};
    std::memcpy(wire.data() + kHeaderAt, &h, sizeof h);
    transport.SendBuffer(small[a].first, std::move(wire));
  }
  ++s.next_call;
  if (call < last) return TaskStatus::complete;
  return transport.SendsDone() ? TaskStatus::complete : TaskStatus::incomplete;
}

TaskStatus BlockEngine::Run(int local) {
  for (int c = 0; c < impl_->calls; ++c) {
    const TaskStatus st = Round(local, c);  // a call that already ran is complete at once
    if (st != TaskStatus::complete) return st;
  }
  return TaskStatus::complete;
}

}  // namespace tributary::detail
