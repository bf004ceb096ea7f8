#!/usr/bin/env bash
# Tributary on simulated clusters (SimGrid SMPI): builds the smpi preset's benchmark and
# measures, in simulated time, by the method of docs/simulation.md ("How a figure is
# measured": a common start for every rank, computation charged as flops, posts, tests,
# combines and the library's own work charged at this machine's measured costs):
#   - allreduce latency of the built-in tree and of own schedules against the blocking
#     MPI_Allreduce under each SMPI collective selector, with the lower bound, at --ranks;
#   - reduce (and allgather) latency likewise at --reduce-ranks (--allgather-ranks);
#   - overlap of a computation of the variant's own latency, polled in 20 chunks, against
#     MPI_Iallreduce, at --overlap-ranks;
#   - the regional combine of 8 and 64 lists per rank against as many per-list reductions,
#     at --overlap-ranks;
#   - example_apps/cg_poisson in weak scaling (64 x 64 grid points and 4 strips per rank,
#     10 iterations, its arithmetic charged as flops): classic against pipelined CG, at
#     --cg-ranks.
# Writes results/simulation-<date>/{latency,overlap,regional,cg,bound}.csv, summary.md and
# PNG plots (latency per collective and rank count; with several rank counts,
# allreduce-vs-ranks.png). With no options: the sweep of docs/simulation.md ("Figures").
#
#   scripts/run-simulation.sh [--ranks "64 256 1024 4096"] [--sizes "8 4096 65536 1048576"]
#       [--reduce-ranks "256"] [--allgather-ranks ""] [--overlap-ranks "256"]
#       [--cg-ranks ""] [--parts "latency overlap regional cg"]
#       [--variants-allreduce v,v] [--full-up-to 1024] [--platform FILE] [--nic SECONDS]
#       [--iterations N] [--warmup-below 1024] [--no-build] [--quick] [--out DIR]
#   --full-up-to N   above N ranks, only the built-in tree is measured above 16 KiB (a
#                    schedule polls for its whole simulated time, and each poll is an event
#                    of the simulator: wall time grows with ranks x simulated time)
#   --warmup-below N one untimed iteration first below N ranks, none from N on (the
#                    simulation is deterministic; the check at 64 ranks below shows that a
#                    warm-up gives the same figures, within 1 %)
#   --nic SECONDS    each node's interface injects one message at a time (smpirun.sh --nic)
#   --no-build       run the binaries in build/smpi as they are
#
# Environment: TRIBUTARY_SMPI_SELECTORS (default "ompi mpich mvapich2 impi default"), and
# the charges of simulation/smpirun.sh (TRIBUTARY_SMPI_POLL_COST, ..._SEND_COST,
# ..._RECV_COST, ..._COMBINE_COST, ..._START_COST). Tributary's own schedules run under
# SMPI's default selector: the selector chooses only the algorithms of SMPI's blocking
# collectives, which the own rows use only in the benchmark's harness (the barrier and the
# allreduce before the common start, outside the timed interval) and which SMPI uses to make
# a communicator; under the other selectors the first collective on a communicator of p
# ranks makes SMPI build its view of the nodes in p rounds (minutes of wall time at 4096
# ranks). The check below verifies that the own rows agree under both.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$(pwd)
ranks="64 256 1024 4096"
sizes="8 4096 65536 1048576"
reduce_ranks="256"
allgather_ranks=""
overlap_ranks="256"
cg_ranks=""
iterations=1
warmup_below=1024
full_up_to=1024
parts="latency overlap regional cg"
platform=""
nic=""
build=1
quick=0
out="$root/results/simulation-$(date -u +%Y%m%d-%H%M%S)"
selectors="${TRIBUTARY_SMPI_SELECTORS:-ompi mpich mvapich2 impi default}"
own_selector=default
own_allreduce="tree,recursive_doubling,knomial4,rabenseifner4,rabenseifner16,node_aware_recursive_doubling"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --ranks) ranks="$2"; shift 2 ;;
    --sizes) sizes="$2"; shift 2 ;;
    --reduce-ranks) reduce_ranks="$2"; shift 2 ;;
    --allgather-ranks) allgather_ranks="$2"; shift 2 ;;
    --overlap-ranks) overlap_ranks="$2"; shift 2 ;;
    --cg-ranks) cg_ranks="$2"; shift 2 ;;
    --parts) parts="$2"; shift 2 ;;
    --variants-allreduce) own_allreduce="$2"; shift 2 ;;
    --full-up-to) full_up_to="$2"; shift 2 ;;
    --platform) platform="$2"; shift 2 ;;
    --nic) nic="$2"; shift 2 ;;
    --no-build) build=0; shift ;;
    --iterations) iterations="$2"; shift 2 ;;
    --warmup-below) warmup_below="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --quick) quick=1; ranks="64"; sizes="8 4096 262144"; selectors="ompi mpich"
      reduce_ranks="64"; overlap_ranks="64"; cg_ranks="16 64"; shift ;;
    *) sed -n '2,41p' "$0"; exit 2 ;;
  esac
