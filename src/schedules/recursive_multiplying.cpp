#include "schedules/recursive_multiplying.hpp"

#include <cstring>

#include "tributary/errors.hpp"

namespace tributary::detail {

// Recursive multiplying. Tags: +0 fold-in, +1 exchange, +2 fold-out. Two ranks share a
// group in one round at most (their newranks differ in one digit), so one exchange tag
// serves every round, as in recursive doubling.

RecursiveMultiplyingSchedule::RecursiveMultiplyingSchedule(const ScheduleArgs& args)
    : P2PSchedule(args) {}

// Where group member `member`'s value is: this rank's own in the data, the others' in the
// scratch buffer in member order (this rank's slot skipped).
unsigned char* RecursiveMultiplyingSchedule::Slot(int member) {
  if (member == digit_) return Data();
  const int index = member < digit_ ? member : member - 1;
  return scratch_.data() + Bytes(args_.payload.count) * static_cast<std::size_t>(index);
}

void RecursiveMultiplyingSchedule::PostExchange() {
  const int group = GroupSize();
  const std::size_t bytes = Bytes(args_.payload.count);
  digit_ = (newrank_ / stride_) % group;
  const int base = newrank_ - digit_ * stride_;
  Scratch(bytes * static_cast<std::size_t>(group - 1));
  // Receives first: under SMPI the round's requests are tested in order (RequestsDone).
  for (int e = 0; e < group; ++e)
    if (e != digit_) PostRecv(Slot(e), bytes, CoreRank(base + e * stride_), 1);
  for (int e = 0; e < group; ++e)
    if (e != digit_) PostSend(Data(), bytes, CoreRank(base + e * stride_), 1);
}

// The group's values combined in member order, x0 ∘ x1 ∘ …, into the data: each step
// writes into the higher operand's slot (Combine: inout = in ∘ inout).
void RecursiveMultiplyingSchedule::CombineGroup() {
  const std::size_t count = args_.payload.count;
  unsigned char* acc = Slot(0);
  for (int e = 1; e < GroupSize(); ++e) {
    unsigned char* next = Slot(e);
    Combine(acc, next, count);
    acc = next;
  }
  if (acc != Data() && Bytes(count)) std::memcpy(Data(), acc, Bytes(count));
}

void RecursiveMultiplyingSchedule::Start() {
  ResetRequests();
  if (args_.params.radix < 2) throw UsageError("ScheduleParams::radix must be at least 2");
  core_ = MultiplyingCore(size_, args_.params.radix);  // per generation: a rearm may change it
  rem_ = core_.rem;
  round_ = 0;
  stride_ = 1;
  digit_ = 0;
  if (size_ == 1) {
    step_ = Step::done;
    return;
  }
  const std::size_t bytes = Bytes(args_.payload.count);
  newrank_ = FoldIn(Data(), Scratch(bytes), bytes);
  if (InFold()) {
    step_ = Step::fold_in;
  } else {
    step_ = Step::exchange;
    PostExchange();
  }
}

bool RecursiveMultiplyingSchedule::Progress() {
  const std::size_t count = args_.payload.count;
  const std::size_t bytes = Bytes(count);
  for (;;) {
    if (step_ == Step::done) return true;
    if (!RequestsDone()) return false;
    switch (step_) {
      case Step::fold_in:
        if (newrank_ < 0) {  // even: wait for the result from rank + 1
          PostRecv(Data(), bytes, rank_ + 1, 2);
          step_ = Step::fold_out;
        } else {
          Combine(scratch_.data(), Data(), count);  // data = lower ∘ data
          step_ = Step::exchange;
          PostExchange();
        }
        continue;
      case Step::exchange: {
        const int group = GroupSize();
        CombineGroup();
        stride_ *= group;
        ++round_;
        if (round_ < core_.Rounds()) {
          PostExchange();
        } else {  // an odd rank hands the result to the even rank folded into it
          step_ = HandOver(InFold(), Data(), bytes, rank_ - 1, 2) ? Step::fold_out : Step::done;
        }
        continue;
      }
      case Step::fold_out:
        step_ = Step::done;
        continue;
      case Step::done:
        return true;
    }
  }
}

}  // namespace tributary::detail
