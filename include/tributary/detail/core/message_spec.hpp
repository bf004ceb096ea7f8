// What the typed layer hands the core for one generation's network phase: LaunchSpec, and
// the encodings it describes. Three encodings:
//  - plain: the elements themselves (builtin operators; LaunchSpec::payload);
//  - packed: a PackedHeader, then the elements (user operators, batches), so that an
//    operator that throws on one rank fails the generation on every rank (PackedMessage);
//  - window: exact sums as records of a window of digits agreed across ranks
//    (WindowCodec; the exact-sum encoding in exact_encoding.hpp implements it).
// The typed layer writes the bytes; the library's message unit (src/core/message.hpp) sends them,
// runs the agreement and reads the header; the core (ReductionCore) drives it.
#pragma once

#if !defined(TRIBUTARY_PUBLIC_INCLUDE) && !defined(TRIBUTARY_INTERNAL_INCLUDE)
#error \
    "<tributary/detail/core/message_spec.hpp> is internal to Tributary: include <tributary/tributary.hpp> instead"
#endif

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "tributary/detail/core/agreement_record.hpp"
#include "tributary/detail/core/kept_buffer.hpp"
#include "tributary/detail/core/payload.hpp"
#include "tributary/errors.hpp"
#include "tributary/schedule_kind.hpp"

namespace tributary::detail {

/// One contiguous run of elements inside a packed message and how it combines.
struct PackedSegment {
  std::size_t offset = 0;  ///< Bytes from the start of the message (after the header).
  std::size_t count = 0;   ///< Elements.
  std::size_t elem_size = 0;
  CombineFn combine = nullptr;
  const void* state = nullptr;
};

/// The header every packed message starts with: the lowest rank where a user operator
/// threw, or -1, and the hash of the generation's agreement record (0: not compared), which
/// becomes kDisagreed where two ranks' differ. It travels with the data, so every rank
/// learns of the failure.
struct alignas(16) PackedHeader {
  std::int32_t error_rank = -1;
  std::int32_t reserved = 0;
  std::uint64_t agreement = 0;
  static constexpr std::uint64_t kDisagreed = ~std::uint64_t(0);
};
static_assert(sizeof(PackedHeader) == 16, "elements after the header stay 16-byte aligned");

/// How a packed message combines: used by Tributary's own schedules (through
/// PackedCombine) and by the generic MPI_Op of the MPI-library path.
struct PackedLayout {
  std::vector<PackedSegment> segments;
  std::size_t bytes = 0;              ///< Header included.
  int rank = 0;                       ///< This rank, recorded in the header when a combine throws.
  std::string* error_text = nullptr;  ///< Receives what() of the exception thrown here.
};

/// A packed message and its layout: the buffer, the header, and the text of an exception
/// thrown on this rank (by the list-order fold or by a combine inside the schedule).
class PackedMessage {
 public:
  PackedMessage() = default;
  PackedMessage(PackedMessage&& other) noexcept
      : layout_(std::move(other.layout_)),
        buffer_(std::move(other.buffer_)),
        error_(std::move(other.error_)) {
    layout_.error_text = &error_;
  }
  PackedMessage& operator=(PackedMessage&&) = delete;
  PackedMessage(const PackedMessage&) = delete;
  PackedMessage& operator=(const PackedMessage&) = delete;

  /// Sizes the message for `body` bytes after the header, with the header clean; returns
  /// where the body starts. The segments are the caller's (Segments()).
  unsigned char* Reset(std::size_t body, int rank) {
    buffer_.resize(sizeof(PackedHeader) + body);
    layout_.bytes = buffer_.size();
    layout_.rank = rank;
    layout_.error_text = &error_;
    error_.clear();
    SetErrorRank(-1);
    return Body();
  }
  /// The message is one segment of `count` elements of `elem_size` bytes.
  void SetSegment(std::size_t count, std::size_t elem_size, CombineFn combine, const void* state) {
    layout_.segments.assign(1, PackedSegment{0, count, elem_size, combine, state});
  }
  std::vector<PackedSegment>& Segments() noexcept { return layout_.segments; }