done
mkdir -p "$out"
log() { echo "[$(date -u +%H:%M:%S)] $*" >&2; }
has() { [[ " $1 " == *" $2 "* ]]; }

if ((build)); then
  log "building the smpi preset (bench_simulation, cg_poisson)"
  [[ -f "$root/build/smpi/build.ninja" ]] || (cmake --preset smpi >/dev/null)
  cmake --build build/smpi -j 2 --target bench_simulation cg_poisson >/dev/null
fi
bench="$root/build/smpi/bench/simulation/bench_simulation"
launch=("$root/simulation/smpirun.sh")
[[ -n "$platform" ]] && launch+=(--platform "$platform")
[[ -n "$nic" ]] && launch+=(--nic "$nic")
# A run that fails (a wrong result, a crash) is logged and the sweep goes on.
run() { "${launch[@]}" "$@" || { log "FAILED: smpirun.sh $*"; return 0; }; }
csv() { echo $* | tr ' ' ','; }

header() { [[ -s "$out/$1" ]] || echo "$2" >"$out/$1"; }
header latency.csv "kind,collective,variant,ranks,nodes,bytes,median_s,min_s,max_s,selector"
header overlap.csv "kind,collective,variant,ranks,nodes,bytes,t_pure,t_cpu,t_overall,osu,imb,hidden,t_test"
header regional.csv "kind,collective,variant,ranks,nodes,lists,median_s,min_s,max_s"
header cg.csv "kind,variant,ranks,nodes,n,strips,iterations,s_per_iteration"

# The method's checks, at 64 ranks, before any figure: own schedules give the same times
# under SMPI's default selector and under ompi, and with and without a warm-up iteration;
# so do the MPI library's rows with and without a warm-up (SMPI builds its view of the nodes
# in the harness's first collective, before any timed one). "The same" is within 1 %: the
# simulator keeps time to 1 ns (surf/precision), so a message that arrives within a
# nanosecond of a poll is seen then or one poll (16 ns) later, depending on the absolute
# time of the common start.
same() {  # latency rows $1 and $2 agree within 1 % at every variant and size
  paste -d, <(echo "$1") <(echo "$2") | awk -F, '{ d = $16 / $7 - 1; if (d < 0) d = -d
    if ($3 != $12 || $6 != $15 || d > 0.01) { print "differs: " $0; bad = 1 } } END { exit bad }'
}
if has "$parts" latency && ((!quick)); then
  log "check: the own rows under the default and the ompi selector, with and without a warm-up"
  v=tree,knomial4,node_aware_recursive_doubling
  a=$("${launch[@]}" -n 64 --coll-selector default "$bench" latency --variants $v \
    --sizes 8,4096,65536 --iterations 1 --warmup 1 --debug none)
  b=$("${launch[@]}" -n 64 --coll-selector ompi "$bench" latency --variants $v \
    --sizes 8,4096,65536 --iterations 1 --warmup 0 --debug none)
  same "$a" "$b" || { log "the own rows depend on the selector or the warm-up: not valid"; exit 1; }
  echo "$a" >"$out/check-own.txt"
  for sel in ompi mvapich2; do
    log "check: MPI_Allreduce under $sel with and without a warm-up"
    a=$("${launch[@]}" -n 64 --coll-selector $sel "$bench" latency --variants MPI_Allreduce \
      --sizes 8,65536 --iterations 1 --warmup 1)
    b=$("${launch[@]}" -n 64 --coll-selector $sel "$bench" latency --variants MPI_Allreduce \
      --sizes 8,65536 --iterations 1 --warmup 0)
    same "$a" "$b" || { log "MPI_Allreduce under $sel depends on the warm-up: not valid"; exit 1; }
    echo "$a" >>"$out/check-mpi.txt"
  done
