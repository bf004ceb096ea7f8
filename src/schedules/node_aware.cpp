#include "schedules/node_aware.hpp"

#include <algorithm>
#include <cstring>

#include "tributary/errors.hpp"

namespace tributary::detail {

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

bool NodeAwareSchedule::Cancel() noexcept {
  bool cancelled = true;
  for (Schedule* part : {static_cast<Schedule*>(intra_reduce_.get()), leaders_.get(),
                         static_cast<Schedule*>(intra_bcast_.get())})
    if (part) cancelled = part->Cancel() && cancelled;
  CancelRequests(&deliver_, 1);
  return cancelled;
}

bool NodeAwareSchedule::Quiet() noexcept {
  bool quiet = RequestsQuiet(&deliver_, 1);
  for (Schedule* part : {static_cast<Schedule*>(intra_reduce_.get()), leaders_.get(),
                         static_cast<Schedule*>(intra_bcast_.get())})
    if (part) quiet = part->Quiet() && quiet;
  return quiet;
}

namespace {
// Within the node: rooted at the leader (rank 0 of both node communicators), in hardware
// order for a commutative operator where the layout has one.
ScheduleArgs IntraArgs(const ScheduleArgs& args) {
  ScheduleArgs intra = args;
  intra.comm = args.payload.commutative && args.nodes->by_hardware != MPI_COMM_NULL
                   ? args.nodes->by_hardware
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
    intra_reduce_ =
        std::make_unique<KnomialSchedule>(intra, ScheduleKind::binomial, KnomialSchedule::kReduce);
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
  if (among.collective == Collective::reduce) among.root = nodes.NodeOf(args_.root);
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
  const int root = args_.root;
  step_ = Step::done;
  if (nodes.LocalOf(root) == 0 || nodes.NodeOf(root) != nodes.NodeOf(rank_)) return;
  const std::size_t bytes = args_.payload.count * args_.payload.elem_size;
  if (rank_ == args_.root)
    CheckMpi(MPI_Irecv(args_.data, static_cast<int>(bytes), MPI_BYTE, 0, args_.tag + 4, nodes.node,
                       &deliver_),
             "MPI_Irecv");
  else if (nodes.leaders != MPI_COMM_NULL)
    CheckMpi(MPI_Isend(args_.data, static_cast<int>(bytes), MPI_BYTE, nodes.LocalOf(root),
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
