// The node-aware two-level form: within the node, among the leaders, then release.
#pragma once

#include <memory>

#include "schedules/knomial.hpp"
#include "schedules/schedule.hpp"

namespace tributary::detail {

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
  bool Cancel() noexcept override;
  bool Quiet() noexcept override;

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