fi

# One collective at one rank count: own schedules (every one up to 16 KiB; above, the
# schedules that can be fast there, and only the tree above --full-up-to ranks), then the
# blocking MPI call under every selector.
latency() {
  local coll=$1 np=$2 own large raw s small big warm=1
  ((np >= warmup_below)) && warm=0
  case $coll in
    allreduce) own="$own_allreduce"; large="tree,rabenseifner4,rabenseifner16"; raw="MPI_Allreduce" ;;
    reduce) own="tree,knomial4,knomial16,reduce_scatter_gather4,reduce_scatter_gather16"
      large="tree,reduce_scatter_gather4,reduce_scatter_gather16"; raw="MPI_Reduce" ;;
    allgather) own="tree,recursive_doubling,ring"; large="tree,ring"; raw="MPI_Allgather" ;;
  esac
  ((np > full_up_to)) && large="tree"
  # Allgather results grow with the rank count: keep them under 16 MiB per rank.
  s=$(csv $sizes)
  [[ $coll == allgather ]] && s=$(for b in $sizes; do ((b * np <= 16777216)) && echo -n "$b,"; done)
  small=$(echo "$s" | tr ',' '\n' | awk 'NF && $1 <= 16384' | paste -sd, -)
  big=$(echo "$s" | tr ',' '\n' | awk 'NF && $1 > 16384' | paste -sd, -)
  # Own schedules at DebugLevel::none (no length check), like the MPI library's calls.
  log "latency: $coll at $np ranks, own schedules"
  [[ -n "$small" ]] && run -n "$np" --coll-selector $own_selector "$bench" latency --collective $coll \
    --variants "$own" --sizes "$small" --iterations $iterations --warmup $warm --debug none |
    sed 's/$/,tributary/' >>"$out/latency.csv"
  [[ -n "$big" ]] && run -n "$np" --coll-selector $own_selector "$bench" latency --collective $coll \
    --variants "$large" --sizes "$big" --iterations $iterations --warmup $warm --debug none |
    sed 's/$/,tributary/' >>"$out/latency.csv"
  for sel in $selectors; do
    log "latency: $coll at $np ranks, MPI library under selector $sel"
    run -n "$np" --coll-selector "$sel" "$bench" latency --collective $coll --variants "$raw" \
      --sizes "$s" --iterations $iterations --warmup $warm | sed "s/\$/,$sel/" >>"$out/latency.csv"
  done
}

if has "$parts" latency; then
  for np in $ranks; do latency allreduce "$np"; done
  for np in $reduce_ranks; do latency reduce "$np"; done
  for np in $allgather_ranks; do latency allgather "$np"; done
fi
for np in $overlap_ranks; do
  if has "$parts" overlap; then
    # SMPI's MPI_Iallreduce sends the whole buffer to and from every peer (p^2 messages in
    # flight), whatever the selector.
    log "overlap at $np ranks"
    osizes=$(for b in 8 512 4096 16384 65536; do echo -n "$b,"; done)
    run -n "$np" --coll-selector $own_selector "$bench" overlap --variants "tree,recursive_doubling" \
      --sizes "$osizes" --iterations $iterations --debug none >>"$out/overlap.csv"
    run -n "$np" "$bench" overlap --variants "MPI_Iallreduce" --sizes "$osizes" \
      --iterations $iterations >>"$out/overlap.csv"
  fi
  if has "$parts" regional; then
    for lists in 8 64; do
      log "regional combine at $np ranks, $lists lists"
      run -n "$np" --coll-selector $own_selector "$bench" regional --lists $lists \
        --iterations $iterations >>"$out/regional.csv"
    done
  fi
