// The engine behind KeyedReduction<T>, without the value type. The keyed protocol
// (declarations and their checks, counting at the head, forwarding by the other reducers,
// failure notices, the watchdog, the progress-rule poller) is compiled once, in
// src/keyed/keyed.cpp; a value is opaque bytes of the reduction's size and alignment, combined
// through the key's operator. tributary/keyed.hpp is the typed layer over it.
#pragma once

#if !defined(TRIBUTARY_PUBLIC_INCLUDE) && !defined(TRIBUTARY_INTERNAL_INCLUDE)
#error \
    "<tributary/detail/keyed/keyed_engine.hpp> is internal to Tributary: include <tributary/keyed.hpp> instead"
#endif

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tributary/tasks/task_status.hpp"

namespace tributary {
class Context;

namespace detail {

/// One generation's operator, without the value type. `state` is the typed operator
/// holder; the typed layer fills the functions.
struct KeyedOp {
  std::unique_ptr<const void, void (*)(const void*)> state{nullptr, nullptr};
  /// *inout = *in ∘ *inout for one value; `in` and `inout` never overlap. May throw.
  void (*combine)(const void* state, const void* in, void* inout) = nullptr;
  /// Writes the neutral element to `out`; throws UsageError when the operator has none.
  void (*identity)(const void* state, void* out) = nullptr;
  /// Equal on every rank for the same operator type (part of the declaration's hash).
  std::uint64_t signature = 0;
  bool commutative = true;
};

/// Keyed reductions of values of `value_bytes` bytes. Every member has the meaning of the
/// KeyedReduction member of the same name; values in and out are pointers to one value.
class KeyedEngine {
 public:
  /// `name` heads every error message ("KeyedReduction<int64> 'totals'"). Collective: it
  /// takes a communicator of its own; registers with the Context as a poller.
  KeyedEngine(Context& ctx, std::size_t value_bytes, std::size_t value_align, std::string name);
  ~KeyedEngine();
  KeyedEngine(const KeyedEngine&) = delete;
  KeyedEngine& operator=(const KeyedEngine&) = delete;

  void Declare(std::uint64_t key, KeyedOp op, std::int64_t count, std::int64_t local,
               const std::vector<int>& reducers, const std::vector<int>& consumers);
  TaskStatus Contribute(std::uint64_t key, std::int64_t index, const void* value);
  TaskStatus Check(std::uint64_t key);
  /// The result's bytes, aligned for the value type; they stay at this address while the
  /// object lives (a key's next generation overwrites them).
  const void* Result(std::uint64_t key) const;
  void Progress();
  std::int64_t DomainsUsed(std::uint64_t key) const;
  std::uint64_t RemoteMessages() const noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace detail
}  // namespace tributary
