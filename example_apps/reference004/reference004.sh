#!/usr/bin/env bash
# Reference 004's experiment ("a reimplementation of MPI_Reduce with only MPI_Send and
# MPI_Recv", ../shared/references/004): a sum of P arrays of ints to rank 0 for 64K, 1M,
# 16M and 256M ints at 2, 4 and 8 ranks, against MPI_Reduce, printed as the reference's
# table (difference in time and speedup per rank count).
#
# A thin front end: every figure comes from `bench_schedules --section reduce004`, which
# times Reduce<std::vector<int>> with each of Tributary's reduce schedules and MPI_Reduce side
# by side on the same buffers, warmed, median of several repetitions, every result checked.
# This script only launches it per rank count and rearranges its CSV.
#
#   example_apps/reference004/reference004.sh [--build DIR] [--ranks "2 4 8"] [--quick]
#                                             [--max-bytes N] [--csv FILE | --from-csv FILE]
#
#   --build DIR     a Tributary build with bench_schedules built (default: build/release,
#                   configured and built in release mode first if it has none)
#   --ranks LIST    rank counts (default "2 4 8"; more ranks than cores oversubscribe)
#   --quick         a few iterations, arrays up to 1 MiB: checks that it runs, not figures
#   --max-bytes N   skip arrays larger than N bytes per rank
#   --csv FILE      keep the benchmark's CSV rows (all schedules, quartiles)
#   --from-csv FILE print the tables of a CSV kept earlier, without running anything
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
build="${TRIBUTARY_BUILD:-$root/build/release}"
ranks="2 4 8"
extra=()
keep_csv=""
from_csv=""
build_given=0
usage() {
  sed -n '12,21p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
  exit 2
}
while (($#)); do
  case "$1" in
    --build) [[ $# -ge 2 ]] || usage; build="$2"; build_given=1; shift ;;
    --ranks) [[ $# -ge 2 ]] || usage; ranks="$2"; shift ;;
    --quick) extra+=(--quick) ;;
    --max-bytes) [[ $# -ge 2 ]] || usage; extra+=(--max-bytes "$2"); shift ;;
    --csv) [[ $# -ge 2 ]] || usage; keep_csv="$2"; shift ;;
    --from-csv) [[ $# -ge 2 ]] || usage; from_csv="$2"; shift ;;
    -h|--help) usage ;;
    *) echo "reference004.sh: unknown argument '$1'" >&2; usage ;;
  esac
  shift
done
for np in $ranks; do
  [[ "$np" =~ ^[1-9][0-9]*$ ]] || { echo "reference004.sh: '$np' is not a rank count" >&2; exit 2; }
done

if [[ -n "$from_csv" ]]; then
  [[ -r "$from_csv" ]] || { echo "reference004.sh: cannot read '$from_csv'" >&2; exit 1; }
  ranks="$(awk -F, 'NR > 1 && $1 ~ /^"reduce of .* ints to rank 0"$/ && !seen[$2]++ { printf "%s%s", n++ ? " " : "", $2 }' "$from_csv")"
  [[ -n "$ranks" ]] || { echo "reference004.sh: no reduce004 rows in '$from_csv'" >&2; exit 1; }
fi

bench="$build/bench/schedules/bench_schedules"
if [[ -n "$from_csv" ]]; then
  :
elif [[ ! -x "$bench" && $build_given == 1 ]]; then
  echo "reference004.sh: no $bench (build the target bench_schedules there)" >&2
  exit 1
elif [[ ! -x "$bench" ]]; then
  echo "reference004.sh: building bench_schedules in $build (release)" >&2
  gen=()
  command -v ninja >/dev/null 2>&1 && gen=(-G Ninja)
  cmake -S "$root" -B "$build" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release -DTRIBUTARY_ENABLE_TESTS=OFF >/dev/null
  cmake --build "$build" --target bench_schedules -j "$(nproc)"
fi
export TRIBUTARY_BUILD="$build"
source "$root/scripts/common.sh"

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
csv="$tmp/reduce004.csv"  # the benchmark writes the header into a new file
if [[ -n "$from_csv" ]]; then
  cp "$from_csv" "$csv"
else
  for np in $ranks; do
    echo "reference004.sh: $np ranks" >&2
    tributary_launcher "$np"
    "${TRIBUTARY_LAUNCH[@]}" "$bench" --section reduce004 "${extra[@]}" --csv "$csv" >/dev/null
  done
  [[ -z "$keep_csv" ]] || cp "$csv" "$keep_csv"
fi

# The CSV rows: benchmark, ranks, parameter (64K ...), variant, median_s, ... One table for
# the binomial tree (the reference's algorithm, here for any rank count) and one for the
# fastest of Tributary's schedules in each cell (the built-in tree's choice included), all
# started with MPI_Reduce's buffers (StartReduce(root, op, input)); the in-place variant and
# mpi_library are left out. A third table gives the built-in tree alone.
awk -v ranks="$ranks" '
function parse(line, f,   n, i, c, q, cur) {
  n = 0; cur = ""; q = 0
  for (i = 1; i <= length(line); i++) {
    c = substr(line, i, 1)
    if (c == "\"") { q = !q; continue }
    if (c == "," && !q) { f[++n] = cur; cur = ""; continue }
    cur = cur c
  }
  f[++n] = cur
  return n
}
NR > 1 {
  parse($0, f)
  if (f[1] !~ /^reduce of .* ints to rank 0$/) next
  key = f[3] SUBSEP f[2]
  t = f[5] + 0  # a number, not the text "2.8e-05"
  if (f[4] == "MPI_Reduce") mpi[key] = t
  if (f[4] == "Reduce binomial") bin[key] = t
  if (f[4] == "Reduce built-in tree") tree[key] = t
  if (f[4] ~ /^Reduce / && f[4] != "Reduce mpi_library" && f[4] !~ / in place$/ && (!(key in best) || t < best[key])) {
    best[key] = t; who[key] = substr(f[4], 8)
  }
}
function row(label, which,   i, key, t, line) {
  line = "| " label " |"
  for (i = 1; i <= n; i++) {
    key = label SUBSEP np[i]
    if (!(key in mpi)) { line = line " not run | |"; continue }
    t = (which == "binomial") ? bin[key] : (which == "tree") ? tree[key] : best[key]
    if (t == "") { line = line " not run | |"; continue }
    line = line sprintf(" %.0f | %.2f%s |", (t - mpi[key]) * 1e6, mpi[key] / t,
                        which == "best" ? " (" who[key] ")" : "")
  }
  print line
}
function table(title, which,   i, s, head, rule) {
  print ""
  print "### " title
  print ""
  head = "| Array Length \\ NP |"; rule = "|---|"
  for (i = 1; i <= n; i++) { head = head " " np[i] " | Speedup |"; rule = rule "---|---|" }
  print head; print rule
  for (s = 1; s <= 4; s++) row(sizes[s], which)
}
END {
  n = split(ranks, np, " ")
  split("64K 1M 16M 256M", sizes, " ")
  print "Reference 004 reproduced: sum of P int arrays to rank 0. Each rank-count column is"
  print "t(Tributary) - t(MPI_Reduce) in microseconds (negative: Tributary is faster); Speedup"
  print "is t(MPI_Reduce) / t(Tributary). Medians of bench_schedules --section reduce004."
  table("Tributary Reduce, binomial tree (the reference'"'"'s algorithm)", "binomial")
  table("Tributary Reduce, built-in selection tree (what a user gets by default)", "tree")
  table("Tributary Reduce, fastest schedule per cell", "best")
  print ""
  print "Cells marked \"not run\" were skipped (--max-bytes, --quick) or do not fit in memory."
}' "$csv"
