#include "schedules/knomial.hpp"

#include <algorithm>
#include <cstring>

#include "tributary/errors.hpp"

namespace tributary::detail {

// k-nomial tree

KnomialTree::KnomialTree(int rank, int size, int radix, int base) {
  vrank = ((rank - base) % size + size) % size;
  auto real = [&](long long v) { return static_cast<int>((v + base) % size); };
  for (long long m = 1; m < size; m *= radix) {
    const long long span = m * radix;
    if (vrank % span) {
      parent = real(vrank - vrank % span);
      break;
    }
    for (long long j = 1; j < radix && vrank + j * m < size; ++j)
      children.push_back(real(vrank + j * m));
    level_end.push_back(static_cast<int>(children.size()));
  }
}

KnomialTree KnomialTree::Chain(int rank, int size, int base) {
  KnomialTree t;
  t.vrank = ((rank - base) % size + size) % size;
  if (t.vrank > 0) t.parent = (t.vrank - 1 + base) % size;
  if (t.vrank + 1 < size) t.children.push_back((t.vrank + 1 + base) % size);
  t.level_end.push_back(static_cast<int>(t.children.size()));
  return t;
}

// ---------------------------------------------------------------------------------------
// k-nomial reduce / broadcast. Tags: +0 reduce, +1 forward to the root, +2 broadcast.

KnomialSchedule::KnomialSchedule(const ScheduleArgs& args, ScheduleKind kind, int phases)
    : P2PSchedule(args),
      kind_(kind),
      phases_(phases
                  ? phases
                  : (args.collective == Collective::allreduce ? kReduce | kBroadcast : kReduce)) {}

void KnomialSchedule::Start() {
  const std::size_t bytes = Bytes(args_.payload.count);
  // Per generation: a rearmed schedule may carry another radix (the tree chooses per size).
  radix_ = kind_ == ScheduleKind::knomial ? args_.params.radix : 2;
  if (radix_ < 2) throw UsageError("ScheduleParams::radix must be at least 2");
  // A commutative reduce is rooted at its root; otherwise the tree is rooted at rank 0, so
  // that subtrees are rank ranges combined in rank order (and a root other than 0 gets the
  // result forwarded). A broadcast alone starts at the root.
  const bool at_root =
      !(phases_ & kReduce) || (args_.collective == Collective::reduce && args_.payload.commutative);
  base_ = at_root ? args_.root : 0;
  if (base_ != tree_base_ || radix_ != tree_radix_) {
    tree_ = KnomialTree(rank_, size_, radix_, base_);
    tree_base_ = base_;
    tree_radix_ = radix_;
  }
  acc_ = Data();
  free_.clear();
  pending_.clear();
  requests_.clear();
  level_ = 0;
  combined_ = 0;
  // A separate contribution (ScheduleArgs::input) is taken as it is only by the tree's root
  // with children: its first child's data arrives in Data() and combines with the input
  // there. Anywhere else it is copied into Data() first.
  input_ = nullptr;
  if (args_.input) {
    if ((phases_ & kReduce) && rank_ == base_ && !tree_.children.empty())
      input_ = static_cast<const unsigned char*>(args_.input);
    else if (bytes)
      std::memcpy(Data(), args_.input, bytes);
  }
  if (size_ == 1) {
    step_ = Step::done;
    return;
  }
  if (!(phases_ & kReduce)) {
    StartBroadcast();
    return;
  }
  const std::size_t slots = static_cast<std::size_t>(radix_ - 1);
  unsigned char* scratch = Scratch(bytes * slots);
  for (std::size_t i = 0; i < slots; ++i) free_.push_back(scratch + bytes * i);
  step_ = Step::reduce;
  PostReduceLevel();
}

// Posts the receives of the next level that has children; when none is left, the reduce
// part of this rank is over.
void KnomialSchedule::PostReduceLevel() {
  const std::size_t bytes = Bytes(args_.payload.count);
  while (level_ < tree_.level_end.size()) {
    const int begin = level_ ? tree_.level_end[level_ - 1] : 0, end = tree_.level_end[level_];
    if (begin == end) {
      ++level_;
      continue;
    }
    requests_.clear();
    pending_.clear();
    combined_ = 0;
    for (int c = begin; c < end; ++c) {
      if (input_ && c == begin) {    // the first level with children (input_ is used up there)
        pending_.push_back(Data());  // the first child's data lands where the result goes
      } else {
        pending_.push_back(free_.back());
        free_.pop_back();
      }
      PostRecv(pending_.back(), bytes, tree_.children[static_cast<std::size_t>(c)], 0);
    }
    return;
  }
  AfterReduce();
}

void KnomialSchedule::AfterReduce() {
  const std::size_t bytes = Bytes(args_.payload.count);
  requests_.clear();
  if (tree_.parent >= 0) {
    PostSend(acc_, bytes, tree_.parent, 0);
    step_ = Step::sent_up;
    return;
  }
  if (acc_ != Data() && bytes) std::memcpy(Data(), acc_, bytes);
  acc_ = Data();
  if (phases_ & kBroadcast) {
    StartBroadcast();
  } else if (args_.collective == Collective::reduce && rank_ != args_.root) {
    PostSend(Data(), bytes, args_.root, 1);  // rank 0 hands the result to the root
    step_ = Step::forward;
  } else {
    step_ = Step::done;
  }
}

void KnomialSchedule::StartBroadcast() {
  step_ = Step::broadcast;
  requests_.clear();
  if (tree_.parent >= 0)
    PostRecv(Data(), Bytes(args_.payload.count), tree_.parent, 2);
  else
    SendToChildren();
}

void KnomialSchedule::SendToChildren() {
  // The largest subtrees first: they have the longest way to go.
  for (std::size_t c = tree_.children.size(); c-- > 0;)
    PostSend(Data(), Bytes(args_.payload.count), tree_.children[c], 2);
  step_ = Step::finishing;
}

bool KnomialSchedule::Progress() {
  const std::size_t count = args_.payload.count;
  for (;;) {
    switch (step_) {
      case Step::done:
        return true;
      case Step::reduce:
        // Children combine in their order as soon as each one (and those before it) arrived.
        while (combined_ < pending_.size()) {
          if (!Done(&requests_[combined_])) return false;
          unsigned char* other = pending_[combined_];
          if (input_ && other == Data()) {
            Combine(input_, Data(), count);  // Data() = input ∘ first child
            input_ = nullptr;
          } else {
            CombineInto(&acc_, &other, count);
            free_.push_back(other);
          }
          ++combined_;
        }
        ++level_;
        PostReduceLevel();
        continue;
      case Step::sent_up:
        if (!RequestsDone()) return false;
        if (phases_ & kBroadcast) {
          StartBroadcast();
        } else if (args_.collective == Collective::reduce && rank_ == args_.root &&
                   base_ != args_.root) {
          PostRecv(Data(), Bytes(count), base_, 1);
          step_ = Step::forward;
        } else {
          step_ = Step::done;
        }
        continue;
      case Step::forward:
      case Step::finishing:
        if (!RequestsDone()) return false;
        step_ = Step::done;
        continue;
      case Step::broadcast:
        if (!RequestsDone()) return false;
        SendToChildren();
        continue;
    }
  }
}

}  // namespace tributary::detail
