#!/usr/bin/env bash
# clang-tidy over the library — src/, tasks/src/ and the headers they include — with the
# checks of .clang-tidy (bugprone, performance, concurrency and a few modernize checks);
# fails on any warning. Configures its own build folder with clang++ for the compile
# database (build/tidy; TRIBUTARY_TIDY_BUILD sets another). Needs clang-tidy and clang
# (scripts/packages.txt). A reasoned exception is a NOLINT on the line, naming the check.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${TRIBUTARY_TIDY_BUILD:-$root/build/tidy}"
jobs="${TRIBUTARY_JOBS:-$(nproc)}"
cd "$root"
gen=()
command -v ninja >/dev/null 2>&1 && gen=(-G Ninja)
cmake -S "$root" -B "$build" "${gen[@]}" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_EXPORT_COMPILE_COMMANDS=ON >"$build.configure.log" 2>&1 ||
  { cat "$build.configure.log" >&2; exit 1; }
mapfile -t files < <(ls src/*/*.cpp tasks/src/*.cpp)
out="$build/tidy.log"
status=0
printf '%s\n' "${files[@]}" |
  xargs -P "$jobs" -n 2 clang-tidy -p "$build" --quiet --warnings-as-errors='*' >"$out" 2>/dev/null ||
  status=$?
if ((status != 0)) || grep -qE '(warning|error):' "$out"; then
  grep -E -A3 '(warning|error):' "$out" >&2 || cat "$out" >&2
  echo "check-tidy: clang-tidy found problems in the library (above)" >&2
  exit 1
fi
echo "check-tidy: ${#files[@]} library sources and their headers are clean"
