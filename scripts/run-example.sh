#!/usr/bin/env bash
# Quick start, part 1: installs what is missing, builds Tributary, and runs the main example
# (heat2d) on 4 ranks. Usage: scripts/run-example.sh [heat2d arguments...], e.g. --help
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
"$here/install-deps.sh"
source "$here/common.sh"
tributary_configure
cmake --build "$TRIBUTARY_BUILD" -j "$TRIBUTARY_JOBS" --target heat2d
tributary_launcher 4
echo "+ ${TRIBUTARY_LAUNCH[*]} $TRIBUTARY_BUILD/example_apps/heat2d $*"
"${TRIBUTARY_LAUNCH[@]}" "$TRIBUTARY_BUILD/example_apps/heat2d" "$@"
