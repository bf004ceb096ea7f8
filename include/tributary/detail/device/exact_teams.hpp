// Exact sums on GPU backends without Kokkos' reduction of a 576-byte value: every thread
// adds its strided share of the elements into an accumulator of its own, a team adds its
// threads' accumulators digit by digit in shared memory, and a second kernel adds the
// teams' partials the same way into the list's slot. The elements come from a source: a
// View's (ExactViewSource, detail/device/device_kernels.hpp) or a user's functor called
// over a RangePolicy or an MDRangePolicy (ExactPolicySource,
// detail/device/device_policy_kernels.hpp). Part of the Kokkos layer.
#pragma once

#if !defined(TRIBUTARY_PUBLIC_INCLUDE) && !defined(TRIBUTARY_INTERNAL_INCLUDE)
#error \
    "<tributary/detail/device/exact_teams.hpp> is internal to Tributary: include <tributary/kokkos.hpp> instead"
#endif

#include "tributary/config.hpp"

#if TRIBUTARY_HAVE_KOKKOS

#include <Kokkos_Core.hpp>
#include <cstddef>
#include <cstdint>
#include <utility>

#include "tributary/exact_sum.hpp"

/// Set to 1 (for tests) to run the exact team kernels on host backends too, which otherwise
/// keep Kokkos' reductions (a core's own accumulator is cheap there).
#ifndef TRIBUTARY_EXACT_TEAMS_ON_HOST
#define TRIBUTARY_EXACT_TEAMS_ON_HOST 0
#endif

namespace tributary::detail {

/// Whether exact sums on `Exec` run on the team kernels: GPU backends (memory the host
/// cannot read), and every backend in the tests that ask for it.
template <class Exec>
constexpr bool kExactTeams =
    TRIBUTARY_EXACT_TEAMS_ON_HOST ||
    !Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename Exec::memory_space>::accessible;

/// The 72 64-bit words of an ExactSum in the order the kernels below add them: the digits,
/// the counts of +inf, -inf and NaN, and the pending additions.
constexpr int kExactWords = ExactSum::kDigits + 4;
KOKKOS_INLINE_FUNCTION std::int64_t& ExactWord(ExactSum& s, int w) {
  if (w < ExactSum::kDigits) return ExactAccess::Digits(s)[w];
  if (w < ExactSum::kDigits + 3) return ExactAccess::Specials(s)[w - ExactSum::kDigits];
  return ExactAccess::Pending(s);
}
template <std::size_t K>
KOKKOS_INLINE_FUNCTION std::int64_t& ExactWord(ExactSums<K>& s, int w) {
  return ExactWord(s.sums[w / kExactWords], w % kExactWords);
}
/// The sums in a value: ExactSum, or ExactSums<K>.
template <class V>
constexpr int kExactSumsIn = 1;
template <std::size_t K>
constexpr int kExactSumsIn<ExactSums<K>> = static_cast<int>(K);
KOKKOS_INLINE_FUNCTION ExactSum& ExactPart(ExactSum& s, int) { return s; }
template <std::size_t K>
KOKKOS_INLINE_FUNCTION ExactSum& ExactPart(ExactSums<K>& s, int c) {
  return s.sums[c];
}

/// Threads per team for values of `sums` ExactSums: 64 threads' words (36 KiB) fit the
/// 48 KiB of shared memory a block has without opting in; fewer for several sums.
constexpr int ExactTeamSize(int sums) {
  int team = 64;
  while (team > 1 && team * sums > 64) team /= 2;
  return team;
}

/// Threads for `total` elements: about 64 elements each, at most 32768 (an H200 read 8 MiB
/// fastest at 64 elements per thread and 256 MiB at 32768 threads), a whole number of teams
/// of `team_size`, at least one.
inline std::int64_t ExactTeamThreads(std::int64_t total, int team_size) {
  std::int64_t threads = (total + 63) / 64;
  threads = threads < 32768 ? threads : 32768;
  const std::int64_t teams = (threads + team_size - 1) / team_size;
  return (teams > 0 ? teams : 1) * team_size;
}

/// The first kernel: thread t of `threads` adds the source's elements t, t + threads, ...
/// into its own accumulator (eight at a time where the source can load ahead), carries it
/// (every digit but the top one into [0, 2^32), the top one holding the sign), and the
/// team adds its threads' words in shared memory into partial `league_rank`. Carried
/// digits of at most 32768 threads sum below 2^47: no word overflows, and the sum of
/// integers is the same in any order. Each thread counts as one pending addition.
template <class Source, class Exec, class Partials>
struct ExactTeamsKernel {
  using Member = typename Kokkos::TeamPolicy<Exec>::member_type;
  using Value = typename Source::value_type;
  static constexpr int kWords = kExactWords * kExactSumsIn<Value>;
  Source source;
  Partials partials;  // one Value per team
  std::int64_t total = 0;
  std::int64_t threads = 1;

