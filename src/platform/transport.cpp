// The point-to-point transport of keyed collectives and block patterns: byte messages on
// the object's own communicator, received by matched probe; messages to this rank stay in
// memory.
#include "platform/transport.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <deque>
#include <mutex>
#include <new>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>

#include "tributary/errors.hpp"

namespace tributary::detail {

namespace {
constexpr std::size_t kPoolLimit = 256;  // buffers kept for reuse

int ClassOf(std::size_t capacity) {
  int c = 0;
  while (capacity >>= 1) ++c;
  return c;
}
}  // namespace

std::vector<char> BufferPool::Take(std::size_t bytes) {
  const int first = ClassOf(bytes);
  auto& same = kept_[first];  // capacities from half of `bytes` up: look at the latest few
  for (std::size_t i = same.size(), seen = 0; i-- > 0 && seen < 4; ++seen)
    if (same[i].capacity() >= bytes) {
      std::vector<char> v = std::move(same[i]);
      same[i] = std::move(same.back());
      same.pop_back();
      --count_;
      return v;
    }
  for (int c = first + 1; c < kClasses; ++c)
    if (!kept_[c].empty()) {
      std::vector<char> v = std::move(kept_[c].back());
      kept_[c].pop_back();
      --count_;
      return v;
    }
  std::vector<char> fresh;
  fresh.reserve(bytes);
  return fresh;
}

void BufferPool::Give(std::vector<char>&& buffer) {
  if (buffer.capacity() == 0) return;
  const int c = ClassOf(buffer.capacity());
  if (count_ >= limit_) {
    // The smallest makes room: large buffers cost the most to fault in again.
    int smallest = 0;
    while (smallest < c && kept_[smallest].empty()) ++smallest;
    if (smallest >= c) return;
    kept_[smallest].pop_back();
    --count_;
  }
  kept_[c].push_back(std::move(buffer));
  ++count_;
}

struct Transport::Impl {
  std::deque<std::vector<char>> self;  // whole wires, the message at kPrefix
  BufferPool pool{kPoolLimit};
#if TRIBUTARY_HAVE_MPI
  MPI_Comm comm = MPI_COMM_NULL;
  std::uint64_t nonce = 0;  // the same on every rank; messages without it are dropped
  std::vector<MPI_Request> requests;
  std::vector<std::vector<char>> buffers;  // alive until their request completes
#endif
};

Transport::Transport(Context& ctx, std::string owner)
    : impl_(std::make_unique<Impl>()), ctx_(&ctx), owner_(std::move(owner)) {
  rank_ = ctx.Rank();
  size_ = ctx.Size();
  drain_ = ctx.Options().watchdog.count() > 0 ? ctx.Options().watchdog
                                              : std::chrono::duration<double>(60);
#if TRIBUTARY_HAVE_MPI
  MPI_Comm_dup(ctx.Comm(), &impl_->comm);
  impl_->nonce = AgreedNonce(impl_->comm);
#endif
}

Transport::~Transport() {
#if TRIBUTARY_HAVE_MPI
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;
  // A test may answer "not yet" for a send that has left, and a large send completes only
  // when its receiver takes it: the sends get the drain time (the Context's watchdog), while
  // what arrives for this object meanwhile is dropped (nothing reads it any more).
  const auto limit = std::chrono::steady_clock::now() +
                     std::chrono::duration_cast<std::chrono::steady_clock::duration>(drain_);
  std::vector<char> dropped;
  while (!SendsDone() && std::chrono::steady_clock::now() < limit) {
    while (ReceiveBuffer(dropped)) impl_->pool.Give(std::move(dropped));
    std::this_thread::yield();
  }
  if (!impl_->requests.empty()) {
    // The MPI library cannot be made to let go of a send it has started (Open MPI does not
    // cancel sends), and a large one reads its buffer when the receiver takes it, which
    // may be long after this: freeing the buffer here would let MPI read freed memory.
    // The sends go on without an owner and their buffers are kept for the life of the
    // process.
    const std::size_t n = impl_->requests.size();
    static std::mutex kept_mutex;
    // Never freed (MPI may read them), and reachable from here, so not a leak.
    static auto* kept = new (std::nothrow) std::vector<std::vector<char>>;
    {
      std::lock_guard<std::mutex> lock(kept_mutex);
      for (std::size_t i = 0; i < n; ++i) {
        MPI_Request_free(&impl_->requests[i]);
        try {
          if (!kept) throw std::bad_alloc();
          kept->push_back(std::move(impl_->buffers[i]));
        } catch (const std::bad_alloc&) {
          // Out of memory: the buffer's vector itself is let go of instead.
          (void)new (std::nothrow) std::vector<char>(std::move(impl_->buffers[i]));
        }
      }
    }
    const std::string text =
        (owner_.empty() ? std::string("tributary: an object") : owner_) + ", rank " +
        std::to_string(rank_) + ": destroyed while " + std::to_string(n) +
        " message(s) to other ranks are in flight; run it to completion before destroying it "
        "(their buffers are kept: the MPI library may still read them)";
    if (ctx_)
      ctx_->HandleError(text);
    else
      std::fprintf(stderr, "tributary: %s\n", text.c_str());
  }
  if (impl_->comm != MPI_COMM_NULL) MPI_Comm_free(&impl_->comm);
#endif
}

void Transport::Send(int rank, const void* head, std::size_t head_bytes, const void* body,
                     std::size_t body_bytes) {
  // One buffer, filled once: [nonce] head body.
  std::vector<char> wire = impl_->pool.Take(kPrefix + head_bytes + body_bytes);
  wire.resize(kPrefix + head_bytes + body_bytes);
  if (head_bytes) std::memcpy(wire.data() + kPrefix, head, head_bytes);
  if (body_bytes) std::memcpy(wire.data() + kPrefix + head_bytes, body, body_bytes);
  SendBuffer(rank, std::move(wire));
}

void Transport::SendBuffer(int rank, std::vector<char>&& wire) {
  if (wire.size() < kPrefix)
    throw std::logic_error("Transport::SendBuffer: no room for the prefix");
  if (rank == rank_) {
    impl_->self.push_back(std::move(wire));
    return;
  }
#if TRIBUTARY_HAVE_MPI
  std::memcpy(wire.data(), &impl_->nonce, kPrefix);
  impl_->buffers.push_back(std::move(wire));
  impl_->requests.push_back(MPI_REQUEST_NULL);
  const std::vector<char>& w = impl_->buffers.back();
  const int rc = MPI_Isend(w.data(), static_cast<int>(w.size()), MPI_BYTE, rank, 0, impl_->comm,
                           &impl_->requests.back());
  if (rc != MPI_SUCCESS) throw MpiError(rc, "tributary: MPI_Isend failed");
  ++remote_;
#endif
}

bool Transport::Receive(std::vector<char>& bytes) {
  std::vector<char> wire;
  if (!ReceiveBuffer(wire)) return false;
  bytes.assign(wire.begin() + kPrefix, wire.end());
  impl_->pool.Give(std::move(wire));
  return true;
}

bool Transport::ReceiveBuffer(std::vector<char>& wire) {
  if (!impl_->self.empty()) {
    wire = std::move(impl_->self.front());
    impl_->self.pop_front();
    return true;
  }
#if TRIBUTARY_HAVE_MPI
  for (;;) {
    int flag = 0;
    MPI_Status status;
#if TRIBUTARY_HAVE_SMPI
    // SMPI 3.32 aborts in MPI_Improbe / MPI_Mrecv. A simulated rank is one thread, so no
    // other receive can take the probed message between MPI_Iprobe and MPI_Recv.
    MPI_Iprobe(MPI_ANY_SOURCE, 0, impl_->comm, &flag, &status);
    if (!flag) return false;
    int n = 0;
    MPI_Get_count(&status, MPI_BYTE, &n);
    wire = impl_->pool.Take(static_cast<std::size_t>(n));
    wire.resize(static_cast<std::size_t>(n));
    MPI_Recv(wire.data(), n, MPI_BYTE, status.MPI_SOURCE, 0, impl_->comm, MPI_STATUS_IGNORE);
#else
    MPI_Message msg;
    MPI_Improbe(MPI_ANY_SOURCE, 0, impl_->comm, &flag, &msg, &status);
    if (!flag) return false;
    int n = 0;
    MPI_Get_count(&status, MPI_BYTE, &n);
    wire = impl_->pool.Take(static_cast<std::size_t>(n));
    wire.resize(static_cast<std::size_t>(n));
    MPI_Mrecv(wire.data(), n, MPI_BYTE, &msg, MPI_STATUS_IGNORE);
#endif
    std::uint64_t nonce = 0;
    if (wire.size() >= kPrefix) std::memcpy(&nonce, wire.data(), kPrefix);
    if (wire.size() >= kPrefix && nonce == impl_->nonce) return true;
    impl_->pool.Give(std::move(wire));  // left over from a freed communicator the library reused
  }
#else
  return false;
#endif
}

BufferPool& Transport::Pool() noexcept { return impl_->pool; }

#if TRIBUTARY_HAVE_MPI
std::uint64_t AgreedNonce(MPI_Comm comm) {
  // An MPI library may give a new communicator the context of one freed before; messages
  // sent on the old one and never received would then match. Every message carries this
  // object's nonce, drawn on rank 0 and broadcast, so such leftovers are recognised.
  static std::atomic<std::uint64_t> counter{0};
  std::uint64_t nonce = 0;
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  if (rank == 0) {
    std::random_device rd;
    nonce = (static_cast<std::uint64_t>(rd()) << 32 ^ rd()) + 0x9E3779B97F4A7C15ull * ++counter;
  }
  MPI_Bcast(&nonce, 1, MPI_UINT64_T, 0, comm);
  return nonce;
}
#endif

int Transport::FirstFailing(bool ok) {
  int first = ok ? size_ : rank_;
#if TRIBUTARY_HAVE_MPI
  MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_INT, MPI_MIN, impl_->comm);
#endif
  return first < size_ ? first : -1;
}

bool Transport::SendsDone() {
#if TRIBUTARY_HAVE_MPI
  auto& reqs = impl_->requests;
  for (std::size_t i = 0; i < reqs.size();) {
    int done = 0;
    MPI_Test(&reqs[i], &done, MPI_STATUS_IGNORE);
    if (done) {
      reqs[i] = reqs.back();
      reqs.pop_back();
      impl_->pool.Give(std::move(impl_->buffers[i]));
      impl_->buffers[i] = std::move(impl_->buffers.back());
      impl_->buffers.pop_back();
    } else {
      ++i;
    }
  }
  return reqs.empty();
#else
  return true;
#endif
}

}  // namespace tributary::detail
