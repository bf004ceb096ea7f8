#include "core/agreement.hpp"

#include <cstdio>
#include <cstring>
#include <map>

#if defined(__GNUG__)
#include <cxxabi.h>

#include <cstdlib>
#endif

#include "tributary/context_options.hpp"
#include "tributary/errors.hpp"

namespace tributary::detail {

std::string ReadableTypeName(const std::type_info& type) {
  std::string name = type.name();
#if defined(__GNUG__)
  int status = 0;
  char* demangled = abi::__cxa_demangle(type.name(), nullptr, nullptr, &status);
  if (status == 0 && demangled) name = demangled;
  std::free(demangled);
#endif
  for (std::size_t at; (at = name.find("tributary::")) != std::string::npos;) name.erase(at, 11);
  return name;
}

namespace {

const char* CollectiveName(std::int64_t c) {
  switch (c) {
    case 0:
      return "allreduce";
    case 1:
      return "reduce";
    case 2:
      return "allgather";
  }
  return "unknown";
}

const char* DeterminismName(std::int64_t d) {
  switch (static_cast<Determinism>(d)) {
    case Determinism::fast:
      return "fast";
    case Determinism::run_to_run:
      return "run_to_run";
    case Determinism::rank_count_independent:
      return "rank_count_independent";
  }
  return "unknown";
}

std::uint64_t Compared(std::uint64_t h) noexcept { return (h >> 2) | 1u; }

// A hash of 64-bit words, one multiply per word (the record is hashed every generation that
// compares it).
template <std::size_t N>
std::uint64_t HashWords(const std::uint64_t (&words)[N]) noexcept {
  std::uint64_t h = 0x9e3779b97f4a7c15ull;
  for (std::uint64_t w : words) {
    h = (h ^ w) * 0xff51afd7ed558ccdull;
    h ^= h >> 32;
  }
  return h;
}

// The description round's block of one rank: per field its code and its name.
struct Slot {
  std::uint64_t code;
  char text[56];
};
constexpr std::size_t kBlock = sizeof(Slot) * kAgreementFields;

const char* const kFieldNames[kAgreementFields] = {
    "object", "collective", "root", "operator", "element type", "count", "determinism", "schedule"};

#if TRIBUTARY_HAVE_MPI
// "rank 0", "ranks 1-3", "ranks 0, 2, 5-6".
std::string RankList(const std::vector<int>& ranks) {
  std::string s = ranks.size() == 1 ? "rank " : "ranks ";
  for (std::size_t i = 0; i < ranks.size();) {
    std::size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (i) s += ", ";
    s += std::to_string(ranks[i]);
    if (j > i) s += "-" + std::to_string(ranks[j]);
    i = j + 1;
  }
  return s;
}

// The combine of the pre-round: elementwise maximum of 64-bit integers.
void MaxInt64(const void*, const void* in, void* inout, std::size_t count) noexcept {
  const auto* a = static_cast<const std::int64_t*>(in);
  auto* b = static_cast<std::int64_t*>(inout);
  for (std::size_t k = 0; k < count; ++k) b[k] = a[k] > b[k] ? a[k] : b[k];
}
#endif

}  // namespace

std::uint64_t RecordHash(const AgreementRecord& r, std::uint64_t object) noexcept {
  const std::uint64_t fields[] = {object,
                                  r.op,
                                  r.element,
                                  r.elem_size,
                                  r.count,
                                  static_cast<std::uint64_t>(r.collective),
                                  static_cast<std::uint64_t>(r.root),
                                  static_cast<std::uint64_t>(r.determinism)};
  return Compared(HashWords(fields));
}

std::uint64_t ScheduleCode(ScheduleKind kind, const ScheduleParams& params) noexcept {
  const std::uint64_t fields[] = {static_cast<std::uint64_t>(kind) + 1,
                                  TakesRadix(kind) ? static_cast<std::uint64_t>(params.radix) : 0,
                                  kind == ScheduleKind::pipelined_tree || kind == ScheduleKind::ring
                                      ? static_cast<std::uint64_t>(params.segment_bytes)
                                      : 0,
                                  params.node_aware ? 1u : 0u};
  return Compared(HashWords(fields));
}

AgreementView ViewOf(const AgreementRecord& r, std::uint64_t record_op, const std::string& object,
                     std::uint64_t object_code, std::uint64_t length, bool dynamic,
                     const std::string& schedule, std::uint64_t schedule_code) {
  AgreementView v;
  const auto set = [&v](AgreementField f, std::uint64_t code, std::string text) {
    v.code[static_cast<int>(f)] = code;
    v.text[static_cast<int>(f)] = std::move(text);
  };
  std::string op, element;
  if (r.describe) r.describe(r.client, &op, &element);
  if (op.empty()) op = "none";
  if (element.empty()) element = "unknown";
  const std::uint64_t count = dynamic ? length : r.count;
  set(AgreementField::object, object_code, object);
  set(AgreementField::collective, static_cast<std::uint64_t>(r.collective),
      CollectiveName(r.collective));
  set(AgreementField::root, static_cast<std::uint64_t>(r.root),
      r.root < 0 ? "none" : std::to_string(r.root));
  set(AgreementField::op, record_op, op);
  set(AgreementField::element, HashBytes(&r.elem_size, sizeof r.elem_size, r.element),
      element + " (" + std::to_string(r.elem_size) + " B)");
  set(AgreementField::count, count,
      std::to_string(count) + (count == 1 ? " element" : " elements"));
  set(AgreementField::determinism, static_cast<std::uint64_t>(r.determinism),
      DeterminismName(r.determinism));
  set(AgreementField::schedule, schedule_code, schedule_code ? schedule : "not chosen yet");
  return v;
}

#if TRIBUTARY_HAVE_MPI
void Agreement::Run(ScheduleArgs args, ScheduleKind kind) {
  args.tag += kTag;
  if (!schedule_ || schedule_->Kind() != kind || !schedule_->Rearm(args))
    schedule_ = MakeSchedule(kind, args);
  active_ = true;
  schedule_->Start();
}

// One allreduce of {n, -n, h, -h, s, -s, hi, -lo, terms, special} with MAX gives every rank
// the maximum and minimum of the lengths, of the record hashes and of the schedule codes,
// and the window that fits every rank's exact sums.
void Agreement::StartPreRound(const Input& in, ScheduleArgs base) {
  const auto len = in.check_length ? in.length : 0;
  const auto rec = static_cast<std::int64_t>(in.record);
  const auto sched = static_cast<std::int64_t>(in.schedule);
  const std::int64_t v[10] = {len,
                              -len,
                              rec,
                              -rec,
                              sched,
                              -sched,
                              in.window.hi,
                              -in.window.lo,
                              in.window.terms,
                              in.window.special ? 1 : 0};
  std::memcpy(values_, v, sizeof values_);
  base.collective = Collective::allreduce;
  base.data = values_;
  base.input = nullptr;
  base.result = nullptr;
  base.payload = Payload{};
  base.payload.count = 10;
  base.payload.elem_size = sizeof(std::int64_t);
  base.payload.combine = &MaxInt64;
  base.payload.commutative = true;
  base.params = in.params;
  base.params.node_aware = false;
  base.finisher = Finisher{};
  Run(base, in.kind);
}

void Agreement::StartDescriptions(const AgreementView& view, ScheduleArgs base) {
  int size = 1;
  CheckMpi(MPI_Comm_size(base.comm, &size), "MPI_Comm_size");
  ranks_ = size;
  mine_.assign(kBlock, 0);
  for (int f = 0; f < kAgreementFields; ++f) {
    Slot slot{};
    slot.code = view.code[f];
    std::snprintf(slot.text, sizeof slot.text, "%s", view.text[f].c_str());
    std::memcpy(mine_.data() + f * sizeof(Slot), &slot, sizeof slot);
  }
  all_.assign(kBlock * static_cast<std::size_t>(size), 0);
  base.collective = Collective::allgather;
  base.data = mine_.data();
  base.input = nullptr;
  base.result = all_.data();
  base.payload = Payload{};
  base.payload.count = 1;
  base.payload.elem_size = kBlock;
  base.params = ScheduleParams{};
  base.finisher = Finisher{};
  Run(base, ScheduleKind::recursive_doubling);
}

bool Agreement::Progress() {
  if (!active_) return true;
  if (!schedule_->Progress()) return false;
  active_ = false;
  return true;
}

bool Agreement::Cancel() noexcept { return !active_ || schedule_->Cancel(); }

bool Agreement::Quiet() noexcept {
  if (active_ && !schedule_->Quiet()) return false;
  active_ = false;
  return true;
}

void Agreement::Release() noexcept {
  if (active_) (void)schedule_.release();
  active_ = false;
}

Agreement::Verdict Agreement::Evaluate() const noexcept {
  if (values_[2] != -values_[3] || values_[4] != -values_[5]) return Verdict::differ;
  if (values_[0] != -values_[1]) return Verdict::lengths_differ;
  return Verdict::agreed;
}

WindowNeeds Agreement::AgreedWindow(int ranks) const noexcept {
  WindowNeeds agreed;
  agreed.lo = -values_[7];
  agreed.hi = values_[6];
  agreed.terms = values_[8] * ranks;
  agreed.special = values_[9] != 0;
  return agreed;
}

std::string Agreement::Differences() const {
  std::string out;
  for (int f = 0; f < kAgreementFields; ++f) {
    // Ranks grouped by their code for this field, in order of their first rank.
    std::map<std::uint64_t, std::vector<int>> groups;
    std::vector<std::uint64_t> order;
    std::map<std::uint64_t, std::string> names;
    for (int r = 0; r < ranks_; ++r) {
      Slot slot;
      std::memcpy(&slot, all_.data() + static_cast<std::size_t>(r) * kBlock + f * sizeof(Slot),
                  sizeof slot);
      slot.text[sizeof slot.text - 1] = '\0';
      auto& ranks = groups[slot.code];
      if (ranks.empty()) {
        order.push_back(slot.code);
        names[slot.code] = slot.text;
      }
      ranks.push_back(r);
    }
    if (order.size() < 2) continue;
    // A schedule not chosen yet (an exact sum's) differs because something else does.
    if (f == static_cast<int>(AgreementField::schedule) && groups.count(0)) continue;
    // Names that look alike (truncated, or two user-created MPI_Ops) get their codes.
    std::map<std::string, int> uses;
    for (std::uint64_t code : order) ++uses[names[code]];
    if (!out.empty()) out += "; ";
    out += kFieldNames[f];
    out += ": ";
    for (std::size_t g = 0; g < order.size(); ++g) {
      std::string name = names[order[g]];
      if (uses[name] > 1) {
        char code[24];
        std::snprintf(code, sizeof code, " [%016llx]", static_cast<unsigned long long>(order[g]));
        name += code;
      }
      if (g) out += ", ";
      out += name + " on " + RankList(groups[order[g]]);
    }
  }
  return out.empty() ? "the record's hashes differ, but none of its fields" : out;
}
#endif

}  // namespace tributary::detail
