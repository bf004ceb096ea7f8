// A Batch's message: its members' values laid out behind one packed header (members of a
// fixed size at aligned offsets, neighbouring stateless combines merged into one segment),
// and its exact members' sums as window records ahead of them (a WindowCodec, with the
// record writer of exact_encoding.hpp); the agreement record of its members; and the
// result unpacked into every member's `val`. BatchMemberBase is the member's side of it.
#pragma once

#if !defined(TRIBUTARY_PUBLIC_INCLUDE) && !defined(TRIBUTARY_INTERNAL_INCLUDE)
#error \
    "<tributary/detail/core/batch_message.hpp> is internal to Tributary: include <tributary/tributary.hpp> instead"
#endif

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "tributary/context.hpp"
#include "tributary/detail/core/message_spec.hpp"
#include "tributary/detail/exact/exact_encoding.hpp"
#include "tributary/determinism.hpp"
#include "tributary/exact_sum.hpp"

namespace tributary::detail {

/// A batch member seen without its type.
class BatchMemberBase {
 public:
  virtual ~BatchMemberBase() = default;
  virtual std::size_t Bytes() const noexcept = 0;
  virtual std::size_t Align() const noexcept = 0;
  /// Combines the partials of `lists` lists in list order (or the neutral element for
  /// none) into `dst`; user operators may throw.
  virtual void CombineInto(int lists, unsigned char* dst) = 0;
  /// Copies `val` into `dst` (hand-wired start).
  virtual void PackValue(unsigned char* dst) const = 0;
  virtual void Unpack(const unsigned char* src) = 0;
  virtual PackedSegment Segment(std::size_t offset) const = 0;
  virtual void PrepareArm(int lists) = 0;
  virtual bool Commutative() const noexcept = 0;
  /// The member's part of the batch's agreement record: its operator's signature (and
  /// fingerprint, see OpHolderBase), its element type's code, and their names.
  virtual std::uint64_t OpSignature() const noexcept = 0;
  virtual bool HasFingerprint() const noexcept = 0;
  virtual std::uint64_t OpFingerprint() const = 0;
  virtual std::uint64_t ElementKind() const noexcept = 0;
  virtual std::string OpName() const = 0;
  virtual std::string ElementName() const = 0;
  /// Exact members (rank_count_independent sums): they travel as window records after the
  /// ranks agree on a window (BatchMessage's WindowCodec), not in the fixed part of the message.
  virtual bool Exact() const noexcept { return false; }
  /// Exact members: this rank's sum per element, merged from the lists' partials (or from
  /// `val` for a hand-wired start), for MergedSums to read.
  virtual void MergeExact(int /*lists*/, bool /*from_val*/) {}
  virtual const ExactSum* MergedSums() const noexcept { return nullptr; }
  virtual std::size_t Elements() const noexcept = 0;
  /// Exact members: rounds the member's records (window `w`) once into `val`.
  virtual void UnpackRecords(const std::uint32_t* /*records*/, const ExactWindow& /*w*/) {}
  /// True when this generation's lists contributed to the member on the device (the last
  /// list's kernel queued the list-order fold).
  virtual bool OnDevice() const noexcept { return false; }
  /// True when no device work of this member is pending. Never blocks.
  virtual bool DeviceReady() { return true; }
  /// True when the combine does not read its state (a stateless operator): neighbouring
  /// members with the same combine then combine as one segment.
  bool stateless = false;
  std::string label;
};

class BatchMessage {
 public:
  using Members = std::vector<std::unique_ptr<BatchMemberBase>>;
  /// The message of `members` (the batch's, which outlive it).
  explicit BatchMessage(const Members& members) : members_(members) {}
  BatchMessage(const BatchMessage&) = delete;
  BatchMessage& operator=(const BatchMessage&) = delete;

  /// Lays the members out at the first start, on rank `rank` of `size`; later calls keep
  /// that layout (members are fixed after the first start).
  void LayOut(Determinism mode, int rank, int size) {
    if (offsets_.size() == members_.size()) return;
    rank_ = rank;
    size_ = size;
    Layout(mode);
  }
  /// Where member `k` of fixed size writes its value in the fixed part `fixed`.
  unsigned char* Slot(unsigned char* fixed, std::size_t k) const { return fixed + offsets_[k]; }

