#include "tributary/context.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "context_impl.hpp"
#include "topology.hpp"
#include "tributary/errors.hpp"
#include "tributary/tasks/sweep.hpp"

#if TRIBUTARY_HAVE_KOKKOS
#include <Kokkos_Macros.hpp>
#endif
#if TRIBUTARY_HAVE_MPI && defined(OPEN_MPI) && defined(__has_include)
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif
#endif

namespace tributary {
namespace detail {

#if TRIBUTARY_HAVE_MPI
// What this rank's MPI library says about device memory of the Kokkos backend in use, at
// run time (a library built with the extension may still run without GPU support).
bool LibraryReadsDeviceMemory() {
#if defined(KOKKOS_ENABLE_CUDA)
#if defined(OMPI_HAVE_MPI_EXT_CUDA) && OMPI_HAVE_MPI_EXT_CUDA
  return MPIX_Query_cuda_support() == 1;
#elif defined(MPIX_GPU_SUPPORT_CUDA)
  int yes = 0;
  return MPIX_GPU_query_support(MPIX_GPU_SUPPORT_CUDA, &yes) == MPI_SUCCESS && yes != 0;
#else
  return false;
#endif
#elif defined(KOKKOS_ENABLE_HIP)
#if defined(OMPI_HAVE_MPI_EXT_ROCM) && OMPI_HAVE_MPI_EXT_ROCM
  return MPIX_Query_rocm_support() == 1;
#elif defined(MPIX_GPU_SUPPORT_HIP)
  int yes = 0;
  return MPIX_GPU_query_support(MPIX_GPU_SUPPORT_HIP, &yes) == MPI_SUCCESS && yes != 0;
#else
  return false;
#endif
#else
  return false;  // a host backend: there is no device memory to hand over
#endif
}
#endif

bool MpiFinalized() noexcept {
#if TRIBUTARY_HAVE_MPI
  int finalized = 0;
  MPI_Finalized(&finalized);
  return finalized != 0;
#else
  return false;
#endif
}

void AbortJob(const ContextImpl* context, int code, const std::string& text) noexcept {
  std::fprintf(stderr, "tributary: %s", text.c_str());
  if (text.empty() || text.back() != '\n') std::fputc('\n', stderr);
  std::fflush(stderr);
#if TRIBUTARY_HAVE_MPI
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized && !MpiFinalized()) {
    // The report travels through the launcher's pipes; Hydra, unlike ORTE, stops reading
    // them once a rank aborts. A short pause costs nothing on a path that ends the job.
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
    MPI_Abort(context != nullptr ? context->user : MPI_COMM_WORLD, code);
  }
#else
  (void)context;
#endif
  std::_Exit(code);  // like MPI_Abort: ends the process with an error code, no core dump
}

namespace {

void DefaultErrorHandler(int rank, const std::string& message) {
  detail::AbortJob(nullptr, 1, "rank " + std::to_string(rank) + ": " + message);
}

#if TRIBUTARY_HAVE_MPI
MPI_Comm DupOwned(MPI_Comm comm, int* created) {
  MPI_Comm dup = MPI_COMM_NULL;
  CheckMpi(MPI_Comm_dup(comm, &dup), "MPI_Comm_dup");
  CheckMpi(MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  ++*created;
  return dup;
}

// The node's ranks in hardware order for commutative combines (NodeLayout::by_hardware):
// the leader first, then the others by BoundPosition. Made only where that order differs
// from rank order and every rank of the node knows its position; collective over the node.
void AddHardwareOrder(NodeLayout* nodes, int local, int* created) {
  int local_size = 1;
  CheckMpi(MPI_Comm_size(nodes->node, &local_size), "MPI_Comm_size");
  if (local_size < 3) return;  // the leader and one other: hardware order is rank order
  const int mine = local == 0 ? -1 : BoundPosition();
  std::vector<int> pos(static_cast<std::size_t>(local_size));
  CheckMpi(MPI_Allgather(&mine, 1, MPI_INT, pos.data(), 1, MPI_INT, nodes->node), "MPI_Allgather");
  bool known = true, differs = false;
  for (std::size_t i = 1; i < pos.size(); ++i) {
    known = known && pos[i] >= 0;
    differs = differs || (i > 1 && pos[i] < pos[i - 1]);
  }
  if (!known || !differs) return;
  // Ties (ranks bound to the same first PU) keep rank order: MPI_Comm_split sorts by key,
  // then by rank in the node.
  CheckMpi(MPI_Comm_split(nodes->node, 0, mine, &nodes->by_hardware), "MPI_Comm_split");
  ++*created;
  CheckMpi(MPI_Comm_set_errhandler(nodes->by_hardware, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
}

// The ranks of `comm` that share a node. SimGrid SMPI 3.32's MPI_Comm_split_type can hand
// a rank a group that is not yet complete (rank 0 saw 1 or 2 ranks of 16); there the
// simulated host name, which names the node, decides.
int SplitByNode(MPI_Comm comm, int key, MPI_Comm* node) {
#if TRIBUTARY_HAVE_SMPI
  int size = 0, rank = 0, len = 0;
  MPI_Comm_size(comm, &size);
  MPI_Comm_rank(comm, &rank);
  std::vector<char> names(static_cast<std::size_t>(size) * MPI_MAX_PROCESSOR_NAME, '\0');
  char* mine = names.data() + static_cast<std::size_t>(rank) * MPI_MAX_PROCESSOR_NAME;
  CheckMpi(MPI_Get_processor_name(mine, &len), "MPI_Get_processor_name");
  CheckMpi(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, names.data(), MPI_MAX_PROCESSOR_NAME,
                         MPI_CHAR, comm),
           "MPI_Allgather");
  int color = rank;
  for (int r = 0; r < rank; ++r)
    if (std::strncmp(names.data() + static_cast<std::size_t>(r) * MPI_MAX_PROCESSOR_NAME, mine,
                     MPI_MAX_PROCESSOR_NAME) == 0) {
      color = r;
      break;
    }
  return MPI_Comm_split(comm, color, key, node);
#else
  return MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, key, MPI_INFO_NULL, node);
#endif
}

// The node layout of `comm`: shared-memory groups, or virtual nodes of `per_node` ranks.
std::unique_ptr<NodeLayout> MakeNodeLayout(MPI_Comm comm, int rank, int size, int per_node,
                                           bool hardware_order, int* created) {
  auto nodes = std::make_unique<NodeLayout>();
  if (per_node > 0)
    CheckMpi(MPI_Comm_split(comm, rank / per_node, rank, &nodes->node), "MPI_Comm_split");
  else
    CheckMpi(SplitByNode(comm, rank, &nodes->node), "MPI_Comm_split_type");
  ++*created;
  CheckMpi(MPI_Comm_set_errhandler(nodes->node, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  int local = 0;
  CheckMpi(MPI_Comm_rank(nodes->node, &local), "MPI_Comm_rank");
  if (hardware_order) AddHardwareOrder(nodes.get(), local, created);
  CheckMpi(MPI_Comm_split(comm, local == 0 ? 0 : MPI_UNDEFINED, rank, &nodes->leaders),
           "MPI_Comm_split");
  int index = 0;
  if (nodes->leaders != MPI_COMM_NULL) {
    ++*created;
    CheckMpi(MPI_Comm_set_errhandler(nodes->leaders, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
    CheckMpi(MPI_Comm_rank(nodes->leaders, &index), "MPI_Comm_rank");
  }
  CheckMpi(MPI_Bcast(&index, 1, MPI_INT, 0, nodes->node), "MPI_Bcast");
  const int mine[2] = {index, local};
  std::vector<int> all(2 * static_cast<std::size_t>(size));
  CheckMpi(MPI_Allgather(mine, 2, MPI_INT, all.data(), 2, MPI_INT, comm), "MPI_Allgather");
  nodes->node_of.resize(static_cast<std::size_t>(size));
  nodes->local_of.resize(static_cast<std::size_t>(size));
  for (std::size_t r = 0; r < static_cast<std::size_t>(size); ++r) {
    nodes->node_of[r] = all[2 * r];
    nodes->local_of[r] = all[2 * r + 1];
    nodes->count = std::max(nodes->count, all[2 * r] + 1);
    const bool starts = r == 0 || nodes->node_of[r] != nodes->node_of[r - 1];
    if (starts ? (nodes->local_of[r] != 0 || (r && nodes->node_of[r] != nodes->node_of[r - 1] + 1))
               : nodes->local_of[r] != nodes->local_of[r - 1] + 1)
      nodes->contiguous = false;
  }
  return nodes;
}

// The selection tree's text: the options' file, else TRIBUTARY_SELECTION, else built in
// (*builtin: the single-machine tree, which the caller swaps for the cluster tree where the
// communicator spans nodes); read on rank 0 and broadcast, so every rank parses the same
// bytes (and fails alike).
SelectionTree LoadSelection(MPI_Comm comm, int rank, const std::string& option, bool* builtin) {
  std::string name, text, error;
  int use_builtin = 0;
  if (rank == 0) {
    std::string file = option;
    if (file.empty()) {
      const char* env = std::getenv("TRIBUTARY_SELECTION");
      if (env && *env) file = env;
    }
    if (file.empty()) {
      use_builtin = 1;
    } else {
      name = file;
      std::ifstream in(file, std::ios::binary);
      std::ostringstream buf;
      if (in) buf << in.rdbuf();
      if (!in) error = "cannot read the selection tree file '" + file + "'";
      text = buf.str();
    }
  }
  const auto bcast = [&](std::string* str) {
    long long n = static_cast<long long>(str->size());
    CheckMpi(MPI_Bcast(&n, 1, MPI_LONG_LONG, 0, comm), "MPI_Bcast");
    str->resize(static_cast<std::size_t>(n));
    if (n) CheckMpi(MPI_Bcast(str->data(), static_cast<int>(n), MPI_CHAR, 0, comm), "MPI_Bcast");
  };
  bcast(&error);
  if (!error.empty()) throw UsageError("tributary::Context: " + error);
  CheckMpi(MPI_Bcast(&use_builtin, 1, MPI_INT, 0, comm), "MPI_Bcast");
  *builtin = use_builtin != 0;
  if (*builtin) return SelectionTree::Parse(SelectionTree::DefaultJson(), "built-in selection tree");
  bcast(&name);
  bcast(&text);
  return SelectionTree::Parse(text, name);
}

// Ranks per node (the largest node) and node count, from the layout or from a temporary
// shared-memory split.
SelectionFacts NodeFacts(MPI_Comm comm, int size, const NodeLayout* nodes, bool needed) {
  SelectionFacts f;
  f.comm_size = size;
  f.node_count = 1;
  f.ranks_per_node = size;  // unknown unless needed: then measured below
  if (nodes) {
    std::vector<int> per(static_cast<std::size_t>(nodes->count), 0);
    for (int n : nodes->node_of) ++per[static_cast<std::size_t>(n)];
    f.node_count = nodes->count;
    f.ranks_per_node = *std::max_element(per.begin(), per.end());
    return f;
  }
  if (!needed) return f;
  MPI_Comm shared = MPI_COMM_NULL;
  CheckMpi(SplitByNode(comm, 0, &shared), "MPI_Comm_split_type");
  int local_size = 1, local_rank = 0;
  MPI_Comm_size(shared, &local_size);
  MPI_Comm_rank(shared, &local_rank);
  MPI_Comm_free(&shared);
  int leader = local_rank == 0 ? 1 : 0;
  CheckMpi(MPI_Allreduce(&local_size, &f.ranks_per_node, 1, MPI_INT, MPI_MAX, comm), "MPI_Allreduce");
  CheckMpi(MPI_Allreduce(&leader, &f.node_count, 1, MPI_INT, MPI_SUM, comm), "MPI_Allreduce");
  return f;
}

void ProgressLoop(Context* ctx) {
  auto& d = ctx->Impl();
  while (!d.progress_stop.load(std::memory_order_acquire)) {
    try {
      ctx->Progress();
    } catch (...) {
      // A failure reported by another rank: the reductions themselves carry it to the
      // user's polls; the thread goes on draining.
    }
    std::this_thread::sleep_for(d.options.progress_interval);
  }
}
#endif

}  // namespace

void ContextImpl::Register(ReductionCore* core, int* id, int* slot) {
  std::lock_guard<std::mutex> lock(registry_mutex);
  auto free_slot = std::find(slot_used.begin(), slot_used.end(), 0);
  if (free_slot == slot_used.end()) {
    std::ostringstream msg;
    msg << "rank " << rank << ": cannot create " << core->Name() << ": all "
        << slot_used.size()
        << " communicators of the Context's pool are taken by live reduction objects; "
           "raise ContextOptions::communicator_pool";
    throw UsageError(msg.str());
  }
  *free_slot = 1;
  *slot = static_cast<int>(free_slot - slot_used.begin());
  *id = next_object_id++;
  objects.push_back(core);
  members.fetch_add(1, std::memory_order_relaxed);
}

void ContextImpl::Unregister(ReductionCore* core) noexcept {
  std::lock_guard<std::mutex> lock(registry_mutex);
  objects.erase(std::remove(objects.begin(), objects.end(), core), objects.end());
  members.store(static_cast<int>(objects.size() + pollers.size()), std::memory_order_relaxed);
  if (core->Slot() >= 0 && core->Slot() < static_cast<int>(slot_used.size()))
    slot_used[static_cast<std::size_t>(core->Slot())] = 0;
  for (auto it = watchdog.begin(); it != watchdog.end();)
    it = it->first.first == core->ObjectId() ? watchdog.erase(it) : std::next(it);
  reported.erase(core->ObjectId());
}

int ContextImpl::TagFor(int slot, std::uint64_t generation) const noexcept {
#if TRIBUTARY_HAVE_MPI
  const auto g = static_cast<int>(generation % static_cast<std::uint64_t>(generations_in_tag));
  return (g * static_cast<int>(slot_used.size()) + slot) * kTagsPerSchedule;
#else
  (void)slot;
  (void)generation;
  return 0;
#endif
}

bool ContextImpl::MayCallMpi() const noexcept {
#if TRIBUTARY_HAVE_MPI
  return thread_level >= MPI_THREAD_SERIALIZED || std::this_thread::get_id() == owner_thread;
#else
  return true;
#endif
}

void AddPoller(Context& ctx, void* self, PollFn poll) {
  auto& d = ctx.Impl();
  std::lock_guard<std::mutex> lock(d.registry_mutex);
  d.pollers.push_back(ContextImpl::Poller{self, poll});
  d.members.fetch_add(1, std::memory_order_relaxed);
}

void RemovePoller(Context& ctx, void* self) noexcept {
  auto& d = ctx.Impl();
  std::lock_guard<std::mutex> lock(d.registry_mutex);
  d.pollers.erase(std::remove_if(d.pollers.begin(), d.pollers.end(),
                                 [self](const ContextImpl::Poller& p) { return p.self == self; }),
                  d.pollers.end());
  d.members.store(static_cast<int>(d.objects.size() + d.pollers.size()), std::memory_order_relaxed);
}

void WatchdogReport(Context& ctx, const std::string& text) noexcept { ctx.Impl().Report(text); }

void AdvanceOthers(Context& ctx, const void* self) noexcept {
  auto& d = ctx.Impl();
  if (d.size == 1 || d.members.load(std::memory_order_relaxed) <= 1 || !d.MayCallMpi()) return;
  if (CurrentSweep() != 0 && d.hooked_runs.load(std::memory_order_relaxed) > 0) return;
  // Busy: another thread is progressing the Context (or registering); it advances them.
  std::unique_lock<std::mutex> lock(d.registry_mutex, std::try_to_lock);
  if (!lock) return;
  const std::size_t n = d.objects.size() + d.pollers.size();
  for (std::size_t step = 1; step <= n; ++step) {
    const std::size_t k = (d.next_turn + step) % n;
    if (k < d.objects.size()) {
      ReductionCore* core = d.objects[k];
      if (core == self || !core->NetworkActive()) continue;
      d.next_turn = k;
      core->Advance();
      return;
    }
    const ContextImpl::Poller& p = d.pollers[k - d.objects.size()];
    if (p.self == self) continue;
    d.next_turn = k;
    p.poll(p.self);
    return;
  }
}

void ContextImpl::CheckThread() const {
#if TRIBUTARY_HAVE_MPI
  if (thread_level >= MPI_THREAD_SERIALIZED) return;
  if (std::this_thread::get_id() == owner_thread) return;
  throw UsageError("rank " + std::to_string(rank) +
                   ": a reduction was started or checked from a thread other than the one "
                   "that created its Context, but MPI provides only " +
                   (thread_level == MPI_THREAD_FUNNELED ? std::string("MPI_THREAD_FUNNELED")
                                                        : std::string("MPI_THREAD_SINGLE")) +
                   "; initialise MPI with MPI_THREAD_SERIALIZED or higher to poll from "
                   "worker threads");
#endif
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

void ContextImpl::FailAll(const std::string& text, bool remote, int origin, bool defer) noexcept {
  std::lock_guard<std::mutex> lock(registry_mutex);
  for (ReductionCore* core : objects) core->FailGeneration(text, remote, origin, defer);
}

void ContextImpl::FailHere(const std::string& text) {
  {
    std::lock_guard<std::mutex> lock(registry_mutex);
    if (failed.exchange(true)) return;
    failure_text = text;
    failure_origin = rank;
  }
#if TRIBUTARY_HAVE_MPI
  {
    std::lock_guard<std::mutex> mpi(mpi_mutex);
    acks_needed = size - 1;
    for (int r = 0; r < size; ++r)
      if (r != rank) SendControl(r, kTagFailure, text);
  }
#endif
  FailAll(text, false, rank, /*defer=*/size > 1);
}

}  // namespace detail

Context::Context(ContextOptions options)
#if TRIBUTARY_HAVE_MPI
    : Context(MPI_COMM_WORLD, std::move(options)) {
}
#else
    : impl_(std::make_unique<detail::ContextImpl>()) {
  impl_->options = std::move(options);
  impl_->handler = impl_->options.error_handler;
  impl_->owner_thread = std::this_thread::get_id();
  if (impl_->options.communicator_pool < 1)
    throw UsageError("ContextOptions::communicator_pool must be at least 1");
  impl_->slot_used.assign(static_cast<std::size_t>(impl_->options.communicator_pool), 0);
  std::string text = SelectionTree::DefaultJson(), name = "built-in selection tree";
  std::string file = impl_->options.selection_file;
  if (file.empty() && std::getenv("TRIBUTARY_SELECTION")) file = std::getenv("TRIBUTARY_SELECTION");
  if (!file.empty()) {
    std::ifstream in(file, std::ios::binary);
    std::ostringstream buf;
    if (in) buf << in.rdbuf();
    if (!in) throw UsageError("tributary::Context: cannot read the selection tree file '" + file + "'");
    text = buf.str();
    name = file;
  }
  const SelectionTree tree = SelectionTree::Parse(text, name);
  for (int c = 0; c < 3; ++c) impl_->selection[c] = tree.Prune(impl_->facts, static_cast<Collective>(c));
  const char* log = std::getenv("TRIBUTARY_LOG");
  impl_->log_selection = log && std::strstr(log, "selection");
}
#endif

#if TRIBUTARY_HAVE_MPI
Context::Context(MPI_Comm comm, ContextOptions options)
    : impl_(std::make_unique<detail::ContextImpl>()) {
  auto& d = *impl_;
  d.options = std::move(options);
  d.handler = d.options.error_handler;
  d.owner_thread = std::this_thread::get_id();
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized || detail::MpiFinalized())
    throw UsageError("tributary::Context created outside MPI_Init .. MPI_Finalize");
  if (d.options.communicator_pool < 1)
    throw UsageError("ContextOptions::communicator_pool must be at least 1");
  int inter = 0;
  detail::CheckMpi(MPI_Comm_test_inter(comm, &inter), "MPI_Comm_test_inter");
  if (inter) throw UsageError("tributary::Context: intercommunicators are not supported");
  detail::CheckMpi(MPI_Query_thread(&d.thread_level), "MPI_Query_thread");
#if TRIBUTARY_HAVE_SMPI
  // SMPI runs every simulated rank on its own simulated actor; an MPI call from any other
  // thread (a progress thread, a worker of the threaded executor) is not supported
  // whatever level it reports, so only the creating thread may poll.
  d.thread_level = std::min(d.thread_level, static_cast<int>(MPI_THREAD_FUNNELED));
#endif
  // Below SERIALIZED one thread makes every call (CheckThread): an uncontended lock per
  // poll would only slow the poll loop (about 120 ns of a 1.6 us cycle at 2 ranks).
  d.serialize_mpi = d.thread_level == MPI_THREAD_SERIALIZED;
  d.user = comm;
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
  if (flag && attr) d.tag_ub = *static_cast<int*>(attr);
  const int pool = d.options.communicator_pool;
  d.generations_in_tag = std::max(1, (d.tag_ub / detail::kTagsPerSchedule) / pool);
  d.p2p = detail::DupOwned(comm, &d.comms_created);
  d.ctrl = detail::DupOwned(comm, &d.comms_created);
  d.pool.reserve(static_cast<std::size_t>(pool));
  for (int i = 0; i < pool; ++i) d.pool.push_back(detail::DupOwned(comm, &d.comms_created));
  d.slot_used.assign(static_cast<std::size_t>(pool), 0);
  if (d.options.schedule_params.node_aware || d.options.ranks_per_node > 0)
    d.nodes = detail::MakeNodeLayout(comm, d.rank, d.size, d.options.ranks_per_node,
                                     d.options.hardware_node_order, &d.comms_created);
  // A tree that tests the node layout, or the built-in choice between the single-machine
  // and the cluster tree, costs one temporary communicator here (freed at once).
  using Pred = SelectionTree::Pred;
  d.facts = detail::NodeFacts(comm, d.size, d.nodes.get(),
                              builtin ||
                                  tree.Tests(static_cast<std::uint8_t>(Pred::ranks_per_node)) ||
                                  tree.Tests(static_cast<std::uint8_t>(Pred::node_count)) ||
                                  tree.UsesNodeAware());
  if (builtin && d.facts.node_count > 1)
    tree = SelectionTree::Parse(SelectionTree::BuiltinJson(d.facts),
                                "built-in cluster selection tree");
  bool node_aware_leaf = false;
  for (int c = 0; c < 3; ++c) {
    d.selection[c] = tree.Prune(d.facts, static_cast<Collective>(c));
    node_aware_leaf = node_aware_leaf || d.selection[c].UsesNodeAware();
  }
  if (node_aware_leaf && !d.nodes && d.facts.node_count > 1 && d.facts.node_count < d.size)
    d.nodes = detail::MakeNodeLayout(comm, d.rank, d.size, 0, d.options.hardware_node_order,
                                     &d.comms_created);
  const char* log = std::getenv("TRIBUTARY_LOG");
  d.log_selection = log && std::strstr(log, "selection");
  if (d.options.device_aware_mpi == DeviceAwareMpi::on) {
    d.mpi_reads_device = true;
  } else if (d.options.device_aware_mpi == DeviceAwareMpi::detect) {
    int yes = detail::LibraryReadsDeviceMemory() ? 1 : 0;
    detail::CheckMpi(MPI_Allreduce(MPI_IN_PLACE, &yes, 1, MPI_INT, MPI_LAND, comm), "MPI_Allreduce");
    d.mpi_reads_device = yes != 0;
  }
  if (d.options.progress == ProgressPolicy::thread) {
    if (TRIBUTARY_HAVE_SMPI)
      throw UsageError("ProgressPolicy::thread is not available under SimGrid SMPI: a "
                       "simulated rank cannot call MPI from a std::thread; use polling");
    if (d.size > 1 && d.thread_level < MPI_THREAD_SERIALIZED)
      throw UsageError("ProgressPolicy::thread needs MPI initialised with at least "
                       "MPI_THREAD_SERIALIZED");
    d.progress_thread = std::thread(detail::ProgressLoop, this);
  }
}
#endif

Context::~Context() {
  auto& d = *impl_;
  if (d.progress_thread.joinable()) {
    d.progress_stop.store(true, std::memory_order_release);
    d.progress_thread.join();
  }
  {
    std::lock_guard<std::mutex> lock(d.registry_mutex);
    if (!d.objects.empty()) {
      std::string names;
      const std::size_t count = d.objects.size();
      for (auto* core : d.objects) {
        names += "\n  " + core->Name();
        core->Orphan();
      }
      d.objects.clear();
      // Report without the lock: the handler may do anything.
      d.registry_mutex.unlock();
      d.HandleError("rank " + std::to_string(d.rank) + ": tributary::Context destroyed while " +
                    std::to_string(count) +
                    " reduction object(s) still exist; destroy them first:" + names);
      d.registry_mutex.lock();
    }
  }
#if TRIBUTARY_HAVE_MPI
  if (detail::MpiFinalized()) {
    d.HandleError("tributary::Context destroyed after MPI_Finalize; destroy it before "
                  "finalising MPI so that its communicators can be freed");
    return;
  }
  for (auto& send : d.ctrl_sends)
    if (send->request != MPI_REQUEST_NULL) MPI_Request_free(&send->request);
  d.ctrl_sends.clear();
  for (auto& c : d.pool) MPI_Comm_free(&c);
  if (d.nodes) {
    if (d.nodes->node != MPI_COMM_NULL) MPI_Comm_free(&d.nodes->node);
    if (d.nodes->leaders != MPI_COMM_NULL) MPI_Comm_free(&d.nodes->leaders);
    if (d.nodes->by_hardware != MPI_COMM_NULL) MPI_Comm_free(&d.nodes->by_hardware);
  }
  if (d.p2p != MPI_COMM_NULL) MPI_Comm_free(&d.p2p);
  if (d.ctrl != MPI_COMM_NULL) MPI_Comm_free(&d.ctrl);
#endif
}

void Context::HandleError(const std::string& message) noexcept { impl_->HandleError(message); }

int Context::Rank() const noexcept { return impl_->rank; }
int Context::Size() const noexcept { return impl_->size; }
const SelectionTree& Context::Selection(Collective collective) const noexcept {
  return impl_->selection[static_cast<int>(collective)];
}

const SelectionFacts& Context::Facts() const noexcept { return impl_->facts; }

const ContextOptions& Context::Options() const noexcept { return impl_->options; }
int Context::CommunicatorsCreated() const noexcept { return impl_->comms_created; }

int Context::NodeCount() const noexcept {
#if TRIBUTARY_HAVE_MPI
  if (impl_->nodes) return impl_->nodes->count;
#endif
  return 1;
}

bool Context::MpiReadsDeviceMemory() const noexcept { return impl_->mpi_reads_device; }

bool Context::NodeInHardwareOrder() const noexcept {
#if TRIBUTARY_HAVE_MPI
  return impl_->nodes && impl_->nodes->by_hardware != MPI_COMM_NULL;
#else
  return false;
#endif
}

int Context::LiveObjects() const noexcept {
  std::lock_guard<std::mutex> lock(impl_->registry_mutex);
  return static_cast<int>(impl_->objects.size());
}

#if TRIBUTARY_HAVE_MPI
MPI_Comm Context::Comm() const noexcept { return impl_->user; }
#endif

void Context::Progress() {
  auto& d = *impl_;
  {
    std::lock_guard<std::mutex> lock(d.registry_mutex);
    const std::uint64_t sweep = CurrentSweep();
    for (auto* core : d.objects)
      if (core->NetworkActive() && (sweep == 0 || !core->PolledInSweep(sweep))) core->Advance();
    if (d.MayCallMpi())
      for (const auto& p : d.pollers) p.poll(p.self);
  }
  // Failure notices, watchdog queries and the watchdog's clock are rare and not urgent:
  // they are looked at on every 16th call only, which keeps an idle sweep's hook cheap.
  const bool poll_control = --d.control_countdown <= 0;
  if (poll_control) d.control_countdown = 16;
#if TRIBUTARY_HAVE_MPI
  if (d.size > 1 && poll_control) {
    d.CheckThread();
    std::string failure;
    int origin = -1;
    {
      std::lock_guard<std::mutex> lock(d.registry_mutex);
      std::lock_guard<std::mutex> mpi(d.mpi_mutex);
      const bool was_failed = d.failed.load();
      d.PollControl();
      if (!was_failed && d.failed.load()) {
        failure = d.failure_text;
        origin = d.failure_origin;
      }
    }
    if (origin >= 0) d.FailAll(failure, true, origin);
    bool launch = false;
    {
      std::lock_guard<std::mutex> mpi(d.mpi_mutex);
      launch = d.acks_needed == 0 && d.failure_origin == d.rank && d.failed.load() &&
               !d.ack_owed_to_all;
      if (launch) d.ack_owed_to_all = true;  // once
    }
    if (launch) {
      std::lock_guard<std::mutex> lock(d.registry_mutex);
      for (auto* core : d.objects) core->LaunchAbandoned();
    }
  }
#endif
  if (poll_control && d.options.watchdog.count() > 0) d.RunWatchdog();
  if (d.failed.load() && d.failure_origin != d.rank)
    throw RemoteError(d.failure_origin, d.failure_text);
}

void Context::WaitAll() {
  auto& d = *impl_;
  for (;;) {
    bool active = false;
    {
      std::lock_guard<std::mutex> lock(d.registry_mutex);
      for (auto* core : d.objects) active = active || core->NetworkActive() || core->AwaitingClient();
    }
    if (!active) return;
    {
      std::lock_guard<std::mutex> lock(d.registry_mutex);
      for (auto* core : d.objects)
        if (core->AwaitingClient()) core->PollClient();
    }
    Progress();
  }
}

void Context::ReportFailure(const std::string& message) {
  auto& d = *impl_;
  const std::string text = "rank " + std::to_string(d.rank) + " failed: " + message;
  if (d.options.on_failure == FailurePolicy::abort) detail::AbortJob(&d, 1, text);
  d.FailHere(text);
}

}  // namespace tributary
