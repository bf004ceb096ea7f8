#!/usr/bin/env bash
# scripts/update-performance.sh on a sample results folder: each kind of block is refreshed
# (a table by heading prefix, the last table, plain text in a code block), a block whose
# section is empty or missing keeps its table, the text outside the markers is unchanged,
# a second refresh changes nothing, and the images the document shows are copied from the
# results (one the results lack is kept; one the document does not show is not copied).
#   test_update_performance.sh PATH/TO/update-performance.sh
set -euo pipefail
script="$1"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

mkdir -p "$tmp/results/sections"
printf '# Tributary benchmarks\n\n2026-01-01T00:00Z, 2 cores, test-kernel; default run\n' >"$tmp/results/summary.md"
cat >"$tmp/results/sections/lat.md" <<'OUT'

### allreduce of doubles (2 ranks; median of 7 repetitions x 1000 iterations)

| parameter | variant | median | min | max | IQR | ratio to MPI_Allreduce |
|---|---|---|---|---|---|---|
| 8 B | MPI_Allreduce | 700 ns | 690 ns | 710 ns | 5 ns | 1.00 |

### Allreduce latency at 2 ranks: median time (ratio to MPI_Allreduce)

| size | MPI_Allreduce | ring |
|---|---|---|
| 8 B | 700 ns | NEW-LATENCY (1.71) |
OUT
printf '\n| first | table |\n|---|---|\n| 1 | 2 |\n\nsome text\n\n| last | table |\n|---|---|\n| NEW-LAST | 2 |\n' \
  >"$tmp/results/sections/dev.md"
printf 'classic CG:   300 iterations, NEW-TEXT us per iteration\nOK: 128x128 grid\n' >"$tmp/results/sections/cg.md"
: >"$tmp/results/sections/empty.md"

cat >"$tmp/doc.md" <<'DOC'
# Performance

Hand-written text before.

<!-- BEGIN bench lat Allreduce latency at -->
| old | latency |
|---|---|
| 8 B | OLD-LATENCY |
<!-- END bench lat -->

Between the blocks.

<!-- BEGIN bench dev last -->
| old | device |
<!-- END bench dev -->

<!-- BEGIN bench cg -->
| old | cg |
<!-- END bench cg -->

<!-- BEGIN bench empty -->
| KEPT-EMPTY | table |
<!-- END bench empty -->

<!-- BEGIN bench missing Allreduce -->
| KEPT-MISSING | table |
<!-- END bench missing -->

Hand-written text after.

![latency](images/lat.png) and ![kept](images/kept.png)
DOC
printf 'NEW-PNG' >"$tmp/results/lat.png"
printf 'UNUSED-PNG' >"$tmp/results/unused.png"
mkdir -p "$tmp/images"
printf 'OLD-PNG' >"$tmp/images/lat.png"
printf 'KEPT-PNG' >"$tmp/images/kept.png"

"$script" "$tmp/results" "$tmp/doc.md" 2>"$tmp/log" || fail "the script failed: $(cat "$tmp/log")"
doc="$(cat "$tmp/doc.md")"
for want in NEW-LATENCY NEW-LAST NEW-TEXT KEPT-EMPTY KEPT-MISSING '```text' \
            'Hand-written text before.' 'Between the blocks.' 'Hand-written text after.' \
            '_Measured 2026-01-01T00:00Z, 2 cores, test-kernel; default run, by `scripts/run-benchmarks.sh`._'; do
  grep -qF -- "$want" <<<"$doc" || fail "missing '$want'"
done
for gone in OLD-LATENCY '| old | device |' '| old | cg |' '| first | table |' 'ratio to MPI_Allreduce |' 'some text'; do
  grep -qF -- "$gone" <<<"$doc" && fail "still there: '$gone'"
done
[[ "$(grep -c '^<!-- BEGIN bench' "$tmp/doc.md")" == 5 ]] || fail "a BEGIN marker was lost"
[[ "$(grep -c '^<!-- END bench' "$tmp/doc.md")" == 5 ]] || fail "an END marker was lost"
grep -qF '3 tables refreshed' "$tmp/log" || fail "unexpected summary: $(cat "$tmp/log")"
[[ "$(cat "$tmp/images/lat.png")" == NEW-PNG ]] || fail "images/lat.png was not copied"
[[ "$(cat "$tmp/images/kept.png")" == KEPT-PNG ]] || fail "images/kept.png was not kept"
[[ ! -e "$tmp/images/unused.png" ]] || fail "an image the document does not show was copied"
grep -qF '1 images copied' "$tmp/log" || fail "unexpected summary: $(cat "$tmp/log")"

cp "$tmp/doc.md" "$tmp/once.md"
"$script" "$tmp/results" "$tmp/doc.md" 2>/dev/null
cmp -s "$tmp/once.md" "$tmp/doc.md" || fail "a second refresh changed the document"

# A block without its END marker leaves the document untouched and fails.
printf '<!-- BEGIN bench lat -->\n| x |\n' >"$tmp/broken.md"
cp "$tmp/broken.md" "$tmp/broken0.md"
if "$script" "$tmp/results" "$tmp/broken.md" 2>/dev/null; then fail "an unterminated block was accepted"; fi
cmp -s "$tmp/broken0.md" "$tmp/broken.md" || fail "an unterminated block changed the document"
echo "update-performance.sh: all checks passed"
