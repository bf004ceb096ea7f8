#!/usr/bin/env bash
# Quick start, part 1: installs what is missing, builds Tributary, and runs the main example
# on 4 ranks. Usage: scripts/run-example.sh [example arguments...]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
"$here/install-deps.sh"
source "$here/common.sh"
tributary_configure
cmake --build "$TRIBUTARY_BUILD" -j "$TRIBUTARY_JOBS" --target hello_reduce
launch=$(tributary_launcher 4)
echo "+ $launch $TRIBUTARY_BUILD/example_apps/hello_reduce $*"
$launch "$TRIBUTARY_BUILD/example_apps/hello_reduce" "$@"
