#!/usr/bin/env bash
# Tributary on simulated clusters (SimGrid SMPI): builds the smpi preset's benchmark and
# measures, in simulated time, on simulation/platforms/:
#   - allreduce / reduce / allgather latency for the built-in tree, the node-aware form,
#     own schedules, Tributary on the MPI library's collective, raw MPI_Ixxx + MPI_Test and
#     the blocking MPI_xxx under each SMPI collective selector, with the α-β lower bound;
#   - overlap of a fixed computation polled in chunks (OSU, IMB, hidden);
#   - 8 lists per rank: the regional combine against 8 per-list reductions;
#   - example_apps/cg_poisson in weak scaling (64 x 64 grid points and 4 strips per rank,
#     10 iterations, the arithmetic charged at the simulated 1 Gflop/s): classic against
#     pipelined CG per iteration.
# Writes results/simulation-<date>/{latency,overlap,regional,cg}.csv, summary.md and PNG plots
# (latency per collective and rank count; with several rank counts, allreduce-vs-ranks.png).
#
#   scripts/run-simulation.sh [--ranks "64 256"] [--sizes "8 64 ..."] [--cg-ranks "16 64 256"]
#                             [--quick] [--out DIR]
#
# Environment: TRIBUTARY_SMPI_SELECTORS (default "ompi mpich mvapich2 impi"),
# TRIBUTARY_SMPI_POLL_COST (default 5e-8 s, simulation/smpirun.sh).
# Wall time grows with ranks x variants x sizes; --quick keeps it to a few minutes.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$(pwd)
ranks="256"
sizes="8 64 512 4096 32768 262144 1048576"
iterations=3
cg_ranks="16 64 256"
out="$root/results/simulation-$(date -u +%Y%m%d-%H%M%S)"
selectors="${TRIBUTARY_SMPI_SELECTORS:-ompi mpich mvapich2 impi}"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --ranks) ranks="$2"; shift 2 ;;
    --sizes) sizes="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --cg-ranks) cg_ranks="$2"; shift 2 ;;
    --quick) ranks="64"; sizes="8 4096 262144"; iterations=1; selectors="ompi mpich"; cg_ranks="16 64"; shift ;;
    *) sed -n '2,19p' "$0"; exit 2 ;;
  esac
done
mkdir -p "$out"
log() { echo "[$(date -u +%H:%M:%S)] $*" >&2; }

log "building the smpi preset (bench_simulation)"
[[ -f "$root/build/smpi/build.ninja" ]] || (cmake --preset smpi >/dev/null)
cmake --build build/smpi -j 2 --target bench_simulation cg_poisson >/dev/null
bench="$root/build/smpi/bench/simulation/bench_simulation"
run() { "$root/simulation/smpirun.sh" "$@"; }
csv_sizes=$(echo $sizes | tr ' ' ',')

echo "kind,collective,variant,ranks,nodes,bytes,median_s,min_s,max_s,selector" >"$out/latency.csv"
echo "kind,collective,variant,ranks,nodes,bytes,t_pure,t_cpu,t_overall,osu,imb,hidden" >"$out/overlap.csv"
echo "kind,collective,variant,ranks,nodes,lists,median_s,min_s,max_s" >"$out/regional.csv"
echo "kind,variant,ranks,nodes,n,strips,iterations,s_per_iteration" >"$out/cg.csv"

