#!/usr/bin/env bash
# The CUDA build without a GPU: Kokkos 4.6.01 built with its nvcc_wrapper for sm_80 (CUDA
# 13 or 12 from PATH or /usr/local/cuda; build-kokkos.sh applies
# cmake/patches/kokkos-4.6.01-cuda13.patch for nvcc 13 or newer), then Tributary compiled
# through nvcc_wrapper for sm_80 (Kokkos' -arch) and sm_90 (one more -gencode, given to
# nvcc by NVCC_APPEND_FLAGS: nvcc_wrapper refuses a second architecture flag), and a check
# with scripts/cuda-kernels.py that the sm_80 and sm_90 code holds the same kernels of
# Tributary's. Nothing runs.
#
#   scripts/compile-cuda.sh [--reduced] [-B KOKKOS_DIR] [--build DIR]
#
# Full (the default): the library, test_device, test_staged, test_values and test_regional
# (value types of every kind through nvcc's front end), heat2d, hello_reduce, bench_device
# and the compile-failure tests; the kernels of test_device, test_staged, heat2d and
# bench_device checked. --reduced (.ci/run's CUDA stage): the same without the device
# suites test_device and test_staged (about 60 % of the full form's compile time; their
# device code is compiled by the HIP and OpenMP stages, and heat2d and bench_device
# instantiate the View and kernel contributions, one and several values, through nvcc),
# the kernels of heat2d and bench_device checked.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$root/scripts/compile-options.sh"
compile_options "${BASH_SOURCE[0]}" "$root/build/ci-cuda" "$@"

command -v nvcc >/dev/null 2>&1 || export PATH="/usr/local/cuda/bin:$PATH"
command -v nvcc >/dev/null 2>&1 || { echo "compile-cuda.sh: nvcc not found" >&2; exit 1; }
nvcc --version | grep release
kokkos=$("$root/scripts/build-kokkos.sh" -c nvcc_wrapper -B "$kokkos_base" \
  -DKokkos_ENABLE_CUDA=ON -DKokkos_ARCH_AMPERE80=ON -DKokkos_ENABLE_SERIAL=ON \
  -DCMAKE_CXX_FLAGS=-arch=sm_80)
export NVCC_APPEND_FLAGS="-gencode arch=compute_90,code=sm_90"
gen=()
command -v ninja >/dev/null 2>&1 && gen=(-G Ninja)
cmake -S "$root" -B "$build" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CXX_COMPILER="$kokkos/bin/nvcc_wrapper" -DCMAKE_CXX_FLAGS=-arch=sm_80 \
  -DKokkos_ROOT="$kokkos" -DCMAKE_PREFIX_PATH="$kokkos"
jobs="${TRIBUTARY_JOBS:-2}"
targets=(tributary test_values test_regional heat2d hello_reduce bench_device)
# The programs that contribute on the device (hello_reduce contributes on the host).
programs=("$build/example_apps/heat2d" "$build/bench/device/bench_device")
if ((!reduced)); then
  targets+=(test_device test_staged)
  programs=("$build/tests/device/test_device" "$build/tests/device/test_staged" "${programs[@]}")
fi
cmake --build "$build" -j "$jobs" --target "${targets[@]}"
ctest --test-dir "$build" --output-on-failure -L compile_fail
"$root/scripts/cuda-kernels.py" --arch sm_80,sm_90 --names "$build/cuda-kernels.txt" "${programs[@]}"
shown=test_device
((reduced)) && shown=bench_device
grep "^$shown sm_90 " "$build/cuda-kernels.txt" | grep -o 'tributary::[A-Za-z_:]*[A-Za-z_]' |
  sort | uniq -c | sort -rn | head -n 8
if ((reduced)); then
  echo "CUDA (reduced): the library, test_values, test_regional, heat2d, hello_reduce and" \
    "bench_device compiled and linked for sm_80 and sm_90 (the full form, scripts/compile-cuda.sh" \
    "without --reduced, adds test_device and test_staged). There is no GPU here: nothing ran"
else
  echo "CUDA: compiled and linked for sm_80 and sm_90 only; there is no GPU here, nothing ran"
fi
