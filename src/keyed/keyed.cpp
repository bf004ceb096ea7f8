// The keyed-collective protocol, once for every value type: declarations and their checks,
// per-NUMA-domain accumulators, counting at the head, forwarding by the other reducers, the
// ordered fold over the order index, failure notices, the watchdog, and the poller that the
// progress rule advances. Values are bytes of the reduction's size, combined through the
// key's operator (tributary/keyed.hpp is the typed layer).
#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <mutex>
#include <new>
#include <set>
#include <utility>

#include "platform/topology.hpp"
#include "platform/transport.hpp"
#include "tributary/context.hpp"
#include "tributary/detail/core/progress.hpp"
#include "tributary/detail/keyed/keyed_engine.hpp"
#include "tributary/errors.hpp"

namespace tributary::detail {

namespace {

// Bytes aligned for the value type. They only grow, so a key's next generation reuses them
// (and a result keeps its address).
class Aligned {
 public:
  Aligned() = default;
  Aligned(const Aligned&) = delete;
  Aligned& operator=(const Aligned&) = delete;
  Aligned(Aligned&& o) noexcept
      : p_(std::exchange(o.p_, nullptr)), bytes_(std::exchange(o.bytes_, 0)), align_(o.align_) {}
  Aligned& operator=(Aligned&& o) noexcept {
    if (this != &o) {
      Release();
      p_ = std::exchange(o.p_, nullptr);
      bytes_ = std::exchange(o.bytes_, 0);
      align_ = o.align_;
    }
    return *this;
  }
  ~Aligned() { Release(); }
  /// At least `bytes`; the first `keep` bytes survive a reallocation.
  void Reserve(std::size_t bytes, std::size_t align, std::size_t keep = 0) {
    if (bytes <= bytes_) return;
    char* p = static_cast<char*>(::operator new(bytes, std::align_val_t(align)));
    if (keep) std::memcpy(p, p_, keep);
    Release();
    p_ = p;
    bytes_ = bytes;
    align_ = align;
  }
  char* Data() const noexcept { return p_; }

