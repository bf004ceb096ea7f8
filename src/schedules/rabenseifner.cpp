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
  radix_ = 2;
  while (radix_ * 2 <= args_.params.radix) radix_ *= 2;
  stride_ = 1;
  lo_ = 0;
  hi_ = args_.payload.count;
  rounds_.clear();
  requests_.clear();
  finishing_ = args_.finisher && size_ > 1;
  if (size_ == 1) {
    step_ = Step::done;
    return;
  }
  newrank_ = FoldIn(Data(), Scratch(bytes), bytes);
  if (InFold()) {
    step_ = Step::fold_in;
  } else {
    step_ = Step::scatter;
    PostScatter();
  }
}

// A group of the round: the ranks that differ from this one in the digit at `stride` only.
// They hold the same range; member j keeps part j and receives every other member's part j.
void RabenseifnerSchedule::PostScatter() {
  const Round r{lo_, hi_, stride_, std::min(radix_, pof2_ / stride_)};
  rounds_.push_back(r);
  const int digit = Digit(r);
  const std::size_t keep = Part(r, digit + 1) - Part(r, digit);
  slot_bytes_ = Bytes((hi_ - lo_) / static_cast<std::size_t>(r.group) + 1);
  Scratch(slot_bytes_ * static_cast<std::size_t>(r.group));
  // Starting after this rank's digit spreads the first messages of a round over the group.
  for (int i = 1; i < r.group; ++i) {
    const int j = (digit + i) % r.group;
    const int member = Member(r, j);
    PostRecv(Slot(j), Bytes(keep), member, 1);
    PostSend(Data() + Bytes(Part(r, j)), Bytes(Part(r, j + 1) - Part(r, j)), member, 1);
  }
  lo_ = Part(r, digit);
  hi_ = Part(r, digit + 1);
}

// This rank's part after the round: part_0 ∘ part_1 ∘ … ∘ part_(group-1), its own partial
// at its digit. The last round of a finishing commutative generation finishes in its last
// combine.
void RabenseifnerSchedule::CombineRound() {
  const Round& r = rounds_.back();
  const int digit = Digit(r);
  const std::size_t n = hi_ - lo_;
  unsigned char* mine = Data() + Bytes(lo_);
  const bool last = stride_ * r.group >= pof2_;
  if (args_.payload.commutative) {
    const bool finish = finishing_ && last;
    const int final_j = digit == r.group - 1 ? r.group - 2 : r.group - 1;
    for (int j = 0; j < r.group; ++j)
      if (j != digit && !(finish && j == final_j))
        Combine(Slot(j), mine, n);  // mine = theirs ∘ mine
    if (finish) CombineAndFinish(Slot(final_j), lo_, n);
    return;
  }
  // Right to left, so that each combine puts the lower ranks' operand first.
  unsigned char* acc = digit == r.group - 1 ? mine : Slot(r.group - 1);
  for (int j = r.group - 2; j >= 0; --j) Combine(j == digit ? mine : Slot(j), acc, n);
  if (acc != mine && n) std::memcpy(mine, acc, Bytes(n));
  if (finishing_ && last) FinishRange(lo_, n);
}

// The allgather undoes the reduce-scatter rounds in reverse: send the range held to every
// member of that round's group, receive theirs straight into place.
void RabenseifnerSchedule::PostGather() {
  const Round r = rounds_.back();
  rounds_.pop_back();
  const int digit = Digit(r);
  for (int i = 1; i < r.group; ++i) {
    const int j = (digit + i) % r.group;
    const int member = Member(r, j);
    PostRecv(Gathered() + GatheredBytes(Part(r, j)), GatheredBytes(Part(r, j + 1) - Part(r, j)),
             member, 2);
    PostSend(Gathered() + GatheredBytes(lo_), GatheredBytes(hi_ - lo_), member, 2);
  }
  lo_ = r.lo;
  hi_ = r.hi;
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
      case Step::scatter:
        CombineRound();
        stride_ *= rounds_.back().group;
        if (stride_ < pof2_) {
          PostScatter();
        } else {  // this rank's range is complete and finished: gather it
          step_ = Step::gather;
          PostGather();
        }
        continue;
      case Step::gather:
        if (!rounds_.empty()) {
          PostGather();
        } else {  // an odd rank hands the result to the even rank folded into it
          const bool odd = InFold();
          step_ = HandOver(odd, Gathered(), GatheredBytes(count), rank_ - 1, 3) ? Step::fold_out
                                                                                : Step::done;
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
