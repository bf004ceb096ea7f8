#!/usr/bin/env bash
# The suites under perturbed progress: the PMPI layer of tests/perturb (preloaded) answers
# MPI's tests and probes "not yet" at random and delays some posts, as other MPI libraries
# may, while the core and outside-program suites run at 2-4 ranks and the failure matrix runs
# its propagating cells at 2-4 ranks. The seed is printed first (set TRIBUTARY_PERTURB_SEED
# to repeat a run); each rank prints its counts at MPI_Finalize.
#
#   scripts/run-perturbed.sh [--ranks "2 3 4"] [--matrix-executors serial,threaded,foreign]
#                            [--matrix-part K/N]
#
# CI runs --matrix-part 0/2 (half of the matrix's propagating cells, see run_failure_matrix.py).
#
# Needs a build folder made by scripts/run-tests.sh (TRIBUTARY_BUILD, build/default).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/common.sh"
ranks="2 3 4"
executors="serial,threaded,foreign"
part="0/1"
while (($#)); do
  case "$1" in
    --ranks) ranks="$2"; shift ;;
    --matrix-executors) executors="$2"; shift ;;
    --matrix-part) part="$2"; shift ;;
    *) echo "usage: scripts/run-perturbed.sh [--ranks \"2 3 4\"] [--matrix-executors LIST] [--matrix-part K/N]" >&2; exit 2 ;;
  esac
  shift
done
cmake --build "$TRIBUTARY_BUILD" -j "$TRIBUTARY_JOBS" --target tributary_perturb failure_matrix
layer=$(find "$TRIBUTARY_BUILD/tests/perturb" -name 'libtributary_perturb.so' | head -n 1)
[[ -n "$layer" ]] || { echo "run-perturbed: no libtributary_perturb.so in $TRIBUTARY_BUILD" >&2; exit 1; }
export TRIBUTARY_PERTURB_SEED="${TRIBUTARY_PERTURB_SEED:-$(( $(date +%s) % 100000 ))}"
export TRIBUTARY_PERTURB_TEST="${TRIBUTARY_PERTURB_TEST:-0.5}"
export TRIBUTARY_PERTURB_POST="${TRIBUTARY_PERTURB_POST:-0.05}"
echo "run-perturbed: seed $TRIBUTARY_PERTURB_SEED, tests answered \"not yet\" at random with" \
  "probability $TRIBUTARY_PERTURB_TEST, posts delayed with probability $TRIBUTARY_PERTURB_POST"
regex="\\.np[$(echo "$ranks" | tr -d ' ')]\$"
# Every test below runs with the layer preloaded (the launcher loads it too, unused there).
LD_PRELOAD="$layer" ctest --test-dir "$TRIBUTARY_BUILD" -j "$TRIBUTARY_JOBS" --output-on-failure \
  -L 'core|outside' -LE extended -R "$regex" -E '^failures\.matrix'
tributary_launcher 1
launcher=("${TRIBUTARY_LAUNCH[@]}")
unset 'launcher[1]' 'launcher[2]'  # drop "-n 1": the matrix gives each cell its ranks
LD_PRELOAD="$layer" python3 "$TRIBUTARY_ROOT/tests/outside/run_failure_matrix.py" \
  --program "$TRIBUTARY_BUILD/tests/outside/failure_matrix" --launcher "${launcher[*]}" \
  --policies propagate --executors "$executors" --ranks "$(echo "$ranks" | tr ' ' ',')" \
  --part "$part" --jobs "$TRIBUTARY_JOBS"
