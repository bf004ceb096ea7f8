#include "schedules/recursive_doubling.hpp"

#include <algorithm>
#include <cstring>

#include "tributary/errors.hpp"

namespace tributary::detail {

// Recursive doubling. Tags: +0 fold-in, +1 exchange, +2 fold-out.

RecursiveDoublingSchedule::RecursiveDoublingSchedule(const ScheduleArgs& args)
    : P2PSchedule(args) {}

void RecursiveDoublingSchedule::PostExchange() {
  partner_ = ToRank(newrank_ ^ mask_);
  if (args_.collective == Collective::allgather) {
    // Both hold the blocks of a contiguous range of ranks: the newranks of their group.
    const std::size_t block = Bytes(args_.payload.count);
    const auto range = [&](int newrank, std::size_t* off, std::size_t* len) {
      const int first = newrank & ~(mask_ - 1), last = first + mask_ - 1;
      *off = block * static_cast<std::size_t>(FirstRank(first));
      *len = block * static_cast<std::size_t>(ToRank(last) + 1 - FirstRank(first));
    };
    std::size_t off = 0, len = 0;
    range(newrank_ ^ mask_, &off, &len);
    PostRecv(Result() + off, len, partner_, 1);
    range(newrank_, &off, &len);
    PostSend(Result() + off, len, partner_, 1);
    return;
  }
  const std::size_t bytes = Bytes(args_.payload.count);
  PostRecv(Scratch(bytes), bytes, partner_, 1);
  PostSend(Data(), bytes, partner_, 1);
}

void RecursiveDoublingSchedule::Start() {
  const bool gather = args_.collective == Collective::allgather;
  const std::size_t bytes = Bytes(args_.payload.count);
  pof2_ = 1;
  while (pof2_ * 2 <= size_) pof2_ *= 2;
  rem_ = size_ - pof2_;
  mask_ = 1;
  requests_.clear();
  if (gather && bytes)
    std::memcpy(Result() + bytes * static_cast<std::size_t>(rank_), Data(), bytes);
  if (size_ == 1) {
    step_ = Step::done;
    return;
  }
  unsigned char* mine = gather ? Result() + bytes * static_cast<std::size_t>(rank_) : Data();
  if (rank_ < 2 * rem_) {
    step_ = Step::fold_in;
    if (rank_ % 2 == 0) {
      PostSend(mine, bytes, rank_ + 1, 0);
      newrank_ = -1;
    } else {
      PostRecv(gather ? mine - bytes : Scratch(bytes), bytes, rank_ - 1, 0);
      newrank_ = rank_ / 2;
    }
  } else {
    newrank_ = rank_ - rem_;
    step_ = Step::exchange;
    PostExchange();
  }
}

bool RecursiveDoublingSchedule::Progress() {
  const bool gather = args_.collective == Collective::allgather;
  const std::size_t count = args_.payload.count;
  const std::size_t bytes = gather ? Bytes(count) * static_cast<std::size_t>(size_) : Bytes(count);
  unsigned char* all = gather ? Result() : Data();
  for (;;) {
    if (step_ == Step::done) return true;
    if (!RequestsDone()) return false;
    switch (step_) {
      case Step::fold_in:
        if (newrank_ < 0) {  // even: wait for the result from rank + 1
          PostRecv(all, bytes, rank_ + 1, 2);
          step_ = Step::fold_out;
        } else {
          if (!gather) Combine(scratch_.data(), Data(), count);  // data = lower ∘ data
          if (pof2_ > 1) {
            step_ = Step::exchange;
            PostExchange();
          } else {
            PostSend(all, bytes, rank_ - 1, 2);
            step_ = Step::fold_out;
          }
        }
        continue;
      case Step::exchange:
        if (!gather) {
          if (partner_ < rank_) {
            Combine(scratch_.data(), Data(), count);  // data = partner ∘ data
          } else {
            Combine(Data(), scratch_.data(), count);  // scratch = data ∘ partner
            if (Bytes(count)) std::memcpy(Data(), scratch_.data(), Bytes(count));
          }
        }
        mask_ <<= 1;
        if (mask_ < pof2_) {
          PostExchange();
        } else {  // an odd rank hands the result to the even rank folded into it
          step_ =
              HandOver(rank_ < 2 * rem_, all, bytes, rank_ - 1, 2) ? Step::fold_out : Step::done;
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