  /// This generation's launch.
  LaunchSpec Spec(Determinism mode, DebugLevel debug) {
    bool commutative = true;
    for (auto& m : members_) commutative = commutative && m->Commutative();
    LaunchSpec spec;
    spec.collective = Collective::allreduce;
    spec.data = message_.Data();
    spec.payload.commutative = commutative;
    spec.determinism = static_cast<int>(mode);
    spec.packed = message_.Layout();
    if (debug != DebugLevel::none) spec.agreement = record_;
    if (exact_count_)
      spec.window = &window_codec_;  // Pack writes the message once a window is agreed
    return spec;
  }

  /// The message's storage where it starts at `at` (PackedMessage::Leave).
  std::unique_ptr<KeptBuffer> Leave(const void* at) noexcept { return message_.Leave(at); }

  /// After completion: every member's `val` from the message, once; throws RemoteError
  /// (through PackedMessage::ThrowIfFailed) where a member's operator threw on a rank.
  template <class Where>
  void Unpack(const Where& where) {
    message_.ThrowIfFailed(where, "a member's operator", rank_);
    const unsigned char* body = message_.Body();
    if (exact_count_) {
      const auto* records = reinterpret_cast<const std::uint32_t*>(body);
      for (auto& m : members_) {
        if (!m->Exact()) continue;
        m->UnpackRecords(records, window_);
        records += m->Elements() * window_.Words();
      }
      body += records_bytes_;
    }
    for (std::size_t k = 0; k < members_.size(); ++k)
      if (!members_[k]->Exact()) members_[k]->Unpack(body + offsets_[k]);
  }

  /// Where the members of fixed size write this generation's values: the message, or, in a
  /// batch with exact members, a buffer that Pack copies behind the records.
  unsigned char* FixedPart() {
    fixed_failed_ = false;
    if (exact_count_) return fixed_.data();
    return message_.Reset(body_bytes_, rank_);
  }
  /// This rank failed to combine a member (`what`): every rank learns it from the header.
  void FailFixedPart(std::string what) {
    if (fixed_failed_) return;  // the first failure is reported
    fixed_failed_ = true;
    fixed_error_ = what;
    message_.Fail(rank_, std::move(what));
  }

 private:
  void Layout(Determinism mode) {
    offsets_.resize(members_.size());
    std::size_t offset = 0;
    std::vector<PackedSegment>& segments = message_.Segments();
    segments.clear();
    exact_count_ = 0;
    for (std::size_t k = 0; k < members_.size(); ++k) {
      if (members_[k]->Exact()) {  // window records, before the fixed part (Pack)
        exact_count_ += members_[k]->Elements();
        continue;
      }
      const std::size_t a = members_[k]->Align();
      offset = (offset + a - 1) / a * a;
      offsets_[k] = offset;
      const PackedSegment seg = members_[k]->Segment(offset);
      PackedSegment* prev = segments.empty() ? nullptr : &segments.back();
      if (prev && members_[k]->stateless && members_[k - 1]->stateless &&
          !members_[k - 1]->Exact() && prev->combine == seg.combine &&
          prev->elem_size == seg.elem_size &&
          prev->offset + prev->count * prev->elem_size == seg.offset)
        prev->count += seg.count;  // one call combines both
      else
        segments.push_back(seg);
      offset += members_[k]->Bytes();
    }
    body_bytes_ = (offset + 15) / 16 * 16;
    Describe(mode);
    if (exact_count_) {  // the fixed part is kept apart: a missed speculation packs it again
      fixed_segments_ = segments;
      fixed_.assign(body_bytes_, 0);
    }
  }

