#!/usr/bin/env bash
# Writes the network profile of a simulated platform (docs/simulation.md, "The cluster
# selection"), derived from its parameters: one message's one-way time between two nodes
# and within one at every power of two from 8 B to 1 GiB, α·(latency factor) + (n + 16 B of
# envelope)·β / (bandwidth factor) plus the charges for posting and receiving it (and,
# between nodes, the interface's injection); the node link's time per byte; the
# per-message charges. The platform's sidecar file
# (<platform>.cfg) supplies SMPI latency and bandwidth factors if it has them;
# TRIBUTARY_NIC_INJECTION (simulation/smpirun.sh --nic) the per-message cost of a node's
# network interface.
#   simulation/network-profile.sh simulation/platforms/cluster-16x16.xml > profile.json
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
platform="${1:?usage: network-profile.sh PLATFORM}"
eval "$("$here/platform-params.sh" "$platform")"
sidecar="${platform%.*}.cfg"
lat_factor="0:1" bw_factor="0:1" injection=0
if [[ -f "$sidecar" ]]; then
  lat_factor=$(sed -n 's/^--cfg=smpi\/lat-factor:\(.*\)$/\1/p' "$sidecar" | tail -1)
  bw_factor=$(sed -n 's/^--cfg=smpi\/bw-factor:\(.*\)$/\1/p' "$sidecar" | tail -1)
  lat_factor=${lat_factor:-0:1} bw_factor=${bw_factor:-0:1}
fi
# simulation/smpirun.sh --nic: each node's interface injects one message at a time.
[[ -n "${TRIBUTARY_NIC_INJECTION:-}" ]] && injection="$TRIBUTARY_NIC_INJECTION"
awk -v a="$alpha" -v b="$beta" -v la="$local_alpha" -v lb="$local_beta" \
  -v lf="$lat_factor" -v bf="$bw_factor" -v inj="$injection" \
  -v send="${TRIBUTARY_SMPI_SEND_COST:-7.7e-8}" -v recv="${TRIBUTARY_SMPI_RECV_COST:-2.1e-8}" \
  -v test="${TRIBUTARY_SMPI_POLL_COST:-1.6e-8}" -v comb="${TRIBUTARY_SMPI_COMBINE_COST:-2.3e-11}" \
  -v name="$(basename "$platform")" '
  # SMPI factors: "size:value;size:value..."; a message of n bytes takes the value of the
  # largest size <= n.
  function factor(spec, n,   parts, i, kv, best, bestsize) {
    split(spec, parts, ";"); best = 1; bestsize = -1
    for (i in parts) { split(parts[i], kv, ":"); if (kv[1] + 0 <= n && kv[1] + 0 > bestsize) { bestsize = kv[1] + 0; best = kv[2] + 0 } }
    return best }
  function one_way(alpha, beta, n, nic) {
    return alpha * factor(lf, n) + (n + 16) * beta / factor(bf, n) + send + (n < 65536 ? recv : 0) + nic }
  function table(alpha, beta, nic,   n, s, sep) {
    s = "["; sep = ""
    for (n = 8; n <= 1073741824; n *= 2) { s = s sep sprintf("[%d, %.6g]", n, one_way(alpha, beta, n, nic)); sep = ", " }
    return s "]" }
  BEGIN {
    printf "{\n  \"tributary_network\": 1,\n"
    printf "  \"comment\": \"derived from %s by simulation/network-profile.sh\",\n", name
    printf "  \"inter_node\": %s,\n", table(a, b, inj)
    printf "  \"intra_node\": %s,\n", table(la, lb, 0)
    printf "  \"link\": %.6g,\n  \"injection\": %.6g,\n", b, inj
    printf "  \"send\": %.6g,\n  \"receive\": %.6g,\n  \"test\": %.6g,\n  \"combine\": %.6g\n}\n", send, recv, test, comb
  }'