 private:
  void Release() noexcept {
    if (p_) ::operator delete(p_, std::align_val_t(align_));
    p_ = nullptr;
    bytes_ = 0;
  }
  char* p_ = nullptr;
  std::size_t bytes_ = 0, align_ = 1;
};

enum class Kind : std::int32_t { partial, item, forward, result, failure, done };

struct KeyedMessage {
  Kind kind;
  std::uint64_t key, gen;
  std::int64_t n, index;
  std::uint64_t hash;
  std::int32_t from = 0, reserved = 0;
  std::uint64_t check = 0;  // sum of Mix(index) over the contributions it covers
};

// A 64-bit mix of an order index: the head compares the sum over what it received with
// the sum over 0..count-1, so an index contributed twice (and another missing) on
// different ranks is caught for commutative keys too.
std::uint64_t Mix(std::int64_t index) {
  std::uint64_t z = static_cast<std::uint64_t>(index) + 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace

struct KeyedEngine::Impl {
  struct Domain {
    bool has = false;
    std::int64_t n = 0;
    std::uint64_t check = 0;
  };
  // A key's values of one generation, one slot each in Key::fixed.
  enum Slot : std::size_t { identity_slot, acc_slot, pending_slot, result_slot, fixed_slots };
  struct Key {
    std::uint64_t gen = 0;
    KeyedOp op;
    std::int64_t count = 0, local = -1;
    std::vector<int> reducers, consumers;
    bool ordered = false, is_head = false, is_reducer = false, is_consumer = false;
    std::uint64_t hash = 0;
    Aligned fixed;  // the Slot values
    std::chrono::steady_clock::time_point armed_at{};
    bool reported = false;  // the watchdog reported this generation (WatchdogAction::report)
    // producer
    std::set<std::int64_t> mine;
    std::int64_t contributed = 0;
    std::vector<Domain> domains;  // commutative: per NUMA domain, not yet sent
    Aligned domain_values;        // their accumulators, one slot per domain
    std::int64_t domains_used = 0;
    std::vector<char> out_items;  // ordered: (index, value) records not yet sent
    std::int64_t out_n = 0;
    // reducer
    std::int64_t received = 0, pending_n = 0;
    std::uint64_t received_check = 0, pending_check = 0;
    bool has_acc = false, has_pending = false, finished = false, released = false;
    Aligned items;  // ordered, at the head: one slot per order index
    std::vector<unsigned char> seen;
    // consumer
    bool has_result = false;
    std::string error;
    int error_rank = -1;
  };

  Impl(Context& ctx, std::size_t value_bytes, std::size_t value_align, std::string name)
      : ctx_(&ctx),
        transport_(ctx),
        domain_of_cpu_(CpuDomains()),
        name_(std::move(name)),
        bytes_(value_bytes),
        align_(std::max<std::size_t>(value_align, 1)),
        stride_((value_bytes + align_ - 1) / align_ * align_) {
    scratch_.Reserve(2 * std::max<std::size_t>(stride_, 1), align_);
    AddPoller(ctx, this, &Impl::PollThunk, &Impl::OrphanThunk);
  }
  ~Impl() {
    if (ctx_) RemovePoller(*ctx_, this);
  }

  // The Context goes first: nothing starts or completes any more.
  static void OrphanThunk(void* self) noexcept {
    auto* keyed = static_cast<Impl*>(self);
    std::lock_guard<std::mutex> lock(keyed->mutex_);
    keyed->ctx_ = nullptr;
    keyed->transport_.Orphan();
  }
  void CheckContext() const {
    if (!ctx_)
      throw UsageError(name_ + ": its Context has been destroyed; nothing can start or complete");
    if (!MayCall(*ctx_))
      ThrowWrongThread(*ctx_, name_ + ", rank " + std::to_string(transport_.Rank()));
  }

  char* SlotOf(Key& k, Slot s) const { return k.fixed.Data() + s * stride_; }
  // Scratch values under the lock: [0] Fold's operand, [1] a rank's value or a result.
  char* Scratch(std::size_t i) const { return scratch_.Data() + i * stride_; }

  void Declare(std::uint64_t key, KeyedOp op, std::int64_t count, std::int64_t local,
               const std::vector<int>& reducers, const std::vector<int>& consumers) {
    std::lock_guard<std::mutex> lock(mutex_);
    CheckContext();
    Key& k = keys_[key];
    const std::string where = Where(key, k.gen + 1);
    if (k.gen > 0 && !DoneLocked(k))
      throw UsageError(where + ": declared again before generation " + std::to_string(k.gen) +
                       " completed here");
    if (count < 0) throw UsageError(where + ": count must be given and >= 0");
    if (local < -1 || local > count)
      throw UsageError(where + ": local count " + std::to_string(local) + " is not in 0.." +
                       std::to_string(count));
    const int size = transport_.Size();
    auto ranks_ok = [size](const std::vector<int>& v) {
      for (int r : v)
        if (r < 0 || r >= size) return false;
      return true;
    };
    if (!ranks_ok(reducers) || !ranks_ok(consumers))
      throw UsageError(where + ": a reducer or consumer is not a rank of the Context (size " +
                       std::to_string(size) + ")");
    const bool ordered = !op.commutative || ctx_->Options().determinism != Determinism::fast;
    if (count == 0) {  // into scratch first: a refused declaration leaves the key as it was
      try {
        op.identity(op.state.get(), Scratch(1));
      } catch (const UsageError& e) {
        throw UsageError(where + ": count 0 needs the operator's neutral element: " + e.what());
      }
    }
    Key fresh;
    fresh.gen = k.gen + 1;
    fresh.op = std::move(op);
    fresh.count = count;
    fresh.local = local;
    fresh.reducers = reducers.empty() ? std::vector<int>{0} : reducers;
    fresh.consumers = consumers;
    if (fresh.consumers.empty())
      for (int r = 0; r < size; ++r) fresh.consumers.push_back(r);
    fresh.ordered = ordered;
    // The previous generation's buffers are reused (the result keeps its address).
    fresh.fixed = std::move(k.fixed);
    fresh.fixed.Reserve(fixed_slots * stride_, align_);
    fresh.domain_values = std::move(k.domain_values);
    fresh.items = std::move(k.items);
    if (count == 0) std::memcpy(SlotOf(fresh, identity_slot), Scratch(1), bytes_);
    fresh.hash = HashOf(fresh);
    fresh.armed_at = std::chrono::steady_clock::now();
    const int me = transport_.Rank();
    fresh.is_head = fresh.reducers[0] == me;
    fresh.is_reducer =
        std::find(fresh.reducers.begin(), fresh.reducers.end(), me) != fresh.reducers.end();
    fresh.is_consumer =
        std::find(fresh.consumers.begin(), fresh.consumers.end(), me) != fresh.consumers.end();
    if (fresh.ordered) {
      fresh.seen.assign(static_cast<std::size_t>(count), 0);
      fresh.items.Reserve(static_cast<std::size_t>(count) * stride_, align_);
    }
    k = std::move(fresh);
    // Messages that arrived before this declaration.
    auto stashed = stash_.find({key, k.gen});
    if (stashed != stash_.end()) {
      std::vector<std::vector<char>> msgs = std::move(stashed->second);
      stash_.erase(stashed);
      for (auto& m : msgs) Handle(m);
    }
    if (k.is_head && k.count == 0) Finish(key, k);
    PollLocked();
  }

  TaskStatus Contribute(std::uint64_t key, std::int64_t index, const void* value) {
    std::lock_guard<std::mutex> lock(mutex_);
    CheckContext();
    Key& k = Declared(key);
    if (index < 0 || index >= k.count)
      throw UsageError(Where(key, k.gen) + ": order index " + std::to_string(index) +
                       " is outside 0.." + std::to_string(k.count - 1));
    if (!k.mine.insert(index).second)
      throw UsageError(Where(key, k.gen) + ": order index " + std::to_string(index) +
                       " was contributed twice on this rank");
    if (k.local >= 0 && k.contributed + 1 > k.local) {
      k.mine.erase(index);
      throw UsageError(Where(key, k.gen) + ": more contributions than the declared local count " +
                       std::to_string(k.local));
    }
    ++k.contributed;
    if (k.ordered) {  // to the head with the index, at the next poll
      const auto* i = reinterpret_cast<const char*>(&index);
      const auto* v = static_cast<const char*>(value);
      k.out_items.insert(k.out_items.end(), i, i + sizeof index);
      k.out_items.insert(k.out_items.end(), v, v + bytes_);
      ++k.out_n;
      unsent_.insert(key);
    } else {  // folded in the accumulator of the NUMA domain this thread runs on
      const std::size_t di = DomainOf(k);
      Domain& d = k.domains[di];
      Fold(k, k.domain_values.Data() + di * stride_, d.has, value);
      ++d.n;
      if (k.local < 0) unsent_.insert(key);
      d.check += Mix(index);
      if (k.local >= 0 && k.contributed == k.local) SendDomains(key, k);
    }
    if (k.local >= 0 && k.contributed == k.local) PollLocked();  // the last one leaves at once
    return TaskStatus::complete;
  }

  static void PollThunk(void* self) noexcept {
    auto* keyed = static_cast<Impl*>(self);
    std::unique_lock<std::mutex> lock(keyed->mutex_, std::try_to_lock);
    if (!lock) return;  // another thread is polling it
    try {
      keyed->PollLocked();
    } catch (...) {
      // The key's own poll receives the same way and throws there.
    }
  }

  TaskStatus CheckLocked(std::uint64_t key) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (ctx_) CheckContext();
    Key& k = Declared(key);
    if (!ctx_ && !DoneLocked(k)) CheckContext();
    PollLocked();
    if (!k.error.empty()) throw RemoteError(k.error_rank, k.error);
    if (DoneLocked(k) && transport_.SendsDone()) return TaskStatus::complete;
    const double limit = ctx_->Options().watchdog.count();
    if (limit > 0 && !k.reported &&
        std::chrono::duration<double>(std::chrono::steady_clock::now() - k.armed_at).count() >
            limit) {
      std::string msg =
          Where(key, k.gen) + ": not complete after " + std::to_string(limit) + " s; ";
      if (k.is_head)
        msg += std::to_string(k.received) + " of " + std::to_string(k.count) +
               " contributions reached the head reducer";
      else
        msg += "this rank contributed " + std::to_string(k.contributed) +
               ", waiting for the head reducer (rank " + std::to_string(k.reducers[0]) + ")";
      if (ctx_->Options().on_watchdog == WatchdogAction::fail) throw UsageError(msg);
      k.reported = true;  // once a generation; the key goes on waiting
      WatchdogReport(*ctx_, "watchdog: " + msg + " (reported once; the key goes on waiting)\n");
    }
    return TaskStatus::incomplete;
  }

  const void* Result(std::uint64_t key) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = keys_.find(key);
    if (it == keys_.end() || !it->second.has_result)
      throw UsageError(Where(key, it == keys_.end() ? 0 : it->second.gen) +
                       ": no result on this rank (yet)");
    return SlotOf(it->second, result_slot);
  }

