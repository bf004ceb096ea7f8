// tributary::Context's lifecycle: construction (the communicators, the node layout, the
// selection tree, the options checked), destruction (every communicator freed), the
// registry of live objects and pollers with their pool slots and tags, and the error
// handler for what cannot be thrown.
#include "tributary/context.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <sstream>
#include <thread>

#include "context/context_impl.hpp"
#include "context/network_profile.hpp"
#include "core/trace.hpp"
#include "tributary/errors.hpp"
#include "tributary/tasks/sweep.hpp"

namespace tributary {
namespace detail {

namespace {

void DefaultErrorHandler(int rank, const std::string& message) {
  detail::AbortJob(nullptr, 1, "rank " + std::to_string(rank) + ": " + message);
}

#if TRIBUTARY_HAVE_MPI
MPI_Comm DupOwned(MPI_Comm comm, int* created) {
  MPI_Comm dup = MPI_COMM_NULL;
#if TRIBUTARY_HAVE_SMPI
  // SimGrid SMPI's MPI_Comm_dup gives every rank its own copy of the group's tables, 12 B
  // per rank of the communicator (O(p^2) in all: 3.2 GB at 16384 simulated ranks);
  // MPI_Comm_create over the communicator's own group makes the same communicator (a new
  // context, no attributes to copy) on the group every rank already holds.
  MPI_Group group = MPI_GROUP_NULL;
  CheckMpi(MPI_Comm_group(comm, &group), "MPI_Comm_group");
  const int rc = MPI_Comm_create(comm, group, &dup);
  MPI_Group_free(&group);
  CheckMpi(rc, "MPI_Comm_create");
#else
  CheckMpi(MPI_Comm_dup(comm, &dup), "MPI_Comm_dup");
#endif
  CheckMpi(MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  ++*created;
  return dup;
}
#endif

}  // namespace

bool Registry::Add(ReductionCore* core, int max_slots, int* id, int* slot) {
  auto free_slot = std::find(slot_used.begin(), slot_used.end(), 0);
  if (free_slot == slot_used.end()) {
    if (static_cast<int>(slot_used.size()) >= max_slots) return false;
    free_slot = slot_used.insert(slot_used.end(), 0);
  }
  *free_slot = 1;
  *slot = static_cast<int>(free_slot - slot_used.begin());
  *id = next_object_id++;
  objects.push_back(core);
  members.fetch_add(1, std::memory_order_relaxed);
  return true;
}

void Registry::Remove(ReductionCore* core, int slot) noexcept {
  objects.erase(std::remove(objects.begin(), objects.end(), core), objects.end());
  members.store(static_cast<int>(objects.size() + pollers.size()), std::memory_order_relaxed);
  if (slot >= 0 && slot < static_cast<int>(slot_used.size()))
    slot_used[static_cast<std::size_t>(slot)] = 0;
  while (!slot_used.empty() && slot_used.back() == 0) slot_used.pop_back();
}

void ContextImpl::Register(ReductionCore* core, int* id, int* slot) {
  std::lock_guard<std::mutex> lock(registry.mutex);
  if (registry.Add(core, net.MaxSlots(), id, slot)) return;
  std::ostringstream msg;
  msg << "rank " << rank << ": cannot create " << core->Name() << ": " << registry.slot_used.size()
      << " reduction objects are alive on this Context, as many as the MPI library's tag "
         "space holds";
#if TRIBUTARY_HAVE_MPI
  msg << " (MPI_TAG_UB = " << net.tag_ub << ")";
#endif
  throw UsageError(msg.str());
}

void ContextImpl::Unregister(ReductionCore* core) noexcept {
  std::lock_guard<std::mutex> lock(registry.mutex);
  registry.Remove(core, core->PoolSlot());
  control.Forget(core->ObjectId());
}

void AddPoller(Context& ctx, void* self, PollFn poll, OrphanFn orphan) {
  Registry& r = StateOf(ctx).registry;
  std::lock_guard<std::mutex> lock(r.mutex);
  r.pollers.push_back(Registry::Poller{self, poll, orphan});
  r.members.fetch_add(1, std::memory_order_relaxed);
}

void WatchdogReport(Context& ctx, const std::string& text) noexcept {
  StateOf(ctx).control.Report(text);
}

bool MayCall(const Context& ctx) noexcept {
  return StateOf(const_cast<Context&>(ctx)).net.MayCallMpi();
}

void ThrowWrongThread(const Context& ctx, const std::string& who) {
  StateOf(const_cast<Context&>(ctx)).net.ThrowWrongThread(who);
}

void RemovePoller(Context& ctx, void* self) noexcept {
  Registry& r = StateOf(ctx).registry;
  std::lock_guard<std::mutex> lock(r.mutex);
  r.pollers.erase(std::remove_if(r.pollers.begin(), r.pollers.end(),
                                 [self](const Registry::Poller& p) { return p.self == self; }),
                  r.pollers.end());
  r.members.store(static_cast<int>(r.objects.size() + r.pollers.size()), std::memory_order_relaxed);
}

void ContextImpl::FailByPolicy(const std::string& message, int abort_code) {
  const std::string text = "rank " + std::to_string(rank) + " failed: " + message;
  if (options.on_failure == FailurePolicy::abort) AbortJob(&net, abort_code, text);
  control.FailHere(text);
}

std::chrono::duration<double> ContextImpl::DrainTime() const noexcept {
  return options.watchdog.count() > 0 ? options.watchdog : std::chrono::duration<double>(60);
}

#if TRIBUTARY_HAVE_MPI
void ContextImpl::SettleAfterFailure() noexcept {
  // Every rank drops what arrives unasked until every rank's own sends have completed: a
  // barrier of control messages (ControlPlane::SettleBarrier), entered once this rank's
  // control messages have left, ends it. The other ranks come when their own teardown ends,
  // which a loaded machine delays: the wait is the drain time but at least 10 s (it ends as
  // soon as the last rank arrives).
  const std::chrono::duration<double> settle =
      std::max(DrainTime(), std::chrono::duration<double>(10));
  const auto limit = std::chrono::steady_clock::now() +
                     std::chrono::duration_cast<std::chrono::steady_clock::duration>(settle);
  try {
    for (;;) {
      control.Receive();
      {
        std::lock_guard<std::mutex> mpi(net.mpi_mutex);
        if (control.SettleBarrier()) return;
      }
      if (std::chrono::steady_clock::now() >= limit) break;
      std::this_thread::yield();
    }
  } catch (const std::exception& e) {
    HandleError(std::string("tributary::Context destroyed after a failure: ") + e.what());
    return;
  }
  HandleError(
      "tributary::Context destroyed after a failure, but not every rank destroyed its "
      "Context within " +
      std::to_string(settle.count()) + " s; its communicators are let go of");
}
#endif

ContextImpl& StateOf(Context& ctx) noexcept { return *ctx.impl_; }

ReductionHost& HostOf(Context& ctx) noexcept { return StateOf(ctx); }

Tracer* ContextImpl::TracerFor(int object, const std::string& name) {
  return TraceFor(self, object, name);
}

void ContextImpl::HandleError(const std::string& message) noexcept {
  try {
    if (handler) {
      handler(message);
      return;
    }
  } catch (...) {
  }
  DefaultErrorHandler(rank, message);
}

}  // namespace detail

Context::Context(ContextOptions options)
#if TRIBUTARY_HAVE_MPI
    : Context(MPI_COMM_WORLD, std::move(options)){}
#else
    : impl_(std::make_unique<detail::ContextImpl>()) {
  impl_->self = this;
  impl_->options = std::move(options);
  impl_->handler = impl_->options.error_handler;
  impl_->net.owner_thread = std::this_thread::get_id();
  if (impl_->options.communicator_pool < 0)
    throw UsageError("ContextOptions::communicator_pool must not be negative");
  const SelectionTree tree = detail::LoadSelection(impl_->options.selection_file);
  for (int c = 0; c < 3; ++c)
    impl_->schedules.selection[c] = tree.Prune(impl_->schedules.facts, static_cast<Collective>(c));
  const char* log = std::getenv("TRIBUTARY_LOG");
  impl_->schedules.log_selection = log && std::strstr(log, "selection");
  detail::TraceOpen(this, impl_->options, 0, 1);
  impl_->cycle_observer =
      detail::AddCycleEndObserver(this, &detail::ContextImpl::ForeignCycleEnded);
}
#endif

#if TRIBUTARY_HAVE_MPI
      Context::Context(MPI_Comm comm, ContextOptions options)
    : impl_(std::make_unique<detail::ContextImpl>()) {
  auto& d = *impl_;
  d.self = this;
  d.options = std::move(options);
  d.handler = d.options.error_handler;
  d.net.owner_thread = std::this_thread::get_id();
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized || detail::MpiFinalized())
    throw UsageError("tributary::Context created outside MPI_Init .. MPI_Finalize");
  if (d.options.communicator_pool < 0)
    throw UsageError("ContextOptions::communicator_pool must not be negative");
  int inter = 0;
  detail::CheckMpi(MPI_Comm_test_inter(comm, &inter), "MPI_Comm_test_inter");
  if (inter) throw UsageError("tributary::Context: intercommunicators are not supported");
  detail::CheckMpi(MPI_Query_thread(&d.net.thread_level), "MPI_Query_thread");
#if TRIBUTARY_HAVE_SMPI
  // SMPI runs every simulated rank on its own simulated actor; an MPI call from any other
  // thread (a progress thread, a worker of the threaded executor) is not supported
  // whatever level it reports, so only the creating thread may poll.
  d.net.thread_level = std::min(d.net.thread_level, static_cast<int>(MPI_THREAD_FUNNELED));
#endif
  // Below SERIALIZED one thread makes every call (CheckThread): an uncontended lock per
  // poll would only slow the poll loop (about 120 ns of a 1.6 us cycle at 2 ranks).
  d.net.serialize_mpi = d.net.thread_level == MPI_THREAD_SERIALIZED;
  d.net.user = comm;
  detail::CheckMpi(MPI_Comm_rank(comm, &d.rank), "MPI_Comm_rank");
  detail::CheckMpi(MPI_Comm_size(comm, &d.size), "MPI_Comm_size");
  if (d.options.ranks_per_node < 0)
    throw UsageError("ContextOptions::ranks_per_node must not be negative");
  // Before any communicator is made: an invalid tree throws with nothing to clean up.
  bool builtin = false;
  SelectionTree tree = detail::LoadSelection(comm, d.rank, d.options.selection_file, &builtin);
  void* attr = nullptr;
  int flag = 0;
  detail::CheckMpi(MPI_Comm_get_attr(comm, MPI_TAG_UB, &attr, &flag), "MPI_Comm_get_attr");
  if (flag && attr) d.net.tag_ub = *static_cast<int*>(attr);
  // One communicator: the schedules and the control plane by tag, lane 0 of the MPI
  // library's schedule; each further lane of the pool is one more (each MPI_Comm_dup costs
  // memory in proportion to the ranks in some libraries, SimGrid SMPI among them).
  d.net.comm = detail::DupOwned(comm, &d.net.comms_created);
  for (int i = 0; i < d.options.communicator_pool; ++i)
    d.net.lanes.push_back(i == 0 ? d.net.comm : detail::DupOwned(comm, &d.net.comms_created));
  // A tree that tests the node layout, or the built-in choice between the single-machine
  // and the cluster tree, needs the node facts. Where the communicator spans nodes they
  // come from the node layout, which a node-aware leaf then uses: the ranks are split by
  // node once (each split gathers to one root: at 4096 simulated ranks a split is seconds
  // of wall time). On one node the layout is freed again.
  using Pred = SelectionTree::Pred;
  const bool forced = d.options.schedule_params.node_aware || d.options.ranks_per_node > 0;
  const bool need_facts = builtin || tree.Tests(static_cast<std::uint8_t>(Pred::ranks_per_node)) ||
                          tree.Tests(static_cast<std::uint8_t>(Pred::node_count)) ||
                          tree.UsesNodeAware();
  if (forced || (need_facts && d.size > 1))
    d.net.nodes = detail::MakeNodeLayout(comm, d.rank, d.size, d.options.ranks_per_node,
                                         d.options.hardware_node_order, &d.net.comms_created);
  d.schedules.facts = detail::NodeFacts(comm, d.net.comm, d.size, d.net.nodes.get(), need_facts,
                                        &d.net.comms_created);
  if (builtin && d.schedules.facts.node_count > 1)
    tree = SelectionTree::Parse(
        d.net.nodes ? detail::StartupClusterTree(comm, d.rank, *d.net.nodes, d.schedules.facts)
                    : SelectionTree::BuiltinJson(d.schedules.facts),
        "built-in cluster selection tree");
  bool node_aware_leaf = false;
  for (int c = 0; c < 3; ++c) {
    d.schedules.selection[c] = tree.Prune(d.schedules.facts, static_cast<Collective>(c));
    node_aware_leaf = node_aware_leaf || d.schedules.selection[c].UsesNodeAware();
  }
  if (!forced && d.net.nodes &&
      !(node_aware_leaf && d.schedules.facts.node_count > 1 &&
        d.schedules.facts.node_count < d.size)) {
    detail::FreeNodeLayout(d.net.nodes.get());
    d.net.nodes.reset();
  }
  const char* log = std::getenv("TRIBUTARY_LOG");
  d.schedules.log_selection = log && std::strstr(log, "selection");
  d.net.mpi_reads_device = detail::ResolveDeviceAwareMpi(comm, d.options.device_aware_mpi);
  detail::TraceOpen(this, d.options, d.rank, d.size);
  if (d.options.progress == ProgressPolicy::thread) d.StartProgressThread(this);
  d.cycle_observer = detail::AddCycleEndObserver(this, &detail::ContextImpl::ForeignCycleEnded);
}
#endif

Context::~Context() {
  auto& d = *impl_;
  detail::RemoveCycleEndObserver(d.cycle_observer);
  d.registry.StopProgressThread();
  // Objects that outlive their Context: their network phases end here, as their own
  // destruction would end them, and then they are inert (their calls throw UsageError).
  std::vector<detail::ReductionCore*> cores;
  std::vector<detail::Registry::Poller> pollers;
  {
    std::lock_guard<std::mutex> lock(d.registry.mutex);
    cores = d.registry.objects;
    pollers = d.registry.pollers;
  }
  for (auto* core : cores) core->RetireForContext();  // receives control messages: no lock
  {
    std::lock_guard<std::mutex> lock(d.registry.mutex);
    d.registry.objects.clear();
    d.registry.pollers.clear();
  }
  for (const auto& p : pollers)
    if (p.orphan) p.orphan(p.self);
  detail::TraceClose(this);
#if TRIBUTARY_HAVE_MPI
  if (detail::MpiFinalized()) return;  // the MPI library has let go of the communicators
  if (d.control.Failed()) d.SettleAfterFailure();
  d.control.FreeSends();
  d.net.Free();
#endif
}

void Context::HandleError(const std::string& message) noexcept { impl_->HandleError(message); }

void Context::ReportFailure(const std::string& message) { impl_->FailByPolicy(message); }

int Context::Rank() const noexcept { return impl_->rank; }
int Context::Size() const noexcept { return impl_->size; }
const SelectionTree& Context::Selection(Collective collective) const noexcept {
  return impl_->schedules.selection[static_cast<int>(collective)];
}

const SelectionFacts& Context::Facts() const noexcept { return impl_->schedules.facts; }

const ContextOptions& Context::Options() const noexcept { return impl_->options; }
int Context::CommunicatorsCreated() const noexcept { return impl_->net.comms_created; }

int Context::NodeCount() const noexcept {
#if TRIBUTARY_HAVE_MPI
  if (impl_->net.nodes) return impl_->net.nodes->count;
#endif
  return 1;
}

bool Context::MpiReadsDeviceMemory() const noexcept { return impl_->net.mpi_reads_device; }

bool Context::NodeInHardwareOrder() const noexcept {
#if TRIBUTARY_HAVE_MPI
  return impl_->net.nodes && impl_->net.nodes->by_hardware != MPI_COMM_NULL;
#else
  return false;
#endif
}

int Context::LiveObjects() const noexcept {
  std::lock_guard<std::mutex> lock(impl_->registry.mutex);
  return static_cast<int>(impl_->registry.objects.size());
}

#if TRIBUTARY_HAVE_MPI
MPI_Comm Context::Comm() const noexcept { return impl_->net.user; }
#endif

}  // namespace tributary
