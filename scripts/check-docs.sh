#!/usr/bin/env bash
# The API reference check: runs Doxygen over the public headers
# (docs/api/Doxyfile) and fails, listing them, on any warning: an undocumented public name
# or a malformed comment. The reference itself: cmake --build <build> --target doc.
# Usage: scripts/check-docs.sh [OUTPUT_DIR]   (default: a temporary folder, removed after)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out="${1:-}"
if [[ -z "$out" ]]; then
  out=$(mktemp -d)
  trap 'rm -rf "$out"' EXIT
fi
mkdir -p "$out"
rm -f "$out/warnings.txt"
TRIBUTARY_DOC_OUT="$out" doxygen docs/api/Doxyfile
if [[ -s "$out/warnings.txt" ]]; then
  n=$(grep -c 'warning:' "$out/warnings.txt" || true)
  echo "check-docs: $n Doxygen warnings over the public headers:" >&2
  sed "s|$(pwd)/||" "$out/warnings.txt" >&2
  exit 1
fi
echo "check-docs: the public headers are documented (no Doxygen warning)"