done

# Weak scaling: n = 64 sqrt(p), so every rank holds 64 x 64 points in 4 strips.
if has "$parts" cg && [[ -n "$cg_ranks" ]]; then
  for np in $cg_ranks; do
    n=$(awk -v p="$np" 'BEGIN { printf "%d", 64 * sqrt(p) + 0.5 }')
    log "cg_poisson at $np ranks (${n}x${n} grid, $((4 * np)) strips)"
    run -n "$np" "$root/build/smpi/example_apps/cg_poisson" --n "$n" --strips $((4 * np)) \
      --iterations 10 | awk -v p="$np" -v n="$n" -v s=$((4 * np)) '
        / CG: / { v = $1; it = $3; for (i = 1; i <= NF; ++i) if ($(i + 1) == "us") t = $i
          printf "cg,%s,%d,%d,%d,%d,%d,%.9g\n", v, p, (p + 15) / 16, n, s, it, t * 1e-6 }' >>"$out/cg.csv"
  done
fi

# Lower bound of an allreduce on the platform (simulation/platform-params.sh reads α, β of
# the links between nodes from it). The N nodes of r ranks each have one link and messages
# within a node do not cross it, so the nodes are the processes of the classic bound: every
# node's link carries at least 2(N-1)/N·n bytes, and a value reaches every node after
# ⌈log_(r+1) N⌉ hops between nodes (each of a node's r ranks can send to a different node),
# each paying α and a post and a receive; every rank combines at least (p-1)/p·n bytes.
# One node: the p ranks on the loopback. Computed for the sizes measured.
eval "$("$root/simulation/platform-params.sh" "${platform:-$root/simulation/platforms/cluster-16x16.xml}")"
awk -F, -v a="$alpha" -v b="$beta" -v la="$local_alpha" -v lb="$local_beta" \
  -v o="${TRIBUTARY_SMPI_SEND_COST:-7.7e-8}" -v orr="${TRIBUTARY_SMPI_RECV_COST:-2.1e-8}" \
  -v g="${TRIBUTARY_SMPI_COMBINE_COST:-2.3e-11}" '
  NR > 1 && $2 == "allreduce" { key = $4 "," $6; if (!(key in seen)) { seen[key] = 1;
  p = $4; N = $5; n = $6; r = p / N; hops = 0
  if (N > 1) { for (q = 1; q < N; q *= r + 1) ++hops; t = hops * (a + o + orr) + 2 * (N - 1) / N * n * b }
  else { for (q = 1; q < p; q *= 2) ++hops; t = hops * (la + o + orr) + 2 * (p - 1) / p * n * lb }
  t += (p - 1) / p * n * g
  printf "bound,allreduce,lower_bound,%d,%d,%d,%.9g,%.9g,%.9g,model\n", p, N, n, t, 0, 0 } }' \
  "$out/latency.csv" >"$out/bound.csv"