  std::int64_t DomainsUsed(std::uint64_t key) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = keys_.find(key);
    return it == keys_.end() ? 0 : it->second.domains_used;
  }

  std::string Where(std::uint64_t key, std::uint64_t gen) const {
    return name_ + " key " + std::to_string(key) + ", generation " + std::to_string(gen) +
           ", rank " + std::to_string(transport_.Rank());
  }

  Key& Declared(std::uint64_t key) {
    auto it = keys_.find(key);
    if (it == keys_.end() || it->second.gen == 0)
      throw UsageError(name_ + " key " + std::to_string(key) + ", rank " +
                       std::to_string(transport_.Rank()) + ": not declared on this rank");
    return it->second;
  }

  static std::uint64_t HashOf(const Key& k) {
    std::uint64_t h = k.op.signature * 1099511628211ull ^ static_cast<std::uint64_t>(k.count);
    for (int r : k.reducers) h = (h ^ static_cast<std::uint64_t>(r + 1)) * 1099511628211ull;
    h = (h ^ 0x5bd1e995u) * 1099511628211ull;
    for (int r : k.consumers) h = (h ^ static_cast<std::uint64_t>(r + 1)) * 1099511628211ull;
    return h ^ static_cast<std::uint64_t>(k.ordered);
  }

  int MyReducer(const Key& k) const {
    return k.reducers[static_cast<std::size_t>(transport_.Rank()) % k.reducers.size()];
  }

