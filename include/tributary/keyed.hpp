// Data-driven collectives: a reduction identified by a global key and described by its data
// (how many contributions in total, optionally how many on this rank) rather than by a fixed
// set of participants. Any task on any rank contributes values with an order index
// 0..count-1; reducer ranks combine them; the result goes to the consumer ranks.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "tributary/context.hpp"
#include "tributary/detail/op_holder.hpp"
#include "tributary/detail/progress.hpp"
#include "tributary/detail/transport.hpp"
#include "tributary/detail/type_name.hpp"
#include "tributary/errors.hpp"
#include "tributary/ops.hpp"
#include "tributary/tasks/task_status.hpp"

namespace tributary {

/// How a key is declared. Every rank that takes part declares the key with the same
/// operator, count, reducers and consumers (checked: a message whose declaration differs
/// fails the key).
struct KeyOptions {
  /// The global number of contributions (required, >= 0).
  std::int64_t count = -1;
  /// How many contributions this rank will make, when known (-1: unknown). When known, the
  /// rank combines them first and sends one message; when not, each contribution is sent
  /// as it comes and the head reducer counts them.
  std::int64_t local = -1;
  /// The ranks that combine (empty: rank 0). The first is the head: it counts to `count`
  /// and sends the result. A reducer may contribute nothing.
  std::vector<int> reducers;
  /// The ranks that receive the result (empty: every rank).
  std::vector<int> consumers;
};

/// The layout of a value as its basic elements, in order: `std::tuple<double, int>` for a
/// struct of a double and an int. Arithmetic types map to `std::tuple<T>`; specialise it
/// for your structs. Values of different C++ types with the same type map (and size) reduce
/// into one KeyedReduction; a mismatch does not compile.
template <class T, class Enable = void>
struct TypeMap {};
template <class T>
struct TypeMap<T, std::enable_if_t<std::is_arithmetic_v<T>>> {
  using type = std::tuple<T>;
};

namespace detail {
template <class T, class = void>
struct HasTypeMap : std::false_type {};
template <class T>
struct HasTypeMap<T, std::void_t<typename TypeMap<T>::type>> : std::true_type {};

/// Per CPU (by OS index) the index of its NUMA node (or package), from hwloc; empty
/// without hwloc. HWLOC_SYNTHETIC names a synthetic topology.
std::vector<int> CpuDomains();
/// The CPU this thread runs on now, or -1.
int CurrentCpu();

}  // namespace detail

/// Keyed reductions of values of type T (one trivially copyable element: arithmetic,
/// ValueLoc, a struct with a user operator). One object serves many keys at once; a key is
/// reused after completion as a new generation. Create the object on every rank, in the
/// same order as the Context's other objects (it takes one communicator for its lifetime).
///
///   KeyedReduction<long> totals(ctx);
///   totals.Declare(region, Sum{}, {.count = n, .local = mine});   // every rank that takes part
///   totals.Contribute(region, index, value);                       // any task, any rank
///   if (totals.Check(region) == TaskStatus::complete) use(totals.Result(region));
///
/// Commutative operators combine in any order, local first: within the NUMA domain (from
/// hwloc) of the thread that contributes, then the rank, then the reducers;
/// non-commutative ones, and every operator under Determinism::run_to_run, fold left over
/// the order index at the head reducer: the same bits every run.
template <class T>
class KeyedReduction {
  static_assert(std::is_trivially_copyable_v<T>, "KeyedReduction: a trivially copyable value");

 public:
  explicit KeyedReduction(Context& ctx, std::string label = {})
      : ctx_(&ctx), transport_(ctx), domain_of_cpu_(detail::CpuDomains()), name_("KeyedReduction<" + detail::TypeLabel<T>() + ">" +
                                           (label.empty() ? std::string() : " '" + label + "'")) {
    detail::AddPoller(ctx, this, &KeyedReduction::PollThunk);
  }
  ~KeyedReduction() { detail::RemovePoller(*ctx_, this); }
  KeyedReduction(const KeyedReduction&) = delete;
  KeyedReduction& operator=(const KeyedReduction&) = delete;

