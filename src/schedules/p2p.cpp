#include "schedules/p2p.hpp"

#include <algorithm>
#include <cstring>

#include "tributary/errors.hpp"

namespace tributary::detail {

P2PSchedule::P2PSchedule(const ScheduleArgs& args) : args_(args) {
  CheckMpi(MPI_Comm_rank(args_.comm, &rank_), "MPI_Comm_rank");
  CheckMpi(MPI_Comm_size(args_.comm, &size_), "MPI_Comm_size");
  if (args_.collective != Collective::allgather)
    scratch_.resize(Bytes(args_.payload.count));
  requests_.reserve(32);
}

P2PSchedule::~P2PSchedule() {
  // The reduction layer never destroys a schedule in flight; if it happens anyway the
  // requests are released rather than leaked.
  for (auto& r : requests_)
    if (r != MPI_REQUEST_NULL) MPI_Request_free(&r);
}

bool P2PSchedule::Rearm(const ScheduleArgs& args) {
  for (auto r : requests_)
    if (r != MPI_REQUEST_NULL) return false;
  if (args.comm != args_.comm) return false;
  args_ = args;
  requests_.clear();
  if (args_.collective != Collective::allgather)
    scratch_.resize(Bytes(args_.payload.count));
  return true;
}

void P2PSchedule::Combine(const void* in, void* inout, std::size_t n) const {
  if (n) args_.payload.combine(args_.payload.combine_state, in, inout, n);
}

void P2PSchedule::PostSend(const void* buf, std::size_t bytes, int dest, int tag_offset) {
  requests_.push_back(MPI_REQUEST_NULL);
  CheckMpi(MPI_Isend(buf, static_cast<int>(bytes), MPI_BYTE, dest, args_.tag + tag_offset,
                     args_.comm, &requests_.back()),
           "MPI_Isend");
}

void P2PSchedule::PostRecv(void* buf, std::size_t bytes, int source, int tag_offset) {
  requests_.push_back(MPI_REQUEST_NULL);
  CheckMpi(MPI_Irecv(buf, static_cast<int>(bytes), MPI_BYTE, source, args_.tag + tag_offset,
                     args_.comm, &requests_.back()),
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

// ---------------------------------------------------------------------------------------
// Binomial reduce (and reduce + broadcast)

BinomialSchedule::BinomialSchedule(const ScheduleArgs& args, ScheduleKind kind)
    : P2PSchedule(args),
      kind_(kind),
      then_broadcast_(args.collective == Collective::allreduce) {}

void BinomialSchedule::Start() {
  acc_ = static_cast<unsigned char*>(args_.data);
  other_ = scratch_.data();
  mask_ = 1;
  pending_combine_ = sent_up_ = receiving_ = false;
  step_ = Step::reduce;
  if (size_ == 1) {
    step_ = Step::done;
    return;
  }
  NextReduceRound();
}

// Rank r receives, in rank order, from r+1, r+2, r+4, ... (each a contiguous range of
// higher ranks) while those bits of r are clear, then sends to r - mask at its lowest set
// bit. Rank 0 ends with every rank's contribution combined in rank order.
void BinomialSchedule::NextReduceRound() {
  const std::size_t bytes = Bytes(args_.payload.count);
  while (mask_ < size_) {
    if (rank_ & mask_) {
      PostSend(acc_, bytes, rank_ - mask_, 0);
      sent_up_ = true;
      return;
    }
    if (rank_ + mask_ < size_) {
      PostRecv(other_, bytes, rank_ + mask_, 0);
      pending_combine_ = true;
      return;
    }
    mask_ <<= 1;
  }
}

void BinomialSchedule::StartBroadcast() {
  const std::size_t bytes = Bytes(args_.payload.count);
  auto* data = static_cast<unsigned char*>(args_.data);
  step_ = Step::broadcast;
  if (rank_ == 0) {
    if (acc_ != data && bytes) std::memcpy(data, acc_, bytes);
    bcast_mask_ = 1;
    while (bcast_mask_ < size_) bcast_mask_ <<= 1;
    bcast_mask_ >>= 1;
    receiving_ = false;
  } else {
    int mask = 1;
    while (!(rank_ & mask)) mask <<= 1;
    PostRecv(data, bytes, rank_ - mask, 1);
    bcast_mask_ = mask >> 1;
    receiving_ = true;
  }
}

bool BinomialSchedule::Progress() {
  const std::size_t count = args_.payload.count;
  const std::size_t bytes = Bytes(count);
  auto* data = static_cast<unsigned char*>(args_.data);
  for (;;) {
    if (step_ == Step::done) return true;
    if (!RequestsDone()) return false;
    switch (step_) {
      case Step::reduce:
        if (pending_combine_) {
          // acc = acc ∘ received: `acc` holds the lower ranks.
          Combine(acc_, other_, count);
          std::swap(acc_, other_);
          pending_combine_ = false;
          mask_ <<= 1;
          NextReduceRound();
          if (pending_combine_ || sent_up_) continue;
        }
        // This rank's part of the reduce is over (it sent up, or it is rank 0).
        if (then_broadcast_) {
          StartBroadcast();
        } else if (args_.root == 0) {
          if (rank_ == 0 && acc_ != data && bytes) std::memcpy(data, acc_, bytes);
          step_ = Step::done;
        } else if (rank_ == 0) {
          PostSend(acc_, bytes, args_.root, 1);
          step_ = Step::to_root;
        } else if (rank_ == args_.root) {
          PostRecv(data, bytes, 0, 1);
          step_ = Step::to_root;
        } else {
          step_ = Step::done;
        }
        continue;
      case Step::to_root:
        step_ = Step::done;
        continue;
      case Step::broadcast:
        if (receiving_ || rank_ == 0) {
          receiving_ = false;
          bool sent = false;
          for (int m = bcast_mask_; m > 0; m >>= 1)
            if (rank_ + m < size_) {
              PostSend(data, bytes, rank_ + m, 1);
              sent = true;
            }
          bcast_mask_ = 0;
          if (sent) {
            // Sends posted: done once they complete.
            step_ = Step::to_root;
            continue;
          }
        }
        step_ = Step::done;
        continue;
      case Step::done:
        return true;
    }
  }
}

// ---------------------------------------------------------------------------------------
// Recursive doubling

RecursiveDoublingSchedule::RecursiveDoublingSchedule(const ScheduleArgs& args)
    : P2PSchedule(args) {}

void RecursiveDoublingSchedule::PostExchange() {
  const std::size_t bytes = Bytes(args_.payload.count);
  partner_ = ToRank(newrank_ ^ mask_);
  PostRecv(scratch_.data(), bytes, partner_, 1);
  PostSend(args_.data, bytes, partner_, 1);
}

void RecursiveDoublingSchedule::Start() {
  const std::size_t bytes = Bytes(args_.payload.count);
  pof2_ = 1;
  while (pof2_ * 2 <= size_) pof2_ *= 2;
  rem_ = size_ - pof2_;
  mask_ = 1;
  if (size_ == 1) {
    step_ = Step::done;
    return;
  }
  if (rank_ < 2 * rem_) {
    step_ = Step::fold_in;
    if (rank_ % 2 == 0) {
      PostSend(args_.data, bytes, rank_ + 1, 0);
      newrank_ = -1;
    } else {
      PostRecv(scratch_.data(), bytes, rank_ - 1, 0);
      newrank_ = rank_ / 2;
    }
  } else {
    newrank_ = rank_ - rem_;
    step_ = Step::exchange;
    PostExchange();
  }
}

bool RecursiveDoublingSchedule::Progress() {
  const std::size_t count = args_.payload.count;
  const std::size_t bytes = Bytes(count);
  for (;;) {
    if (step_ == Step::done) return true;
    if (!RequestsDone()) return false;
    switch (step_) {
      case Step::fold_in:
        if (newrank_ < 0) {  // even: wait for the result from rank + 1
          PostRecv(args_.data, bytes, rank_ + 1, 2);
          step_ = Step::fold_out;
        } else {  // odd: data = lower ∘ data
          Combine(scratch_.data(), args_.data, count);
          step_ = Step::exchange;
          if (pof2_ > 1) {
            PostExchange();
          } else {
            step_ = Step::fold_out;
            PostSend(args_.data, bytes, rank_ - 1, 2);
          }
        }
        continue;
      case Step::exchange:
        if (partner_ < rank_) {
          Combine(scratch_.data(), args_.data, count);  // data = partner ∘ data
        } else {
          Combine(args_.data, scratch_.data(), count);  // scratch = data ∘ partner
          if (bytes) std::memcpy(args_.data, scratch_.data(), bytes);
        }
        mask_ <<= 1;
        if (mask_ < pof2_) {
          PostExchange();
        } else if (rank_ < 2 * rem_) {  // odd: hand the result to the folded even rank
          PostSend(args_.data, bytes, rank_ - 1, 2);
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
// Ring

RingSchedule::RingSchedule(const ScheduleArgs& args) : P2PSchedule(args) {}

std::size_t RingSchedule::ChunkBegin(int chunk) const {
  return args_.payload.count * static_cast<std::size_t>(chunk) / static_cast<std::size_t>(size_);
}

void RingSchedule::Start() {
  step_ = 0;
  combining_ = false;
  if (args_.collective == Collective::allgather) {
    const std::size_t block = Bytes(args_.payload.count);
    if (block)
      std::memcpy(static_cast<unsigned char*>(args_.result) + block * static_cast<std::size_t>(rank_),
                  args_.data, block);
    steps_ = size_ - 1;
  } else {
    steps_ = 2 * (size_ - 1);
  }
  if (steps_ > 0) PostStep();
}

void RingSchedule::PostStep() {
  const int right = (rank_ + 1) % size_, left = (rank_ - 1 + size_) % size_;
  auto mod = [this](int x) { return ((x % size_) + size_) % size_; };
  if (args_.collective == Collective::allgather) {
    const std::size_t block = Bytes(args_.payload.count);
    auto* result = static_cast<unsigned char*>(args_.result);
    const int send = mod(rank_ - step_), recv = mod(rank_ - step_ - 1);
    PostRecv(result + block * static_cast<std::size_t>(recv), block, left, 0);
    PostSend(result + block * static_cast<std::size_t>(send), block, right, 0);
    return;
  }
  auto* data = static_cast<unsigned char*>(args_.data);
  const int s = step_;
  if (s < size_ - 1) {  // reduce-scatter: receive into scratch, then combine
    const int send = mod(rank_ - s), recv = mod(rank_ - s - 1);
    PostRecv(scratch_.data(), Bytes(ChunkSize(recv)), left, 0);
    PostSend(data + Bytes(ChunkBegin(send)), Bytes(ChunkSize(send)), right, 0);
    recv_chunk_ = recv;
    combining_ = true;
  } else {  // allgather of the finished chunks, straight into place
    const int g = s - (size_ - 1);
    const int send = mod(rank_ + 1 - g), recv = mod(rank_ - g);
    PostRecv(data + Bytes(ChunkBegin(recv)), Bytes(ChunkSize(recv)), left, 1);
    PostSend(data + Bytes(ChunkBegin(send)), Bytes(ChunkSize(send)), right, 1);
    combining_ = false;
  }
}

bool RingSchedule::Progress() {
  for (;;) {
    if (step_ >= steps_) return true;
    if (!RequestsDone()) return false;
    if (combining_) {
      auto* data = static_cast<unsigned char*>(args_.data);
      Combine(scratch_.data(), data + Bytes(ChunkBegin(recv_chunk_)), ChunkSize(recv_chunk_));
      combining_ = false;
    }
    if (++step_ < steps_) PostStep();
  }
}

}  // namespace tributary::detail