own_allreduce="tree,node_aware,recursive_doubling,rabenseifner,ring,knomial,binomial,mpi_library"
for np in $ranks; do
  for coll in allreduce reduce allgather; do
    case $coll in
      allreduce) own="$own_allreduce"; raw="MPI_Iallreduce,MPI_Allreduce" ;;
      reduce) own="tree,node_aware,binomial,knomial,pipelined_tree,mpi_library"; raw="MPI_Ireduce,MPI_Reduce" ;;
      allgather) own="tree,ring,recursive_doubling,mpi_library"; raw="MPI_Iallgather,MPI_Allgather" ;;
    esac
    # Allgather results grow with the rank count: keep them under 64 MiB per rank.
    s="$csv_sizes"
    [[ $coll == allgather ]] && s=$(for b in $sizes; do ((b * np <= 67108864)) && echo -n "$b,"; done)
    # Own schedules without the length check (DebugLevel::none), like the MPI library's
    # calls; the built-in tree once more with it (the default DebugLevel::basic), "tree+check".
    log "latency: $coll at $np ranks, own schedules"
    run -n "$np" "$bench" latency --collective $coll --variants "$own" --sizes "$s" \
      --iterations $iterations --debug none | sed 's/$/,tributary/' >>"$out/latency.csv"
    log "latency: $coll at $np ranks, built-in tree with the length check"
    run -n "$np" "$bench" latency --collective $coll --variants tree --sizes "$s" \
      --iterations $iterations --debug basic | sed 's/$/,tributary/' >>"$out/latency.csv"
    for sel in $selectors; do
      log "latency: $coll at $np ranks, MPI library under selector $sel"
      run -n "$np" --coll-selector "$sel" "$bench" latency --collective $coll --variants "$raw" \
        --sizes "$s" --iterations $iterations | sed "s/\$/,$sel/" >>"$out/latency.csv"
    done
  done
  log "overlap at $np ranks"
  run -n "$np" "$bench" overlap --variants "tree,recursive_doubling,knomial,MPI_Iallreduce" \
    --sizes "8,512,4096,65536" --iterations $iterations --debug none >>"$out/overlap.csv"
  log "regional combine at $np ranks"
  run -n "$np" "$bench" regional --iterations $iterations >>"$out/regional.csv"
done

# Weak scaling: n = 64 sqrt(p), so every rank holds 64 x 64 points in 4 strips.
for np in $cg_ranks; do
  n=$(awk -v p="$np" 'BEGIN { printf "%d", 64 * sqrt(p) + 0.5 }')
  log "cg_poisson at $np ranks (${n}x${n} grid, $((4 * np)) strips)"
  run -n "$np" "$root/build/smpi/example_apps/cg_poisson" --n "$n" --strips $((4 * np)) \
    --iterations 10 | awk -v p="$np" -v n="$n" -v s=$((4 * np)) '
      / CG: / { v = $1; it = $3; for (i = 1; i <= NF; ++i) if ($(i + 1) == "us") t = $i
        printf "cg,%s,%d,%d,%d,%d,%d,%.9g\n", v, p, (p + 15) / 16, n, s, it, t * 1e-6 }' >>"$out/cg.csv"
done

# α-β lower bound of an allreduce on the platform. The N nodes of r ranks each have one link
# (α = 1 µs, β = 1/12.5 GB/s; simulation/README.md) and messages within a node do not cross
# it, so the nodes are the processes of the classic bound: every node's link carries at
# least 2(N−1)/N·n bytes (reduce-scatter plus allgather among nodes), and a value reaches
# every node after ⌈log_(r+1) N⌉ hops between nodes (each of a node's r ranks can send to a
# different node). One node (N = 1): the p ranks on the loopback, ⌈lg p⌉·0.26 µs +
# 2(p−1)/p·n / 10.7 GB/s. γ is 0: the simulator charges no computation
# (smpi/simulate-computation:no), for Tributary's schedules and SMPI's alike.
awk -F, 'NR > 1 && $2 == "allreduce" { key = $4 "," $6; if (!(key in seen)) { seen[key] = 1;
  p = $4; N = $5; n = $6; r = p / N; hops = 0
  if (N > 1) { for (q = 1; q < N; q *= r + 1) ++hops; t = hops * 1e-6 + 2 * (N - 1) / N * n / 12.5e9 }
  else { for (q = 1; q < p; q *= 2) ++hops; t = hops * 0.26e-6 + 2 * (p - 1) / p * n / 10.7e9 }
  printf "bound,allreduce,alpha_beta_bound,%d,%d,%d,%.9g,%.9g,%.9g,model\n", p, N, n, t, 0, 0 } }' \
  "$out/latency.csv" >"$out/bound.csv"

