#!/usr/bin/env bash
# The API reference check: runs Doxygen over the public headers
# (docs/api/Doxyfile) and fails, listing them, on any warning: an undocumented public name
# or a malformed comment. The reference itself: cmake --build <build> --target doc. Then
# every picture the documents show (`](images/NAME.png)` and the like in README.md and
# docs/*.md) must be a tracked PNG of at most 300 KB.
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

bad=0 shown=0
while IFS=: read -r doc link; do
  dir=$(dirname "$doc")
  file="$dir/$link"
  shown=$((shown + 1))
  if ! git ls-files --error-unmatch "$file" >/dev/null 2>&1; then
    echo "check-docs: $doc shows $link, which is not a tracked file" >&2
    bad=1
  elif [[ "$(head -c 8 "$file" | od -An -tx1 | tr -d ' \n')" != 89504e470d0a1a0a ]]; then
    echo "check-docs: $doc shows $link, which is not a PNG" >&2
    bad=1
  elif (($(stat -c %s "$file") > 300 * 1024)); then
    echo "check-docs: $doc shows $link, $(stat -c %s "$file") bytes (at most 300 KB)" >&2
    bad=1
  fi
done < <(grep -o '](\(images\|img\)/[A-Za-z0-9_./-]*\.png)' README.md docs/*.md 2>/dev/null |
  sed 's/:](/:/; s/)$//')
((bad == 0)) || exit 1
echo "check-docs: the $shown pictures the documents show are tracked PNGs of at most 300 KB"