  // The WindowCodec of a batch with exact members: their sums travel as records of one
  // window, agreed across ranks for all of them, ahead of the fixed part.
  WindowNeeds Measure() const {
    WindowNeeds needs;
    needs.lo = std::int64_t(1) << 40;  // above any bit
    needs.terms = 1;                   // one merged sum per element on each rank
    for (const auto& m : members_)
      if (m->Exact()) MeasureSums(m->MergedSums(), m->Elements(), &needs);
    return needs;
  }
  PackedRecords Pack(const WindowNeeds& agreed, bool speculative) {
    if (!speculative) {
      agreed_ = agreed;
      have_agreed_ = true;
    }
    window_ = WindowFor(agreed.lo, agreed.hi, agreed.terms, agreed.special);
    const std::size_t words = window_.Words(), count = exact_count_ + (speculative ? 1 : 0);
    records_bytes_ = (count * window_.RecordBytes() + 15) / 16 * 16;
    unsigned char* body = message_.Reset(records_bytes_ + body_bytes_, rank_);
    if (fixed_failed_) message_.Fail(rank_, fixed_error_);
    std::vector<PackedSegment>& segments = message_.Segments();
    segments.assign(
        1, PackedSegment{0, count, window_.RecordBytes(), WindowCombineFor(window_), &window_});
    for (PackedSegment seg : fixed_segments_) {
      seg.offset += records_bytes_;
      segments.push_back(seg);
    }
    if (body_bytes_) std::memcpy(body + records_bytes_, fixed_.data(), body_bytes_);
    auto* records = reinterpret_cast<std::uint32_t*>(body);
    std::fill(records, records + records_bytes_ / 4, 0u);
    if (speculative) {
      const WindowNeeds mine = Measure();
      // A misfit is counted in the trailer; every rank then agrees a window again.
      if (!InsideWindow(mine, agreed) || size_ > agreed.terms) {
        records[exact_count_ * words] = 1;
        return {message_.Data(), nullptr};
      }
    }
    for (const auto& m : members_) {
      if (!m->Exact()) continue;
      WriteSumRecords(m->MergedSums(), m->Elements(), window_, records, &acc_);
      records += m->Elements() * words;
    }
    return {message_.Data(), nullptr};
  }
  // The core's view of the two above (spec.window of a batch with exact members):
  // BatchMessage keeps no virtual functions of its own.
  class Window final : public WindowCodec {
   public:
    explicit Window(BatchMessage* batch) : batch_(batch) {}
    WindowNeeds Measure() const override { return batch_->Measure(); }
    PackedRecords Pack(const WindowNeeds& agreed, bool speculative) override {
      return batch_->Pack(agreed, speculative);
    }
    PackedRecords Prepack(const WindowNeeds&, WindowNeeds*) override { return {}; }
    const WindowNeeds* Guess() const noexcept override {
      return batch_->have_agreed_ ? &batch_->agreed_ : nullptr;
    }
    Finisher Rounding() const noexcept override { return {}; }  // Unpack rounds
    bool RecordsOnly() const noexcept override { return false; }

   private:
    BatchMessage* batch_;
  };

  // The agreement record of every generation (the members are fixed after the first start).
  void Describe(Determinism mode) {
    AgreementRecord& a = record_;
    a = AgreementRecord{};
    std::uint64_t op = 0, element = 0;
    bool fingerprint = false;
    for (const auto& m : members_) {
      const std::uint64_t member[3] = {m->OpSignature(), m->ElementKind(), m->Elements()};
      op = HashBytes(&member[0], sizeof member[0], op * 31 + 1);
      element = HashBytes(member + 1, 2 * sizeof member[0], element * 31 + 1);
      a.elem_size += m->Bytes();
      a.count += m->Elements();
      fingerprint = fingerprint || m->HasFingerprint();
    }
    a.op = op;
    a.element = element;
    a.collective = static_cast<std::int32_t>(Collective::allreduce);
    a.determinism = static_cast<std::int32_t>(mode);
    a.client = this;
    a.describe = [](const void* self, std::string* op_names, std::string* element_names) {
      const auto& members = static_cast<const BatchMessage*>(self)->members_;
      for (std::size_t k = 0; k < members.size(); ++k) {
        const std::string name =
            members[k]->label.empty() ? "#" + std::to_string(k) : members[k]->label;
        *op_names += (k ? ", " : "") + name + ": " + members[k]->OpName();
        *element_names += (k ? ", " : "") + name + ": " + members[k]->ElementName();
      }
    };
    if (fingerprint)
      a.fingerprint = [](const void* self) {
        std::uint64_t combined = 0;
        for (const auto& m : static_cast<const BatchMessage*>(self)->members_) {
          const std::uint64_t f = m->OpFingerprint();
          combined = HashBytes(&f, sizeof f, combined * 31 + 1);
        }
        return combined;
      };
  }

  const Members& members_;
  int rank_ = 0;
  int size_ = 1;
  std::vector<std::size_t> offsets_;
  std::size_t body_bytes_ = 0;  // the fixed part: members other than exact ones
  PackedMessage message_;       // the members' values behind one header
  // Exact members (window records ahead of the fixed part, see Pack).
  std::size_t exact_count_ = 0;    // their elements
  std::size_t records_bytes_ = 0;  // the records, padded to 16 bytes
  std::vector<unsigned char> fixed_;
  std::vector<PackedSegment> fixed_segments_;
  bool fixed_failed_ = false;
  std::string fixed_error_;
  ExactWindow window_;
  WindowNeeds agreed_;
  bool have_agreed_ = false;
  std::vector<std::int64_t> acc_;  // one record's digits while Pack writes them
  Window window_codec_{this};
  AgreementRecord record_;
};

}  // namespace tributary::detail