  /// Declares (a new generation of) `key` on this rank. UsageError for a count below 0, a
  /// reducer or consumer that is not a rank, a local count above the count, count 0 with
  /// an operator without a neutral element, or while the key's previous generation has not
  /// completed here.
  template <class Op>
  void Declare(std::uint64_t key, const Op& op, const KeyOptions& options) {
    std::lock_guard<std::mutex> lock(mutex_);
    Key& k = keys_[key];
    const std::string where = Where(key, k.gen + 1);
    if (k.gen > 0 && !DoneLocked(k)) throw UsageError(where + ": declared again before generation " + std::to_string(k.gen) + " completed here");
    if (options.count < 0) throw UsageError(where + ": count must be given and >= 0");
    if (options.local < -1 || options.local > options.count)
      throw UsageError(where + ": local count " + std::to_string(options.local) + " is not in 0.." + std::to_string(options.count));
    const int size = transport_.Size();
    auto ranks_ok = [size](const std::vector<int>& v) {
      for (int r : v)
        if (r < 0 || r >= size) return false;
      return true;
    };
    if (!ranks_ok(options.reducers) || !ranks_ok(options.consumers))
      throw UsageError(where + ": a reducer or consumer is not a rank of the Context (size " + std::to_string(size) + ")");
    Key fresh;
    fresh.gen = k.gen + 1;
    detail::SetOperator<T>(fresh.op, op);
    fresh.count = options.count;
    fresh.local = options.local;
    fresh.reducers = options.reducers.empty() ? std::vector<int>{0} : options.reducers;
    fresh.consumers = options.consumers;
    if (fresh.consumers.empty())
      for (int r = 0; r < size; ++r) fresh.consumers.push_back(r);
    fresh.ordered = !fresh.op->commutative || ctx_->Options().determinism != Determinism::fast;
    if (fresh.count == 0) {
      try {
        fresh.identity = fresh.op->Identity();
      } catch (const UsageError& e) {
        throw UsageError(where + ": count 0 needs the operator's neutral element: " + e.what());
      }
    }
    fresh.hash = HashOf(fresh);
    fresh.armed_at = std::chrono::steady_clock::now();
    const int me = transport_.Rank();
    fresh.is_head = fresh.reducers[0] == me;
    fresh.is_reducer = std::find(fresh.reducers.begin(), fresh.reducers.end(), me) != fresh.reducers.end();
    fresh.is_consumer = std::find(fresh.consumers.begin(), fresh.consumers.end(), me) != fresh.consumers.end();
    if (fresh.ordered) fresh.seen.assign(static_cast<std::size_t>(fresh.count), 0), fresh.items.resize(static_cast<std::size_t>(fresh.count));
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

  /// Contributes `value` with order index `index` to the current generation of `key`
  /// (declared on this rank). UsageError for an index outside 0..count-1, an index this rank
  /// already contributed, more contributions than the declared local count, or a key not
  /// declared here. Returns TaskStatus::complete so it can be a task. With a known local
  /// count the rank's combined value leaves with its last contribution; otherwise this
  /// rank's contributions since the last poll leave together at the next Check or
  /// Progress (one message per key).
  TaskStatus Contribute(std::uint64_t key, std::int64_t index, const T& value) {
    std::lock_guard<std::mutex> lock(mutex_);
    Key& k = Declared(key);
    const std::string where = Where(key, k.gen);
    if (index < 0 || index >= k.count)
      throw UsageError(where + ": order index " + std::to_string(index) + " is outside 0.." + std::to_string(k.count - 1));
    if (!k.mine.insert(index).second)
      throw UsageError(where + ": order index " + std::to_string(index) + " was contributed twice on this rank");
    if (k.local >= 0 && k.contributed + 1 > k.local) {
      k.mine.erase(index);
      throw UsageError(where + ": more contributions than the declared local count " + std::to_string(k.local));
    }
    ++k.contributed;
    if (k.ordered) {  // to the head with the index, at the next poll
      k.out_items.emplace_back(index, value);
      unsent_.insert(key);
    } else {  // folded in the accumulator of the NUMA domain this thread runs on
      Domain& d = DomainOf(k);
      Fold(k, d.value, d.has, value);
      ++d.n;
      if (k.local < 0) unsent_.insert(key);
      d.check += Mix(index);
      if (k.local >= 0 && k.contributed == k.local) SendDomains(key, k);
    }
    if (k.local >= 0 && k.contributed == k.local) PollLocked();  // the last one leaves at once
    return TaskStatus::complete;
  }

  /// Contributes a value of another type U with the same type map as T (e.g. two structs of
  /// a double and an int); it is reduced as the T with the same bytes. A different type map
  /// does not compile.
  template <class U, std::enable_if_t<!std::is_convertible_v<const U&, T>, int> = 0>
  TaskStatus Contribute(std::uint64_t key, std::int64_t index, const U& value) {
    static_assert(detail::HasTypeMap<U>::value && detail::HasTypeMap<T>::value,
                  "KeyedReduction: a value of another type needs a TypeMap for both types");
    static_assert(std::is_same_v<typename TypeMap<U>::type, typename TypeMap<T>::type>,
                  "KeyedReduction: the contribution's type map differs from the reduction's");
    static_assert(sizeof(U) == sizeof(T) && std::is_trivially_copyable_v<U>,
                  "KeyedReduction: a value of another type must have the same size and be trivially copyable");
    T same;
    std::memcpy(static_cast<void*>(&same), &value, sizeof(T));
    return Contribute(key, index, same);
  }

  /// Polls `key`: complete once this rank's part of the current generation is done — a
  /// consumer holds the result, the head has sent it, another reducer has been told, a
  /// producer with a known local count has sent its contributions (with an unknown one:
  /// whenever its messages have left). Throws the generation's error (a mismatched
  /// declaration, a count exceeded, a repeated order index at the head) on the ranks that
  /// receive it, and a UsageError naming the key and the count reached so far once the
  /// Context's watchdog time has passed.
  TaskStatus Check(std::uint64_t key) {
    const TaskStatus status = CheckLocked(key);
    if (status == TaskStatus::incomplete) detail::AdvanceOthers(*ctx_, this);
    return status;
  }

  /// The result of the current generation on a consumer (UsageError before it arrived).
  const T& Result(std::uint64_t key) const {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = keys_.find(key);
    if (it == keys_.end() || !it->second.has_result)
      throw UsageError(Where(key, it == keys_.end() ? 0 : it->second.gen) + ": no result on this rank (yet)");
    return it->second.result;
  }

 private:
  static void PollThunk(void* self) noexcept {
    auto* keyed = static_cast<KeyedReduction*>(self);
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
    Key& k = Declared(key);
    PollLocked();
    if (!k.error.empty()) throw RemoteError(k.error_rank, k.error);
    if (DoneLocked(k) && transport_.SendsDone()) return TaskStatus::complete;
    const double limit = ctx_->Options().watchdog.count();
    if (limit > 0 && !k.reported && std::chrono::duration<double>(std::chrono::steady_clock::now() - k.armed_at).count() > limit) {
      std::string msg = Where(key, k.gen) + ": not complete after " + std::to_string(limit) + " s; ";
      if (k.is_head)
        msg += std::to_string(k.received) + " of " + std::to_string(k.count) + " contributions reached the head reducer";
      else
        msg += "this rank contributed " + std::to_string(k.contributed) + ", waiting for the head reducer (rank " +
               std::to_string(k.reducers[0]) + ")";
      if (ctx_->Options().on_watchdog == WatchdogAction::fail) throw UsageError(msg);
      k.reported = true;  // once a generation; the key goes on waiting
      detail::WatchdogReport(*ctx_, "watchdog: " + msg + " (reported once; the key goes on waiting)\n");
    }
    return TaskStatus::incomplete;
  }

 public:

  /// Receives and handles whatever has arrived (Check and Contribute do this too).
  void Progress() {
    std::lock_guard<std::mutex> lock(mutex_);
    PollLocked();
  }

  /// How many per-domain accumulators this rank's contributions to the current generation
  /// of `key` filled so far (commutative keys; one per hwloc NUMA domain that contributed,
  /// per message).
  std::int64_t DomainsUsed(std::uint64_t key) const {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = keys_.find(key);
    return it == keys_.end() ? 0 : it->second.domains_used;
  }

  /// Messages this object sent through MPI so far.
  std::uint64_t RemoteMessages() const noexcept { return transport_.RemoteMessages(); }

 private:
  enum class Kind : std::int32_t { partial, item, forward, result, failure, done };
  struct Message {
    Kind kind;
    std::uint64_t key, gen;
    std::int64_t n, index;
    std::uint64_t hash;
    std::int32_t from = 0, reserved = 0;
    std::uint64_t check = 0;  // sum of Mix(index) over the contributions it covers
  };
  struct Domain {
    bool has = false;
    T value{};
    std::int64_t n = 0;
    std::uint64_t check = 0;
  };

  // A 64-bit mix of an order index: the head compares the sum over what it received with
  // the sum over 0..count-1, so an index contributed twice (and another missing) on
  // different ranks is caught for commutative keys too.
  static std::uint64_t Mix(std::int64_t index) {
    std::uint64_t z = static_cast<std::uint64_t>(index) + 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  struct Key {
    std::uint64_t gen = 0;
    std::unique_ptr<detail::OpHolderBase<T>> op;
    std::int64_t count = 0, local = -1;
    std::vector<int> reducers, consumers;
    bool ordered = false, is_head = false, is_reducer = false, is_consumer = false;
    std::uint64_t hash = 0;
    T identity{};
    std::chrono::steady_clock::time_point armed_at{};
    bool reported = false;  // the watchdog reported this generation (WatchdogAction::report)
    // producer
    std::set<std::int64_t> mine;
    std::int64_t contributed = 0;
    std::vector<Domain> domains;  // commutative: per NUMA domain, not yet sent
    std::int64_t domains_used = 0;
    std::vector<std::pair<std::int64_t, T>> out_items;  // ordered: (index, value) not yet sent
    // reducer
    std::int64_t received = 0, pending_n = 0;
    std::uint64_t received_check = 0, pending_check = 0;
    bool has_acc = false, has_pending = false, finished = false, released = false;
    T acc{}, pending{};
    std::vector<T> items;
    std::vector<unsigned char> seen;
    // consumer
    bool has_result = false;
    T result{};
    std::string error;
    int error_rank = -1;
  };

  std::string Where(std::uint64_t key, std::uint64_t gen) const {
    return name_ + " key " + std::to_string(key) + ", generation " + std::to_string(gen) + ", rank " +
           std::to_string(transport_.Rank());
  }

  Key& Declared(std::uint64_t key) {
    auto it = keys_.find(key);
    if (it == keys_.end() || it->second.gen == 0)
      throw UsageError(name_ + " key " + std::to_string(key) + ", rank " + std::to_string(transport_.Rank()) +
                       ": not declared on this rank");
    return it->second;
  }

  static std::uint64_t HashOf(const Key& k) {
    std::uint64_t h = k.op->Signature() * 1099511628211ull ^ static_cast<std::uint64_t>(k.count);
    for (int r : k.reducers) h = (h ^ static_cast<std::uint64_t>(r + 1)) * 1099511628211ull;
    h = (h ^ 0x5bd1e995u) * 1099511628211ull;
    for (int r : k.consumers) h = (h ^ static_cast<std::uint64_t>(r + 1)) * 1099511628211ull;
    return h ^ static_cast<std::uint64_t>(k.ordered);
  }

  int MyReducer(const Key& k) const {
    return k.reducers[static_cast<std::size_t>(transport_.Rank()) % k.reducers.size()];
  }

  bool DoneLocked(const Key& k) const {
    if (!k.error.empty()) return true;
    if (k.is_consumer && !k.has_result) return false;
    if (k.is_head && !k.finished) return false;
    if (k.is_reducer && !k.is_head && !k.is_consumer && !k.released) return false;
    if (k.local >= 0 && k.contributed < k.local) return false;
    return true;
  }

  void SendTo(int rank, Message m, const void* value, std::size_t bytes = sizeof(T)) {
    m.from = transport_.Rank();
    transport_.Send(rank, &m, sizeof m, value, bytes);
  }

  // This thread's domain accumulator (one domain without hwloc).
  Domain& DomainOf(Key& k) {
    int d = 0;
    const int cpu = detail::CurrentCpu();
    if (cpu >= 0 && static_cast<std::size_t>(cpu) < domain_of_cpu_.size()) d = domain_of_cpu_[static_cast<std::size_t>(cpu)];
    if (k.domains.size() <= static_cast<std::size_t>(d)) k.domains.resize(static_cast<std::size_t>(d) + 1);
    return k.domains[static_cast<std::size_t>(d)];
  }

  // The domains' accumulators folded in domain order: the rank's message.
  void SendDomains(std::uint64_t key, Key& k) {
    T rank_value{};
    bool has = false;
    std::int64_t n = 0;
    std::uint64_t check = 0;
    for (Domain& d : k.domains) {
      if (!d.has) continue;
      Fold(k, rank_value, has, d.value);
      n += d.n;
      check += d.check;
      ++k.domains_used;
      d = Domain{};
    }
    if (has) {
      Message m{Kind::partial, key, k.gen, n, -1, k.hash};
      m.check = check;
      SendTo(MyReducer(k), m, &rank_value);
    }
  }

  // acc = acc ∘ value (the first value starts it).
  static void Fold(const Key& k, T& acc, bool& has, const T& value) {
    if (!has) {
      acc = value;
      has = true;
      return;
    }
    T later = value;
    k.op->Combine(&acc, &later, 1);
    acc = later;
  }

  void PollLocked() {
    SendOut();
    std::vector<char> msg;
    while (transport_.Receive(msg)) Handle(msg);
    Flush();
  }

  // This rank's contributions since the last poll, one message per key.
  void SendOut() {
    for (std::uint64_t key : unsent_) {
      Key& k = keys_[key];
      if (!k.out_items.empty()) {
        std::vector<char> payload(k.out_items.size() * (sizeof(std::int64_t) + sizeof(T)));
        char* at = payload.data();
        for (const auto& [index, value] : k.out_items) {
          std::memcpy(at, &index, sizeof index);
          std::memcpy(at + sizeof index, &value, sizeof(T));
          at += sizeof index + sizeof(T);
        }
        SendTo(k.reducers[0], Message{Kind::item, key, k.gen, static_cast<std::int64_t>(k.out_items.size()), -1, k.hash},
               payload.data(), payload.size());
        k.out_items.clear();
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
        Message m{Kind::forward, key, k.gen, k.pending_n, -1, k.hash};
        m.check = k.pending_check;
        k.pending_check = 0;
        SendTo(k.reducers[0], m, &k.pending);
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
      if (r != transport_.Rank()) SendTo(r, Message{Kind::failure, key, k.gen, 0, -1, k.hash}, text.data(), text.size());
    k.finished = true;
  }

  void Handle(const std::vector<char>& wire) {
    Message m;
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
    const std::string where = Where(m.key, k.gen);
    if (m.kind == Kind::failure) {
      k.error.assign(payload, payload_bytes);
      k.error_rank = m.from;
      return;
    }
    if (m.kind == Kind::result) {
      std::memcpy(&k.result, payload, sizeof(T));
      k.has_result = true;
      return;
    }
    if (m.kind == Kind::done) {
      k.released = true;
      return;
    }
    if (m.hash != k.hash) {
      const std::string text = where + ": rank " + std::to_string(m.from) +
                               " declared the key differently (operator, count, reducers or consumers)";
      if (k.is_head) Fail(m.key, k, text);
      else k.error = text, k.error_rank = transport_.Rank();
      return;
    }
    if (m.kind == Kind::item) {  // ordered: n (index, value) pairs, only ever to the head
      k.received += m.n;
      if (k.received > k.count) {
        Fail(m.key, k, where + ": " + std::to_string(k.received) + " contributions for a count of " + std::to_string(k.count));
        return;
      }
      const char* at = payload;
      for (std::int64_t j = 0; j < m.n; ++j, at += sizeof(std::int64_t) + sizeof(T)) {
        std::int64_t index;
        std::memcpy(&index, at, sizeof index);
        const auto u = static_cast<std::size_t>(index);
        if (k.seen[u]) {
          Fail(m.key, k, where + ": order index " + std::to_string(index) + " was contributed twice (again by rank " +
                             std::to_string(m.from) + ")");
          return;
        }
        k.seen[u] = 1;
        std::memcpy(static_cast<void*>(&k.items[u]), at + sizeof index, sizeof(T));
      }
    } else {
      T value;
      std::memcpy(static_cast<void*>(&value), payload, sizeof(T));
      if (!k.is_head) {  // a reducer that forwards at the end of this poll
        Fold(k, k.pending, k.has_pending, value);
        k.pending_n += m.n;
        unsent_.insert(m.key);
        k.pending_check += m.check;
        return;
      }
      k.received += m.n;
      k.received_check += m.check;
      if (k.received > k.count) {
        Fail(m.key, k, where + ": " + std::to_string(k.received) + " contributions for a count of " + std::to_string(k.count));
        return;
      }
      Fold(k, k.acc, k.has_acc, value);
    }
    if (k.received == k.count) Finish(m.key, k);
  }

  // The head has every contribution: the result (a left fold over the order index when
  // ordered) to the consumers; the other reducers are released.
  void Finish(std::uint64_t key, Key& k) {
    T result = k.identity;
    if (k.count > 0) {
      if (k.ordered) {
        result = k.items[0];
        for (std::size_t i = 1; i < k.items.size(); ++i) {
          T later = k.items[i];
          k.op->Combine(&result, &later, 1);
          result = later;
        }
      } else {
        std::uint64_t expected = 0;
        for (std::int64_t i = 0; i < k.count; ++i) expected += Mix(i);
        if (expected != k.received_check) {
          Fail(key, k, Where(key, k.gen) + ": " + std::to_string(k.count) +
                           " contributions arrived, but their order indices do not cover 0.." +
                           std::to_string(k.count - 1) + " once each (an index was contributed twice)");
          return;
        }
        result = k.acc;
      }
    }
    k.finished = true;
    for (int r : k.consumers) SendTo(r, Message{Kind::result, key, k.gen, 0, -1, k.hash}, &result);
    for (int r : k.reducers)
      if (std::find(k.consumers.begin(), k.consumers.end(), r) == k.consumers.end() && r != transport_.Rank())
        SendTo(r, Message{Kind::done, key, k.gen, 0, -1, k.hash}, nullptr, 0);
  }

  Context* ctx_;
  detail::Transport transport_;
  std::vector<int> domain_of_cpu_;  // hwloc: CPU -> NUMA domain
  std::string name_;
  mutable std::mutex mutex_;
  std::map<std::uint64_t, Key> keys_;
  std::set<std::uint64_t> unsent_;  // keys with contributions or forwards not yet sent
  std::map<std::pair<std::uint64_t, std::uint64_t>, std::vector<std::vector<char>>> stash_;
};

}  // namespace tributary
