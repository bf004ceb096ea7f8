#include "schedules/pipelined_tree.hpp"

#include <algorithm>
#include <cstring>

#include "schedules/knomial.hpp"
#include "tributary/errors.hpp"

namespace tributary::detail {

// Pipelined chain reduce. Tags: +0 along the chain, +1 rank 0 to a root other than 0.

PipelinedTreeSchedule::PipelinedTreeSchedule(const ScheduleArgs& args) : P2PSchedule(args) {
  for (std::size_t i = 0; i < kWindow; ++i) recv_[i] = send_[i] = sink_[i] = MPI_REQUEST_NULL;
  Track(recv_, kWindow);
  Track(send_, kWindow);
  Track(sink_, kWindow);
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
      PostRecv(Data() + Bytes(SegBegin(sunk_posted_)), Bytes(SegCount(sunk_posted_)), sink_from_, 1,
               &sink_[sunk_posted_ % kWindow]);
      ++sunk_posted_;
      continue;
    }
    return false;
  }
}

}  // namespace tributary::detail
