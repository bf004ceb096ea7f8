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
# hash of the tarball's checksum, the compiler and the flags (for CUDA also nvcc's version
# and the patches applied): the same request reuses the same install, so CI builds Kokkos
# once per build folder.
# CUDA builds (nvcc_wrapper, or -DKokkos_ENABLE_CUDA=ON): with nvcc 13 or newer the
# unpacked tarball gets cmake/patches/<version>-cuda13.patch (CUDA 13's runtime API;
# guarded by CUDART_VERSION). nvcc is $CUDA_ROOT/bin/nvcc, else the one on PATH, as
# nvcc_wrapper takes it. Variables:
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
version="${tarball%.tar.gz}"
key_parts=("$sum" "$cxx_path" "$cxx_id" "${flags[@]}")

# CUDA: nvcc's version (nvcc_wrapper --version names no release) and, for CUDA 13 and
# newer, the compatibility patch; both are part of the key.
patches=()
cuda=0
[[ "$(basename "$cxx_path")" == nvcc_wrapper ]] && cuda=1
for f in "${flags[@]}"; do
  [[ "$f" =~ ^-DKokkos_ENABLE_CUDA(:BOOL)?=(ON|on|TRUE|true|YES|yes|1)$ ]] && cuda=1
done
if ((cuda)); then
  nvcc="${CUDA_ROOT:+$CUDA_ROOT/bin/}nvcc"
  nvcc_path=$(command -v "$nvcc") || { echo "build-kokkos: CUDA build, but $nvcc not found" >&2; exit 1; }
  nvcc_id=$("$nvcc_path" --version | grep -m 1 'release' || true)
  cuda_major=$(sed -n 's/.*release \([0-9]*\)\..*/\1/p' <<<"$nvcc_id")
  [[ -n "$cuda_major" ]] || { echo "build-kokkos: no release in $nvcc_path --version" >&2; exit 1; }
  key_parts+=("nvcc: $nvcc_path $nvcc_id")
  if ((cuda_major >= 13)); then
    patch_file="$root/cmake/patches/$version-cuda13.patch"
    if [[ -f "$patch_file" ]]; then
      patches+=("$patch_file")
    else
      echo "build-kokkos: warning: CUDA $cuda_major and no $patch_file: building $version unpatched" >&2
    fi
  fi
fi
for p in "${patches[@]}"; do
  key_parts+=("patch: $(sha256sum <"$p" | cut -d' ' -f1) $(basename "$p")")
done
key=$(printf '%s\n' "${key_parts[@]}" | sha256sum | cut -c1-12)
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
for p in "${patches[@]}"; do
  echo "build-kokkos: applying $(basename "$p") (nvcc is CUDA $cuda_major)" >&2
  patch -d "$work/src" -p1 --forward --batch <"$p" >&2 ||
    { echo "build-kokkos: $(basename "$p") does not apply to $tarball" >&2; exit 1; }
done
gen=()
command -v ninja >/dev/null 2>&1 && gen=(-G Ninja)
echo "build-kokkos: $version with $cxx_path ${flags[*]} -> $prefix" >&2
cmake -S "$work/src" -B "$work/build" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CXX_COMPILER="$cxx_path" -DCMAKE_CXX_STANDARD=17 -DCMAKE_INSTALL_PREFIX="$prefix" \
  -DKokkos_ENABLE_TESTS=OFF -DKokkos_ENABLE_EXAMPLES=OFF -DKokkos_ENABLE_BENCHMARKS=OFF \
  "${flags[@]}" >&2
cmake --build "$work/build" -j "$jobs" >&2
cmake --install "$work/build" >&2
printf '%s\n' "$sum $tarball" "${key_parts[@]:1}" >"$prefix/.tributary-complete"
rm -rf "$work"
echo "$prefix"