  static bool DoneLocked(const Key& k) {
    if (!k.error.empty()) return true;
    if (k.is_consumer && !k.has_result) return false;
    if (k.is_head && !k.finished) return false;
    if (k.is_reducer && !k.is_head && !k.is_consumer && !k.released) return false;
    if (k.local >= 0 && k.contributed < k.local) return false;
    return true;
  }

  void SendTo(int rank, KeyedMessage m, const void* value, std::size_t bytes) {
    m.from = transport_.Rank();
    transport_.Send(rank, &m, sizeof m, value, bytes);
  }
  void SendTo(int rank, KeyedMessage m, const void* value) { SendTo(rank, m, value, bytes_); }

  // This thread's domain (one domain without hwloc); its accumulator is allocated here.
  std::size_t DomainOf(Key& k) {
    std::size_t d = 0;
    const int cpu = CurrentCpu();
    if (cpu >= 0 && static_cast<std::size_t>(cpu) < domain_of_cpu_.size())
      d = static_cast<std::size_t>(domain_of_cpu_[static_cast<std::size_t>(cpu)]);
    if (k.domains.size() <= d) {
      k.domain_values.Reserve((d + 1) * stride_, align_, k.domains.size() * stride_);
      k.domains.resize(d + 1);
    }
    return d;
  }

  // The domains' accumulators folded in domain order: the rank's message.
  void SendDomains(std::uint64_t key, Key& k) {
    char* rank_value = Scratch(1);
    bool has = false;
    std::int64_t n = 0;
    std::uint64_t check = 0;
    for (std::size_t i = 0; i < k.domains.size(); ++i) {
      Domain& d = k.domains[i];
      if (!d.has) continue;
      Fold(k, rank_value, has, k.domain_values.Data() + i * stride_);
      n += d.n;
      check += d.check;
      ++k.domains_used;
      d = Domain{};
    }
    if (has) {
      KeyedMessage m{Kind::partial, key, k.gen, n, -1, k.hash};
      m.check = check;
      SendTo(MyReducer(k), m, rank_value);
    }
  }

  // acc = acc ∘ value (the first value starts it). `acc` is an aligned slot, never
  // Scratch(0); `value` any bytes.
  void Fold(const Key& k, char* acc, bool& has, const void* value) {
    if (!has) {
      std::memcpy(acc, value, bytes_);
      has = true;
      return;
    }
    char* later = Scratch(0);
    std::memcpy(later, value, bytes_);
    k.op.combine(k.op.state.get(), acc, later);
    std::memcpy(acc, later, bytes_);
  }

