#include "schedules/recursive_doubling.hpp"

#include <algorithm>
#include <cstring>

#include "tributary/errors.hpp"

namespace tributary::detail {

// Recursive doubling. Tags: +0 fold-in, +1 exchange, +2 fold-out.

RecursiveDoublingSchedule::RecursiveDoublingSchedule(const ScheduleArgs& args)
    : P2PSchedule(args) {}

void RecursiveDoublingSchedule::PostExchange() {
  partner_ = CoreRank(newrank_ ^ mask_);
  if (args_.collective == Collective::allgather) {
    // Both hold the blocks of a contiguous range of ranks: the newranks of their group.
    const std::size_t block = Bytes(args_.payload.count);
    const auto range = [&](int newrank, std::size_t* off, std::size_t* len) {
      const int first = newrank & ~(mask_ - 1), last = first + mask_ - 1;
      *off = block * static_cast<std::size_t>(FirstRank(first));
      *len = block * static_cast<std::size_t>(CoreRank(last) + 1 - FirstRank(first));
    };
    std::size_t off = 0, len = 0;
    range(newrank_ ^ mask_, &off, &len);
    PostRecv(Result() + off, len, partner_, 1);
    range(newrank_, &off, &len);
    PostSend(Result() + off, len, partner_, 1);
    return;
  }
  const std::size_t bytes = Bytes(args_.payload.count);
  PostRecv(Incoming(bytes), bytes, partner_, 1);
  PostSend(Mine(), bytes, partner_, 1);
}

// Where the partner's elements arrive: the scratch buffer, or with the data kept apart the
// one of the two that does not hold this rank's running value.
unsigned char* RecursiveDoublingSchedule::Incoming(std::size_t bytes) {
  if (!apart_) return Scratch(bytes);
  return acc_ == spare_[0] ? spare_[1] : spare_[0];
}

// The data kept apart: the running value becomes lower ∘ higher of it and `received`,
// written where the data is not. The first combine (the running value is still the data)
// writes into `received` as mine ∘ partner's: the operators this runs for (predefined MPI
// operators on predefined elements; Message::SignalsShort) give identical bits either way
// round.
void RecursiveDoublingSchedule::CombineIncoming(const unsigned char* received, bool partner_lower) {
  const std::size_t count = args_.payload.count;
  auto* in = const_cast<unsigned char*>(received);
  if (partner_lower && acc_ != Data()) {
    Combine(in, acc_, count);  // acc = partner ∘ acc
  } else {
    Combine(acc_, in, count);  // received = acc ∘ partner
    acc_ = in;
  }
}

// The data kept apart: the result reaches it once no rank has said it did not fit.
void RecursiveDoublingSchedule::Settle() {
  if (apart_ && !Silenced() && acc_ != Data() && Bytes(args_.payload.count))
    std::memcpy(Data(), acc_, Bytes(args_.payload.count));
}

void RecursiveDoublingSchedule::Start() {
  const bool gather = args_.collective == Collective::allgather;
  const std::size_t bytes = Bytes(args_.payload.count);
  pof2_ = 1;
  while (pof2_ * 2 <= size_) pof2_ *= 2;
  rem_ = size_ - pof2_;
  mask_ = 1;
  ResetRequests();
  apart_ = args_.missed != nullptr && !gather;
  if (apart_) {
    unsigned char* spare = Scratch(2 * bytes);
    spare_[0] = spare;
    spare_[1] = spare + bytes;
    acc_ = Data();
  }
  if (gather && bytes)
    std::memcpy(Result() + bytes * static_cast<std::size_t>(rank_), Data(), bytes);
  if (size_ == 1) {
    step_ = Step::done;
    return;
  }
  unsigned char* mine = gather ? Result() + bytes * static_cast<std::size_t>(rank_) : Data();
  // An odd rank that folds in receives its partner's block just before its own (allgather).
  unsigned char* incoming = !gather ? Incoming(bytes) : rank_ > 0 ? mine - bytes : nullptr;
  newrank_ = FoldIn(mine, incoming, bytes);
  if (InFold()) {
    step_ = Step::fold_in;
  } else {
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
          if (apart_)
            CombineIncoming(Incoming(bytes), true);
          else if (!gather)
            Combine(scratch_.data(), Data(), count);  // data = lower ∘ data
          if (pof2_ > 1) {
            step_ = Step::exchange;
            PostExchange();
          } else {
            PostSend(apart_ ? Mine() : all, bytes, rank_ - 1, 2);
            step_ = Step::fold_out;
          }
        }
        continue;
      case Step::exchange:
        if (apart_) {
          CombineIncoming(Incoming(bytes), partner_ < rank_);
        } else if (!gather) {
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
          step_ = HandOver(InFold(), apart_ ? Mine() : all, bytes, rank_ - 1, 2) ? Step::fold_out
                                                                                 : Step::done;
          if (step_ == Step::done) Settle();
        }
        continue;
      case Step::fold_out:
        Settle();
        step_ = Step::done;
        continue;
      case Step::done:
        return true;
    }
  }
}

}  // namespace tributary::detail
