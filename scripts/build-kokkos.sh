#!/usr/bin/env bash
# Builds and installs Kokkos from the release tarball in the shared dependency folder (never
# from the network), and prints the install prefix on stdout; progress goes to stderr.
#   scripts/build-kokkos.sh [-c CXX] [-B BASE] [Kokkos CMake flags...]
#   scripts/build-kokkos.sh -B build/kokkos -DKokkos_ENABLE_OPENMP=ON -DKokkos_ENABLE_SERIAL=ON
#   scripts/build-kokkos.sh -c hipcc -DKokkos_ENABLE_HIP=ON -DKokkos_ARCH_AMD_GFX90A=ON ...
#   scripts/build-kokkos.sh -c nvcc_wrapper -DKokkos_ENABLE_CUDA=ON -DKokkos_ARCH_HOPPER90=ON
# CXX (default c++) is the compiler unless -c is given; -c nvcc_wrapper takes the tarball's
# wrapper when none is on PATH.
# The tarball's checksum is verified first. The install lives in
# BASE/kokkos-<version>-<key> (BASE defaults to build/kokkos-installs), where the key is a
# hash of the tarball's checksum, the compiler and the flags: the same request reuses the
# same install, so CI builds Kokkos once per build folder. Variables:
#   TRIBUTARY_DEPS   folder with kokkos-*.tar.gz and SHA256SUMS (default ../shared/deps)
#   TRIBUTARY_KOKKOS_TARBALL  the tarball's name in it (default kokkos-4.6.01.tar.gz)
#   TRIBUTARY_JOBS   build parallelism (default nproc)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
deps="${TRIBUTARY_DEPS:-$root/../shared/deps}"
tarball="${TRIBUTARY_KOKKOS_TARBALL:-kokkos-4.6.01.tar.gz}"
jobs="${TRIBUTARY_JOBS:-$(nproc)}"
cxx="${CXX:-c++}"
base="$root/build/kokkos-installs"

while (($#)); do
  case "$1" in
    -c) cxx="$2"; shift 2 ;;
    -B) base="$2"; shift 2 ;;
    *) break ;;
  esac
done
flags=("$@")
mkdir -p "$base"
base="$(cd "$base" && pwd)"

[[ -f "$deps/$tarball" ]] || { echo "build-kokkos: $deps/$tarball not found" >&2; exit 1; }
[[ -f "$deps/SHA256SUMS" ]] || { echo "build-kokkos: $deps/SHA256SUMS not found" >&2; exit 1; }
# Only the tarball's own line: the folder may list files this build does not use.
(cd "$deps" && grep -E "[ *]$tarball\$" SHA256SUMS | sha256sum -c --strict - >&2) ||
  { echo "build-kokkos: checksum of $tarball does not match SHA256SUMS" >&2; exit 1; }
sum=$(cd "$deps" && grep -E "[ *]$tarball\$" SHA256SUMS | cut -d' ' -f1)

# CUDA builds use Kokkos' nvcc_wrapper: from PATH, else the tarball's, kept beside the installs.
if [[ "$cxx" == nvcc_wrapper ]] && ! command -v nvcc_wrapper >/dev/null 2>&1; then
  mkdir -p "$base/nvcc_wrapper-${sum:0:12}"
  tar -xzf "$deps/$tarball" -C "$base/nvcc_wrapper-${sum:0:12}" --strip-components=2 \
    --wildcards '*/bin/nvcc_wrapper'
  cxx="$base/nvcc_wrapper-${sum:0:12}/nvcc_wrapper"
fi
cxx_path=$(command -v "$cxx") || { echo "build-kokkos: compiler $cxx not found" >&2; exit 1; }
# hipcc --version exits non-zero where it finds no GPU; its first line is still the version.
cxx_id=$("$cxx_path" --version 2>/dev/null | head -n 1 || true)
key=$(printf '%s\n' "$sum" "$cxx_path" "$cxx_id" "${flags[@]}" | sha256sum | cut -c1-12)
version="${tarball%.tar.gz}"
prefix="$base/$version-$key"

if [[ -f "$prefix/.tributary-complete" ]]; then
  echo "build-kokkos: reusing $prefix" >&2
  echo "$prefix"
  exit 0
fi

work="$base/.build-$version-$key"
rm -rf "$work" "$prefix"
mkdir -p "$work/src"
tar -xzf "$deps/$tarball" -C "$work/src" --strip-components=1
gen=()
command -v ninja >/dev/null 2>&1 && gen=(-G Ninja)
echo "build-kokkos: $version with $cxx_path ${flags[*]} -> $prefix" >&2
cmake -S "$work/src" -B "$work/build" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CXX_COMPILER="$cxx_path" -DCMAKE_CXX_STANDARD=17 -DCMAKE_INSTALL_PREFIX="$prefix" \
  -DKokkos_ENABLE_TESTS=OFF -DKokkos_ENABLE_EXAMPLES=OFF -DKokkos_ENABLE_BENCHMARKS=OFF \
  "${flags[@]}" >&2
cmake --build "$work/build" -j "$jobs" >&2
cmake --install "$work/build" >&2
printf '%s\n' "$sum $tarball" "$cxx_path" "$cxx_id" "${flags[@]}" >"$prefix/.tributary-complete"
rm -rf "$work"
echo "$prefix"
