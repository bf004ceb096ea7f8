// The segmented pipelined reduce along a chain.
#pragma once

#include <algorithm>
#include <cstddef>

#include "schedules/p2p.hpp"

namespace tributary::detail {

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
  std::size_t SegBegin(std::size_t s) const {
    return std::min(args_.payload.count, s * seg_elems_);
  }
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

}  // namespace tributary::detail
