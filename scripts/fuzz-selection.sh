#!/usr/bin/env bash
# Fuzzes the selection-tree loader (tests/fuzz/fuzz_selection.cpp) with libFuzzer for a
# fixed time: any input must load or be refused with UsageError, never crash, leak or hang;
# a tree that loads must choose the same after printing and loading again.
#
#   scripts/fuzz-selection.sh [SECONDS]     (default 120)
#
# Builds a serial (no MPI, no Kokkos) clang build with AddressSanitizer and UBSan in
# build/fuzz, starts from the seed corpus in tests/fuzz/corpus, keeps what it finds in
# build/fuzz/corpus, and exits non-zero on a finding (libFuzzer writes the input as
# build/fuzz/crash-*; add it to tests/fuzz/corpus once fixed, where the normal test suite
# replays it).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
seconds="${1:-120}"
build="$root/build/fuzz"
"$here/install-deps.sh"
gen=()
command -v ninja >/dev/null 2>&1 && gen=(-G Ninja)
cmake -S "$root" -B "$build" "${gen[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_CXX_FLAGS="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined" \
  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" \
  -DTRIBUTARY_ENABLE_FUZZING=ON -DTRIBUTARY_ENABLE_TESTS=OFF -DTRIBUTARY_ENABLE_EXAMPLES=OFF \
  -DTRIBUTARY_ENABLE_BENCHMARKS=OFF -DTRIBUTARY_ENABLE_TOOLS=OFF -DTRIBUTARY_ENABLE_MPI=OFF \
  -DTRIBUTARY_ENABLE_KOKKOS=OFF -DTRIBUTARY_ENABLE_HWLOC=OFF >/dev/null
cmake --build "$build" --target fuzz_selection -j "${TRIBUTARY_JOBS:-$(nproc)}"
mkdir -p "$build/corpus"
cd "$build"
# -timeout: an input that takes over 5 s counts as a hang; -rss_limit_mb: as a memory blow-up.
ASAN_OPTIONS=detect_leaks=1 ./tests/fuzz/fuzz_selection "$build/corpus" "$root/tests/fuzz/corpus" \
  -max_total_time="$seconds" -timeout=5 -rss_limit_mb=2048 -max_len=4096 -print_final_stats=1
