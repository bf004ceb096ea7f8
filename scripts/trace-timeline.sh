#!/usr/bin/env bash
# Merges the per-rank timelines of a traced run and draws them:
#   TRIBUTARY_TRACE=out/run mpiexec -n 4 ./my_code        (or ContextOptions::trace)
#   scripts/trace-timeline.sh out/run [-o out/timeline] [--from US] [--to US]
# writes out/timeline.json (every rank, for Perfetto or chrome://tracing) and
# out/timeline.png (gnuplot: a row per rank and reduction object). It runs tributary-trace
# from $TRIBUTARY_TRACE_TOOL, else from PATH (an installed Tributary), else from the build
# folder ($TRIBUTARY_BUILD, default build/default). docs/timeline.md says what is drawn.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
tool="${TRIBUTARY_TRACE_TOOL:-}"
if [[ -z "$tool" ]]; then
  if command -v tributary-trace >/dev/null 2>&1; then
    tool=tributary-trace
  else
    tool="${TRIBUTARY_BUILD:-$root/build/default}/src/tools/tributary-trace"
  fi
fi
if [[ ! -x "$tool" ]] && ! command -v "$tool" >/dev/null 2>&1; then
  echo "trace-timeline.sh: tributary-trace not found (build the target tributary-trace," \
    "or set TRIBUTARY_TRACE_TOOL)" >&2
  exit 2
fi
command -v gnuplot >/dev/null 2>&1 || { echo "trace-timeline.sh: gnuplot is not installed" >&2; exit 2; }
exec "$tool" "$@"
