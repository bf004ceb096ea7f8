#!/usr/bin/env bash
# Builds and tests Tributary against the Kokkos installed under $Kokkos_ROOT (any version
# from 3.4 on, any host or device backend), in its own build directory, and prints the
# Kokkos configuration it used. Nothing is downloaded: install Kokkos first.
#   Kokkos_ROOT=/opt/kokkos-4.6 scripts/test-kokkos.sh [ctest arguments...]
# TRIBUTARY_BUILD (default build/kokkos-<name of Kokkos_ROOT>) and the OpenMP variables
# (OMP_NUM_THREADS, OMP_PROC_BIND) pass through; the device suite, the core suites and the
# example run by default (-L 'device|core|example'), add ctest arguments to change that.
# TRIBUTARY_TARGETS (targets separated by spaces) builds only those instead of everything.
# Kokkos 4 from the tarball in ../shared/deps: Kokkos_ROOT=$(scripts/build-kokkos.sh
# -DKokkos_ENABLE_OPENMP=ON -DKokkos_ENABLE_SERIAL=ON) scripts/test-kokkos.sh
set -euo pipefail
: "${Kokkos_ROOT:?set Kokkos_ROOT to a Kokkos install prefix}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
export TRIBUTARY_BUILD="${TRIBUTARY_BUILD:-$here/../build/kokkos-$(basename "$Kokkos_ROOT")}"
source "$here/common.sh"
tributary_configure -DKokkos_ROOT="$Kokkos_ROOT" -DCMAKE_PREFIX_PATH="$Kokkos_ROOT"
grep -E '^(Kokkos_DIR|Kokkos_VERSION)' "$TRIBUTARY_BUILD/CMakeCache.txt" || true
grep -hE '#define KOKKOS_ENABLE_(SERIAL|OPENMP|THREADS|CUDA|HIP|SYCL)$' \
  "$Kokkos_ROOT"/include/KokkosCore_config.h 2>/dev/null || true
targets=()
[[ -n "${TRIBUTARY_TARGETS:-}" ]] && read -r -a targets <<<"--target $TRIBUTARY_TARGETS"
cmake --build "$TRIBUTARY_BUILD" -j "$TRIBUTARY_JOBS" "${targets[@]}"
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-2}" OMP_PROC_BIND="${OMP_PROC_BIND:-false}"
if (($#)); then
  ctest --test-dir "$TRIBUTARY_BUILD" --output-on-failure "$@"
else
  ctest --test-dir "$TRIBUTARY_BUILD" --output-on-failure -LE 'extended|bench' -L 'device|core|example'
fi
