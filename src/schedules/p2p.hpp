// The shared part of Tributary's own schedules over point-to-point messages. Each schedule
// (one per file beside this one: knomial, pipelined_tree, recursive_doubling, rabenseifner,
// ring, node_aware) is a small state machine that Progress() advances without blocking: it
// tests its outstanding requests and, when they are done, combines and posts the next
// round. Who talks to whom in round r is computed from (rank, size, round) alone; what the
// bytes mean comes from the Payload. P2PSchedule holds what they all need.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

#include "schedules/schedule.hpp"

namespace tributary::detail {

/// What every point-to-point schedule needs: its communicator, tags, buffers and requests.
class P2PSchedule : public Schedule {
 public:
  explicit P2PSchedule(const ScheduleArgs& args);
  ~P2PSchedule() override;
  bool Rearm(const ScheduleArgs& args) override;
  bool Finished() const noexcept override { return finishing_; }
  bool Cancel() noexcept override;
  bool Quiet() noexcept override;

 protected:
  /// Bytes of `n` elements.
  std::size_t Bytes(std::size_t n) const { return n * args_.payload.elem_size; }
  /// Where the allgather phase of a reduce-scatter + allgather runs: the finished elements
  /// when this generation finishes them (finishing_), else the data; and its bytes of n.
  unsigned char* Gathered() const {
    return static_cast<unsigned char*>(finishing_ ? args_.finisher.out : args_.data);
  }
  std::size_t GatheredBytes(std::size_t n) const {
    return n * (finishing_ ? args_.finisher.out_size : args_.payload.elem_size);
  }
  /// Finishes elements [lo, lo + n) of the data into the finisher's output.
  void FinishRange(std::size_t lo, std::size_t n) const;
  /// The last combine of elements [lo, lo + n): `in` ∘ data, finished into the output (in
  /// one pass where the finisher can; the data is scratch afterwards). Commutative only.
  void CombineAndFinish(const void* in, std::size_t lo, std::size_t n) const;
  /// inout = in ∘ inout over `n` elements (in: the lower ranks' operand).
  void Combine(const void* in, void* inout, std::size_t n) const;
  /// acc = acc ∘ other (acc holds the lower ranks), leaving the result in *acc: in place
  /// for commutative operators, otherwise in `other`, which then becomes *acc.
  void CombineInto(unsigned char** acc, unsigned char** other, std::size_t n) const;
  /// Posts into requests_ (or into *request when given).
  void PostSend(const void* buf, std::size_t bytes, int dest, int tag_offset,
                MPI_Request* request = nullptr);
  void PostRecv(void* buf, std::size_t bytes, int source, int tag_offset,
                MPI_Request* request = nullptr);
  /// The fold-in that brings size_ ranks to a core of size_ − rem_ (rem_ ≤ size_ / 2, set
  /// by the schedule's Start): ranks 2i and 2i + 1 (i < rem_) pair up, the even one posting
  /// its value `mine` to the odd one, which receives it into `incoming` and stands for both
  /// as newrank i; a rank from 2·rem_ on is newrank rank − rem_. Returns this rank's
  /// newrank, −1 for a rank folded into its partner. Tag offset 0.
  int FoldIn(const void* mine, void* incoming, std::size_t bytes);
  /// Whether this rank is one of a folded pair (FoldIn).
  bool InFold() const noexcept { return rank_ < 2 * rem_; }
  /// The rank that stands for core rank `newrank`: the odd one of a folded pair.
  int CoreRank(int newrank) const noexcept {
    return newrank < rem_ ? 2 * newrank + 1 : newrank + rem_;
  }
  /// The end of a schedule that folded some ranks into others: posts the result to `dest`
  /// when `hand_over`. True when it did (the schedule then waits for that send).
  bool HandOver(bool hand_over, const void* buf, std::size_t bytes, int dest, int tag_offset) {
    if (hand_over) PostSend(buf, bytes, dest, tag_offset);
    return hand_over;
  }
  /// True when every request in requests_ has completed (tests them; never waits). With the
  /// short-message signal (ScheduleArgs::missed) it also compares the receives' sizes.
  bool RequestsDone();
  /// Forgets the requests of a completed round (a new generation's start).
  void ResetRequests() noexcept {
    requests_.clear();
    sized_.clear();
  }
  /// The short-message signal is on and says that a rank did not fit: send nothing, combine
  /// nothing (ScheduleArgs::missed).
  bool Silenced() const noexcept { return args_.missed != nullptr && *args_.missed; }
  /// Tests one request; true when it is complete (or null).
  static bool Done(MPI_Request* request);
  /// Makes sure the scratch buffer holds at least `bytes`; returns it.
  unsigned char* Scratch(std::size_t bytes);
  unsigned char* Data() const { return static_cast<unsigned char*>(args_.data); }
  /// Frees the requests of a schedule destroyed in flight (the reduction layer never does
  /// that; if it happens anyway they are released rather than leaked).
  static void FreeAll(MPI_Request* requests, std::size_t n);
  /// True when none of the `n` requests is outstanding.
  static bool AllNull(const MPI_Request* requests, std::size_t n);
  /// Requests a schedule keeps outside requests_ (fixed windows): Cancel and Quiet cover
  /// them too. Called by the constructor of the schedule that owns them.
  void Track(MPI_Request* requests, std::size_t n) { tracked_.push_back({requests, n}); }

  ScheduleArgs args_;
  int rank_ = 0;
  int size_ = 1;
  /// Ranks folded in pairs before a core of size_ − rem_ (FoldIn); 0 where none fold.
  int rem_ = 0;
  std::vector<unsigned char> scratch_;  // grown on demand, kept across generations
  std::vector<MPI_Request> requests_;
  /// This generation finishes each element where it is completed and gathers finished
  /// elements (an allreduce with a Finisher, on more than one rank; set by Start).
  bool finishing_ = false;

 private:
  struct Tracked {
    MPI_Request* requests;
    std::size_t n;
  };
  std::vector<Tracked> tracked_;
  // The short-message signal: the receives in requests_ (index, bytes posted) and the
  // statuses their sizes are read from.
  std::vector<std::pair<std::size_t, std::size_t>> sized_;
  std::vector<MPI_Status> statuses_;
};

}  // namespace tributary::detail
