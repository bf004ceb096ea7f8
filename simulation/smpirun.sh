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
#     --nic SECONDS          each node's network interface injects one message at a time,
#                            SECONDS each (simulation/nic_platform.cpp, built with the
#                            preset: $TRIBUTARY_SMPI_NIC_LIBRARY, default
#                            build/smpi/simulation/libtributary_nic_platform.so)
#     --cfg=NAME:VALUE       any further SimGrid setting (repeatable); a platform's own
#                            settings are read from <platform>.cfg beside it
#     --measured-network     no TRIBUTARY_NETWORK: each Context that spans nodes measures
#                            the network at start-up, as on a real cluster
#   The program gets TRIBUTARY_NETWORK, the platform's network profile (network-profile.sh),
#   unless it is set already or --measured-network is given: Tributary's cluster selection
#   models that network.
#   --version prints SimGrid's version (CMake recognises the launcher by it).
# SimGrid's own log lines go to stderr at warning level and above only.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
np=""
platform=""
rpn="${TRIBUTARY_SMPI_RANKS_PER_NODE:-16}"
selector="${TRIBUTARY_SMPI_COLL_SELECTOR:-ompi}"
nic=""
measured=0
extra=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --version | -version) exec smpirun -version ;;
    -n | -np) np="$2"; shift 2 ;;
    --platform) platform="$2"; shift 2 ;;
    --ranks-per-node) rpn="$2"; shift 2 ;;
    --coll-selector) selector="$2"; shift 2 ;;
    --nic) nic="$2"; shift 2 ;;
    --measured-network) measured=1; shift ;;
    --cfg=*) extra+=("$1"); shift ;;
    --oversubscribe) shift ;;  # Open MPI's flag, meaningless here
    *) break ;;
  esac
done
[[ -n "$np" && $# -ge 1 ]] || { sed -n '4,25p' "${BASH_SOURCE[0]}" >&2; exit 2; }
nodes_needed=$(((np + rpn - 1) / rpn))
if [[ -z "$platform" ]]; then
  for p in 16x16 256x16 1024x16; do
    if ((nodes_needed <= ${p%x*})); then platform="$here/platforms/cluster-$p.xml"; break; fi
  done
  [[ -n "$platform" ]] || { echo "smpirun.sh: no platform has $nodes_needed nodes" >&2; exit 2; }
fi
hostfile=$(mktemp "${TMPDIR:-/tmp}/tributary-hosts.XXXXXX")
profile=""
trap 'rm -f "$hostfile" $profile' EXIT
for ((r = 0; r < np; ++r)); do echo "node-$((r / rpn))"; done >"$hostfile"
# Settings, explained in simulation/README.md. The charges are this machine's measured costs
# (bench_simulation calibrate; docs/simulation.md, "How a figure is measured").
poll="${TRIBUTARY_SMPI_POLL_COST:-1.6e-8}"
send="${TRIBUTARY_SMPI_SEND_COST:-7.7e-8}"
recv="${TRIBUTARY_SMPI_RECV_COST:-2.1e-8}"
export TRIBUTARY_SMPI_COMBINE_COST="${TRIBUTARY_SMPI_COMBINE_COST:-2.3e-11}"
export TRIBUTARY_SMPI_START_COST="${TRIBUTARY_SMPI_START_COST:-2.36e-7}"
cfg=(
  --cfg=smpi/host-speed:1Gf
  --cfg=smpi/simulate-computation:no
  --cfg=smpi/cpu-threshold:-1
  --cfg=smpi/test:"$poll"
  --cfg=smpi/iprobe:"$poll"
  --cfg=smpi/grow-injected-times:no
  --cfg=smpi/os:0:"$send":0
  --cfg=smpi/ois:0:"$send":0
  --cfg=smpi/or:0:"$recv":0
  --cfg=smpi/bw-factor:0:1
  --cfg=network/crosstraffic:0
  --cfg=smpi/coll-selector:"$selector"
  --log=root.thresh:warning
  --log=smpi_config.thresh:error
)
# The interface's queue sets the latency factor (a callback), which excludes the setting.
[[ -n "$nic" ]] || cfg+=(--cfg=smpi/lat-factor:0:1)
# A platform may carry its own settings (its latency and bandwidth factors, say) in a sidecar
# file beside it, <platform>.cfg, one --cfg=NAME:VALUE per line; they come after the
# defaults above, so they override them, and before the command line's.
sidecar="${platform%.*}.cfg"
if [[ -f "$sidecar" ]]; then
  while read -r line; do
    [[ -z "$line" || "$line" == \#* ]] || cfg+=("$line")
  done <"$sidecar"
fi
if ((measured)); then
  unset TRIBUTARY_NETWORK
elif [[ -z "${TRIBUTARY_NETWORK:-}" ]]; then
  profile=$(mktemp "${TMPDIR:-/tmp}/tributary-network.XXXXXX")
  TRIBUTARY_NIC_INJECTION="$nic" "$here/network-profile.sh" "$platform" >"$profile"
  export TRIBUTARY_NETWORK="$profile"
fi
run_platform="$platform"
if [[ -n "$nic" ]]; then
  export TRIBUTARY_NIC_PLATFORM="$platform" TRIBUTARY_NIC_INJECTION="$nic"
  run_platform="${TRIBUTARY_SMPI_NIC_LIBRARY:-$here/../build/smpi/simulation/libtributary_nic_platform.so}"
  [[ -f "$run_platform" ]] || { echo "smpirun.sh: no $run_platform (build the smpi preset)" >&2; exit 2; }
fi
status=0
smpirun -np "$np" -platform "$run_platform" -hostfile "$hostfile" "${cfg[@]}" "${extra[@]}" "$@" || status=$?
exit $status
