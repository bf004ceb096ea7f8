#include "schedules/rabenseifner.hpp"

#include <algorithm>
#include <cstring>

#include "tributary/errors.hpp"

namespace tributary::detail {

// Rabenseifner. Tags: +0 fold-in, +1 reduce-scatter, +2 allgather, +3 fold-out.

RabenseifnerSchedule::RabenseifnerSchedule(const ScheduleArgs& args) : P2PSchedule(args) {}

void RabenseifnerSchedule::Start() {
  const std::size_t bytes = Bytes(args_.payload.count);
  pof2_ = 1;
  while (pof2_ * 2 <= size_) pof2_ *= 2;
  rem_ = size_ - pof2_;
  mask_ = 1;
  lo_ = 0;
  hi_ = args_.payload.count;
  ranges_.clear();
  requests_.clear();
  finishing_ = args_.finisher && size_ > 1;
  if (size_ == 1) {
    step_ = Step::done;
    return;
  }
  if (rank_ < 2 * rem_) {
    step_ = Step::fold_in;
    if (rank_ % 2 == 0) {
      PostSend(Data(), bytes, rank_ + 1, 0);
      newrank_ = -1;
    } else {
      PostRecv(Scratch(bytes), bytes, rank_ - 1, 0);
      newrank_ = rank_ / 2;
    }
  } else {
    newrank_ = rank_ - rem_;
    step_ = Step::scatter;
    PostScatter();
  }
}

// Halving at distance mask (1, 2, 4, …): the partners hold the same range; the one whose
// mask bit is clear keeps the lower half. Each partial covers a contiguous range of ranks.
void RabenseifnerSchedule::PostScatter() {
  partner_ = ToRank(newrank_ ^ mask_);
  ranges_.push_back(lo_);
  ranges_.push_back(hi_);
  const std::size_t mid = lo_ + (hi_ - lo_) / 2;
  std::size_t send_lo = mid, send_hi = hi_;
  keep_lo_ = lo_;
  keep_hi_ = mid;
  if (newrank_ & mask_) {
    std::swap(send_lo, keep_lo_);
    std::swap(send_hi, keep_hi_);
  }
  PostRecv(Scratch(Bytes(keep_hi_ - keep_lo_)), Bytes(keep_hi_ - keep_lo_), partner_, 1);
  PostSend(Data() + Bytes(send_lo), Bytes(send_hi - send_lo), partner_, 1);
}

// The allgather undoes the halving in reverse: send the range held, receive the partner's
// half of the range held before that step, straight into place.
void RabenseifnerSchedule::PostGather() {
  partner_ = ToRank(newrank_ ^ mask_);
  const std::size_t before_hi = ranges_.back();
  ranges_.pop_back();
  const std::size_t before_lo = ranges_.back();
  ranges_.pop_back();
  // This rank kept the upper half in that step when its mask bit is set.
  const bool kept_upper = (newrank_ & mask_) != 0;
  const std::size_t other_lo = kept_upper ? before_lo : hi_;
  const std::size_t other_hi = kept_upper ? lo_ : before_hi;
  PostRecv(Gathered() + GatheredBytes(other_lo), GatheredBytes(other_hi - other_lo), partner_, 2);
  PostSend(Gathered() + GatheredBytes(lo_), GatheredBytes(hi_ - lo_), partner_, 2);
  lo_ = before_lo;
  hi_ = before_hi;
}

bool RabenseifnerSchedule::Progress() {
  const std::size_t count = args_.payload.count;
  for (;;) {
    if (step_ == Step::done) return true;
    if (!RequestsDone()) return false;
    switch (step_) {
      case Step::fold_in:
        if (newrank_ < 0) {  // even: wait for the result from rank + 1
          PostRecv(Gathered(), GatheredBytes(count), rank_ + 1, 3);
          step_ = Step::fold_out;
        } else {
          Combine(scratch_.data(), Data(), count);  // data = lower ∘ data
          step_ = Step::scatter;
          if (pof2_ > 1) {
            PostScatter();
          } else {
            if (finishing_) FinishRange(0, count);
            PostSend(Gathered(), GatheredBytes(count), rank_ - 1, 3);
            step_ = Step::fold_out;
          }
        }
        continue;
      case Step::scatter: {
        const std::size_t n = keep_hi_ - keep_lo_;
        unsigned char* mine = Data() + Bytes(keep_lo_);
        // The last halving completes this rank's range: finished in the same pass.
        const bool completes = finishing_ && args_.payload.commutative && (mask_ << 1) >= pof2_;
        if (completes) {
          CombineAndFinish(scratch_.data(), keep_lo_, n);
        } else if (partner_ < rank_ || args_.payload.commutative) {
          Combine(scratch_.data(), mine, n);  // mine = partner ∘ mine
        } else {
          Combine(mine, scratch_.data(), n);  // scratch = mine ∘ partner
          if (n) std::memcpy(mine, scratch_.data(), Bytes(n));
        }
        lo_ = keep_lo_;
        hi_ = keep_hi_;
        mask_ <<= 1;
        if (mask_ < pof2_) {
          PostScatter();
        } else {  // this rank's range is complete: finished here, gathered finished
          if (finishing_ && !completes) FinishRange(lo_, hi_ - lo_);
          step_ = Step::gather;
          mask_ = pof2_ >> 1;
          PostGather();
        }
        continue;
      }
      case Step::gather:
        mask_ >>= 1;
        if (mask_ > 0) {
          PostGather();
        } else if (rank_ < 2 * rem_) {  // odd: hand the result to the folded even rank
          PostSend(Gathered(), GatheredBytes(count), rank_ - 1, 3);
          step_ = Step::fold_out;
        } else {
          step_ = Step::done;
        }
        continue;
      case Step::fold_out:
        step_ = Step::done;
        continue;
      case Step::done:
        return true;
    }
  }
}

}  // namespace tributary::detail
