// Tributary's own schedules over point-to-point messages. Each is a small state machine
// that Progress() advances without blocking: it tests its outstanding requests and, when
// they are done, combines and posts the next round. Who talks to whom in round r is
// computed from (rank, size, round) alone (the plans below); what the bytes mean comes
// from the Payload.
#pragma once

#include <algorithm>
#include <cstddef>
#include <memory>
#include <vector>

#include "tributary/detail/schedule.hpp"

namespace tributary::detail {

/// What every point-to-point schedule needs: its communicator, tags, buffers and requests.
class P2PSchedule : public Schedule {
 public:
  explicit P2PSchedule(const ScheduleArgs& args);
  ~P2PSchedule() override;
  bool Rearm(const ScheduleArgs& args) override;
  bool Finished() const noexcept override { return finishing_; }

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
  /// True when every request in requests_ has completed (tests them; never waits).
  bool RequestsDone();
  /// Tests one request; true when it is complete (or null).
  static bool Done(MPI_Request* request);
  /// Makes sure the scratch buffer holds at least `bytes`; returns it.
  unsigned char* Scratch(std::size_t bytes);
  unsigned char* Data() const { return static_cast<unsigned char*>(args_.data); }

  ScheduleArgs args_;
  int rank_ = 0;
  int size_ = 1;
  std::vector<unsigned char> scratch_;  // grown on demand, kept across generations
  std::vector<MPI_Request> requests_;
  /// This generation finishes each element where it is completed and gathers finished
  /// elements (an allreduce with a Finisher, on more than one rank; set by Start).
  bool finishing_ = false;
};

/// The plan of a k-nomial tree rooted at virtual rank 0, where virtual rank
/// v = (rank − base) mod p. At level m = 1, k, k², …, a node v with v mod (m·k) = 0
/// receives from v + j·m (j = 1 … k−1); the others send to v − (v mod m·k) and are done.
/// The subtree of v + j·m is the range [v + j·m, v + (j+1)·m), so children combined in
/// the listed order give rank order (with base 0). Radix 2 is the binomial tree.
struct KnomialTree {
  KnomialTree() = default;
  KnomialTree(int rank, int size, int radix, int base);
  int vrank = 0;
  int parent = -1;               ///< Real rank; -1 at the root.
  std::vector<int> children;     ///< Real ranks, in combine order (increasing subtrees).
  std::vector<int> level_end;    ///< Level l's children end at children[level_end[l]].
  /// The chain v → v − 1 (a tree of fan-out 1), for pipelines.
  static KnomialTree Chain(int rank, int size, int base);
  /// Whether `rank` has children in the k-nomial tree, without building it: its first
  /// level (m = 1) has the child v + 1 exactly when v is a multiple of the radix and not the
  /// last rank, and a rank without that child has none at any higher level either.
  static bool HasChildren(int rank, int size, int radix, int base) noexcept {
    const int v = ((rank - base) % size + size) % size;
    return v % radix == 0 && v + 1 < size;
  }
};

/// k-nomial (and binomial) reduce, broadcast and reduce + broadcast allreduce. Reduce
/// combines in rank order (it reduces to rank 0 and forwards to the root) unless the
/// operator commutes, when the tree is rooted at the root itself.
class KnomialSchedule final : public P2PSchedule {
 public:
  enum Phases : int { kReduce = 1, kBroadcast = 2 };
  /// `phases` 0 means: what args.collective needs. The radix is 2, or the parameters'
  /// radix for ScheduleKind::knomial.
  KnomialSchedule(const ScheduleArgs& args, ScheduleKind kind, int phases = 0);
  void Start() override;
  bool Progress() override;
  ScheduleKind Kind() const noexcept override { return kind_; }

 private:
  enum class Step { reduce, sent_up, forward, broadcast, finishing, done };
  void PostReduceLevel();
  void AfterReduce();
  void StartBroadcast();
  void SendToChildren();
  ScheduleKind kind_;
  int radix_ = 2;
  int phases_;
  int base_ = 0;
  int tree_base_ = -1, tree_radix_ = 0;  // the cached tree's shape
  KnomialTree tree_;
  Step step_ = Step::done;
  std::size_t level_ = 0;
  unsigned char* acc_ = nullptr;
  std::vector<unsigned char*> free_;     // receive buffers not in use
  std::vector<unsigned char*> pending_;  // this level's receive buffers, in child order
  std::size_t combined_ = 0;             // children of this level combined so far
  const unsigned char* input_ = nullptr;  // a separate contribution not yet combined
};

/// Segmented pipelined reduce along a chain (rank p−1 → p−2 → … → 0, or rotated to the
/// root for commutative operators): the message is cut into segments of segment_bytes, and
/// each segment moves on as soon as it is combined while the next ones are arriving, with
/// a window of kWindow segments in flight. Every rank receives and sends each byte once, which
/// suits large messages on few ranks. Order-keeping like KnomialSchedule.
class PipelinedTreeSchedule final : public P2PSchedule {
 public:
  explicit PipelinedTreeSchedule(const ScheduleArgs& args);
  ~PipelinedTreeSchedule() override;
  void Start() override;
  bool Progress() override;
  ScheduleKind Kind() const noexcept override { return ScheduleKind::pipelined_tree; }
  bool Rearm(const ScheduleArgs& args) override;

