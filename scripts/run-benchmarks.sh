#!/usr/bin/env bash
# One command for every benchmark: builds Tributary in release mode, runs the task-engine,
# reduction, device-partial, block-pattern, keyed, schedule (latency, overlap, reference
# 004, selection, determinism) and tuner benchmarks and the two solver examples, then, on
# simulated clusters (SimGrid SMPI, the smpi preset in build/smpi), the built-in tree against
# the MPI library's MPI_Allreduce with nothing said about the network on every platform of
# simulation/platforms/ (simulation/check-untuned.sh at 64 ranks; 256 with --full), and
# writes into a results folder:
#   *.csv        every measured variant (median, min, max, quartiles, ratio to the baseline)
#   summary.md   the tables the programs print, in order
#   sections/    what each section printed, one file per section
#   *.png        latency vs message size per schedule (with the lower bound at 2 ranks),
#                overlap, determinism cost, regional combine vs per-list reductions
# and then refreshes the tables of docs/performance.md and docs/simulation.md from sections/,
# and the plots they show from *.png (scripts/update-performance.sh; not with --quick or
# --no-doc).
#
#   scripts/run-benchmarks.sh [--quick | --full] [--no-doc] [--only ID,...] [--out DIR]
#                                                     (default DIR: results/<date-time>)
#
# The default run measures messages up to 16 MiB per rank (reference 004 up to 16M ints) at
# 1 to 4 ranks, and the simulated clusters at 64 ranks (about a minute). --full adds
# reference 004's 256M-int row (where it fits in memory), 8 ranks (latency and reference
# 004, oversubscribed on this machine) and the simulated clusters at 256 ranks (3 to 17
# minutes a platform here: docs/simulation.md's tables of that size). --quick runs every
# benchmark with a few iterations and messages up to 1 MiB: a check that everything runs,
# not figures to quote. --only runs the sections named (their IDs, as in the markers of
# docs/performance.md and docs/simulation.md, e.g. reductions-np2), and the refresh then
# replaces only their blocks. Every ratio is measured side by side in one run. Progress (which benchmark, how
# many of how many, the time so far) goes to stderr.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
quick=()
full=0
doc=1
only=""
out="$root/results/$(date +%Y%m%d-%H%M%S)"
while (($#)); do
  case "$1" in
    --quick) quick=(--quick) ;;
    --full) full=1 ;;
    --no-doc) doc=0 ;;
    --only) [[ $# -ge 2 ]] || { echo "--only needs section IDs" >&2; exit 2; }; only=",$2,"; shift ;;
    --out) [[ $# -ge 2 ]] || { echo "--out needs a folder" >&2; exit 2; }; out="$2"; shift ;;
    *) echo "usage: scripts/run-benchmarks.sh [--quick | --full] [--no-doc] [--only ID,...] [--out DIR]" >&2; exit 2 ;;
  esac
  shift
done
if ((full)) && ((${#quick[@]})); then
  echo "run-benchmarks.sh: --quick and --full exclude each other" >&2
  exit 2
fi
# The largest message per rank: 64 MiB (16M ints) by default, no limit with --full.
limit=(--max-bytes $((64 << 20)))
((full)) && limit=()
ranks004="2 4"
((full)) && ranks004="2 4 8"
"$here/install-deps.sh"
export TRIBUTARY_BUILD="${TRIBUTARY_BENCH_BUILD:-$root/build/release}"
source "$here/common.sh"
gen=()
command -v ninja >/dev/null 2>&1 && gen=(-G Ninja)
cmake -S "$root" -B "$TRIBUTARY_BUILD" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release -DTRIBUTARY_ENABLE_TESTS=OFF >/dev/null
cmake --build "$TRIBUTARY_BUILD" -j "$TRIBUTARY_JOBS" \
  --target bench_tasks bench_reductions bench_schedules bench_device bench_blocks bench_keyed tributary-tune cg_poisson
mkdir -p "$out/sections"
summary="$out/summary.md"
{
  echo "# Tributary benchmarks"
  echo
  mode="default run"
  ((${#quick[@]})) && mode="--quick"
  ((full)) && mode="--full"
  [[ -n "$only" ]] && mode="$mode, --only ${only:1:${#only}-2}"
  echo "$(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, $(uname -r); $mode"
} >"$summary"
b="$TRIBUTARY_BUILD/bench"

# The number of sections this run has (kept in step with the calls below) and a clock.
total=$((20 + (full ? 2 : 0)))
done_sections=0
started=$SECONDS
# section ID TITLE COMMAND...: runs it; its stdout goes to sections/ID.md (the blocks of
# docs/performance.md name these IDs) and is appended to the summary.
section() {
  local id="$1" title="$2"
  shift 2
  [[ -z "$only" || "$only" == *",$id,"* ]] || return 0
  done_sections=$((done_sections + 1))
  printf '=== [%d/%d, %d s so far] %s\n' "$done_sections" "$total" $((SECONDS - started)) "$title" >&2
  "$@" 2>/dev/null >"$out/sections/$id.md"
  { echo; echo "## $title"; echo; cat "$out/sections/$id.md"; } >>"$summary"
}

section tasks "Task engine" "$b/tasks/bench_tasks" --benchmark_min_time=0.05
tributary_launcher 2
np2=("${TRIBUTARY_LAUNCH[@]}")
tributary_launcher 4
np4=("${TRIBUTARY_LAUNCH[@]}")
tributary_launcher 3
np3=("${TRIBUTARY_LAUNCH[@]}")
tributary_launcher 1
np1=("${TRIBUTARY_LAUNCH[@]}")
section reductions-np2 "Reductions at 2 ranks" "${np2[@]}" "$b/core/bench_reductions" "${quick[@]}" --csv "$out/reductions.csv"
section reductions-length-np4 "The length check at 4 ranks" "${np4[@]}" "$b/core/bench_reductions" --sections length \
  "${quick[@]}" --csv "$out/reductions.csv"
section device-np1 "Device partials at 1 rank" "${np1[@]}" "$b/device/bench_device" "${quick[@]}" --csv "$out/device.csv"
section blocks-np2 "Block patterns at 2 ranks" "${np2[@]}" "$b/blocks/bench_blocks" "${quick[@]}" --csv "$out/blocks.csv"
section keyed-np2 "Keyed collectives at 2 ranks" "${np2[@]}" "$b/keyed/bench_keyed" "${quick[@]}" --csv "$out/keyed.csv"
for s in latency overlap selection determinism; do
  section "schedules-$s-np2" "Schedules at 2 ranks: $s" "${np2[@]}" "$b/schedules/bench_schedules" --section "$s" "${quick[@]}" \
    "${limit[@]}" --csv "$out/schedules.csv"
done
for s in latency selection determinism; do
  section "schedules-$s-np4" "Schedules at 4 ranks: $s" "${np4[@]}" "$b/schedules/bench_schedules" --section "$s" "${quick[@]}" \
    "${limit[@]}" --csv "$out/schedules.csv"
done
if ((full)); then
  tributary_launcher 8
  section schedules-latency-np8 "Schedules at 8 ranks: latency" "${TRIBUTARY_LAUNCH[@]}" "$b/schedules/bench_schedules" \
    --section latency "${limit[@]}" --csv "$out/schedules.csv"
fi
# Reference 004's table through its front end (the same benchmark code, at $ranks004 ranks).
section reference004 "Reference 004" "$root/example_apps/reference004/reference004.sh" --build "$TRIBUTARY_BUILD" \
  --ranks "$ranks004" "${quick[@]}" "${limit[@]}" --csv "$out/reference004.csv"
for n in 2 3 4; do
  launch="np$n[@]"
  section "tune-np$n" "Tuner at $n ranks" "${!launch}" "$b/tune/tributary-tune" "${quick[@]}" --output "$out/tuned-np$n.json" \
    --csv "$out/tune.csv"
done
for n in 2 4; do
  launch="np$n[@]"
  section "cg-np$n" "Conjugate gradients at $n ranks" "${!launch}" "$TRIBUTARY_BUILD/example_apps/cg_poisson" --n 128 --strips 8
done
# Simulated clusters (docs/simulation.md, "Against the MPI library without tuning"): the
# built-in tree, network measured at start-up, against SMPI's MPI_Allreduce on every
# platform. Simulated time does not depend on this machine's load; --report makes a goal
# missed a row of the table rather than a failed run.
# Where the smpi preset does not build, these sections are skipped (their blocks keep their
# tables) and the run goes on to refresh the rest.
untuned() {
  [[ -z "$only" || "$only" == *",$1,"* ]] || return 0
  if ((smpi_built == 0)); then  # once a run (incremental)
    echo "=== building the smpi preset (build/smpi; log: $out/smpi-build.log)" >&2
    smpi_built=1
    if ! { (cd "$root" && cmake --preset smpi) &&
      cmake --build "$root/build/smpi" -j "$TRIBUTARY_JOBS" --target bench_simulation; } \
      >"$out/smpi-build.log" 2>&1; then
      smpi_built=2
      echo "run-benchmarks.sh: the smpi preset did not build (see $out/smpi-build.log); the" \
        "simulated-cluster sections are skipped" >&2
      printf '\n## Simulated clusters\n\nSkipped: the smpi preset did not build (smpi-build.log).\n' \
        >>"$summary"
    fi
  fi
  ((smpi_built == 1)) || return 0
  local id="$1" title="$2"
  shift 2
  section "$id" "$title" "$root/simulation/check-untuned.sh" --build "$root/build/smpi" --report "$@"
}
smpi_built=0
if ((${#quick[@]})); then
  untuned simulation-untuned-np32 "Simulated clusters, 32 ranks: the tree against MPI_Allreduce" \
    --ranks 32 --sizes 8,65536 --platforms "cluster-16x16 hilat-16x16"
else
  untuned simulation-untuned-np64 "Simulated clusters, 64 ranks: the tree against MPI_Allreduce" --ranks 64
fi
if ((full)); then
  untuned simulation-untuned-np256 "Simulated clusters, 256 ranks: the tree against MPI_Allreduce" --ranks 256
fi


# ---------------------------------------------------------------------------------------
# Plots: the CSV rows (benchmark, ranks, parameter, variant, median_s, min_s, max_s, q1_s,
# q3_s, ratio) turned into one data file per variant and drawn by gnuplot.
plots="$out/plot-data"
mkdir -p "$plots"
awk_lib='
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
function bytes(s,  a) { split(s, a, " "); return a[1] * (a[2] == "KiB" ? 1024 : a[2] == "MiB" ? 1048576 : 1) }
function file_of(dir, v,  f) { f = v; gsub(/[^A-Za-z0-9]/, "_", f); return dir "/" f ".dat" }'

# series DIR CSV FILTER RANKS time|ratio: per variant of the rows whose benchmark matches
# FILTER at RANKS ranks, DIR/<variant>.dat holds "bytes value" (µs or the ratio).
series() {
  local dir="$plots/$1" csv="$2" filter="$3" ranks="$4" what="$5"
  rm -rf "$dir"
  mkdir -p "$dir"
  [[ -f "$csv" ]] || return 0
  awk -v dir="$dir" -v filter="$filter" -v ranks="$ranks" -v what="$what" "$awk_lib"'
    NR > 1 { parse($0, f)
      if (f[1] !~ filter || f[2] != ranks) next
      file = file_of(dir, f[4])
      if (!(file in seen)) { seen[file] = 1; printf "bytes \"%s\"\n", f[4] > file }
      printf "%s %s\n", bytes(f[3]), (what == "ratio" ? f[10] : f[5] * 1e6) >> file
    }' "$csv"
}

# The lower bound at 2 ranks: half a ping-pong plus the local reduction of n/2 bytes.
lower_bound() {
  local dir="$plots/$1" csv="$2"
  [[ -f "$csv" ]] || return 0
  awk "$awk_lib"'
    NR > 1 { parse($0, f)
      if (f[1] !~ /^lower-bound terms/ || f[2] != 2) next
      b = bytes(f[3]); if (!(b in pp) && !(b in red)) order[++n] = b
      if (f[4] == "ping-pong") pp[b] = f[5]; else red[b] = f[5]
    }
    END { print "bytes \"lower bound\""
          for (i = 1; i <= n; i++) printf "%s %s\n", order[i], (pp[order[i]] / 2 + red[order[i]]) * 1e6 }' "$csv" \
    >"$dir/lower_bound.dat"
}

# plot DIR TITLE YLABEL: every DIR/*.dat as one line (log-log), into $out/DIR.png.
plot() {
  local dir="$plots/$1" title="$2" ylabel="$3"
  compgen -G "$dir/*.dat" >/dev/null || return 0
  gnuplot <<GNUPLOT
set terminal pngcairo size 1000,640 font ",10" noenhanced
set format x "%.0b %BB"
set output "$out/$1.png"
set title "$title"
set xlabel "message size per rank (bytes)"
set ylabel "$ylabel"
set logscale x 2
set logscale y
set key outside right
set grid
files = system("ls $dir/*.dat")
plot for [f in files] f using 1:2 with linespoints title columnheader(2)
GNUPLOT
}

series latency-np2 "$out/schedules.csv" "^allreduce of" 2 time
lower_bound latency-np2 "$out/schedules.csv"
plot latency-np2 "Allreduce latency at 2 ranks (median)" "time (us)"
series latency-np4 "$out/schedules.csv" "^allreduce of" 4 time
plot latency-np4 "Allreduce latency at 4 ranks (median)" "time (us)"
series overlap "$out/schedules.csv" "^overlap: with computation" 2 time
plot overlap "Reduction beside a fixed computation, 2 ranks: overall time (median)" "time (us)"
series determinism "$out/schedules.csv" "^determinism:" 2 ratio
plot determinism "Determinism modes at 2 ranks: time relative to fast (median)" "ratio to fast"
# Regional combine vs a reduction per list: one bar per variant.
if [[ -f "$out/reductions.csv" ]]; then
  awk "$awk_lib"'NR > 1 { parse($0, f); if (f[1] == "8 lists per rank") printf "\"%s\" %s\n", f[4], f[5] * 1e6 }' \
    "$out/reductions.csv" >"$plots/regional.dat"
  gnuplot <<GNUPLOT
set terminal pngcairo size 800,500 font ",10" noenhanced
set output "$out/regional.png"
set title "8 lists per rank, 2 ranks: regional combine vs a reduction per list (median)"
set ylabel "time per cycle (us)"
set style fill solid 0.6
set boxwidth 0.6
set yrange [0:*]
set grid y
plot "$plots/regional.dat" using 2:xtic(1) with boxes notitle
GNUPLOT
fi
echo "results: $out (summary.md, sections/, *.csv, *.png)" >&2
# The tables of docs/performance.md and docs/simulation.md come from this run (a --quick
# run's figures are not to be quoted, so it leaves them alone).
if ((doc)) && ((${#quick[@]} == 0)); then
  "$here/update-performance.sh" "$out" "$root/docs/performance.md"
  "$here/update-performance.sh" "$out" "$root/docs/simulation.md"
fi
