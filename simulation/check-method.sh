#!/usr/bin/env bash
# The SMPI smoke check of .ci/run (docs/simulation.md, "How a figure is measured"):
#   1. the simulator agrees with the platform's α-β model: one-way times between two nodes
#      and within one, at 8 B and 1 MiB, within 1 % of the platform's derived network
#      profile (simulation/network-profile.sh);
#   2. bench_simulation check at 64 ranks on 4 nodes: every collective's answer right, and
#      an overlap run that took less time than its own computation fails it;
#   3. the built-in tree with no network profile given (measured at start-up) against SMPI's
#      MPI_Allreduce (ompi) on hilat-16x16, a platform nothing was tuned on, at 32 ranks,
#      8 B and 64 KiB: within 1.05x or faster (check-untuned.sh; about 3 s).
#   simulation/check-method.sh [BUILD_DIR]   (default build/smpi)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
build="${1:-$here/../build/smpi}"
bench="$build/bench/simulation/bench_simulation"
platform="$here/platforms/cluster-16x16.xml"
profile=$("$here/network-profile.sh" "$platform")
expect() {  # the profile's one-way time at $2 bytes in table $1
  echo "$profile" | grep "\"$1\"" | grep -o "\[$2, [0-9.e+-]*\]" | sed 's/.*, \(.*\)\]/\1/'
}
TRIBUTARY_SMPI_RANKS_PER_NODE=16 "$here/smpirun.sh" -n 32 "$bench" pingpong --sizes 8,1048576 \
  --iterations 20 | while IFS=, read -r _ _ where _ _ bytes seconds; do
  table=inter_node
  [[ $where == same_node ]] && table=intra_node
  model=$(expect "$table" "$bytes")
  awk -v w="$where" -v b="$bytes" -v s="$seconds" -v m="$model" 'BEGIN {
    d = s / m - 1; printf "alpha-beta check: %s %d B: simulated %.4g s, model %.4g s (%+.2f %%)\n", w, b, s, m, 100 * d
    exit (d > 0.01 || d < -0.01) ? 1 : 0 }' || { echo "the simulator strays from the platform's model" >&2; exit 1; }
done
TRIBUTARY_SMPI_RANKS_PER_NODE=16 "$here/smpirun.sh" -n 64 "$bench" check
"$here/check-untuned.sh" --build "$build" --ranks 32 --sizes 8,65536 --platforms hilat-16x16 \
  --selectors ompi
