#!/usr/bin/env bash
# The built-in selection against the MPI library on clusters it was not told about
# (docs/simulation.md, "Against the MPI library without tuning"): for each platform,
# Tributary's built-in tree with no network profile given (each Context measures the network
# at start-up, smpirun.sh --measured-network) against SMPI's blocking MPI_Allreduce under
# each selector, allreduce of doubles, at one rank count and several sizes, by the method of
# docs/simulation.md ("How a figure is measured"). Prints one table per platform (simulated
# µs, tree / MPI_Allreduce), then an "Against the goals" table (how many cells are within
# --limit times the first selector's MPI_Allreduce, the median cell and the worst), and
# fails when the tree takes more than --limit times the first selector's MPI_Allreduce at
# any size (with --report: says so in the table and exits 0; scripts/run-benchmarks.sh).
#
#   simulation/check-untuned.sh [--ranks 256] [--sizes 8,512,4096,65536,1048576]
#       [--platforms "cluster-16x16 ether-64x16 taper-64x16 hilat-16x16 fabric-16x16"]
#       [--selectors "ompi mpich"] [--debug none|basic] [--limit 1.05] [--build DIR]
#       [--out DIR] [--report]
#   (the platforms are names in simulation/platforms/; 16 ranks per node; --out keeps the
#   CSV rows, one file per platform)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ranks=256
sizes="8,512,4096,65536,1048576"
platforms="cluster-16x16 ether-64x16 taper-64x16 hilat-16x16 fabric-16x16"
selectors="ompi mpich"
debug=none
limit=1.05
build="$here/../build/smpi"
out=""
report=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --ranks) ranks="$2"; shift 2 ;;
    --sizes) sizes="$2"; shift 2 ;;
    --platforms) platforms="$2"; shift 2 ;;
    --selectors) selectors="$2"; shift 2 ;;
    --debug) debug="$2"; shift 2 ;;
    --limit) limit="$2"; shift 2 ;;
    --build) build="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --report) report=1; shift ;;
    *) sed -n '2,19p' "${BASH_SOURCE[0]}" >&2; exit 2 ;;
  esac
done
bench="$build/bench/simulation/bench_simulation"
[[ -x "$bench" ]] || { echo "check-untuned.sh: no $bench (build the smpi preset)" >&2; exit 2; }
if [[ -z "$out" ]]; then  # no folder asked for: the CSV goes when the check ends
  out=$(mktemp -d "${TMPDIR:-/tmp}/tributary-untuned.XXXXXX")
  trap 'rm -rf "$out"' EXIT
  keep=0
else
  keep=1
fi
mkdir -p "$out"
status=0
missed=0
ratios="$out/ratios.txt"  # tree / the first selector's MPI_Allreduce, platform, size
: >"$ratios"
for p in $platforms; do
  platform="$here/platforms/$p.xml"
  csv="$out/$p.csv"
  : >"$csv"
  start=$SECONDS
  # The tree under SMPI's default selector (its own rounds do not use it; "How a figure is
  # measured"), the library under each selector.
  # The tree's Context must have measured the network (TRIBUTARY_LOG=network says so).
  TRIBUTARY_LOG=network TRIBUTARY_SMPI_RANKS_PER_NODE=16 "$here/smpirun.sh" -n "$ranks" \
    --platform "$platform" --measured-network --coll-selector default "$bench" latency \
    --variants tree --sizes "$sizes" --iterations 1 --debug "$debug" >>"$csv" 2>"$out/$p.log"
  grep -q "network profile (measured at start-up" "$out/$p.log" || {
    echo "check-untuned.sh: $p: the Context did not measure the network" >&2
    cat "$out/$p.log" >&2
    status=1
  }
  for s in $selectors; do
    TRIBUTARY_SMPI_RANKS_PER_NODE=16 "$here/smpirun.sh" -n "$ranks" --platform "$platform" \
      --coll-selector "$s" "$bench" latency --variants MPI_Allreduce --sizes "$sizes" \
      --iterations 1 | sed "s/,MPI_Allreduce,/,MPI_Allreduce $s,/" >>"$csv"
  done
  echo "$p: $((SECONDS - start)) s of wall time" >&2
  awk -F, -v p="$p" -v ranks="$ranks" -v limit="$limit" -v sels="$selectors" -v ratios="$ratios" '
    $1 == "latency" { t[$3, $6] = $7; if (!($6 in seen)) { seen[$6] = 1; order[++n] = $6 }
                      if ($3 ~ /^tree/) tree = $3 }
    END {
      ns = split(sels, sel, " ")
      printf "\n### `%s`, %d ranks\n\n| size | tree (µs) |", p, ranks
      for (k = 1; k <= ns; k++) printf " `MPI_Allreduce`, %s (µs) | tree / %s |", sel[k], sel[k]
      printf "\n|---|---:|"
      for (k = 1; k <= ns; k++) printf "---:|---:|"
      printf "\n"
      bad = 0
      for (i = 1; i <= n; i++) {
        b = order[i]
        label = b >= 1048576 ? (b / 1048576) " MiB" : b >= 1024 ? (b / 1024) " KiB" : b " B"
        printf "| %s | %.2f |", label, t[tree, b] * 1e6
        for (k = 1; k <= ns; k++) {
          m = t["MPI_Allreduce " sel[k], b]
          r = m > 0 ? t[tree, b] / m : 0
          printf " %.2f | %.2f%s |", m * 1e6, r, (k == 1 && r > limit) ? " **above " limit "**" : ""
          if (k == 1) printf "%.6f `%s` at %s\n", (m > 0 ? r : 1e9), p, label >> ratios
          if (k == 1 && r > limit) bad = 1
        }
        printf "\n"
      }
      exit bad
    }' "$csv" || missed=1
done
# The goal over every platform and size: the tree within --limit times the first
# selector's MPI_Allreduce (docs/simulation.md, "Against the MPI library without tuning").
first="${selectors%% *}"
sort -g "$ratios" | awk -v limit="$limit" -v sel="$first" -v ranks="$ranks" '
  { r[++n] = $1; where[n] = substr($0, index($0, " ") + 1); if ($1 <= limit + 0) within++ }
  END {
    if (!n) exit
    median = n % 2 ? r[(n + 1) / 2] : (r[n / 2] + r[n / 2 + 1]) / 2
    printf "\n### Against the goals\n\n| comparison | median | ratio | goal |\n|---|---|---|---|\n"
    printf "| the built-in tree, network measured at start-up, over `MPI_Allreduce` (%s) at %d ranks: %d of %d cells within %.2fx; the median cell, and the worst (%s) | %.2f | %.2f | ≤ %.2f in every cell — %s |\n",
      sel, ranks, within + 0, n, limit, where[n], median, r[n], limit,
      within == n ? "met" : "**not met**"
  }'
((keep)) && echo "check-untuned.sh: CSV in $out" >&2
((missed && !report)) && status=1
exit $status
