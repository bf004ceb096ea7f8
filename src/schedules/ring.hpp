// The ring: a segmented reduce-scatter ring then an allgather ring; allgather as one ring.
#pragma once

#include <cstddef>

#include "schedules/p2p.hpp"

namespace tributary::detail {

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

}  // namespace tributary::detail