 private:
  static constexpr std::size_t kWindow = 4;
  std::size_t SegBegin(std::size_t s) const { return std::min(args_.payload.count, s * seg_elems_); }
  std::size_t SegCount(std::size_t s) const { return SegBegin(s + 1) - SegBegin(s); }
  unsigned char* SlotBuf(std::size_t s) const {
    return const_cast<unsigned char*>(scratch_.data()) + Bytes(seg_elems_) * (s % kWindow);
  }
  bool AllIdle(const MPI_Request* requests);
  int child_ = -1;            // the chain's previous rank (sends to this one); -1 at the end
  int up_ = -1, up_tag_ = 0;  // where finished segments go (parent, or the root)
  int sink_from_ = -1;        // the root receiving the result from rank 0
  std::size_t seg_elems_ = 1, nseg_ = 0;
  std::size_t posted_ = 0, combined_ = 0, sunk_posted_ = 0, sunk_ = 0;
  const unsigned char* input_ = nullptr;  // a separate contribution (the chain's end only)
  MPI_Request recv_[kWindow];
  MPI_Request send_[kWindow];
  MPI_Request sink_[kWindow];
};

/// Recursive doubling for any rank count: the first 2·(p − 2^⌊lg p⌋) ranks fold in pairs
/// first, the power of two exchanges at distance 1, 2, 4, … (lower ∘ higher at every step:
/// order-keeping, identical bits on both partners), and the folded ranks get the result.
/// Allreduce exchanges the whole vector; allgather exchanges the blocks gathered so far.
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
  int FirstRank(int newrank) const { return newrank < rem_ ? 2 * newrank : newrank + rem_; }
  unsigned char* Result() const { return static_cast<unsigned char*>(args_.result); }
  Step step_ = Step::done;
  int pof2_ = 1, rem_ = 0, newrank_ = -1, mask_ = 1, partner_ = -1;
};

/// Rabenseifner's allreduce: a reduce-scatter by recursive halving followed by an
/// allgather by recursive doubling, with the fold-in of RecursiveDoublingSchedule. The
/// halving runs at distance 1, 2, 4, … so that every partial covers a contiguous range of
/// ranks: order-keeping. Each element is finished by one rank, so all ranks get its bits.
class RabenseifnerSchedule final : public P2PSchedule {
 public:
  explicit RabenseifnerSchedule(const ScheduleArgs& args);
  void Start() override;
  bool Progress() override;
  ScheduleKind Kind() const noexcept override { return ScheduleKind::rabenseifner; }

 private:
  enum class Step { fold_in, scatter, gather, fold_out, done };
  void PostScatter();
  void PostGather();
  int ToRank(int newrank) const { return newrank < rem_ ? 2 * newrank + 1 : newrank + rem_; }
  Step step_ = Step::done;
  int pof2_ = 1, rem_ = 0, newrank_ = -1, mask_ = 1, partner_ = -1;
  std::size_t lo_ = 0, hi_ = 0;                  // the range this rank holds
  std::vector<std::size_t> ranges_;              // (lo, hi) before each halving step
  std::size_t keep_lo_ = 0, keep_hi_ = 0;        // the half kept in the current step
};

/// Ring. Allreduce: a reduce-scatter ring then an allgather ring over p chunks; each chunk
/// is finished by one rank, so every rank receives the same bits; not order-keeping. The
/// reduce-scatter is segmented: each chunk travels as segments of segment_bytes, and a
/// segment moves on to the next step as soon as it is combined, so combining overlaps the
/// transfer of the following segments; at most kWindow segments are in flight, so the
/// scratch and the number of requests stay small whatever the message. Allgather: one ring.
class RingSchedule final : public P2PSchedule {
 public:
  explicit RingSchedule(const ScheduleArgs& args);
  ~RingSchedule() override;
  void Start() override;
  bool Progress() override;
  ScheduleKind Kind() const noexcept override { return ScheduleKind::ring; }
  bool Rearm(const ScheduleArgs& args) override;

 private:
  static constexpr std::size_t kWindow = 8;
  std::size_t ChunkBegin(int chunk) const;
  std::size_t ChunkSize(int chunk) const { return ChunkBegin(chunk + 1) - ChunkBegin(chunk); }
  int Mod(int x) const { return ((x % size_) + size_) % size_; }
  /// Item k = step·nseg + segment of the reduce-scatter: [begin, begin + n) of `chunk`.
  void ItemRange(std::size_t k, bool receive, std::size_t* begin, std::size_t* n) const;
  void PostItem(std::size_t k);
  void PostGatherStep();
  std::size_t seg_elems_ = 1, nseg_ = 0, items_ = 0, window_ = 1;
  std::size_t posted_ = 0, combined_ = 0;
  int step_ = 0;  // allgather steps
  bool gathering_ = false;
  MPI_Request recv_[kWindow];
  MPI_Request send_[kWindow];
};

/// The two-level form: reduce within each node to its leader (binomial, rank order),
/// the inner schedule among the leaders, then release within the node (broadcast for
/// allreduce; the leader hands the result to a root that is not a leader for reduce).
class NodeAwareSchedule final : public Schedule {
 public:
  NodeAwareSchedule(ScheduleKind inner, const ScheduleArgs& args);
  void Start() override;
  bool Progress() override;
  ScheduleKind Kind() const noexcept override { return inner_; }
  bool Rearm(const ScheduleArgs& args) override;

 private:
  enum class Step { intra_reduce, leaders, deliver, intra_bcast, done };
  void StartLeaders();
  void AfterLeaders();
  ScheduleKind inner_;
  ScheduleArgs args_;
  int rank_ = 0;
  Step step_ = Step::done;
  std::unique_ptr<KnomialSchedule> intra_reduce_, intra_bcast_;
  std::unique_ptr<Schedule> leaders_;
  MPI_Request deliver_ = MPI_REQUEST_NULL;
};

}  // namespace tributary::detail
