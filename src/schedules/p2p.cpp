#include "schedules/p2p.hpp"

#include <algorithm>
#include <cstring>

#include "tributary/errors.hpp"

namespace tributary::detail {

namespace {
// Frees the requests of a schedule destroyed in flight (the reduction layer never does
// that; if it happens anyway they are released rather than leaked).
void FreeAll(MPI_Request* requests, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i)
    if (requests[i] != MPI_REQUEST_NULL) MPI_Request_free(&requests[i]);
}
bool AllNull(const MPI_Request* requests, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i)
    if (requests[i] != MPI_REQUEST_NULL) return false;
  return true;
}
}  // namespace

P2PSchedule::P2PSchedule(const ScheduleArgs& args) : args_(args) {
  CheckMpi(MPI_Comm_rank(args_.comm, &rank_), "MPI_Comm_rank");
  CheckMpi(MPI_Comm_size(args_.comm, &size_), "MPI_Comm_size");
  requests_.reserve(32);
}

P2PSchedule::~P2PSchedule() { FreeAll(requests_.data(), requests_.size()); }

bool P2PSchedule::Rearm(const ScheduleArgs& args) {
  if (!AllNull(requests_.data(), requests_.size())) return false;
  if (args.comm != args_.comm || args.params.node_aware != args_.params.node_aware) return false;
  args_ = args;
  requests_.clear();
  return true;
}

void P2PSchedule::FinishRange(std::size_t lo, std::size_t n) const {
  const Finisher& f = args_.finisher;
  if (n) f.fn(f.state, Data() + Bytes(lo), static_cast<unsigned char*>(f.out) + f.out_size * lo, lo, n);
}

void P2PSchedule::CombineAndFinish(const void* in, std::size_t lo, std::size_t n) const {
  const Finisher& f = args_.finisher;
  if (n == 0) return;
  if (f.combine_fn &&
      f.combine_fn(f.state, in, Data() + Bytes(lo), static_cast<unsigned char*>(f.out) + f.out_size * lo, lo, n))
    return;
  Combine(in, Data() + Bytes(lo), n);
  FinishRange(lo, n);
}

unsigned char* P2PSchedule::Scratch(std::size_t bytes) {
  if (scratch_.size() < bytes) scratch_.resize(bytes);
  return scratch_.data();
}

void P2PSchedule::Combine(const void* in, void* inout, std::size_t n) const {
  if (n) args_.payload.combine(args_.payload.combine_state, in, inout, n);
}

void P2PSchedule::CombineInto(unsigned char** acc, unsigned char** other, std::size_t n) const {
  if (args_.payload.commutative) {
    Combine(*other, *acc, n);  // acc = other ∘ acc = acc ∘ other
  } else {
    Combine(*acc, *other, n);  // other = acc ∘ other
    std::swap(*acc, *other);
  }
}

void P2PSchedule::PostSend(const void* buf, std::size_t bytes, int dest, int tag_offset,
                           MPI_Request* request) {
  if (!request) {
    requests_.push_back(MPI_REQUEST_NULL);
    request = &requests_.back();
  }
  CheckMpi(MPI_Isend(buf, static_cast<int>(bytes), MPI_BYTE, dest, args_.tag + tag_offset,
                     args_.comm, request),
           "MPI_Isend");
}

void P2PSchedule::PostRecv(void* buf, std::size_t bytes, int source, int tag_offset,
                           MPI_Request* request) {
  if (!request) {
    requests_.push_back(MPI_REQUEST_NULL);
    request = &requests_.back();
  }
  CheckMpi(MPI_Irecv(buf, static_cast<int>(bytes), MPI_BYTE, source, args_.tag + tag_offset,
                     args_.comm, request),
           "MPI_Irecv");
}

bool P2PSchedule::RequestsDone() {
  if (requests_.empty()) return true;
  int done = 0;
  CheckMpi(MPI_Testall(static_cast<int>(requests_.size()), requests_.data(), &done,
                       MPI_STATUSES_IGNORE),
           "MPI_Testall");
  if (done) requests_.clear();
  return done != 0;
}

bool P2PSchedule::Done(MPI_Request* request) {
  if (*request == MPI_REQUEST_NULL) return true;
  int done = 0;
  CheckMpi(MPI_Test(request, &done, MPI_STATUS_IGNORE), "MPI_Test");
  return done != 0;
}