  /// This rank failed before the launch (the list-order fold threw `what`).
  void Fail(int rank, std::string what) {
    error_ = std::move(what);
    SetErrorRank(rank);
  }
  /// After completion: throws RemoteError "<where()>: <whose> threw on rank r[: what]" when
  /// a rank's operator threw (on every rank: the header travelled with the data). `where`
  /// makes the object's description only then: it costs allocations every completion would
  /// pay otherwise.
  template <class Where>
  void ThrowIfFailed(const Where& where, const char* whose, int my_rank) const {
    PackedHeader h;
    std::memcpy(&h, buffer_.data(), sizeof h);
    if (h.error_rank < 0) return;
    std::string msg = where() + ": " + whose + " threw on rank " + std::to_string(h.error_rank);
    if (h.error_rank == my_rank && !error_.empty()) msg += ": " + error_;
    throw RemoteError(h.error_rank, msg);
  }

  unsigned char* Data() noexcept { return buffer_.data(); }
  unsigned char* Body() noexcept { return buffer_.data() + sizeof(PackedHeader); }
  const unsigned char* Body() const noexcept { return buffer_.data() + sizeof(PackedHeader); }
  std::size_t BodyBytes() const noexcept { return buffer_.size() - sizeof(PackedHeader); }
  const PackedLayout* Layout() const noexcept { return &layout_; }

  /// The message's storage where it starts at `at`, given up to a collective left pending on
  /// it (ReductionClient::LeaveBuffer); a copy takes its place. Null if not (or no memory).
  std::unique_ptr<KeptBuffer> Leave(const void* at) noexcept {
    if (at != buffer_.data()) return nullptr;
    try {
      std::vector<unsigned char> copy(buffer_);
      auto kept = std::make_unique<KeptValue<std::vector<unsigned char>>>(std::move(buffer_));
      buffer_ = std::move(copy);
      return kept;
    } catch (...) {
      return nullptr;
    }
  }

 private:
  void SetErrorRank(int rank) noexcept {
    PackedHeader h;
    h.error_rank = rank;
    std::memcpy(buffer_.data(), &h, sizeof h);
  }
  PackedLayout layout_;
  std::vector<unsigned char> buffer_ = std::vector<unsigned char>(sizeof(PackedHeader));
  std::string error_;
};

/// What an exact sum's wire form must hold (Determinism::rank_count_independent): the
/// lowest and highest bit of any term's magnitude, in units of 2^-1074 (hi < 0: no nonzero
/// finite term), how many terms each element sums, and whether a NaN or an infinity is
/// among them. Agreed across ranks: min lo, max hi, the rank count times the most terms on
/// a rank, any special.
struct WindowNeeds {
  std::int64_t lo = 0;
  std::int64_t hi = -1;
  std::int64_t terms = 1;
  bool special = false;
};

/// Whether data that needs `mine` can be written in the window agreed as `agreed` (its
/// bits and special values; the caller checks the term count, which it knows best).
inline bool InsideWindow(const WindowNeeds& mine, const WindowNeeds& agreed) noexcept {
  return (!mine.special || agreed.special) &&
         (mine.hi < 0 || (mine.lo >= agreed.lo && mine.hi <= agreed.hi));
}

/// What a window codec's pack wrote: the packed message (it replaces LaunchSpec::data), and
/// where the rounded values go (the Finisher's output).
struct PackedRecords {
  void* data = nullptr;
  void* rounded = nullptr;
};

/// An encoding whose message depends on a window agreed across ranks. The core agrees on
/// the window in the round that also checks lengths (the pre-round), then asks for the
/// message; the message is a packed one whose first segment holds the records, which
/// Tributary's schedules split like values. The codec owns its buffers and the agreed
/// window; it lives as long as the generation it launched.
class WindowCodec {
 public:
  /// What this rank's data needs of the window.
  virtual WindowNeeds Measure() const = 0;
  /// Writes the message for the window `agreed`. `speculative`: the window was agreed for
  /// an earlier generation and no agreement ran; one more record follows, whose low digit
  /// is 1 where this rank's data does not fit it (summed across ranks, a nonzero count
  /// makes every rank agree and pack again).
  virtual PackedRecords Pack(const WindowNeeds& agreed, bool speculative) = 0;
  /// Large messages: writes the records in the window `guess` while measuring the data
  /// (`measured`); the agreement then runs on the measure and Pack(agreed, false) keeps the
  /// records when the agreed window is the same. No data where it does not (the core then
  /// speculates or agrees first).
  virtual PackedRecords Prepack(const WindowNeeds& guess, WindowNeeds* measured) = 0;
  /// The window agreed for an earlier generation that an allreduce may skip the agreement
  /// with; null when there is none.
  virtual const WindowNeeds* Guess() const noexcept = 0;
  /// Rounds the records: the schedules' Finisher (its `out` is set from Pack's `rounded`).
  virtual Finisher Rounding() const noexcept = 0;
  /// True when the message is the records alone (the core lets Tributary's schedules
  /// split them like values and finish them); false when other segments follow them in a
  /// packed message (a batch), which then travels whole and is finished by its owner.
  virtual bool RecordsOnly() const noexcept = 0;