log "summary and plots"
# The rank counts at which a collective was measured.
measured() { awk -F, -v c="$1" 'NR > 1 && $2 == c { print $4 }' "$out/latency.csv" | sort -n -u; }
{
  echo "# Tributary on simulated clusters"
  echo
  echo "Simulated times (SimGrid SMPI $(smpirun -version 2>&1 | grep -o '3\.[0-9]*' | head -1)), not measured on hardware."
  echo "Platform: ${platform:-simulation/platforms/ (16 ranks per node)}."
  echo "Method and charges: docs/simulation.md, \"How a figure is measured\"."
  echo
  echo "## Latency (from a common start to the last rank's completion), µs"
  echo
  for coll in allreduce reduce allgather; do
    for np in $(measured "$coll"); do
      echo "### $coll, $np ranks"
      echo
      awk -F, -v np=$np -v c=$coll 'FILENAME !~ /bound/ && FNR > 1 && $2 == c && $4 == np {
          v = $3 ($10 == "tributary" ? "" : " [" $10 "]"); if (!(v in seenv)) { seenv[v] = 1; order[++nv] = v }
          if (!($6 in seens)) { seens[$6] = 1; sz[++ns] = $6 } t[v, $6] = $7 * 1e6 }
        FILENAME ~ /bound/ && $4 == np { bound[$6] = $7 * 1e6 }
        END { printf "| variant |"; for (j = 1; j <= ns; ++j) printf " %s B |", sz[j]; print "";
          printf "|---|"; for (j = 1; j <= ns; ++j) printf "---:|"; print "";
          for (i = 1; i <= nv; ++i) { printf "| %s |", order[i];
            for (j = 1; j <= ns; ++j) { k = order[i] SUBSEP sz[j]; printf (k in t) ? " %.2f |" : " – |", t[k] } print "" }
          if (c == "allreduce") { printf "| lower bound |"; for (j = 1; j <= ns; ++j) printf " %.2f |", bound[sz[j]]; print "" } }' \
        "$out/latency.csv" "$out/bound.csv"
      echo
    done
  done
  if [[ $(wc -l <"$out/overlap.csv") -gt 1 ]]; then
    echo "## Overlap (computation = t_pure, polled in 20 chunks)"
    echo
    echo "| ranks | variant | bytes | t_pure µs | t_overall µs | polls µs | OSU % | IMB % |"
    echo "|---:|---|---:|---:|---:|---:|---:|---:|"
    awk -F, 'NR > 1 { printf "| %d | %s | %d | %.2f | %.2f | %.2f | %.1f | %.1f |\n", $4, $3, $6, $7 * 1e6, $9 * 1e6, $13 * 1e6, $10, $11 }' "$out/overlap.csv"
    echo
  fi
  if [[ $(wc -l <"$out/regional.csv") -gt 1 ]]; then
    echo "## Lists per rank, one scalar each"
    echo
    echo "| ranks | lists | variant | µs per cycle |"
    echo "|---:|---:|---|---:|"
    awk -F, 'NR > 1 { printf "| %d | %d | %s | %.2f |\n", $4, $6, $3, $7 * 1e6 }' "$out/regional.csv"
    echo
  fi
  if [[ $(wc -l <"$out/cg.csv") -gt 1 ]]; then
    echo "## cg_poisson, weak scaling (64 x 64 points per rank), µs per iteration"
    echo
    echo "| ranks | nodes | grid | classic | pipelined | pipelined / classic |"
    echo "|---:|---:|---:|---:|---:|---:|"
    awk -F, 'NR > 1 { t[$3, $2] = $8 * 1e6; n[$3] = $5; nodes[$3] = $4; if (!($3 in seen)) { seen[$3] = 1; order[++k] = $3 } }
      END { for (i = 1; i <= k; ++i) { p = order[i]
        printf "| %d | %d | %dx%d | %.1f | %.1f | %.2f |\n", p, nodes[p], n[p], n[p], t[p, "classic"], t[p, "pipelined"],
          t[p, "classic"] ? t[p, "pipelined"] / t[p, "classic"] : 0 } }' "$out/cg.csv"
  fi
} >"$out/summary.md"

if command -v gnuplot >/dev/null && [[ $(wc -l <"$out/latency.csv") -gt 1 ]]; then
  for coll in allreduce reduce allgather; do
    for np in $(measured "$coll"); do
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
        plot+="'$f' using 1:2 with lines dashtype 2 lw 2 title 'lower bound', "
      fi
      gnuplot <<EOF || log "gnuplot failed for $coll at $np ranks"
set terminal pngcairo size 1000,640 noenhanced
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
  # rank count, and the lower bound.
  if [[ $(measured allreduce | wc -l) -gt 1 ]]; then
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
      plot+="'$f' using 1:2 with lines dashtype 2 title 'lower bound, $b B', "
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
