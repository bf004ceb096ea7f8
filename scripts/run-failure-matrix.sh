#!/usr/bin/env bash
# The whole failure matrix: every cell of {abort, propagate} x 5 faults x 5 teardowns x
# {serial, threaded, foreign} at 1-4 ranks (408 jobs). CTest's failures.matrix.npN run a
# quarter of the cells at each rank count (each cell once), failures.matrix.library.npN an
# eighth of the propagating cells at 2 and 3 ranks on the MPI library's schedule; this runs all.
#
#   scripts/run-failure-matrix.sh [run_failure_matrix.py options, e.g. --ranks 3 --show]
#   scripts/run-failure-matrix.sh --ranks 2,3,4 \
#     --env TRIBUTARY_SELECTION=tests/outside/library_only.json   # the library's schedule
#
# Needs a build folder made by scripts/run-tests.sh (TRIBUTARY_BUILD, build/default).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/common.sh"
cmake --build "$TRIBUTARY_BUILD" -j "$TRIBUTARY_JOBS" --target failure_matrix
tributary_launcher 1
launcher=("${TRIBUTARY_LAUNCH[@]}")
unset 'launcher[1]' 'launcher[2]'  # drop "-n 1": the matrix gives each cell its ranks
python3 "$TRIBUTARY_ROOT/tests/outside/run_failure_matrix.py" \
  --program "$TRIBUTARY_BUILD/tests/outside/failure_matrix" --launcher "${launcher[*]}" \
  --jobs "$TRIBUTARY_JOBS" "$@"
