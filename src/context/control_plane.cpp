// The control plane between Contexts, and how a failure reaches every rank. Messages are
// short strings on the control tag of the Context's communicator (their kind in the first
// byte), sent with MPI_Isend and received
// with MPI_Iprobe + MPI_Recv of a message that has already arrived, so nothing here blocks:
// failure notices and their acknowledgements, and the watchdog's queries and answers.
#include "context/control_plane.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <thread>

#include "context/registry.hpp"
#include "tributary/detail/core/reduction_core.hpp"
#include "tributary/errors.hpp"

namespace tributary {
namespace detail {

void AbortJob(const Network* net, int code, const std::string& text) noexcept {
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
    MPI_Abort(net != nullptr ? net->user : MPI_COMM_WORLD, code);
  }
#else
  (void)net;
#endif
  std::_Exit(code);  // like MPI_Abort: ends the process with an error code, no core dump
}

#if TRIBUTARY_HAVE_MPI
void ControlPlane::Send(int dest, ControlKind kind, const std::string& text) {
  auto send = std::make_unique<PendingSend>();
  send->text.reserve(text.size() + 1);
  send->text.push_back(static_cast<char>(kind));
  send->text += text;
  CheckMpi(MPI_Isend(send->text.data(), static_cast<int>(send->text.size()), MPI_CHAR, dest,
                     kControlTag, net_.comm, &send->request),
           "MPI_Isend");
  sends_.push_back(std::move(send));
}

void ControlPlane::FreeSends() noexcept {
  for (auto& send : sends_)
    if (send->request != MPI_REQUEST_NULL) MPI_Request_free(&send->request);
  sends_.clear();
}

bool ControlPlane::SendsDone() {
  for (auto it = sends_.begin(); it != sends_.end();) {
    int done = 0;
    CheckMpi(MPI_Test(&(*it)->request, &done, MPI_STATUS_IGNORE), "MPI_Test");
    it = done ? sends_.erase(it) : std::next(it);
  }
  return sends_.empty();
}

void ControlPlane::Poll() {
  (void)SendsDone();  // completed sends release their buffers
  const MPI_Comm comm = net_.comm;
  for (;;) {
    // Before a failure only the control tag: the others belong to generations in flight.
    // After one every message is dropped unless it is a control message (Sink).
    int flag = 0;
    MPI_Status status;
    CheckMpi(MPI_Iprobe(MPI_ANY_SOURCE, failed_.load() ? MPI_ANY_TAG : kControlTag, comm, &flag,
                        &status),
             "MPI_Iprobe");
    if (!flag) return;
    int len = 0;
    CheckMpi(MPI_Get_count(&status, MPI_CHAR, &len), "MPI_Get_count");
    std::string text(static_cast<std::size_t>(len), '\0');
    CheckMpi(MPI_Recv(text.data(), len, MPI_CHAR, status.MPI_SOURCE, status.MPI_TAG, comm,
                      MPI_STATUS_IGNORE),
             "MPI_Recv");
    if (status.MPI_TAG != kControlTag || text.empty()) continue;  // dropped
    const char kind = text[0];
    text.erase(0, 1);
    const int from = status.MPI_SOURCE;
    if (kind == kCtrlFailure) {
      if (!failed_.load()) {  // writers hold the registry mutex; readers see the text first
        failure_text_ = text;
        failure_origin_ = from;
        failed_.store(true);
      }
    } else if (kind == kCtrlQuery) {
      Send(from, kCtrlStatus, AnswerQuery(text));
    } else if (kind == kCtrlStatus) {
      TakeAnswer(from, text);
    } else if (kind == kCtrlSettle) {
      const long round = std::strtol(text.c_str(), nullptr, 10);
      if (round >= 0 && round < 64) settle_arrived_ |= std::uint64_t{1} << round;
    }
  }
}

bool ControlPlane::SettleBarrier() {
  int rounds = 0;
  while ((1LL << rounds) < size_) ++rounds;
  if (settle_sent_ == 0 && !SendsDone()) return false;
  while (settle_sent_ < rounds) {
    if (settle_sent_ > 0 && !(settle_arrived_ >> (settle_sent_ - 1) & 1u)) return false;
    Send((rank_ + (1 << settle_sent_)) % size_, kCtrlSettle, std::to_string(settle_sent_));
    ++settle_sent_;
  }
  const std::uint64_t all = rounds == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << rounds) - 1;
  return (settle_arrived_ & all) == all && SendsDone();
}

void ControlPlane::Sink(MPI_Comm comm) {
  if (comm == MPI_COMM_NULL) return;
  for (;;) {
    int flag = 0;
    MPI_Status status;
    CheckMpi(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &flag, &status), "MPI_Iprobe");
    if (!flag) return;
    int len = 0;
    CheckMpi(MPI_Get_count(&status, MPI_BYTE, &len), "MPI_Get_count");
    if (sunk_.size() < static_cast<std::size_t>(len)) sunk_.resize(static_cast<std::size_t>(len));
    CheckMpi(MPI_Recv(sunk_.data(), len, MPI_BYTE, status.MPI_SOURCE, status.MPI_TAG, comm,
                      MPI_STATUS_IGNORE),
             "MPI_Recv");
  }
}
#endif

void ControlPlane::FailAll(const std::string& text, bool remote, int origin) noexcept {
  Registry& registry = registry_;
  std::lock_guard<std::mutex> lock(registry.mutex);
  for (ReductionCore* core : registry.objects) core->FailGeneration(text, remote, origin);
}

void ControlPlane::FailHere(const std::string& text) {
  const int rank = rank_;
  {
    std::lock_guard<std::mutex> lock(registry_.mutex);
    if (failed_.load()) return;
    failure_text_ = text;  // before the flag: a thread that sees Failed() reads the text
    failure_origin_ = rank;
    failed_.store(true);
  }
#if TRIBUTARY_HAVE_MPI
  if (size_ > 1 && !MpiFinalized()) {
    std::lock_guard<std::mutex> mpi(net_.mpi_mutex);
    for (int r = 0; r < size_; ++r)
      if (r != rank) Send(r, kCtrlFailure, text);
  }
#endif
  FailAll(text, false, rank);
}

void ControlPlane::ServiceOnce() noexcept {
#if TRIBUTARY_HAVE_MPI
  if (size_ == 1 || !net_.MayCallMpi() || MpiFinalized()) return;
  try {
    Receive();
  } catch (...) {
    // An MPI error on the control messages: the caller's own wait runs into its limit.
  }
#endif
}

#if TRIBUTARY_HAVE_MPI
void ControlPlane::Receive() {
  std::string failure;
  int origin = -1;
  {
    std::lock_guard<std::mutex> lock(registry_.mutex);
    std::lock_guard<std::mutex> mpi(net_.mpi_mutex);
    const bool was_failed = failed_.load();
    Poll();
    if (failed_.load()) {
      if (const NodeLayout* nodes = net_.nodes.get()) {
        Sink(nodes->node);
        Sink(nodes->leaders);
        Sink(nodes->by_hardware);
      }
    }
    if (!was_failed && failed_.load()) {
      failure = failure_text_;
      origin = failure_origin_;
    }
  }
  if (origin >= 0) FailAll(failure, true, origin);
}
#endif

void ControlPlane::Forget(int id) noexcept {
  reported_.erase(id);
  awaited_seen_.erase(id);
}

}  // namespace detail
}  // namespace tributary
