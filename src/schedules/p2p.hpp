// Tributary's own schedules over point-to-point messages. Each is a small state machine
// that Progress() advances without blocking: it tests its outstanding requests and, when
// they are done, combines and posts the next round. Who talks to whom in round r is
// computed from (rank, size, round) alone; what the bytes mean comes from the Payload.
#pragma once

#include <cstddef>
#include <vector>

#include "tributary/detail/schedule.hpp"

namespace tributary::detail {

/// What every point-to-point schedule needs: its communicator, tags, buffers and requests.
class P2PSchedule : public Schedule {
 public:
  explicit P2PSchedule(const ScheduleArgs& args);
  ~P2PSchedule() override;
  bool Rearm(const ScheduleArgs& args) override;

 protected:
  /// Bytes of `n` elements.
  std::size_t Bytes(std::size_t n) const { return n * args_.payload.elem_size; }
  /// inout = in ∘ inout over `n` elements (in: the lower ranks' operand).
  void Combine(const void* in, void* inout, std::size_t n) const;
  void PostSend(const void* buf, std::size_t bytes, int dest, int tag_offset);
  void PostRecv(void* buf, std::size_t bytes, int source, int tag_offset);
  /// True when every posted request has completed (tests them; never waits).
  bool RequestsDone();

  ScheduleArgs args_;
  int rank_ = 0;
  int size_ = 1;
  std::vector<unsigned char> scratch_;  // one message's worth, allocated once
  std::vector<MPI_Request> requests_;
};

/// Binomial-tree reduce to any root, combining in rank order (reduce to rank 0 over the
/// binomial tree of the true ranks, whose subtrees are contiguous rank ranges, then rank 0
/// sends to the root). With `then_broadcast`, rank 0 broadcasts the result over a binomial
/// tree instead: an order-keeping allreduce (reduce + broadcast).
class BinomialSchedule final : public P2PSchedule {
 public:
  BinomialSchedule(const ScheduleArgs& args, ScheduleKind kind);
  void Start() override;
  bool Progress() override;
  ScheduleKind Kind() const noexcept override { return kind_; }

 private:
  enum class Step { reduce, to_root, broadcast, done };
  void NextReduceRound();
  void StartBroadcast();
  ScheduleKind kind_;
  bool then_broadcast_;
  Step step_ = Step::done;
  int mask_ = 1;
  unsigned char* acc_ = nullptr;  // where the running result lives (data or scratch)
  unsigned char* other_ = nullptr;  // the other buffer, receiving the next partial
  bool pending_combine_ = false;
  bool sent_up_ = false;
  bool receiving_ = false;  // broadcast: waiting for the parent's message
  int bcast_mask_ = 0;
};

/// Recursive-doubling allreduce for any rank count: the first 2·(p − 2^⌊lg p⌋) ranks fold
/// in pairs first, the power of two exchanges and combines lower ∘ higher at every step
/// (order-keeping, identical bits on both partners), and the folded ranks get the result.
class RecursiveDoublingSchedule final : public P2PSchedule {
 public:
  explicit RecursiveDoublingSchedule(const ScheduleArgs& args);
  void Start() override;
  bool Progress() override;
  ScheduleKind Kind() const noexcept override { return ScheduleKind::recursive_doubling; }

 private:
  enum class Step { fold_in, exchange, fold_out, done };
  void PostExchange();
  int ToRank(int newrank) const { return newrank < rem_ ? 2 * newrank + 1 : newrank + rem_; }
  Step step_ = Step::done;
  int pof2_ = 1, rem_ = 0, newrank_ = -1, mask_ = 1, partner_ = -1;
};

/// Ring: allreduce as a reduce-scatter ring then an allgather ring over p chunks (each
/// chunk is finished by one rank, so every rank receives the same bits; not order-keeping),
/// and allgather as one ring.
class RingSchedule final : public P2PSchedule {
 public:
  explicit RingSchedule(const ScheduleArgs& args);
  void Start() override;
  bool Progress() override;
  ScheduleKind Kind() const noexcept override { return ScheduleKind::ring; }

 private:
  std::size_t ChunkBegin(int chunk) const;
  std::size_t ChunkSize(int chunk) const { return ChunkBegin(chunk + 1) - ChunkBegin(chunk); }
  void PostStep();
  int step_ = 0;     // 0 .. 2(p-1) for allreduce, 0 .. p-1 for allgather
  int steps_ = 0;
  bool combining_ = false;
  int recv_chunk_ = 0;
};

}  // namespace tributary::detail
