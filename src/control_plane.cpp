// The control plane between Contexts, and how a failure reaches every rank. Messages are
// short strings on the control tag of the Context's communicator (their kind in the first
// byte), sent with MPI_Isend and received
// with MPI_Iprobe + MPI_Recv of a message that has already arrived, so nothing here blocks:
// failure notices and their acknowledgements, and the watchdog's queries and answers.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <thread>

#include "context_impl.hpp"
#include "tributary/errors.hpp"

namespace tributary {
namespace detail {

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

#if TRIBUTARY_HAVE_MPI
void ContextImpl::SendControl(int dest, ControlKind kind, const std::string& text) {
  auto send = std::make_unique<PendingSend>();
  send->text.reserve(text.size() + 1);
  send->text.push_back(static_cast<char>(kind));
  send->text += text;
  CheckMpi(MPI_Isend(send->text.data(), static_cast<int>(send->text.size()), MPI_CHAR, dest,
                     kControlTag, comm, &send->request),
           "MPI_Isend");
  ctrl_sends.push_back(std::move(send));
}

void ContextImpl::PollControl() {
  // Completed sends release their buffers.
  for (auto it = ctrl_sends.begin(); it != ctrl_sends.end();) {
    int done = 0;
    CheckMpi(MPI_Test(&(*it)->request, &done, MPI_STATUS_IGNORE), "MPI_Test");
    it = done ? ctrl_sends.erase(it) : std::next(it);
  }
  for (;;) {
    int flag = 0;
    MPI_Status status;
    CheckMpi(MPI_Iprobe(MPI_ANY_SOURCE, kControlTag, comm, &flag, &status), "MPI_Iprobe");
    if (!flag) return;
    int len = 0;
    CheckMpi(MPI_Get_count(&status, MPI_CHAR, &len), "MPI_Get_count");
    std::string text(static_cast<std::size_t>(len), '\0');
    CheckMpi(MPI_Recv(text.data(), len, MPI_CHAR, status.MPI_SOURCE, kControlTag, comm,
                      MPI_STATUS_IGNORE),
             "MPI_Recv");
    if (text.empty()) continue;
    const char kind = text[0];
    text.erase(0, 1);
    const int from = status.MPI_SOURCE;
    if (kind == kCtrlFailure) {
      if (!failed.exchange(true)) {
        failure_text = text;
        failure_origin = from;
      }
      acks_owed.push_back(from);  // once this rank's generations have failed (SettleFailure)
    } else if (kind == kCtrlAck) {
      if (acks_needed > 0) --acks_needed;
    } else if (kind == kCtrlRelease) {
      released = true;
    } else if (kind == kCtrlQuery) {
      SendControl(from, kCtrlStatus, AnswerQuery(text));
    } else if (kind == kCtrlStatus) {
      TakeAnswer(from, text);
    }
  }
}
#endif

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
      if (r != rank) SendControl(r, kCtrlFailure, text);
  }
#endif
  FailAll(text, false, rank, /*defer=*/size > 1);
}

void ContextImpl::SettleFailure() {
#if TRIBUTARY_HAVE_MPI
  bool launch = false;
  {
    std::lock_guard<std::mutex> mpi(mpi_mutex);
    for (int r : acks_owed) SendControl(r, kCtrlAck, "");
    acks_owed.clear();
    if (failure_origin == rank && acks_needed == 0 && !release_sent) {
      release_sent = true;
      for (int r = 0; r < size; ++r)
        if (r != rank) SendControl(r, kCtrlRelease, "");
      released = true;
    }
    launch = released && !launched_abandoned;
    if (launch) launched_abandoned = true;  // once
  }
  if (launch) {
    std::lock_guard<std::mutex> lock(registry_mutex);
    for (auto* core : objects) core->LaunchAbandoned();
  }
#endif
}

#if TRIBUTARY_HAVE_MPI
void ContextImpl::ReceiveControl() {
  std::string failure;
  int origin = -1;
  {
    std::lock_guard<std::mutex> lock(registry_mutex);
    std::lock_guard<std::mutex> mpi(mpi_mutex);
    const bool was_failed = failed.load();
    PollControl();
    if (!was_failed && failed.load()) {
      failure = failure_text;
      origin = failure_origin;
    }
  }
  if (origin >= 0) FailAll(failure, true, origin, /*defer=*/true);
  if (failed.load()) SettleFailure();
}
#endif

}  // namespace detail

void Context::ReportFailure(const std::string& message) {
  auto& d = *impl_;
  const std::string text = "rank " + std::to_string(d.rank) + " failed: " + message;
  if (d.options.on_failure == FailurePolicy::abort) detail::AbortJob(&d, 1, text);
  d.FailHere(text);
}

}  // namespace tributary
