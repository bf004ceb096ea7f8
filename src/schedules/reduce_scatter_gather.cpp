#include "schedules/reduce_scatter_gather.hpp"

#include <cstring>

namespace tributary::detail {

// Tags: +0 fold-in, +1 reduce-scatter (RabenseifnerSchedule's), +2 gather, +3 hand-over to
// a root that folded in.

ReduceScatterGatherSchedule::ReduceScatterGatherSchedule(const ScheduleArgs& args)
    : RabenseifnerSchedule(args) {}

void ReduceScatterGatherSchedule::Start() {
  // A root's separate contribution: the data is scratch and receives the result.
  if (args_.input && args_.payload.count)
    std::memcpy(Data(), args_.input, Bytes(args_.payload.count));
  RabenseifnerSchedule::Start();  // the fold-in and the first reduce-scatter round
  // The gather moves combined elements; the reduction layer finishes the root's (a
  // Finisher, for exact sums, is not applied here).
  finishing_ = false;
  const int root = args_.root;
  target_ = root < 2 * rem_ ? root / 2 : root - rem_;
  collects_ = true;
}

bool ReduceScatterGatherSchedule::PostGatherToRoot() {
  const Round r = rounds_.back();
  rounds_.pop_back();
  const int collector = target_ / r.stride % r.group;
  if (Digit(r) != collector) {
    PostSend(Data() + Bytes(lo_), Bytes(hi_ - lo_), Member(r, collector), 2);
    collects_ = false;
    return false;
  }
  for (int j = 0; j < r.group; ++j)
    if (j != collector)
      PostRecv(Data() + Bytes(Part(r, j)), Bytes(Part(r, j + 1) - Part(r, j)), Member(r, j), 2);
  lo_ = r.lo;
  hi_ = r.hi;
  return true;
}

bool ReduceScatterGatherSchedule::Progress() {
  const std::size_t count = args_.payload.count;
  for (;;) {
    if (step_ == Step::done) return true;
    if (!RequestsDone()) return false;
    switch (step_) {
      case Step::fold_in:
        if (newrank_ < 0) {  // even, folded in: only a root waits, for the result
          if (rank_ == args_.root) {
            PostRecv(Data(), Bytes(count), rank_ + 1, 3);
            step_ = Step::fold_out;
          } else {
            step_ = Step::done;
          }
        } else {
          Combine(scratch_.data(), Data(), count);  // data = lower ∘ data
          step_ = Step::scatter;
          PostScatter();
        }
        continue;
      case Step::scatter:
        CombineRound();
        stride_ *= rounds_.back().group;
        if (stride_ < pof2_) {
          PostScatter();
        } else {
          step_ = Step::gather;
          PostGatherToRoot();
        }
        continue;
      case Step::gather:
        if (collects_ && !rounds_.empty()) {
          PostGatherToRoot();
        } else {  // the root folded in: hand it the result
          const bool hand = collects_ && rank_ != args_.root;
          step_ = HandOver(hand, Data(), Bytes(count), args_.root, 3) ? Step::fold_out : Step::done;
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
