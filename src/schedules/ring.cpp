#include "schedules/ring.hpp"

#include <algorithm>
#include <cstring>

#include "tributary/errors.hpp"

namespace tributary::detail {

// Ring. Tags: +0 reduce-scatter, +1 allgather.

RingSchedule::RingSchedule(const ScheduleArgs& args) : P2PSchedule(args) {
  for (std::size_t i = 0; i < kWindow; ++i) recv_[i] = send_[i] = MPI_REQUEST_NULL;
  Track(recv_, kWindow);
  Track(send_, kWindow);
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
      std::memcpy(
          static_cast<unsigned char*>(args_.result) + block * static_cast<std::size_t>(rank_),
          args_.data, block);
    gathering_ = true;
    if (size_ > 1) PostGatherStep();
    return;
  }
  if (size_ == 1) return;
  const std::size_t max_chunk =
      (args_.payload.count + static_cast<std::size_t>(size_) - 1) / static_cast<std::size_t>(size_);
  seg_elems_ =
      std::min(std::max<std::size_t>(1, max_chunk),
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
void RingSchedule::ItemRange(std::size_t k, bool receive, std::size_t* begin,
                             std::size_t* n) const {
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

}  // namespace tributary::detail
