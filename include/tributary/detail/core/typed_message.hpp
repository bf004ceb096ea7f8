// The typed side of an AllReduce<T> / Reduce<T> generation's message: the combined partial
// written as plain elements (builtin operators), behind a packed header (user operators: a
// failure reaches every rank), or as exact-sum records (ExactEncoding); and the result
// unpacked into `val` once the network phase completes.
#pragma once

#if !defined(TRIBUTARY_PUBLIC_INCLUDE) && !defined(TRIBUTARY_INTERNAL_INCLUDE)
#error \
    "<tributary/detail/core/typed_message.hpp> is internal to Tributary: include <tributary/tributary.hpp> instead"
#endif

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>

#include "tributary/datatype.hpp"
#include "tributary/detail/core/message_spec.hpp"
#include "tributary/detail/core/op_holder.hpp"
#include "tributary/detail/exact/exact_encoding.hpp"

namespace tributary::detail {

template <class T>
class TypedMessage {
  using Traits = ValueTraits<T>;
  using E = typename Traits::element;
  static constexpr bool kExactCapable = std::is_same_v<E, double> || std::is_same_v<E, float>;

 public:
  /// The elements themselves, at `data` (`input`: a reduce root's separate contribution);
  /// `read_only`: `data` must stay unchanged (a reduce's other ranks).
  void SetPlain(LaunchSpec* spec, E* data, const E* input, std::size_t count, bool read_only,
                const OpHolderBase<E>& op) {
    spec->data = data;
    spec->input = input;
    spec->data_read_only = read_only;
    spec->payload.count = count;
    spec->payload.elem_size = sizeof(E);
    spec->payload.combine = op.combine;
    spec->payload.combine_state = &op;
#if TRIBUTARY_HAVE_MPI
    spec->payload.elem_type = MpiType<E>::Get();
    spec->payload.op = op.mpi_op;
#endif
    encoding_ = Encoding::plain;
  }

  /// `count` elements from `source` behind a header that carries a failure to every rank
  /// (`combine_error`: the list-order fold threw here). A packed Reduce runs as an
  /// allreduce, so that every rank learns of a failure.
  void SetPacked(LaunchSpec* spec, const E* source, std::size_t count, int rank,
                 const OpHolderBase<E>& op, const std::string& combine_error) {
    if (spec->collective == Collective::reduce) spec->collective = Collective::allreduce;
    unsigned char* body = packed_.Reset(count * sizeof(E), rank);
    packed_.SetSegment(count, sizeof(E), op.combine, &op);
    if (!combine_error.empty()) packed_.Fail(rank, combine_error);
    if (count) std::memcpy(body, source, count * sizeof(E));
    spec->data = packed_.Data();
    spec->packed = packed_.Layout();
    encoding_ = Encoding::packed;
  }

  /// Exact sums: this generation's terms for `count` elements (ExactTerms), then SetExact.
  ExactTerms<E>& BeginExact(std::size_t count) { return exact_.Begin(count); }
  std::size_t ExactCount() const noexcept {
    if constexpr (kExactCapable)
      return exact_.Count();
    else
      return 0;
  }
  /// The terms given to BeginExact as window records; `result` receives the rounded values
  /// where this rank receives the result (null elsewhere).
  void SetExact(LaunchSpec* spec, E* result, bool allreduce, int rank, int size) {
    if constexpr (kExactCapable) {
      exact_.Describe(spec, result, allreduce, rank, size);
      encoding_ = Encoding::window;
    } else {
      (void)spec, (void)result, (void)allreduce, (void)rank, (void)size;
    }
  }

  /// After completion: the result into `*val` where `to_val`. Throws RemoteError naming
  /// `where()` when a user operator threw on some rank (every rank throws alike).
  template <class Where>
  void Unpack(T* val, bool to_val, const Where& where, int rank) {
    if (encoding_ == Encoding::window) {
      if constexpr (kExactCapable) {
        const E* rounded = exact_.Rounded();  // null: rounded into val already
        if (!to_val || !rounded) return;
        const std::size_t count = exact_.Count();
        if constexpr (Traits::dynamic) Traits::Resize(*val, count);
        if (count) std::memcpy(Traits::Data(*val), rounded, count * sizeof(E));
      }
      return;
    }
    if (encoding_ == Encoding::packed) {
      packed_.ThrowIfFailed(where, "the reduction operator", rank);
      if (to_val) {
        const std::size_t count = packed_.BodyBytes() / sizeof(E);
        if constexpr (Traits::dynamic) Traits::Resize(*val, count);
        if (count)
          std::memcpy(static_cast<void*>(Traits::Data(*val)), packed_.Body(), count * sizeof(E));
      }
    }
    // Plain: the root's result is already in `val`.
  }

  /// The packed message's or the exact records' storage where it starts at `at`, given up
  /// to a collective left pending on it (null if neither).
  std::unique_ptr<KeptBuffer> LeaveBuffer(const void* at) noexcept {
    if (auto kept = packed_.Leave(at)) return kept;
    if constexpr (kExactCapable) return exact_.Leave(at);
    return nullptr;
  }

 private:
  enum class Encoding : std::uint8_t { plain, packed, window };
  Encoding encoding_ = Encoding::plain;
  PackedMessage packed_;
  struct NoExactEncoding {};
  std::conditional_t<kExactCapable, ExactEncoding<E>, NoExactEncoding> exact_;
};

}  // namespace tributary::detail