  void PollLocked() {
    SendOut();
    while (transport_.Receive(wire_)) Handle(wire_);
    Flush();
  }

  // This rank's contributions since the last poll, one message per key.
  void SendOut() {
    for (std::uint64_t key : unsent_) {
      Key& k = keys_[key];
      if (k.out_n > 0) {
        SendTo(k.reducers[0], KeyedMessage{Kind::item, key, k.gen, k.out_n, -1, k.hash},
               k.out_items.data(), k.out_items.size());
        k.out_items.clear();
        k.out_n = 0;
      }
      if (k.local < 0) SendDomains(key, k);
    }
  }

  // Non-head reducers forward what they combined since the last poll as one message. Only
  // the keys with something unsent are visited (a poll costs nothing per idle key).
  void Flush() {
    for (std::uint64_t key : unsent_) {
      Key& k = keys_[key];
      if (k.has_pending) {
        KeyedMessage m{Kind::forward, key, k.gen, k.pending_n, -1, k.hash};
        m.check = k.pending_check;
        k.pending_check = 0;
        SendTo(k.reducers[0], m, SlotOf(k, pending_slot));
        k.has_pending = false;
        k.pending_n = 0;
      }
    }
    unsent_.clear();
  }

  void Fail(std::uint64_t key, Key& k, const std::string& text) {
    // The head tells every consumer and reducer, so that nobody waits for a result.
    if (!k.error.empty()) return;
    k.error = text;
    k.error_rank = transport_.Rank();
    std::set<int> told(k.consumers.begin(), k.consumers.end());
    told.insert(k.reducers.begin(), k.reducers.end());
    for (int r : told)
      if (r != transport_.Rank())
        SendTo(r, KeyedMessage{Kind::failure, key, k.gen, 0, -1, k.hash}, text.data(), text.size());
    k.finished = true;
  }

  void Handle(const std::vector<char>& wire) {
    KeyedMessage m;
    std::memcpy(&m, wire.data(), sizeof m);
    const char* payload = wire.data() + sizeof m;
    const std::size_t payload_bytes = wire.size() - sizeof m;
    auto it = keys_.find(m.key);
    if (it == keys_.end() || it->second.gen < m.gen) {  // not declared here yet: kept
      stash_[{m.key, m.gen}].push_back(wire);
      return;
    }
    Key& k = it->second;
    if (k.gen != m.gen) return;  // an old generation's late failure notice
    if (m.kind == Kind::failure) {
      k.error.assign(payload, payload_bytes);
      k.error_rank = m.from;
      return;
    }
    if (m.kind == Kind::result) {
      std::memcpy(SlotOf(k, result_slot), payload, bytes_);
      k.has_result = true;
      return;
    }
    if (m.kind == Kind::done) {
      k.released = true;
      return;
    }
    if (m.hash != k.hash) {
      const std::string text =
          Where(m.key, k.gen) + ": rank " + std::to_string(m.from) +
          " declared the key differently (operator, count, reducers or consumers)";
      if (k.is_head)
        Fail(m.key, k, text);
      else
        k.error = text, k.error_rank = transport_.Rank();
      return;
    }
    if (m.kind == Kind::item) {  // ordered: n (index, value) records, only ever to the head
      k.received += m.n;
      if (k.received > k.count) {
        Fail(m.key, k,
             Where(m.key, k.gen) + ": " + std::to_string(k.received) +
                 " contributions for a count of " + std::to_string(k.count));
        return;
      }
      const char* at = payload;
      for (std::int64_t j = 0; j < m.n; ++j, at += sizeof(std::int64_t) + bytes_) {
        std::int64_t index;
        std::memcpy(&index, at, sizeof index);
        const auto u = static_cast<std::size_t>(index);
        if (k.seen[u]) {
          Fail(m.key, k,
               Where(m.key, k.gen) + ": order index " + std::to_string(index) +
                   " was contributed twice (again by rank " + std::to_string(m.from) + ")");
          return;
        }
        k.seen[u] = 1;
        std::memcpy(k.items.Data() + u * stride_, at + sizeof index, bytes_);
      }
    } else {
      if (!k.is_head) {  // a reducer that forwards at the end of this poll
        Fold(k, SlotOf(k, pending_slot), k.has_pending, payload);
        k.pending_n += m.n;
        unsent_.insert(m.key);
        k.pending_check += m.check;
        return;
      }
      k.received += m.n;
      k.received_check += m.check;
      if (k.received > k.count) {
        Fail(m.key, k,
             Where(m.key, k.gen) + ": " + std::to_string(k.received) +
                 " contributions for a count of " + std::to_string(k.count));
        return;
      }
      Fold(k, SlotOf(k, acc_slot), k.has_acc, payload);
    }
    if (k.received == k.count) Finish(m.key, k);
  }

