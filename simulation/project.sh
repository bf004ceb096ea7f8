#!/usr/bin/env bash
# Projects allreduce latency beyond the simulated rank counts (docs/simulation.md, "Beyond
# 4096 ranks"). Per schedule, the cluster model's time (tributary-selection --model: the
# LogGP-style rounds of src/selection/cluster_model.cpp on the platform's network profile) is fitted to
# the simulated points with one factor a (the mean of simulated / model) on every simulated
# rank count but the held-out one, which checks the fit (--held-out 1024: an interpolation
# between 256 and 4096; --held-out 4096: an extrapolation from 64-1024); the fitted model
# then gives 16Ki-128Ki ranks, beside the lower bound of scripts/run-simulation.sh.
#   simulation/project.sh --tool build/nompi/src/tools/tributary-selection \
#       --out DIR latency.csv [latency.csv ...]
#   [--held-out 1024] [--variants "tree rabenseifner4 ..."] [--platform FILE] [--png FILE]
# Writes DIR/projection.csv, DIR/projection.md and DIR/projection.png (gnuplot), and copies
# the plot to FILE where given (docs/images/simulated-latency-vs-ranks.png in docs/simulation.md).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
tool="" out="" held=1024 platform="$here/platforms/cluster-16x16.xml" png=""
variants="tree recursive_doubling knomial4 rabenseifner4 rabenseifner16 node_aware_recursive_doubling"
files=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --tool) tool="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --held-out) held="$2"; shift 2 ;;
    --variants) variants="$2"; shift 2 ;;
    --platform) platform="$2"; shift 2 ;;
    --png) png="$2"; shift 2 ;;
    -*) sed -n '2,12p' "$0"; exit 2 ;;
    *) files+=("$1"); shift ;;
  esac
