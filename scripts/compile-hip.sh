#!/usr/bin/env bash
# The HIP build without a GPU: Kokkos 4.6.01 built with Debian's hipcc (ROCm 5.2) for gfx90a
# (scripts/build-kokkos.sh; the install under KOKKOS_DIR is reused while the tarball's
# checksum, the compiler and the flags stay the same), then Tributary compiled with hipcc,
# the compile-failure tests run, and a check that the programs carry gfx90a code objects
# holding kernels of Tributary's. hipcc compiles every source as HIP, so only what uses
# Kokkos on the device is built. Nothing runs.
#
#   scripts/compile-hip.sh [--reduced] [-B KOKKOS_DIR] [--build DIR]
#
# Full (the default): the library, the device suite (test_device), the example with device
# partials (heat2d) and the device benchmark (bench_device), the kernels of all three
# checked. --reduced (.ci/run's HIP stage): the library and the device suite only (heat2d
# and bench_device are compiled for the device by the CUDA stage, scripts/compile-cuda.sh),
# at -O1 instead of -O3.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$root/scripts/compile-options.sh"
compile_options "${BASH_SOURCE[0]}" "$root/build/ci-hip" "$@"

command -v hipcc >/dev/null 2>&1 || { echo "compile-hip.sh: hipcc not found" >&2; exit 1; }

# Shows that a HIP program carries AMDGPU code: extracts its gfx90a code objects (one per
# translation unit with kernels) and counts the kernels in them that instantiate Tributary's
# own code, by the names in the code objects' metadata.
amdgpu_kernels() {
  local exe="$1" dir
  dir="$(dirname "$exe")/amdgpu-$(basename "$exe")"
  rm -rf "$dir"
  echo "$(basename "$exe"): embedded code objects by target:"
  roc-obj-ls "$exe" | awk '{print $2}' | sort | uniq -c
  # ROCm 5.2's roc-obj exits with 1 after extracting everything (its last test is false);
  # the files it leaves are what counts.
  roc-obj -t gfx90a -o "$dir" "$exe" >/dev/null || true
  local objects=("$dir"/*)
  [[ -s "${objects[0]}" ]] || { echo "$(basename "$exe"): no gfx90a code object" >&2; return 1; }
  llvm-readelf --file-header "${objects[@]}" | grep -E 'Machine' | sort | uniq -c
  llvm-readelf --notes "${objects[@]}" | grep 'amdhsa.target' | sort | uniq -c
  # The kernels' names from the code objects' metadata, demangled.
  llvm-readelf --notes "${objects[@]}" | sed -n 's/^ *\.name: *\(_Z[^ ]*\)$/\1/p' | c++filt \
    >"$dir.kernels.txt"
  local kernels ours
  kernels=$(wc -l <"$dir.kernels.txt")
  ours=$(grep -c 'tributary::' "$dir.kernels.txt" || true)
  echo "$(basename "$exe"): ${#objects[@]} gfx90a code objects, $kernels kernels, $ours of" \
    "them instantiate Tributary's code (names in $dir.kernels.txt)"
  grep -o 'tributary::[A-Za-z_:]*[A-Za-z_]' "$dir.kernels.txt" | sort | uniq -c | sort -rn | head -n 8
  ((ours > 0))
}

kokkos=$("$root/scripts/build-kokkos.sh" -c hipcc -B "$kokkos_base" -DKokkos_ENABLE_HIP=ON \
  -DKokkos_ARCH_AMD_GFX90A=ON -DKokkos_ENABLE_ROCTHRUST=OFF -DKokkos_ENABLE_SERIAL=ON)
gen=()
command -v ninja >/dev/null 2>&1 && gen=(-G Ninja)
# The reduced form compiles at -O1: the same front end and device code generation for every
# kernel, in a third of -O3's time (test_device_kernels.cpp: 36 s against 117 s here).
optimize="-O3 -DNDEBUG"
((reduced)) && optimize="-O1 -DNDEBUG"
cmake -S "$root" -B "$build" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=hipcc \
  -DCMAKE_CXX_FLAGS_RELEASE="$optimize" -DKokkos_ROOT="$kokkos" -DCMAKE_PREFIX_PATH="$kokkos"
targets=(tributary test_device)
programs=("$build/tests/device/test_device")
if ((!reduced)); then
  targets+=(heat2d bench_device)
  programs+=("$build/example_apps/heat2d" "$build/bench/device/bench_device")
fi
cmake --build "$build" -j "${TRIBUTARY_JOBS:-2}" --target "${targets[@]}"
ctest --test-dir "$build" --output-on-failure -L compile_fail
for exe in "${programs[@]}"; do amdgpu_kernels "$exe"; done
