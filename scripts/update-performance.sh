#!/usr/bin/env bash
# Refreshes the tables of docs/performance.md from a results folder of
# scripts/run-benchmarks.sh (which calls it at the end of every run but --quick):
#
#   scripts/update-performance.sh RESULTS_DIR [DOC]     (default DOC: docs/performance.md)
#
# Each table of DOC sits between two marker lines,
#   <!-- BEGIN bench ID [WHAT] -->
#   <!-- END bench ID -->
# and is replaced by what the benchmark section ID printed (RESULTS_DIR/sections/ID.md):
#   WHAT absent   everything the section printed (text without a table goes in a code block)
#   WHAT last     the last table it printed
#   WHAT PREFIX   the tables under its headings that begin "### PREFIX"
# The first line of a refreshed block says when and where it was measured (the head of
# RESULTS_DIR/summary.md). A block whose section did not run (8 ranks without --full, say)
# keeps its table. Everything outside the markers is left alone.
#
# Pictures: every image DOC shows as `](images/NAME.png)` is copied from RESULTS_DIR/NAME.png
# (the plots scripts/run-benchmarks.sh draws) into the folder images/ beside DOC, so the
# pictures come from the same run as the tables; one the run did not draw is kept.
set -euo pipefail
if [[ $# -lt 1 || $# -gt 2 ]]; then
  echo "usage: scripts/update-performance.sh RESULTS_DIR [DOC]" >&2
  exit 2
fi
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
dir="$1"
doc="${2:-$here/../docs/performance.md}"
[[ -d "$dir/sections" ]] || { echo "update-performance.sh: no $dir/sections" >&2; exit 1; }
[[ -f "$doc" ]] || { echo "update-performance.sh: no $doc" >&2; exit 1; }
# The summary's third line: "<date>, <n> cores, <kernel>; <mode>".
stamp="$(sed -n 3p "$dir/summary.md" 2>/dev/null || true)"

# extract FILE WHAT: the part of one section's output that goes into its block.
extract() {
  awk -v what="$2" '
    function flush_table() { if (ntab) { last = ""; for (i = 1; i <= ntab; i++) last = last tab[i] "\n"; ntab = 0 } }
    { sub(/\r$/, "") }
    what == "" { all[++nall] = $0; if ($0 ~ /^\|/) has_table = 1; next }
    what == "last" { if ($0 ~ /^\|/) tab[++ntab] = $0; else flush_table(); next }
    /^### / { keep = index($0, "### " what) == 1; if (keep) { if (out != "") out = out "\n"; out = out $0 "\n\n" } next }
    keep && /^\|/ { out = out $0 "\n" }
    END {
      if (what == "last") { flush_table(); printf "%s", last; exit }
      if (what != "") { printf "%s", out; exit }
      while (nall > 0 && all[nall] == "") nall--
      first = 1; while (first <= nall && all[first] == "") first++
      if (first > nall) exit
      if (!has_table) print "```text"
      blank = 0
      for (i = first; i <= nall; i++) {
        if (all[i] == "") { if (!blank) print ""; blank = 1; continue }
        blank = 0; print all[i]
      }
      if (!has_table) print "```"
    }' "$1"
}

begin_re='^<!-- BEGIN bench ([A-Za-z0-9_.-]+)( (.*))? -->$'
tmp="$(mktemp)"
trap 'rm -f "$tmp"' EXIT
refreshed=0
kept=0
id=""
replacing=0
while IFS= read -r line || [[ -n "$line" ]]; do
  if [[ -z "$id" && "$line" =~ $begin_re ]]; then
    id="${BASH_REMATCH[1]}"
    what="${BASH_REMATCH[3]}"
    printf '%s\n' "$line" >>"$tmp"
    replacing=0
    file="$dir/sections/$id.md"
    if [[ -s "$file" ]]; then
      body="$(extract "$file" "$what")"
      if [[ -n "$body" ]]; then
        replacing=1
        {
          [[ -n "$stamp" ]] && printf '_Measured %s, by `scripts/run-benchmarks.sh`._\n\n' "$stamp"
          printf '%s\n' "$body"
        } >>"$tmp"
      fi
    fi
    ((replacing)) && refreshed=$((refreshed + 1)) || kept=$((kept + 1))
    continue
  fi
  if [[ -n "$id" && "$line" == "<!-- END bench $id -->" ]]; then
    printf '%s\n' "$line" >>"$tmp"
    id=""
    continue
  fi
  if [[ -n "$id" ]] && ((replacing)); then continue; fi
  printf '%s\n' "$line" >>"$tmp"
done <"$doc"
if [[ -n "$id" ]]; then
  echo "update-performance.sh: $doc: no '<!-- END bench $id -->'; left unchanged" >&2
  exit 1
fi
cat "$tmp" >"$doc"
images=0
for name in $(grep -o '](images/[A-Za-z0-9_.-]*\.png)' "$doc" | sed 's|^](images/||; s|)$||' | sort -u); do
  if [[ -f "$dir/$name" ]]; then
    mkdir -p "$(dirname "$doc")/images"
    cp "$dir/$name" "$(dirname "$doc")/images/$name"
    images=$((images + 1))
  fi
done
echo "update-performance.sh: $doc: $refreshed tables refreshed from $dir, $kept kept; $images images copied" >&2