  /// Shared memory per team of `team_size` threads: each thread's words.
  KOKKOS_INLINE_FUNCTION static std::size_t ScratchBytes(int team_size) {
    return static_cast<std::size_t>(team_size) * kWords * sizeof(std::int64_t);
  }
  KOKKOS_INLINE_FUNCTION void operator()(const Member& m) const {
    const int size = m.team_size(), rank = m.team_rank();
    Value acc;
    std::int64_t f = static_cast<std::int64_t>(m.league_rank()) * size + rank;
    for (; f + 7 * threads < total; f += 8 * threads) source.Add8(acc, f, threads);
    for (; f < total; f += threads) source.Add(acc, f);
    for (int c = 0; c < kExactSumsIn<Value>; ++c) {
      ExactNormalize(ExactPart(acc, c));
      ExactAccess::Pending(ExactPart(acc, c)) = 1;
    }
    auto* words = static_cast<std::int64_t*>(m.team_shmem().get_shmem(ScratchBytes(size)));
    for (int w = 0; w < kWords; ++w) words[w * size + rank] = ExactWord(acc, w);
    m.team_barrier();
    for (int w = rank; w < kWords; w += size) {
      std::int64_t sum = 0;
      for (int q = 0; q < size; ++q) sum += words[w * size + q];
      ExactWord(partials(m.league_rank()), w) = sum;
    }
  }
};

/// The second kernel: team w adds word w of every partial into `out` (a rank-0 View).
template <class Exec, class Partials, class Out, int kWords>
struct ExactWordsKernel {
  using Member = typename Kokkos::TeamPolicy<Exec>::member_type;
  Partials partials;
  Out out;
  KOKKOS_INLINE_FUNCTION void operator()(const Member& m) const {
    const int w = m.league_rank();
    std::int64_t sum = 0;
    Kokkos::parallel_reduce(
        Kokkos::TeamThreadRange(m, static_cast<std::int64_t>(partials.extent(0))),
        [&](const std::int64_t p, std::int64_t& s) { s += ExactWord(partials(p), w); }, sum);
    Kokkos::single(Kokkos::PerTeam(m), [&]() { ExactWord(out(), w) = sum; });
  }
};

/// The team size the first kernel runs at on `Exec`: ExactTeamSize, or less where the
/// backend allows less (1 on Serial).
template <class Exec, class Source>
int ExactTeamSizeOn(const Exec& exec, const Source& source) {
  using Partials = Kokkos::View<typename Source::value_type*, typename Exec::memory_space>;
  const ExactTeamsKernel<Source, Exec, Partials> kernel{source, Partials()};
  const int want = ExactTeamSize(kExactSumsIn<typename Source::value_type>);
  const int most =
      Kokkos::TeamPolicy<Exec>(exec, 1, 1).team_size_max(kernel, Kokkos::ParallelForTag());
  return most < want ? (most > 0 ? most : 1) : want;
}

/// How the team kernels run over a source: the team size and the number of teams (teams 0:
/// not on the team kernels). Planned once per contribution, before the list's stage is
/// claimed: the stage allocates `teams` partials of scratch under its lock, and the launch
/// uses the same plan.
struct ExactTeamsPlan {
  int team = 0;
  std::size_t teams = 0;
};
template <class Exec, class Source>
ExactTeamsPlan PlanExactTeams(const Exec& exec, const Source& source) {
  const int team = ExactTeamSizeOn(exec, source);
  return {team, static_cast<std::size_t>(ExactTeamThreads(source.Total(), team) / team)};
}

/// Queues on `exec` the exact sum of `total` elements of `source` into `out` (a rank-0 View
/// of the source's value) through `partials` (the caller's scratch, at least
/// ExactTeamThreads(total, team_size) / team_size values).
template <class Exec, class Source, class Partials, class Out>
void QueueExactTeams(const Exec& exec, const Source& source, std::int64_t total,
                     const Partials& partials, const Out& out, int team_size) {
  using Kernel = ExactTeamsKernel<Source, Exec, Partials>;
  Kernel kernel{source, partials, total, ExactTeamThreads(total, team_size)};
  const auto teams = static_cast<int>(kernel.threads / team_size);
  using Teams = Kokkos::TeamPolicy<Exec>;
  Kokkos::parallel_for("tributary::exact_teams",
                       Teams(exec, teams, team_size)
                           .set_scratch_size(0, Kokkos::PerTeam(Kernel::ScratchBytes(team_size))),
                       kernel);
  const auto used = Kokkos::subview(partials, std::make_pair(0, teams));
  Kokkos::parallel_for("tributary::exact_words", Teams(exec, Kernel::kWords, Kokkos::AUTO),
                       ExactWordsKernel<Exec, decltype(used), Out, Kernel::kWords>{used, out});
}

}  // namespace tributary::detail

#endif  // TRIBUTARY_HAVE_KOKKOS
