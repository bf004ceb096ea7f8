#!/usr/bin/env bash
# Builds, on a machine with a CUDA toolkit but no GPU, what a GPU machine without an MPI
# library (or without GoogleTest and CLI11) needs to run Tributary's device checks, and puts
# it in one folder: the serial build (TRIBUTARY_ENABLE_MPI=OFF, hwloc off; Kokkos 4.6.01 with
# CUDA for the given architecture, built by scripts/build-kokkos.sh), its device, values and
# regional suites, the Kokkos examples and bench_device (its harness runs one process without
# MPI), the CUDA runtime they link, and run.sh, which runs them there and writes a report.
#   scripts/gpu-bundle.sh [--arch ARCH] [--out DIR]
#     ARCH: Kokkos' name without the prefix (default HOPPER90: H100, H200); DIR: default
#     build/gpu-bundle-<arch>
#   TRIBUTARY_GPU_BUILD: the serial build's folder (default build/gpu-serial-<arch>)
# On the GPU machine: DIR/run.sh [REPORT_DIR]   (default REPORT_DIR: DIR/report)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
arch=HOPPER90 out=""
while (($#)); do
  case "$1" in
    --arch) arch="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    -h | --help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "gpu-bundle: unknown argument $1" >&2; exit 2 ;;
  esac
done
lower=$(tr '[:upper:]' '[:lower:]' <<<"$arch")
out="${out:-$root/build/gpu-bundle-$lower}"
command -v nvcc >/dev/null 2>&1 || export PATH="${CUDA_ROOT:-/usr/local/cuda}/bin:$PATH"
command -v nvcc >/dev/null 2>&1 || { echo "gpu-bundle: nvcc not found" >&2; exit 1; }
sm="sm_${arch//[!0-9]/}"
kokkos=$("$root/scripts/build-kokkos.sh" -c nvcc_wrapper -B "$root/build/gpu-kokkos" \
  -DKokkos_ENABLE_CUDA=ON "-DKokkos_ARCH_$arch=ON" -DKokkos_ENABLE_SERIAL=ON "-DCMAKE_CXX_FLAGS=-arch=$sm")
build="${TRIBUTARY_GPU_BUILD:-$root/build/gpu-serial-$lower}"
gen=()
command -v ninja >/dev/null 2>&1 && gen=(-G Ninja)
cmake -S "$root" -B "$build" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CXX_COMPILER="$kokkos/bin/nvcc_wrapper" "-DCMAKE_CXX_FLAGS=-arch=$sm" \
  -DKokkos_ROOT="$kokkos" -DCMAKE_PREFIX_PATH="$kokkos" \
  -DTRIBUTARY_ENABLE_MPI=OFF -DTRIBUTARY_ENABLE_HWLOC=OFF >&2
programs=(test_device test_staged test_values test_regional hello_reduce histogram_swap
  particle_regions bench_device)
cmake --build "$build" -j "${TRIBUTARY_JOBS:-$(nproc)}" --target tributary "${programs[@]}" >&2
rm -rf "$out"
mkdir -p "$out"
for p in "${programs[@]}"; do
  find "$build" -type f -name "$p" -perm -u+x -exec cp {} "$out/" \;
  [[ -x "$out/$p" ]] || { echo "gpu-bundle: $p was not built" >&2; exit 1; }
done
cudart=$(ldd "$out/test_device" | awk '/libcudart/ {print $3}')
[[ -n "$cudart" ]] && cp -L "$cudart" "$out/"
cat >"$out/run.sh" <<'RUN'
#!/usr/bin/env bash
# Runs the bundle's device checks on a GPU machine and writes REPORT_DIR/report.md (the
# GPU, each program's result and time, the fence check, bench_device's goals), the logs and
# device.csv beside it. Exits non-zero when a check failed.
set -u
here="$(cd "$(dirname "$0")" && pwd)"
report="${1:-$here/report}"
mkdir -p "$report"
export LD_LIBRARY_PATH="$here:${LD_LIBRARY_PATH:-}"
cd "$here"
log="$report/tests.log"
: >"$log"
status=0
lines=()
run() {  # NAME SECONDS COMMAND...
  local name="$1" limit="$2" t0 rc
  shift 2
  echo "== $name: $*" >>"$log"
  t0=$(date +%s%N)
  timeout "$limit" "$@" >>"$log" 2>&1
  rc=$?
  lines+=("| $name | $( ((rc == 0)) && echo passed || echo "FAILED ($rc)") | $((($(date +%s%N) - t0) / 1000000)) ms |")
  echo "${lines[-1]}" >>"$report/progress.md"  # what ran, should the whole run be cut short
  ((rc == 0)) || status=1
}
: >"$report/progress.md"
# The limits add up to under 9 minutes, so that one device call of 10 returns a report.
run test_device 120 ./test_device
run test_staged 90 ./test_staged
run test_values 60 ./test_values
run test_regional 60 ./test_regional
run "no fence in steady state (device)" 30 env GTEST_FILTER='*NoFenceInSteadyState*' ./test_device
run "no fence in steady state (staged)" 30 env GTEST_FILTER='*NoFenceInSteadyState*' ./test_staged
run hello_reduce 20 ./hello_reduce
run histogram_swap 20 ./histogram_swap
run particle_regions 20 ./particle_regions
run bench_device 90 sh -c "./bench_device --repetitions 5 --csv '$report/device.csv' >'$report/bench_device.txt' 2>&1"
{
  echo "# Tributary's device checks (serial build, one process)"
  echo
  echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC'), host $(hostname)"
  echo "- GPU: $(nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv,noheader 2>/dev/null || echo 'nvidia-smi not found')"
  echo
  echo "| check | result | time |"
  echo "|---|---|---|"
  printf '%s\n' "${lines[@]}"
  echo
  echo "## bench_device"
  echo
  grep -E '^\|' "$report/bench_device.txt" 2>/dev/null || echo "(no table: see bench_device.txt)"
} >"$report/report.md"
cat "$report/report.md"
echo "gpu-bundle run: $( ((status)) && echo FAILED || echo OK )"
exit "$status"
RUN
chmod +x "$out/run.sh"
echo "gpu-bundle: $out ($(du -sh "$out" | cut -f1)): copy it to the GPU machine and run $(basename "$out")/run.sh" >&2
echo "$out"
