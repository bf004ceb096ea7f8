#!/usr/bin/env bash
# Prints, as shell assignments, the α-β parameters of a SimGrid <cluster> platform file:
#   alpha, beta              a message between two nodes: two node links and the backbone
#                            (seconds; seconds per byte)
#   local_alpha, local_beta  a message within a node (the loopback link)
#   nodes, cores             the cluster's node count and cores per node
# Units: lat in s/ms/us/ns, bw in Bps/KBps/MBps/GBps or bps/Kbps/Mbps/Gbps (SimGrid's).
# The latency and bandwidth factors of a platform's sidecar file (<platform>.cfg) are not
# applied here: they depend on the message size (docs/simulation.md).
#   simulation/platform-params.sh simulation/platforms/cluster-16x16.xml
set -euo pipefail
file="${1:?usage: platform-params.sh PLATFORM.xml}"
[[ "$file" == *.xml ]] || file="${file%.*}.xml"   # a compiled platform names its base XML
tr '\n' ' ' <"$file" | grep -o '<cluster [^>]*>' | head -1 | awk '
  function attr(name,   m) { if (match($0, " " name "=\"[^\"]*\"")) { m = substr($0, RSTART + length(name) + 3, RLENGTH - length(name) - 4); return m } return "" }
  function secs(v,   n) { n = v + 0; if (v ~ /ns$/) return n * 1e-9; if (v ~ /us$/) return n * 1e-6; if (v ~ /ms$/) return n * 1e-3; return n }
  function bytes_per_s(v,   n, k) { n = v + 0; k = 1
    if (v ~ /[Kk][Bb]ps$|[Kk]Bps$/) k = 1e3; if (v ~ /MBps$|Mbps$/) k = 1e6; if (v ~ /GBps$|Gbps$/) k = 1e9; if (v ~ /TBps$|Tbps$/) k = 1e12
    if (v ~ /bps$/ && v !~ /Bps$/) k /= 8; return n * k }
  function range_count(r,   a) { split(r, a, "-"); return a[2] - a[1] + 1 }
  { lat = secs(attr("lat")); bw = bytes_per_s(attr("bw")); bblat = secs(attr("bb_lat")); bbbw = attr("bb_bw")
    nodes = range_count(attr("radical")); core = attr("core"); if (core == "") core = 1
    # Between nodes: up the source link, the backbone, down the destination link; the
    # narrowest of them sets the bandwidth (the backbone is shared by all nodes).
    b = bw; if (bbbw != "" && bytes_per_s(bbbw) < b) b = bytes_per_s(bbbw)
    printf "alpha=%.9g\nbeta=%.9g\nlocal_alpha=%.9g\nlocal_beta=%.9g\nnodes=%d\ncores=%d\n",
      2 * lat + bblat, 1 / b, secs(attr("loopback_lat")), 1 / bytes_per_s(attr("loopback_bw")), nodes, core }'