  // The head has every contribution: the result (a left fold over the order index when
  // ordered) to the consumers; the other reducers are released.
  void Finish(std::uint64_t key, Key& k) {
    const char* result = SlotOf(k, identity_slot);
    if (k.count > 0) {
      if (k.ordered) {  // in place: items[i] = items[i-1] ∘ items[i]; the last is the result
        char* items = k.items.Data();
        for (std::size_t i = 1; i < static_cast<std::size_t>(k.count); ++i)
          k.op.combine(k.op.state.get(), items + (i - 1) * stride_, items + i * stride_);
        result = items + static_cast<std::size_t>(k.count - 1) * stride_;
      } else {
        std::uint64_t expected = 0;
        for (std::int64_t i = 0; i < k.count; ++i) expected += Mix(i);
        if (expected != k.received_check) {
          Fail(key, k,
               Where(key, k.gen) + ": " + std::to_string(k.count) +
                   " contributions arrived, but their order indices do not cover 0.." +
                   std::to_string(k.count - 1) + " once each (an index was contributed twice)");
          return;
        }
        result = SlotOf(k, acc_slot);
      }
    }
    k.finished = true;
    for (int r : k.consumers)
      SendTo(r, KeyedMessage{Kind::result, key, k.gen, 0, -1, k.hash}, result);
    for (int r : k.reducers)
      if (std::find(k.consumers.begin(), k.consumers.end(), r) == k.consumers.end() &&
          r != transport_.Rank())
        SendTo(r, KeyedMessage{Kind::done, key, k.gen, 0, -1, k.hash}, nullptr, 0);
  }

  Context* ctx_;
  Transport transport_;
  std::vector<int> domain_of_cpu_;  // hwloc: CPU -> NUMA domain
  std::string name_;
  std::size_t bytes_, align_, stride_;  // a value's size, alignment, and slot size
  Aligned scratch_;
  std::vector<char> wire_;  // the message being handled
  std::mutex mutex_;
  std::map<std::uint64_t, Key> keys_;
  std::set<std::uint64_t> unsent_;  // keys with contributions or forwards not yet sent
  std::map<std::pair<std::uint64_t, std::uint64_t>, std::vector<std::vector<char>>> stash_;
};

KeyedEngine::KeyedEngine(Context& ctx, std::size_t value_bytes, std::size_t value_align,
                         std::string name)
    : impl_(std::make_unique<Impl>(ctx, value_bytes, value_align, std::move(name))) {}

KeyedEngine::~KeyedEngine() = default;

void KeyedEngine::Declare(std::uint64_t key, KeyedOp op, std::int64_t count, std::int64_t local,
                          const std::vector<int>& reducers, const std::vector<int>& consumers) {
  impl_->Declare(key, std::move(op), count, local, reducers, consumers);
}

TaskStatus KeyedEngine::Contribute(std::uint64_t key, std::int64_t index, const void* value) {
  return impl_->Contribute(key, index, value);
}

TaskStatus KeyedEngine::Check(std::uint64_t key) {
  const TaskStatus status = impl_->CheckLocked(key);
  if (status == TaskStatus::incomplete && impl_->ctx_) AdvanceOthers(*impl_->ctx_, impl_.get());
  return status;
}

const void* KeyedEngine::Result(std::uint64_t key) const { return impl_->Result(key); }

void KeyedEngine::Progress() {
  std::lock_guard<std::mutex> lock(impl_->mutex_);
  impl_->PollLocked();
}

std::int64_t KeyedEngine::DomainsUsed(std::uint64_t key) const { return impl_->DomainsUsed(key); }

std::uint64_t KeyedEngine::RemoteMessages() const noexcept {
  return impl_->transport_.RemoteMessages();
}

}  // namespace tributary::detail
