// Type erasure of an operator for elements of type E: the host combine in list order, the
// combine function the schedules call, the neutral element, and the MPI_Op of the
// MPI-library path when the operator and the element are builtin.
#pragma once

#if !defined(TRIBUTARY_PUBLIC_INCLUDE) && !defined(TRIBUTARY_INTERNAL_INCLUDE)
#error \
    "<tributary/detail/core/op_holder.hpp> is internal to Tributary: include <tributary/tributary.hpp> instead"
#endif

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <typeinfo>

#include "tributary/config.hpp"
#include "tributary/datatype.hpp"
#include "tributary/detail/core/agreement_record.hpp"
#include "tributary/detail/core/payload.hpp"
#include "tributary/errors.hpp"
#include "tributary/ops.hpp"

#if TRIBUTARY_HAVE_MPI
#include <mpi.h>
#endif

namespace tributary::detail {

#if TRIBUTARY_HAVE_MPI
inline MPI_Op ToMpiOp(BuiltinOp op) noexcept {
  switch (op) {
    case BuiltinOp::sum:
      return MPI_SUM;
    case BuiltinOp::prod:
      return MPI_PROD;
    case BuiltinOp::min:
      return MPI_MIN;
    case BuiltinOp::max:
      return MPI_MAX;
    case BuiltinOp::land:
      return MPI_LAND;
    case BuiltinOp::lor:
      return MPI_LOR;
    case BuiltinOp::lxor:
      return MPI_LXOR;
    case BuiltinOp::band:
      return MPI_BAND;
    case BuiltinOp::bor:
      return MPI_BOR;
    case BuiltinOp::bxor:
      return MPI_BXOR;
    case BuiltinOp::none:
      break;
  }
  return MPI_OP_NULL;
}

/// The name of a predefined MPI_Op ("MPI_SUM"), or null for a user-created one.
inline const char* PredefinedOpName(MPI_Op op) noexcept {
  const struct {
    MPI_Op op;
    const char* name;
  } known[] = {{MPI_SUM, "MPI_SUM"},        {MPI_PROD, "MPI_PROD"},     {MPI_MIN, "MPI_MIN"},
               {MPI_MAX, "MPI_MAX"},        {MPI_LAND, "MPI_LAND"},     {MPI_LOR, "MPI_LOR"},
               {MPI_LXOR, "MPI_LXOR"},      {MPI_BAND, "MPI_BAND"},     {MPI_BOR, "MPI_BOR"},
               {MPI_BXOR, "MPI_BXOR"},      {MPI_MINLOC, "MPI_MINLOC"}, {MPI_MAXLOC, "MPI_MAXLOC"},
               {MPI_REPLACE, "MPI_REPLACE"}};
  for (const auto& k : known)
    if (k.op == op) return k.name;
  return nullptr;
}
#endif

/// An operator applied to elements of type E.
template <class E>
class OpHolderBase {
 public:
  virtual ~OpHolderBase() = default;
  /// inout[i] = in[i] ∘ inout[i]; may throw for user operators.
  virtual void Combine(const E* in, E* inout, std::size_t n) const = 0;
  /// The neutral element; throws UsageError when the operator has none.
  virtual E Identity() const = 0;
  /// Identifies the operator's C++ type, to reuse the holder across generations.
  virtual const std::type_info& Type() const noexcept = 0;
  /// Equal on every rank for the same operator: a hash of its type's name (of a plain
  /// MPI_Op: of the predefined operator's name; every user-created one has the same).
  virtual std::uint64_t Signature() const noexcept { return HashText(Type().name()) | 1u; }
  /// True when Fingerprint tells more than Signature (a user-created MPI_Op).
  virtual bool HasFingerprint() const noexcept { return false; }
  /// Signature, refined by what the operator computes where only that tells operators
  /// apart (a user-created MPI_Op on arithmetic elements: its result on fixed inputs, through
  /// MPI_Reduce_local). Call it where Tributary may call MPI.
  virtual std::uint64_t Fingerprint() const { return Signature(); }
  /// The operator's name for messages ("Sum", "MPI_MAX", "a user-created MPI_Op").
  virtual std::string Describe() const { return ReadableTypeName(Type()); }