log "summary and plots"
{
  echo "# Tributary on simulated clusters"
  echo
  echo "Simulated times (SimGrid SMPI $(smpirun -version 2>&1 | grep -o '3\.[0-9]*' | head -1)), not measured on hardware."
  echo "Platform: simulation/platforms/ (16 ranks per node, 100 Gb/s, 1 µs between nodes)."
  echo "Poll charge (smpi/test per tested request): ${TRIBUTARY_SMPI_POLL_COST:-5e-8} s."
  echo "Settings and what the simulator does not model: docs/simulation.md."
  echo
  echo "## Latency (median of $iterations, slowest rank), µs"
  echo
  for np in $ranks; do
    for coll in allreduce reduce allgather; do
      echo "### $coll, $np ranks"
      echo
      awk -F, -v np=$np -v c=$coll 'FILENAME !~ /bound/ && FNR > 1 && $2 == c && $4 == np {
          v = $3 ($10 == "tributary" ? "" : " [" $10 "]"); if (!(v in seenv)) { seenv[v] = 1; order[++nv] = v }
          if (!($6 in seens)) { seens[$6] = 1; sz[++ns] = $6 } t[v, $6] = $7 * 1e6 }
        FILENAME ~ /bound/ && $4 == np { bound[$6] = $7 * 1e6 }
        END { printf "| variant |"; for (j = 1; j <= ns; ++j) printf " %s B |", sz[j]; print "";
          printf "|---|"; for (j = 1; j <= ns; ++j) printf "---:|"; print "";
          for (i = 1; i <= nv; ++i) { printf "| %s |", order[i];
            for (j = 1; j <= ns; ++j) { k = order[i] SUBSEP sz[j]; printf (k in t) ? " %.1f |" : " – |", t[k] } print "" }
          if (c == "allreduce") { printf "| α-β lower bound |"; for (j = 1; j <= ns; ++j) printf " %.1f |", bound[sz[j]]; print "" } }' \
        "$out/latency.csv" "$out/bound.csv"
      echo
    done
  done
  echo "## Overlap (computation = t_pure, polled in 20 chunks), %"
  echo
  echo "| ranks | variant | bytes | t_pure µs | t_overall µs | OSU % | IMB % | hidden |"
  echo "|---:|---|---:|---:|---:|---:|---:|---:|"
  awk -F, 'NR > 1 { printf "| %d | %s | %d | %.1f | %.1f | %.0f | %.0f | %.2f |\n", $4, $3, $6, $7 * 1e6, $9 * 1e6, $10, $11, $12 }' "$out/overlap.csv"
  echo
  echo "## 8 lists per rank, one scalar each"
  echo
  echo "| ranks | variant | µs per cycle |"
  echo "|---:|---|---:|"
  awk -F, 'NR > 1 { printf "| %d | %s | %.1f |\n", $4, $3, $7 * 1e6 }' "$out/regional.csv"
  echo
  echo "## cg_poisson, weak scaling (64 x 64 points per rank), µs per iteration"
  echo
  echo "| ranks | nodes | grid | classic | pipelined | pipelined / classic |"
  echo "|---:|---:|---:|---:|---:|---:|"
  awk -F, 'NR > 1 { t[$3, $2] = $8 * 1e6; n[$3] = $5; nodes[$3] = $4; if (!($3 in seen)) { seen[$3] = 1; order[++k] = $3 } }
    END { for (i = 1; i <= k; ++i) { p = order[i]
      printf "| %d | %d | %dx%d | %.1f | %.1f | %.2f |\n", p, nodes[p], n[p], n[p], t[p, "classic"], t[p, "pipelined"],
        t[p, "classic"] ? t[p, "pipelined"] / t[p, "classic"] : 0 } }' "$out/cg.csv"
} >"$out/summary.md"

