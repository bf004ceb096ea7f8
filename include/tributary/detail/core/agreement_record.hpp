// What every rank must start a generation of one object with: the agreement record. The
// typed layer fills it (operator, element type, count, collective, root, determinism); the
// core adds the object and the schedule and compares the record across ranks
// (docs/reductions.md, "Ranks that disagree"). Numbers only: the names of the operator and
// of the element type are asked for (DescribeFn) when the ranks disagree, never before.
#pragma once

#if !defined(TRIBUTARY_PUBLIC_INCLUDE) && !defined(TRIBUTARY_INTERNAL_INCLUDE)
#error \
    "<tributary/detail/core/agreement_record.hpp> is internal to Tributary: include <tributary/tributary.hpp> instead"
#endif

#include <cstddef>
#include <cstdint>
#include <string>
#include <typeinfo>

namespace tributary::detail {

/// FNV-1a over `bytes` bytes, continuing from `h`.
inline std::uint64_t HashBytes(const void* bytes, std::size_t n,
                               std::uint64_t h = 1469598103934665603ull) noexcept {
  const auto* p = static_cast<const unsigned char*>(bytes);
  for (std::size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}
/// FNV-1a over a NUL-terminated text, continuing from `h`.
inline std::uint64_t HashText(const char* text, std::uint64_t h = 1469598103934665603ull) noexcept {
  for (; *text; ++text) h = (h ^ static_cast<unsigned char>(*text)) * 1099511628211ull;
  return h;
}

/// A C++ type's name for messages ("MyOp", "LambdaOp<...>"), demangled where the compiler
/// can, without the "tributary::" prefixes.
std::string ReadableTypeName(const std::type_info& type);

/// Writes the names of a generation's operator and element type (called on a
/// disagreement only, under the object's lock).
using DescribeFn = void (*)(const void* client, std::string* op, std::string* element);
/// The operator's code where it needs MPI to compute (a user-created MPI_Op: its result on
/// fixed inputs); called where the record is compared, under the MPI lock.
using FingerprintFn = std::uint64_t (*)(const void* client);

/// What the ranks must agree on, as the typed layer describes a generation. Zero codes
/// compare equal like any other.
struct AgreementRecord {
  std::uint64_t op = 0;       ///< The operator (OpHolderBase::Signature); 0: none (gathers).
  std::uint64_t element = 0;  ///< The element type's kind (ElementCode).
  std::uint64_t elem_size = 0;
  /// Elements per rank of a fixed-size value (variable lengths are LaunchSpec::length).
  std::uint64_t count = 0;
  std::int32_t collective = 0;  ///< As started (a packed Reduce still says reduce).
  std::int32_t root = -1;       ///< reduce only; -1 otherwise.
  std::int32_t determinism = 0;
  const void* client = nullptr;
  DescribeFn describe = nullptr;
  FingerprintFn fingerprint = nullptr;  ///< Replaces `op` where set.
};

/// A code of the element type E's kind, equal on every rank for the same type.
template <class E>
std::uint64_t ElementCode() noexcept {
  static const std::uint64_t code = HashText(typeid(E).name());
  return code;
}

}  // namespace tributary::detail
