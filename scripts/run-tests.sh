#!/usr/bin/env bash
# Quick start, part 2: installs what is missing, builds Tributary with its tests, and runs
# the whole default test suite (every label except "extended" and "bench").
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
"$here/install-deps.sh"
source "$here/common.sh"
tributary_configure
cmake --build "$TRIBUTARY_BUILD" -j "$TRIBUTARY_JOBS"
ctest --test-dir "$TRIBUTARY_BUILD" -j "$TRIBUTARY_JOBS" --output-on-failure -LE 'extended|bench' "$@"