// ---------------------------------------------------------------------------------------
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
    for (long long j = 1; j < radix && vrank + j * m < size; ++j) children.push_back(real(vrank + j * m));
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
      radix_(kind == ScheduleKind::knomial ? args.params.radix : 2),
      phases_(phases ? phases
                     : (args.collective == Collective::allreduce ? kReduce | kBroadcast : kReduce)) {
  if (radix_ < 2) throw UsageError("ScheduleParams::radix must be at least 2");
}

void KnomialSchedule::Start() {
  const std::size_t bytes = Bytes(args_.payload.count);
  // A commutative reduce is rooted at its root; otherwise the tree is rooted at rank 0, so
  // that subtrees are rank ranges combined in rank order (and a root other than 0 gets the
  // result forwarded). A broadcast alone starts at the root.
  if (!(phases_ & kReduce))
    base_ = args_.root;
  else if (args_.collective == Collective::reduce && args_.payload.commutative)
    base_ = args_.root;
  else
    base_ = 0;
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
      if (input_ && c == begin) {  // the first level with children (input_ is used up there)
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

// ---------------------------------------------------------------------------------------
// Pipelined chain reduce. Tags: +0 along the chain, +1 rank 0 to a root other than 0.

PipelinedTreeSchedule::PipelinedTreeSchedule(const ScheduleArgs& args) : P2PSchedule(args) {
  for (std::size_t i = 0; i < kWindow; ++i) recv_[i] = send_[i] = sink_[i] = MPI_REQUEST_NULL;
}

PipelinedTreeSchedule::~PipelinedTreeSchedule() {
  FreeAll(recv_, kWindow);
  FreeAll(send_, kWindow);
  FreeAll(sink_, kWindow);
}

bool PipelinedTreeSchedule::Rearm(const ScheduleArgs& args) {
  if (!AllNull(recv_, kWindow) || !AllNull(send_, kWindow) || !AllNull(sink_, kWindow))
    return false;
  return P2PSchedule::Rearm(args);
}

bool PipelinedTreeSchedule::AllIdle(const MPI_Request* requests) {
  for (std::size_t i = 0; i < kWindow; ++i)
    if (!Done(const_cast<MPI_Request*>(&requests[i]))) return false;
  return true;
}

void PipelinedTreeSchedule::Start() {
  const int base = args_.payload.commutative ? args_.root : 0;
  const KnomialTree chain = KnomialTree::Chain(rank_, size_, base);
  child_ = chain.children.empty() ? -1 : chain.children[0];
  up_ = chain.parent;
  up_tag_ = 0;
  sink_from_ = -1;
  if (base != args_.root) {  // non-commutative, root ≠ 0: rank 0 forwards to the root
    if (rank_ == 0) {
      up_ = args_.root;
      up_tag_ = 1;
    } else if (rank_ == args_.root) {
      sink_from_ = 0;
    }
  }
  seg_elems_ = std::max<std::size_t>(
      1, args_.params.segment_bytes / std::max<std::size_t>(1, args_.payload.elem_size));
  nseg_ = std::max<std::size_t>(1, (args_.payload.count + seg_elems_ - 1) / seg_elems_);
  posted_ = combined_ = sunk_posted_ = sunk_ = 0;
  // A separate contribution (ScheduleArgs::input) is taken as it is by the end of the chain
  // that holds the result: the child's segments arrive in Data() and combine with the
  // input there. Anywhere else it is copied into Data() first.
  input_ = nullptr;
  if (args_.input) {
    if (rank_ == args_.root && up_ < 0 && child_ >= 0 && sink_from_ < 0)
      input_ = static_cast<const unsigned char*>(args_.input);
    else if (args_.payload.count)
      std::memcpy(Data(), args_.input, Bytes(args_.payload.count));
  }
  if (size_ == 1) {
    combined_ = nseg_;
    return;
  }
  if (child_ >= 0 && !input_) Scratch(Bytes(seg_elems_) * kWindow);
}

bool PipelinedTreeSchedule::Progress() {
  if (size_ == 1) return true;
  const std::size_t window = std::min(kWindow, nseg_);
  for (bool moved = true; moved;) {
    moved = false;
    // Receives from the child, at most `window` segments ahead of the combine; a slot is
    // reused once the send of the segment it held (non-commutative: sent from the slot)
    // completed.
    while (child_ >= 0 && posted_ < nseg_ && posted_ < combined_ + window &&
           Done(&send_[posted_ % kWindow])) {
      unsigned char* into = input_ ? Data() + Bytes(SegBegin(posted_)) : SlotBuf(posted_);
      PostRecv(into, Bytes(SegCount(posted_)), child_, 0, &recv_[posted_ % kWindow]);
      ++posted_;
      moved = true;
    }
    // Combine in segment order: this rank's segment ∘ the child's (higher ranks).
    while (combined_ < nseg_) {
      const std::size_t s = combined_, slot = s % kWindow;
      if (child_ >= 0 && (s >= posted_ || !Done(&recv_[slot]))) break;
      if (up_ >= 0 && !Done(&send_[slot])) break;
      unsigned char* mine = Data() + Bytes(SegBegin(s));
      unsigned char* result = mine;
      if (input_) {
        Combine(input_ + Bytes(SegBegin(s)), mine, SegCount(s));  // mine = input ∘ child's
      } else if (child_ >= 0) {
        unsigned char* other = SlotBuf(s);
        CombineInto(&result, &other, SegCount(s));
      }
      if (up_ >= 0)
        PostSend(result, Bytes(SegCount(s)), up_, up_tag_, &send_[slot]);
      else if (result != mine)
        std::memcpy(mine, result, Bytes(SegCount(s)));
      ++combined_;
      moved = true;
    }
  }
  if (combined_ < nseg_ || !AllIdle(send_)) return false;
  if (sink_from_ < 0) return true;
  // The root (not rank 0, non-commutative): its chain part is over, so its data may now
  // receive the result, segment by segment, from rank 0.
  for (;;) {
    while (sunk_ < sunk_posted_ && Done(&sink_[sunk_ % kWindow])) ++sunk_;
    if (sunk_ == nseg_) return true;
    if (sunk_posted_ < nseg_ && sunk_posted_ < sunk_ + kWindow) {
      PostRecv(Data() + Bytes(SegBegin(sunk_posted_)), Bytes(SegCount(sunk_posted_)), sink_from_,
               1, &sink_[sunk_posted_ % kWindow]);
      ++sunk_posted_;
      continue;
    }
    return false;
  }
}

// ---------------------------------------------------------------------------------------
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
        } else if (rank_ < 2 * rem_) {  // odd: hand the result to the folded even rank
          PostSend(all, bytes, rank_ - 1, 2);
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

// ---------------------------------------------------------------------------------------
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

// ---------------------------------------------------------------------------------------
// Ring. Tags: +0 reduce-scatter, +1 allgather.

RingSchedule::RingSchedule(const ScheduleArgs& args) : P2PSchedule(args) {
  for (std::size_t i = 0; i < kWindow; ++i) recv_[i] = send_[i] = MPI_REQUEST_NULL;
}

RingSchedule::~RingSchedule() {
  FreeAll(recv_, kWindow);
  FreeAll(send_, kWindow);
}

bool RingSchedule::Rearm(const ScheduleArgs& args) {
  if (!AllNull(recv_, kWindow) || !AllNull(send_, kWindow)) return false;
  return P2PSchedule::Rearm(args);
}

std::size_t RingSchedule::ChunkBegin(int chunk) const {
  return args_.payload.count * static_cast<std::size_t>(chunk) / static_cast<std::size_t>(size_);
}

void RingSchedule::Start() {
  step_ = 0;
  posted_ = combined_ = 0;
  gathering_ = false;
  requests_.clear();
  finishing_ = args_.finisher && args_.collective == Collective::allreduce && size_ > 1;
  if (args_.collective == Collective::allgather) {
    const std::size_t block = Bytes(args_.payload.count);
    if (block)
      std::memcpy(static_cast<unsigned char*>(args_.result) + block * static_cast<std::size_t>(rank_),
                  args_.data, block);
    gathering_ = true;
    if (size_ > 1) PostGatherStep();
    return;
  }
  if (size_ == 1) return;
  const std::size_t max_chunk =
      (args_.payload.count + static_cast<std::size_t>(size_) - 1) / static_cast<std::size_t>(size_);
  seg_elems_ = std::min(std::max<std::size_t>(1, max_chunk),
                        std::max<std::size_t>(1, args_.params.segment_bytes /
                                                     std::max<std::size_t>(1, args_.payload.elem_size)));
  nseg_ = std::max<std::size_t>(1, (max_chunk + seg_elems_ - 1) / seg_elems_);
  items_ = nseg_ * static_cast<std::size_t>(size_ - 1);
  // A window no longer than one step: item k sends what item k − nseg combined.
  window_ = std::min(kWindow, nseg_);
  Scratch(Bytes(seg_elems_) * window_);
}

// Step s = k / nseg, segment j = k % nseg: send segment j of chunk (rank − s), receive
// segment j of chunk (rank − s − 1). Items are posted in k order on every rank, so the
// messages between two neighbours match in that order.
void RingSchedule::ItemRange(std::size_t k, bool receive, std::size_t* begin, std::size_t* n) const {
  const int s = static_cast<int>(k / nseg_);
  const std::size_t j = k % nseg_;
  const int chunk = Mod(rank_ - s - (receive ? 1 : 0));
  const std::size_t lo = ChunkBegin(chunk), hi = ChunkBegin(chunk + 1);
  *begin = std::min(hi, lo + j * seg_elems_);
  *n = std::min(hi, *begin + seg_elems_) - *begin;
}

void RingSchedule::PostItem(std::size_t k) {
  const int right = (rank_ + 1) % size_, left = (rank_ - 1 + size_) % size_;
  const std::size_t slot = k % window_;
  std::size_t begin = 0, n = 0;
  ItemRange(k, true, &begin, &n);
  PostRecv(scratch_.data() + Bytes(seg_elems_) * slot, Bytes(n), left, 0, &recv_[slot]);
  ItemRange(k, false, &begin, &n);
  PostSend(Data() + Bytes(begin), Bytes(n), right, 0, &send_[slot]);
}

void RingSchedule::PostGatherStep() {
  const int right = (rank_ + 1) % size_, left = (rank_ - 1 + size_) % size_;
  if (args_.collective == Collective::allgather) {
    const std::size_t block = Bytes(args_.payload.count);
    auto* result = static_cast<unsigned char*>(args_.result);
    const int send = Mod(rank_ - step_), recv = Mod(rank_ - step_ - 1);
    PostRecv(result + block * static_cast<std::size_t>(recv), block, left, 1);
    PostSend(result + block * static_cast<std::size_t>(send), block, right, 1);
    return;
  }
  // Allgather of the completed chunks, straight into place.
  const int send = Mod(rank_ + 1 - step_), recv = Mod(rank_ - step_);
  PostRecv(Gathered() + GatheredBytes(ChunkBegin(recv)), GatheredBytes(ChunkSize(recv)), left, 1);
  PostSend(Gathered() + GatheredBytes(ChunkBegin(send)), GatheredBytes(ChunkSize(send)), right, 1);
}

bool RingSchedule::Progress() {
  if (size_ == 1) return true;
  if (!gathering_) {
    // Reduce-scatter, item by item, with up to window_ items in flight. Slot k % window is
    // free once item k − window is combined and its send has completed.
    for (;;) {
      while (posted_ < items_ && posted_ < combined_ + window_ && Done(&send_[posted_ % window_]))
        PostItem(posted_++);
      if (combined_ == items_) break;
      const std::size_t slot = combined_ % window_;
      if (combined_ >= posted_ || !Done(&recv_[slot])) return false;
      std::size_t begin = 0, n = 0;
      ItemRange(combined_, true, &begin, &n);
      if (finishing_ && combined_ >= items_ - nseg_)  // the last step completes this rank's chunk
        CombineAndFinish(scratch_.data() + Bytes(seg_elems_) * slot, begin, n);
      else
        Combine(scratch_.data() + Bytes(seg_elems_) * slot, Data() + Bytes(begin), n);
      ++combined_;
    }
    // Every reduce-scatter send must be done before the allgather overwrites chunks.
    for (std::size_t i = 0; i < window_; ++i)
      if (!Done(&send_[i])) return false;
    gathering_ = true;
    step_ = 0;
    PostGatherStep();  // of completed (and, finishing, finished) chunks
  }
  for (;;) {
    if (step_ >= size_ - 1) return true;
    if (!RequestsDone()) return false;
    if (++step_ < size_ - 1) PostGatherStep();
  }
}

// ---------------------------------------------------------------------------------------
// Node-aware two-level form. Within the node: the intra schedules' tags, and +4 for the
// hand-over to a root that is not a leader. Among the leaders: the inner schedule's tags
// on the leaders' communicator.

NodeAwareSchedule::NodeAwareSchedule(ScheduleKind inner, const ScheduleArgs& args)
    : inner_(inner), args_(args) {
  CheckMpi(MPI_Comm_rank(args_.comm, &rank_), "MPI_Comm_rank");
}

bool NodeAwareSchedule::Rearm(const ScheduleArgs& args) {
  if (step_ != Step::done || args.comm != args_.comm || !args.params.node_aware) return false;
  args_ = args;
  return true;
}

namespace {
// Within the node: rooted at the leader (rank 0 of both node communicators), in hardware
// order for a commutative operator where the layout has one.
ScheduleArgs IntraArgs(const ScheduleArgs& args) {
  ScheduleArgs intra = args;
  intra.comm = args.payload.commutative && args.nodes->by_hardware != MPI_COMM_NULL ? args.nodes->by_hardware
                                                                                    : args.nodes->node;
  intra.nodes = nullptr;
  intra.root = 0;
  intra.params.node_aware = false;
  intra.finisher = Finisher{};  // the reduction layer finishes after the node's broadcast
  return intra;
}
}  // namespace

void NodeAwareSchedule::Start() {
  ScheduleArgs intra = IntraArgs(args_);
  intra.collective = Collective::reduce;
  if (!intra_reduce_ || !intra_reduce_->Rearm(intra))
    intra_reduce_ = std::make_unique<KnomialSchedule>(intra, ScheduleKind::binomial,
                                                      KnomialSchedule::kReduce);
  step_ = Step::intra_reduce;
  intra_reduce_->Start();
}

void NodeAwareSchedule::StartLeaders() {
  const NodeLayout& nodes = *args_.nodes;
  step_ = Step::leaders;
  if (nodes.leaders == MPI_COMM_NULL) return;
  ScheduleArgs among = args_;
  among.comm = nodes.leaders;
  among.nodes = nullptr;
  among.params.node_aware = false;
  among.finisher = Finisher{};
  if (among.collective == Collective::reduce)
    among.root = nodes.node_of[static_cast<std::size_t>(args_.root)];
  if (!leaders_ || leaders_->Kind() != inner_ || !leaders_->Rearm(among))
    leaders_ = MakeSchedule(inner_, among);
  leaders_->Start();
}

void NodeAwareSchedule::AfterLeaders() {
  const NodeLayout& nodes = *args_.nodes;
  if (args_.collective == Collective::allreduce) {
    ScheduleArgs intra = IntraArgs(args_);
    if (!intra_bcast_ || !intra_bcast_->Rearm(intra))
      intra_bcast_ = std::make_unique<KnomialSchedule>(intra, ScheduleKind::binomial,
                                                       KnomialSchedule::kBroadcast);
    step_ = Step::intra_bcast;
    intra_bcast_->Start();
    return;
  }
  // Reduce: the leader of the root's node holds the result; a root that is not a leader
  // gets it from there.
  const auto root = static_cast<std::size_t>(args_.root);
  step_ = Step::done;
  if (nodes.local_of[root] == 0 || nodes.node_of[root] != nodes.node_of[static_cast<std::size_t>(rank_)])
    return;
  const std::size_t bytes = args_.payload.count * args_.payload.elem_size;
  if (rank_ == args_.root)
    CheckMpi(MPI_Irecv(args_.data, static_cast<int>(bytes), MPI_BYTE, 0, args_.tag + 4, nodes.node,
                       &deliver_),
             "MPI_Irecv");
  else if (nodes.leaders != MPI_COMM_NULL)
    CheckMpi(MPI_Isend(args_.data, static_cast<int>(bytes), MPI_BYTE, nodes.local_of[root],
                       args_.tag + 4, nodes.node, &deliver_),
             "MPI_Isend");
  else
    return;
  step_ = Step::deliver;
}

bool NodeAwareSchedule::Progress() {
  for (;;) {
    switch (step_) {
      case Step::done:
        return true;
      case Step::intra_reduce:
        if (!intra_reduce_->Progress()) return false;
        StartLeaders();
        continue;
      case Step::leaders:
        if (args_.nodes->leaders != MPI_COMM_NULL && !leaders_->Progress()) return false;
        AfterLeaders();
        continue;
      case Step::deliver: {
        int done = 0;
        CheckMpi(MPI_Test(&deliver_, &done, MPI_STATUS_IGNORE), "MPI_Test");
        if (!done) return false;
        step_ = Step::done;
        continue;
      }
      case Step::intra_bcast:
        if (!intra_bcast_->Progress()) return false;
        step_ = Step::done;
        continue;
    }
  }
}

}  // namespace tributary::detail