if command -v gnuplot >/dev/null; then
  for np in $ranks; do
    for coll in allreduce reduce allgather; do
      plot=""
      for v in $(awk -F, -v np=$np -v c=$coll 'NR > 1 && $2 == c && $4 == np { k = $3 "@" $10; if (!(k in s)) { s[k] = 1; print k } }' "$out/latency.csv"); do
        name=${v%@*}; sel=${v#*@}
        f="$out/.${coll}-${np}-${name}-${sel}.dat"
        awk -F, -v np=$np -v c=$coll -v n=$name -v s=$sel 'NR > 1 && $2 == c && $4 == np && $3 == n && $10 == s { print $6, $7 * 1e6 }' "$out/latency.csv" >"$f"
        title=$name; [[ $sel != tributary ]] && title="$name [$sel]"
        plot+="'$f' using 1:2 with linespoints title '$title', "
      done
      if [[ $coll == allreduce ]]; then
        f="$out/.bound-$np.dat"
        awk -F, -v np=$np '$4 == np { print $6, $7 * 1e6 }' "$out/bound.csv" >"$f"
        plot+="'$f' using 1:2 with lines dashtype 2 lw 2 title 'α-β lower bound', "
      fi
      gnuplot <<EOF || log "gnuplot failed for $coll at $np ranks"
set terminal pngcairo size 1100,700 noenhanced
set output "$out/${coll}-${np}.png"
set title "$coll, $np simulated ranks (16 per node): simulated time"
set logscale xy
set xlabel "bytes"
set ylabel "µs (simulated)"
set key outside right
plot ${plot%, }
EOF
    done
  done
  # Allreduce latency against the rank count (when several were run), at the smallest and
  # the largest size: the built-in tree, the fastest SMPI selector's MPI_Allreduce at each
  # rank count, and the α-β lower bound.
  if [[ $(echo $ranks | wc -w) -gt 1 ]]; then
    plot=""
    for b in $(echo $sizes | tr ' ' '\n' | sort -n | sed -n '1p;$p' | sort -un); do
      f="$out/.ranks-tree-$b.dat"
      awk -F, -v b=$b 'NR > 1 && $1 == "latency" && $2 == "allreduce" && $3 == "tree" && $6 == b && $10 == "tributary" { print $4, $7 * 1e6 }' \
        "$out/latency.csv" | sort -n >"$f"
      plot+="'$f' using 1:2 with linespoints lw 2 title 'built-in tree, $b B', "
      f="$out/.ranks-smpi-$b.dat"
      awk -F, -v b=$b 'NR > 1 && $1 == "latency" && $2 == "allreduce" && $3 == "MPI_Allreduce" && $6 == b {
          if (!($4 in best) || $7 < best[$4]) best[$4] = $7 }
        END { for (p in best) print p, best[p] * 1e6 }' "$out/latency.csv" | sort -n >"$f"
      plot+="'$f' using 1:2 with linespoints dashtype 3 title 'MPI_Allreduce (fastest SMPI selector), $b B', "
      f="$out/.ranks-bound-$b.dat"
      awk -F, -v b=$b '$2 == "allreduce" && $6 == b { print $4, $7 * 1e6 }' "$out/bound.csv" | sort -n >"$f"
      plot+="'$f' using 1:2 with lines dashtype 2 title 'α-β lower bound, $b B', "
    done
    gnuplot <<EOF || log "gnuplot failed for the latency against ranks"
set terminal pngcairo size 1100,700 noenhanced
set output "$out/allreduce-vs-ranks.png"
set title "allreduce latency against simulated ranks (16 per node): simulated time"
set logscale x 2
set logscale y
set xlabel "simulated ranks"
set ylabel "µs (simulated)"
set key below
plot ${plot%, }
EOF
  fi
  rm -f "$out"/.*.dat
fi
log "results in $out"
