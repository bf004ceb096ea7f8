#!/usr/bin/env bash
# Runs an SMPI-built program on a simulated cluster: picks the platform, writes the host
# file (ranks filled node by node) and passes Tributary's calibrated SMPI settings.
#
#   simulation/smpirun.sh [options] -n N program [args...]
#     --platform FILE        SimGrid platform (default: the smallest cluster in
#                            simulation/platforms/ with room for N ranks at --ranks-per-node)
#     --ranks-per-node K     ranks placed on each node before the next (default 16, or
#                            $TRIBUTARY_SMPI_RANKS_PER_NODE)
#     --coll-selector S      SMPI's collective algorithms: ompi, mpich, mvapich2, impi
#                            (default ompi, or $TRIBUTARY_SMPI_COLL_SELECTOR)
#     --cfg=NAME:VALUE       any further SimGrid setting (repeatable)
#   --version prints SimGrid's version (CMake recognises the launcher by it).
# SimGrid's own log lines go to stderr at warning level and above only.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
np=""
platform=""
rpn="${TRIBUTARY_SMPI_RANKS_PER_NODE:-16}"
selector="${TRIBUTARY_SMPI_COLL_SELECTOR:-ompi}"
extra=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --version | -version) exec smpirun -version ;;
    -n | -np) np="$2"; shift 2 ;;
    --platform) platform="$2"; shift 2 ;;
    --ranks-per-node) rpn="$2"; shift 2 ;;
    --coll-selector) selector="$2"; shift 2 ;;
    --cfg=*) extra+=("$1"); shift ;;
    --oversubscribe) shift ;;  # Open MPI's flag, meaningless here
    *) break ;;
  esac
done
[[ -n "$np" && $# -ge 1 ]] || { sed -n '4,15p' "${BASH_SOURCE[0]}" >&2; exit 2; }
nodes_needed=$(((np + rpn - 1) / rpn))
if [[ -z "$platform" ]]; then
  for p in 16x16 256x16 1024x16; do
    if ((nodes_needed <= ${p%x*})); then platform="$here/platforms/cluster-$p.xml"; break; fi
  done
  [[ -n "$platform" ]] || { echo "smpirun.sh: no platform has $nodes_needed nodes" >&2; exit 2; }
fi
hostfile=$(mktemp "${TMPDIR:-/tmp}/tributary-hosts.XXXXXX")
trap 'rm -f "$hostfile"' EXIT
for ((r = 0; r < np; ++r)); do echo "node-$((r / rpn))"; done >"$hostfile"
# Settings, explained in simulation/README.md.
cfg=(
  --cfg=smpi/host-speed:1Gf
  --cfg=smpi/simulate-computation:no
  --cfg=smpi/test:"${TRIBUTARY_SMPI_POLL_COST:-5e-8}"
  --cfg=smpi/iprobe:"${TRIBUTARY_SMPI_POLL_COST:-5e-8}"
  --cfg=smpi/grow-injected-times:no
  --cfg=smpi/bw-factor:0:1
  --cfg=smpi/lat-factor:0:1
  --cfg=network/crosstraffic:0
  --cfg=smpi/coll-selector:"$selector"
  --log=root.thresh:warning
  --log=smpi_config.thresh:error
)
status=0
smpirun -np "$np" -platform "$platform" -hostfile "$hostfile" "${cfg[@]}" "${extra[@]}" "$@" || status=$?
exit $status