  bool commutative = true;
  /// True when the message can go to MPI as predefined elements with a builtin MPI_Op.
  bool direct = false;
  CombineFn combine = nullptr;
#if TRIBUTARY_HAVE_MPI
  MPI_Op mpi_op = MPI_OP_NULL;
#endif
};

/// inout[i] = op(in[i], inout[i]) in index order; `in` and `inout` never overlap. Unrolled
/// by eight so that GCC's -O2 (whose cost model vectorizes no loop of unknown length)
/// still vectorizes the body (what that gained: CHANGELOG.md, 0.1.0).
template <class Op, class E>
void CombineRange(const Op& op, const E* __restrict in, E* __restrict inout, std::size_t n) {
  const std::size_t bulk = n - n % 8;
  for (std::size_t i = 0; i < bulk; i += 8) {
    op(in[i], inout[i]);
    op(in[i + 1], inout[i + 1]);
    op(in[i + 2], inout[i + 2]);
    op(in[i + 3], inout[i + 3]);
    op(in[i + 4], inout[i + 4]);
    op(in[i + 5], inout[i + 5]);
    op(in[i + 6], inout[i + 6]);
    op(in[i + 7], inout[i + 7]);
  }
  for (std::size_t i = bulk; i < n; ++i) op(in[i], inout[i]);
}

template <class E, class Op>
class OpHolder final : public OpHolderBase<E> {
 public:
  explicit OpHolder(const Op& op) : op_(op) {
    CheckOperator<Op>();
    static_assert(std::is_invocable_v<const Op&, const E&, E&>,
                  "this operator cannot combine values of this element type: it must be "
                  "callable as op(const E& in, E& inout)");
    this->commutative = Op::commutative;
    this->combine = &OpHolder::CombineFn;
#if TRIBUTARY_HAVE_MPI
    constexpr BuiltinOp builtin = OpBuiltin<Op>::value;
    if constexpr (builtin != BuiltinOp::none && kBuiltinElement<E>) {
      // MPI defines no min/max on complex and no logical/bitwise ops on floating point;
      // the operators' own static_asserts reject those combinations.
      this->direct = true;
      this->mpi_op = ToMpiOp(builtin);
    }
#endif
  }
  void Combine(const E* in, E* inout, std::size_t n) const override {
    CombineRange(op_, in, inout, n);
  }
  E Identity() const override {
    if constexpr (kHasIdentity<Op, E>) {
      return IdentityOf<E>(op_);
    } else {
      throw UsageError(
          "this operator declares no neutral element (add `static T identity()`), which "
          "is needed when a rank expects zero contributions");
    }
  }
  const std::type_info& Type() const noexcept override { return typeid(Op); }
  std::uint64_t Signature() const noexcept override {
    static const std::uint64_t signature = HashText(typeid(Op).name()) | 1u;
    return signature;
  }
  /// Replaces the operator's state (same type) without a new holder.
  void Assign(const Op& op) { op_ = op; }

 private:
  static void CombineFn(const void* state, const void* in, void* inout, std::size_t n) {
    static_cast<const OpHolder*>(state)->Combine(static_cast<const E*>(in), static_cast<E*>(inout),
                                                 n);
  }
  Op op_;
};

#if TRIBUTARY_HAVE_MPI
/// A plain MPI_Op: combined on the host with MPI_Reduce_local; it has no neutral element.
template <class E>
class MpiOpHolder final : public OpHolderBase<E> {
 public:
  explicit MpiOpHolder(MPI_Op op) : op_(op) {
    int commute = 1;
    CheckMpi(MPI_Op_commutative(op, &commute), "MPI_Op_commutative");
    this->commutative = commute != 0;
    this->direct = true;
    this->mpi_op = op;
    this->combine = &MpiOpHolder::CombineFn;
  }
  void Combine(const E* in, E* inout, std::size_t n) const override {
    CheckMpi(MPI_Reduce_local(in, inout, static_cast<int>(n), MpiType<E>::Get(), op_),
             "MPI_Reduce_local");
  }
  E Identity() const override {
    throw UsageError(
        "a plain MPI_Op has no neutral element, which is needed when a rank expects zero "
        "contributions; use a Tributary operator (Sum, Min, ...) instead");
  }
  const std::type_info& Type() const noexcept override { return typeid(MPI_Op); }
  std::uint64_t Signature() const noexcept override {
    const char* name = PredefinedOpName(op_);
    return HashText(name ? name : "a user-created MPI_Op") | 1u;
  }
  bool HasFingerprint() const noexcept override { return PredefinedOpName(op_) == nullptr; }
  std::uint64_t Fingerprint() const override {
    if constexpr (std::is_arithmetic_v<E> && !std::is_same_v<E, bool>) {
      if (HasFingerprint()) {
        // Inputs on which the predefined operators (and most others) all differ.
        constexpr int a[8] = {1, 2, 3, 4, 5, 6, 7, 8}, b[8] = {3, 1, 4, 1, 5, 9, 2, 6};
        E in[8], inout[8];
        for (int k = 0; k < 8; ++k) {
          in[k] = static_cast<E>(a[k]);
          inout[k] = static_cast<E>(b[k]);
        }
        if (MPI_Reduce_local(in, inout, 8, MpiType<E>::Get(), op_) == MPI_SUCCESS)
          return HashBytes(inout, sizeof inout, Signature()) | 1u;
      }
    }
    return Signature();
  }
  std::string Describe() const override {
    const char* name = PredefinedOpName(op_);
    return name ? name : "a user-created MPI_Op";
  }

 private:
  static void CombineFn(const void* state, const void* in, void* inout, std::size_t n) {
    static_cast<const MpiOpHolder*>(state)->Combine(static_cast<const E*>(in),
                                                    static_cast<E*>(inout), n);
  }
  MPI_Op op_;
};
#endif

/// Keeps the holder when the operator's type is unchanged, else makes a new one.
template <class E, class Op>
void SetOperator(std::unique_ptr<OpHolderBase<E>>& holder, const Op& op) {
#if TRIBUTARY_HAVE_MPI
  if constexpr (std::is_convertible_v<Op, MPI_Op> && !HasCommuteTag<Op>::value) {
    holder = std::make_unique<MpiOpHolder<E>>(static_cast<MPI_Op>(op));
    return;
  } else
#endif
  {
    if constexpr (std::is_copy_assignable_v<Op>) {
      if (holder && holder->Type() == typeid(Op)) {
        static_cast<OpHolder<E, Op>*>(holder.get())->Assign(op);
        return;
      }
    }
    holder = std::make_unique<OpHolder<E, Op>>(op);
  }
}

}  // namespace tributary::detail