done
[[ -n "$tool" && -n "$out" && ${#files[@]} -gt 0 ]] || { sed -n '2,12p' "$0"; exit 2; }
mkdir -p "$out"
profile=$(mktemp); trap 'rm -f "$profile"' EXIT
"$here/network-profile.sh" "$platform" >"$profile"
export TRIBUTARY_NETWORK="$profile"
eval "$("$here/platform-params.sh" "$platform")"
per_node=16
# The simulated points: variant, ranks, bytes, seconds (own schedules only).
points=$(awk -F, 'FNR > 1 && $1 == "latency" && $2 == "allreduce" && $10 == "tributary" {
  print $3, $4, $6, $7 }' "${files[@]}" | sort -u)
sizes=$(echo "$points" | awk '{ print $3 }' | sort -n -u | paste -sd, -)
ranks=$(echo "$points" | awk '{ print $2 }' | sort -n -u)
project="16384 32768 65536 131072"
# The model at every rank count measured and projected, every candidate.
models=$(for p in $ranks $project; do
  "$tool" --size "$p" --nodes $((p / per_node)) --collective allreduce --model "$sizes"
done)
{
  echo "$models" | awk -F, '{ print "model", $3, $4, $6, $7 }'
  echo "$points" | awk '{ print "sim", $1, $2, $3, $4 }'
} | awk -v held="$held" -v variants="$variants" -v proj="$project" \
    -v a="$alpha" -v b="$beta" -v o="${TRIBUTARY_SMPI_SEND_COST:-7.7e-8}" \
    -v orr="${TRIBUTARY_SMPI_RECV_COST:-2.1e-8}" -v g="${TRIBUTARY_SMPI_COMBINE_COST:-2.3e-11}" \
    -v r="$per_node" -v csv="$out/projection.csv" -v md="$out/projection.md" '
  function bound(p, n,   N, hops, q) { N = p / r; hops = 0; for (q = 1; q < N; q *= r + 1) ++hops
    return hops * (a + o + orr) + 2 * (N - 1) / N * n * b + (p - 1) / p * n * g }
  $1 == "model" { name = $2; gsub(/[()]/, "_", name); sub(/_$/, "", name)
    if (name == "node_aware_recursive_doubling") name = "node_aware_recursive_doubling"
    m[name, $3, $4] = $5
    if (!((("tree") SUBSEP $3 SUBSEP $4) in m) || $5 < m["tree", $3, $4]) m["tree", $3, $4] = $5
    next }
  $1 == "sim" { s[$2, $3, $4] = $5; P[$3] = 1; S[$4] = 1; next }
  END {
    nv = split(variants, V, " "); np = split(proj, PR, " ")
    print "kind,variant,ranks,bytes,seconds" > csv
    print "| schedule | factor a (fit) | held-out " held " ranks: simulated / fitted model, µs |" > md
    print "|---|---:|---|" > md
    ns = 0; for (n in S) SZ[++ns] = n + 0
    for (i = 2; i <= ns; ++i) for (j = i; j > 1 && SZ[j] < SZ[j - 1]; --j) { t = SZ[j]; SZ[j] = SZ[j - 1]; SZ[j - 1] = t }
    for (i = 1; i <= nv; ++i) { v = V[i]; num = 0; den = 0
      # One factor per schedule: the mean of simulated / model over the fitted points, so
      # that every size weighs alike.
      for (k in s) { split(k, f, SUBSEP); if (f[1] != v || f[2] + 0 == held + 0) continue
        if (!((v SUBSEP f[2] SUBSEP f[3]) in m)) continue
        num += s[k] / m[v, f[2], f[3]]; ++den }
      if (den == 0) continue
      fit[v] = num / den; check = ""
      for (z = 1; z <= ns; ++z) { k = v SUBSEP held SUBSEP SZ[z]; if (!(k in s) || !(k in m)) continue
        pred = fit[v] * m[k]
        check = check sprintf("%s%d B: %.2f / %.2f (%+.1f %%)", check == "" ? "" : "; ", SZ[z], s[k] * 1e6, pred * 1e6, 100 * (pred / s[k] - 1))
        printf "heldout,%s,%d,%d,%.9g,%.9g\n", v, held, SZ[z], s[k], pred > csv }
      printf "| %s | %.3f | %s |\n", v, fit[v], check == "" ? "not simulated" : check > md
      for (k in s) { split(k, f, SUBSEP); if (f[1] == v) printf "sim,%s,%d,%d,%.9g\n", v, f[2], f[3], s[k] > csv }
      for (j = 1; j <= np; ++j) for (n in S) if ((v SUBSEP PR[j] SUBSEP n) in m)
        printf "projected,%s,%d,%d,%.9g\n", v, PR[j], n, fit[v] * m[v, PR[j], n] > csv
      for (q in P) for (n in S) if ((v SUBSEP q SUBSEP n) in m)
        printf "fitted,%s,%d,%d,%.9g\n", v, q, n, fit[v] * m[v, q, n] > csv }
    for (j = 1; j <= np; ++j) for (n in S) printf "bound,lower_bound,%d,%d,%.9g\n", PR[j], n, bound(PR[j], n) > csv
    for (p in P) for (n in S) printf "bound,lower_bound,%d,%d,%.9g\n", p, n, bound(p, n) > csv
  }'
# The table of projections: the fitted tree (the cheapest fitted candidate) and the bound.
{
  echo
  echo "| ranks | bytes | projected tree µs | lower bound µs | tree / bound |"
  echo "|---:|---:|---:|---:|---:|"
  awk -F, '$1 == "projected" && $2 == "tree" { t[$3, $4] = $5; R[$3] = 1; B[$4] = 1 }
    $1 == "bound" { lb[$3, $4] = $5 }
    END { for (p in R) for (n in B) if ((p SUBSEP n) in t)
      printf "%d %d %.2f %.2f %.2f\n", p, n, t[p, n] * 1e6, lb[p, n] * 1e6, t[p, n] / lb[p, n] }' \
    "$out/projection.csv" | sort -n -k1,1 -k2,2 | awk '{ printf "| %d | %d | %s | %s | %s |\n", $1, $2, $3, $4, $5 }'
} >>"$out/projection.md"
if command -v gnuplot >/dev/null; then
  plot=""
  for n in 8 65536 1048576; do
    c=$(case $n in 8) echo "#1f77b4" ;; 65536) echo "#2ca02c" ;; *) echo "#d62728" ;; esac)
    awk -F, -v n=$n '$1 == "sim" && $2 == "tree" && $4 == n { print $3, $5 * 1e6 }' "$out/projection.csv" | sort -n >"$out/.sim-$n.dat"
    awk -F, -v n=$n '($1 == "projected" || $1 == "fitted") && $2 == "tree" && $4 == n { print $3, $5 * 1e6 }' "$out/projection.csv" | sort -n >"$out/.proj-$n.dat"
    awk -F, -v n=$n '$1 == "bound" && $4 == n { print $3, $5 * 1e6 }' "$out/projection.csv" | sort -n -u >"$out/.bound-$n.dat"
    label=$(awk -v n=$n 'BEGIN { print (n >= 1048576 ? n / 1048576 " MiB" : n >= 1024 ? n / 1024 " KiB" : n " B") }')
    plot+="'$out/.proj-$n.dat' with linespoints dashtype 2 pt 1 lc rgb '$c' title 'tree $label, fitted model', "
    plot+="'$out/.sim-$n.dat' with points pt 7 ps 1.2 lc rgb '$c' title 'tree $label, simulated', "
    plot+="'$out/.bound-$n.dat' with lines lw 1 lc rgb '$c' title 'lower bound $label', "
  done
  gnuplot <<EOF
set terminal pngcairo size 760,420 noenhanced font ",8"
set output "$out/projection.png"
set title "allreduce, built-in tree, 16 ranks per node"
set logscale x 2
set logscale y
set xrange [48:180000]
set xtics ("64" 64, "256" 256, "1K" 1024, "4K" 4096, "16K" 16384, "64K" 65536, "128K" 131072)
set xlabel "ranks"
set ylabel "µs (simulated to 4K ranks, projected beyond)"
set key outside right font ",7"
plot ${plot%, }
EOF
  rm -f "$out"/.*.dat
  [[ -n "$png" ]] && cp "$out/projection.png" "$png"
fi
echo "projection: $out/projection.md, $out/projection.csv, $out/projection.png" >&2