 protected:
  ~WindowCodec() = default;
};

/// Where the network phase of one generation reads and writes.
struct LaunchSpec {
  Collective collective = Collective::allreduce;
  int root = 0;
  void* data = nullptr;
  void* result = nullptr;
  /// reduce, the root only: the contribution when it is not `data` (ScheduleArgs::input).
  const void* input = nullptr;
  Payload payload;
  /// Elements per rank of a variable-size value; with `check_length` the core first checks
  /// that every rank has the same (DebugLevel::basic and above).
  std::uint64_t length = 0;
  bool check_length = false;
  /// DebugLevel::basic, an allreduce of plain elements: the length may ride on a header the
  /// message unit puts before the elements, instead of a round of its own, once an earlier
  /// generation has agreed on one (src/message.hpp, "the length speculation").
  bool length_in_header = false;
  /// What every rank must agree on (compared at DebugLevel::full before every generation,
  /// at DebugLevel::basic where a round sent anyway can carry it; docs/reductions.md).
  AgreementRecord agreement;
  /// The operator is a builtin one on builtin elements (for the selection tree).
  bool builtin_op = false;
  /// reduce, ranks other than the root: `data` must stay unchanged. The core copies it to
  /// a buffer of its own first where the chosen schedule would write it (WritesData).
  bool data_read_only = false;
  /// The generation's determinism mode (a selection input; run_to_run keeps the MPI
  /// library's unspecified combine order out).
  int determinism = 0;
  /// `data` (and `input`) are device memory handed to the MPI library directly
  /// (ContextOptions::device_aware_mpi): the library's schedule, whatever the options or
  /// the tree say, since Tributary's own schedules combine on the host.
  bool device_memory = false;
  /// `data` or `input` is memory the object cannot give up to a collective left pending
  /// after a failure (ReductionClient::LeaveBuffer): inside the object (a value stored
  /// inline) or the caller's (a reduce's separate input). The MPI library's schedule then
  /// works on a copy above its persistent request's size.
  bool fixed_storage = false;
  /// A packed message carries PackedHeader first (set when the layout is packed).
  const PackedLayout* packed = nullptr;
  /// Exact sums (Determinism::rank_count_independent): the encoding that writes the
  /// message once the ranks agree on its window (`data` and `packed` come from its Pack).
  WindowCodec* window = nullptr;
};

}  // namespace tributary::detail
