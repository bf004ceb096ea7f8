#include "core/trace.hpp"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cinttypes>
#include <cmath>
#include <cstdlib>
#include <map>

#include "tributary/context_options.hpp"
#include "tributary/errors.hpp"

namespace tributary::detail {

namespace {

// The tracers of the live Contexts that trace; `open` lets TraceFor answer "none" with one
// atomic load.
struct Tracers {
  std::mutex mutex;
  std::map<const Context*, std::unique_ptr<Tracer>> tracers;
  std::map<std::pair<std::string, int>, int> opened;  // (prefix, rank) -> Contexts so far
};
Tracers& TheTracers() {
  static Tracers* r = new Tracers;  // deliberately leaked: Contexts may outlive statics
  return *r;
}
std::atomic<int> open{0};

// Lanes (Chrome "threads") of one rank: a lane per list for the contributions, a lane per
// reduction object for its phases.
constexpr int kObjectLane = 1000000;

std::string Quote(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char hex[8];
          std::snprintf(hex, sizeof hex, "\\u%04x", c);
          out += hex;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

// µs with three decimals, from integer nanoseconds (printf's %f was most of an event's cost).
std::string Number(double value) {
  const long long ns = std::llround(value * 1000.0);
  const long long abs_ns = ns < 0 ? -ns : ns;
  char text[32];
  char* p = text;
  if (ns < 0) *p++ = '-';
  p = std::to_chars(p, text + sizeof text, abs_ns / 1000).ptr;
  *p++ = '.';
  const long long frac = abs_ns % 1000;
  *p++ = static_cast<char>('0' + frac / 100);
  *p++ = static_cast<char>('0' + frac / 10 % 10);
  *p++ = static_cast<char>('0' + frac % 10);
  return std::string(text, p);
}

}  // namespace

void TraceRounds::Post(int peer, std::size_t bytes, bool send) {
  std::lock_guard<std::mutex> lock(tracer_->mutex_);
  Tracer::ObjectState& s = tracer_->State(object_);
  const double now = tracer_->Now();
  const bool advanced =
      tracer_->advanced_[static_cast<unsigned>(object_) % tracer_->advanced_.size()].exchange(
          0, std::memory_order_relaxed) != 0;
  if (s.boundary || advanced || s.round.start < 0) {
    tracer_->CloseRound(object_, s, now);
    s.round.start = now;
    s.boundary = false;
  }
  Tracer::Round& r = s.round;
  if (send) {
    ++r.sends;
    r.bytes_sent += bytes;
  } else {
    ++r.receives;
  }
  const std::string p = std::to_string(peer);
  if (r.peers.size() < 64 && (" " + r.peers + " ").find(" " + p + " ") == std::string::npos)
    r.peers += (r.peers.empty() ? "" : " ") + p;
}

void TraceRounds::Completed() {
  std::lock_guard<std::mutex> lock(tracer_->mutex_);
  tracer_->State(object_).boundary = true;
}

Tracer::Tracer(std::string path, int rank, int size)
    : path_(std::move(path)), rank_(rank), origin_(std::chrono::steady_clock::now()) {
  const auto unix_us = std::chrono::duration_cast<std::chrono::microseconds>(
                           std::chrono::system_clock::now().time_since_epoch())
                           .count();
  file_ = std::fopen(path_.c_str(), "w");
  if (!file_)
    throw UsageError("tributary: cannot write the trace file " + path_ +
                     " (ContextOptions::trace, TRIBUTARY_TRACE)");
  // otherData: where this rank's zero lies on the system clock, so that the merge can
  // align the ranks (exact on one node; across nodes as well as their clocks agree).
  buffer_ = "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"tributary\":\"timeline\",\"rank\":" +
            std::to_string(rank) + ",\"size\":" + std::to_string(size) +
            ",\"origin_unix_us\":" + std::to_string(unix_us) + "},\n\"traceEvents\":[\n";
  Emit("{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":" + std::to_string(rank_) +
       ",\"args\":{\"name\":\"rank " + std::to_string(rank_) + "\"}}");
  Emit("{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":" + std::to_string(rank_) +
       ",\"args\":{\"sort_index\":" + std::to_string(rank_) + "}}");
}

Tracer::~Tracer() {
  const double now = Now();
  for (auto& [object, s] : objects_) CloseRound(object, s, now);
  buffer_ += "\n]}\n";
  Flush();
  std::fclose(file_);
}

double Tracer::Now() const noexcept {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - origin_)
      .count();
}

Tracer::ObjectState& Tracer::State(int object) {
  auto [it, added] = objects_.try_emplace(object);
  if (added) {
    it->second.handle.tracer_ = this;
    it->second.handle.object_ = object;
  }
  return it->second;
}

void Tracer::Emit(const std::string& event) {
  if (!first_) buffer_ += ",\n";
  first_ = false;
  buffer_ += event;
  if (buffer_.size() > (1u << 20)) Flush();
}

void Tracer::Flush() {
  if (!buffer_.empty()) std::fwrite(buffer_.data(), 1, buffer_.size(), file_);
  buffer_.clear();
}

void Tracer::Slice(int object, const char* name, double start, double end,
                   const std::string& args) {
  Emit("{\"name\":" + Quote(name) +
       ",\"cat\":\"tributary\",\"ph\":\"X\",\"pid\":" + std::to_string(rank_) +
       ",\"tid\":" + std::to_string(kObjectLane + object) + ",\"ts\":" + Number(start) +
       ",\"dur\":" + Number(std::max(0.0, end - start)) + ",\"args\":{" + args + "}}");
}

void Tracer::CloseRound(int object, ObjectState& s, double now) {
  Round& r = s.round;
  if (r.start < 0) return;
  Slice(object, ("round " + std::to_string(r.index)).c_str(), r.start, now,
        "\"object\":" + s.quoted + ",\"generation\":" + std::to_string(s.generation) +
            ",\"round\":" + std::to_string(r.index) + ",\"sends\":" + std::to_string(r.sends) +
            ",\"receives\":" + std::to_string(r.receives) +
            ",\"bytes_sent\":" + std::to_string(r.bytes_sent) + ",\"peers\":" + Quote(r.peers));
  const int next = r.index + 1;
  r = Round{};
  r.index = next;
}

void Tracer::Object(int object, const std::string& name) {
  std::lock_guard<std::mutex> lock(mutex_);
  ObjectState& s = State(object);
  s.name = name;
  s.quoted = Quote(name);
  s.contribute = Quote("contribute " + name);
  Emit("{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":" + std::to_string(rank_) + ",\"tid\":" +
       std::to_string(kObjectLane + object) + ",\"args\":{\"name\":" + Quote(name) + "}}");
}

void Tracer::Arm(int object, std::uint64_t generation, int expected) {
  std::lock_guard<std::mutex> lock(mutex_);
  ObjectState& s = State(object);
  s.generation = generation;
  s.armed = Now();
  s.last = s.network = -1;
  s.scheduled = false;
  for (; lists_named_ < expected; ++lists_named_)
    Emit("{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":" + std::to_string(rank_) +
         ",\"tid\":" + std::to_string(lists_named_) + ",\"args\":{\"name\":\"list " +
         std::to_string(lists_named_) + "\"}}");
}

void Tracer::Contribute(int object, std::uint64_t generation, int list) {
  std::lock_guard<std::mutex> lock(mutex_);
  const ObjectState& s = State(object);
  Emit("{\"name\":" + s.contribute + ",\"cat\":\"tributary\",\"ph\":\"i\",\"s\":\"t\",\"pid\":" +
       std::to_string(rank_) + ",\"tid\":" + std::to_string(list) + ",\"ts\":" + Number(Now()) +
       ",\"args\":{\"object\":" + s.quoted + ",\"generation\":" + std::to_string(generation) +
       ",\"list\":" + std::to_string(list) + "}}");
}

void Tracer::LastArrival(int object, std::uint64_t generation) {
  std::lock_guard<std::mutex> lock(mutex_);
  ObjectState& s = State(object);
  s.last = Now();
  if (s.armed >= 0)
    Slice(object, "collect", s.armed, s.last,
          "\"object\":" + s.quoted + ",\"generation\":" + std::to_string(generation));
}

void Tracer::NetworkStart(int object, std::uint64_t generation, const LaunchSpec& spec) {
  std::lock_guard<std::mutex> lock(mutex_);
  ObjectState& s = State(object);
  s.network = Now();
  s.bytes = spec.packed ? spec.packed->bytes : spec.payload.count * spec.payload.elem_size;
  s.boundary = true;
  s.round = Round{};
  if (s.last < 0 && s.armed >= 0) s.last = s.armed;  // a start without contributions
  if (s.last >= 0)
    Slice(object, "combine", s.last, s.network,
          "\"object\":" + s.quoted + ",\"generation\":" + std::to_string(generation));
}

TraceRounds* Tracer::ScheduleStart(int object, std::uint64_t generation, ScheduleKind kind) {
  std::lock_guard<std::mutex> lock(mutex_);
  ObjectState& s = State(object);
  (void)generation;
  s.kind = kind;
  s.scheduled = true;
  s.boundary = true;
  return &s.handle;
}

void Tracer::Complete(int object, std::uint64_t generation, bool failed) {
  std::lock_guard<std::mutex> lock(mutex_);
  ObjectState& s = State(object);
  const double now = Now();
  CloseRound(object, s, now);
  if (s.network < 0) s.network = s.last >= 0 ? s.last : now;
  const std::string name = std::string("network ") + (s.scheduled ? ToString(s.kind) : "(none)") +
                           (failed ? " (failed)" : "");
  // Rounds end when the next starts: the network slice is written last, so that viewers
  // that sort by start see it enclose them.
  Slice(object, name.c_str(), s.network, now,
        "\"object\":" + s.quoted + ",\"generation\":" + std::to_string(generation) +
            ",\"bytes\":" + std::to_string(s.bytes) +
            ",\"schedule\":" + Quote(s.scheduled ? ToString(s.kind) : "none") +
            ",\"failed\":" + (failed ? "true" : "false"));
  s.armed = s.last = s.network = -1;
  s.scheduled = false;
}

void TraceOpen(const Context* ctx, const ContextOptions& options, int rank, int size) noexcept {
  std::string prefix = options.trace;
  if (prefix.empty()) {
    const char* env = std::getenv("TRIBUTARY_TRACE");
    if (env) prefix = env;
  }
  if (prefix.empty()) return;
  Tracers& r = TheTracers();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (r.tracers.erase(ctx))  // a Context at this address that failed in its constructor
    open.fetch_sub(1, std::memory_order_release);
  const int n = r.opened[{prefix, rank}]++;
  const std::string path =
      (n == 0 ? prefix : prefix + "-" + std::to_string(n)) + "." + std::to_string(rank) + ".json";
  try {
    r.tracers[ctx] = std::make_unique<Tracer>(path, rank, size);
  } catch (const std::exception& e) {  // a timeline is a diagnostic: the run goes on
    std::fprintf(stderr, "%s; rank %d records no timeline\n", e.what(), rank);
    return;
  }
  open.fetch_add(1, std::memory_order_release);
}

void TraceClose(const Context* ctx) noexcept {
  if (open.load(std::memory_order_acquire) == 0) return;
  Tracers& r = TheTracers();
  std::unique_ptr<Tracer> tracer;
  {
    std::lock_guard<std::mutex> lock(r.mutex);
    auto it = r.tracers.find(ctx);
    if (it == r.tracers.end()) return;
    tracer = std::move(it->second);
    r.tracers.erase(it);
    open.fetch_sub(1, std::memory_order_release);
  }
}

Tracer* TraceFor(const Context* ctx, int object, const std::string& name) {
  if (open.load(std::memory_order_acquire) == 0) return nullptr;
  Tracers& r = TheTracers();
  Tracer* tracer = nullptr;
  {
    std::lock_guard<std::mutex> lock(r.mutex);
    auto it = r.tracers.find(ctx);
    if (it == r.tracers.end()) return nullptr;
    tracer = it->second.get();
  }
  tracer->Object(object, name);
  return tracer;
}

}  // namespace tributary::detail
