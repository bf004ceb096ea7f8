#!/usr/bin/env bash
# What a simulated rank count costs this machine: wall time and peak memory (RSS, from
# /usr/bin/time -v) of
#   mpi-only  tests/smpi/context_startup --mpi-only (one MPI_Allreduce, no Context): SMPI's
#             own cost of the ranks;
#   context   tests/smpi/context_startup (a Context with the default options and one
#             allreduce), under plain smpirun with SMPI's default settings (only the
#             platform and the host file) and the collective selector given (default: SMPI's
#             default selector);
#   latency   one latency point through simulation/smpirun.sh (the method's settings):
#             bench_simulation latency --variants tree --sizes 8 --iterations 1.
# Prints CSV: case,selector,ranks,wall_s,max_rss_kib,simulated_s,exit (simulated_s: the
# Context's creation in simulated seconds, for `context`).
#   simulation/scale.sh [--ranks "256 1024 2048 4096"] [--cases "mpi-only context latency"]
#       [--selectors "default"] [--build DIR] [--timeout SECONDS]
# A point that runs past --timeout (default 1800 s) is reported with exit 124.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
build="$here/../build/smpi"
ranks="256 1024 2048 4096"
cases="mpi-only context latency"
selectors="default"
limit=1800
while [[ $# -gt 0 ]]; do
  case "$1" in
    --ranks) ranks="$2"; shift 2 ;;
    --cases) cases="$2"; shift 2 ;;
    --selectors) selectors="$2"; shift 2 ;;
    --build) build="$2"; shift 2 ;;
    --timeout) limit="$2"; shift 2 ;;
    *) sed -n '2,17p' "$0"; exit 2 ;;
  esac
done
startup="$build/tests/smpi/context_startup"
bench="$build/bench/simulation/bench_simulation"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tributary-scale.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
echo "case,selector,ranks,wall_s,max_rss_kib,simulated_s,exit"
for np in $ranks; do
  nodes=$(((np + 15) / 16))
  platform=""
  for p in 16x16 256x16 1024x16; do
    if ((nodes <= ${p%x*})); then platform="$here/platforms/cluster-$p.xml"; break; fi
  done
  for ((r = 0; r < np; ++r)); do echo "node-$((r / 16))"; done >"$tmp/hosts"
  for c in $cases; do
    for sel in $selectors; do
      cfg=()
      [[ $sel != default ]] && cfg=(--cfg=smpi/coll-selector:"$sel")
      case $c in
        mpi-only) cmd=(smpirun -np "$np" -platform "$platform" -hostfile "$tmp/hosts" "${cfg[@]}"
                    "$startup" --mpi-only) ;;
        context) cmd=(smpirun -np "$np" -platform "$platform" -hostfile "$tmp/hosts" "${cfg[@]}"
                   "$startup") ;;
        latency)
          cmd=("$here/smpirun.sh" -n "$np" --coll-selector "$sel" "$bench" latency --variants tree
            --sizes 8 --iterations 1 --debug none) ;;
      esac
      rc=0
      timeout "$limit" /usr/bin/time -v -o "$tmp/time" "${cmd[@]}" >"$tmp/out" 2>"$tmp/err" || rc=$?
      wall=$(awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, t, ":"); s = 0
        for (i = 1; i <= n; ++i) s = s * 60 + t[i]; print s }' "$tmp/time" 2>/dev/null)
      rss=$(awk -F': ' '/Maximum resident set size/ { print $2 }' "$tmp/time" 2>/dev/null)
      sim=$(grep -o 'created in [0-9.]* simulated' "$tmp/out" | awk '{ print $3 }' || true)
      ((rc == 0)) || { echo "scale.sh: $c $sel $np ranks: exit $rc" >&2; tail -3 "$tmp/err" >&2; }
      echo "$c,$sel,$np,${wall:-},${rss:-},${sim:-},$rc"
      : >"$tmp/time"
    done
  done
done
