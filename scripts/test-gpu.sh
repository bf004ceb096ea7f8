#!/usr/bin/env bash
# One command for a machine with a GPU: finds CUDA (nvcc) or HIP (hipcc) and the GPU's
# architecture, builds Kokkos 4 from the tarball in ../shared/deps for it
# (scripts/build-kokkos.sh, which patches Kokkos 4.6.01 for CUDA 13), builds Tributary, runs
# the device, values, regional and example suites and heat2d at 1 and 2 ranks and the device
# benchmark, and writes a report with the figures against their goals.
#   scripts/test-gpu.sh [--compile-only] [--backend cuda|hip] [--arch ARCH] [--out DIR]
# With a GPU (nvidia-smi, rocminfo) the backend and the architecture are the GPU's. Without
# one it compiles every backend whose compiler it finds (nvcc: CUDA, hipcc: HIP) for a
# default architecture (AMPERE80, AMD_GFX90A), runs nothing, and says so in each report
# and in its last line; so does --compile-only. --backend picks one backend. ARCH is Kokkos'
# name without the prefix (HOPPER90, AMPERE80, AMD_GFX90A, AMD_GFX942, ...; AMD_* is HIP,
# the others CUDA). nvcc comes from PATH, else $CUDA_ROOT/bin or /usr/local/cuda/bin.
# Variables:
#   TRIBUTARY_GPU_KOKKOS  where Kokkos installs go (default build/kokkos-installs)
#   TRIBUTARY_GPU_BUILD   Tributary's build folder (default build/gpu-<backend>-<arch>;
#                         with two backends, this followed by -<backend>)
#   TRIBUTARY_JOBS        build parallelism (default nproc)
#   TRIBUTARY_MPI         MPI pin, as in the other scripts (openmpi, mpich)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
compile_only=0 backend="" arch_arg="" out_arg=""
while (($#)); do
  case "$1" in
    --compile-only) compile_only=1; shift ;;
    --backend) backend="$2"; shift 2 ;;
    --arch) arch_arg="$2"; shift 2 ;;
    --out) out_arg="$2"; shift 2 ;;
    -h | --help) sed -n '2,/^set -euo/{/^#/s/^# \{0,1\}//p}' "$0"; exit 0 ;;
    *) echo "test-gpu: unknown argument $1" >&2; exit 2 ;;
  esac
done
say() { echo "test-gpu: $*" >&2; }
export TRIBUTARY_JOBS="${TRIBUTARY_JOBS:-$(nproc)}"

# nvcc where a CUDA toolkit usually is, when PATH does not name it (nvcc_wrapper takes nvcc
# from PATH unless CUDA_ROOT is set).
if ! command -v nvcc >/dev/null 2>&1; then
  for dir in "${CUDA_ROOT:-}" /usr/local/cuda; do
    if [[ -n "$dir" && -x "$dir/bin/nvcc" ]]; then
      export PATH="$dir/bin:$PATH"
      break
    fi
  done
fi
have() { command -v "$1" >/dev/null 2>&1; }

# The GPU's backend if there is a GPU; otherwise every backend whose compiler is here.
backends=()
if [[ -n "$backend" ]]; then
  backends=("$backend")
elif [[ -n "$arch_arg" ]]; then
  [[ "$arch_arg" == AMD_* ]] && backends=(hip) || backends=(cuda)
elif have nvcc && nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
  backends=(cuda)
elif have hipcc && rocminfo 2>/dev/null | grep -qE 'gfx[0-9a-f]+'; then
  backends=(hip)
else
  have nvcc && backends+=(cuda)
  have hipcc && backends+=(hip)
  ((${#backends[@]})) || { say "neither nvcc (CUDA) nor hipcc (HIP) found"; exit 1; }
fi

# Builds (and, with a GPU, tests) one backend; its last line goes to $summary. Run in a
# subshell outside any && or || list, so that set -e stops it at the first failure.
summary=$(mktemp)
trap 'rm -f "$summary"' EXIT
one_backend() {
  local backend="$1" gpu="" detected="" default_arch cxx backend_flags=() cuda_id=""
  case "$backend" in
    cuda)
      have nvcc || { say "nvcc not found (CUDA)"; return 1; }
      if have nvidia-smi &&
        gpu=$(nvidia-smi --query-gpu=name,compute_cap --format=csv,noheader 2>/dev/null | head -n 1) &&
        [[ -n "$gpu" ]]; then
        case "${gpu##*, }" in
          7.0) detected=VOLTA70 ;; 7.2) detected=VOLTA72 ;; 7.5) detected=TURING75 ;;
          8.0) detected=AMPERE80 ;; 8.6) detected=AMPERE86 ;; 8.7) detected=AMPERE87 ;;
          8.9) detected=ADA89 ;; 9.0) detected=HOPPER90 ;; 10.0) detected=BLACKWELL100 ;;
          12.0) detected=BLACKWELL120 ;;
          *) say "compute capability ${gpu##*, } has no Kokkos name here: pass --arch" ;;
        esac
      fi
      default_arch=AMPERE80
      cuda_id=$(nvcc --version | grep -m 1 release || true)
      cxx=nvcc_wrapper # Kokkos' wrapper around nvcc, taken from the tarball
      backend_flags=(-DKokkos_ENABLE_CUDA=ON)
      ;;
    hip)
      have hipcc || { say "hipcc not found (HIP)"; return 1; }
      if have rocminfo && [[ -e /dev/kfd ]]; then
        local name
        name=$(rocminfo 2>/dev/null | grep -oE 'gfx[0-9a-f]+' | head -n 1 || true)
        if [[ -n "$name" ]]; then
          gpu="$name"
          detected="AMD_$(tr '[:lower:]' '[:upper:]' <<<"$name")"
        fi
      fi
      default_arch=AMD_GFX90A
      cxx=hipcc
      # Debian 12's ROCm has no rocthrust; Kokkos does not need it.
      backend_flags=(-DKokkos_ENABLE_HIP=ON)
      ;;
    *) say "unknown backend $backend"; return 2 ;;
  esac
  local arch="${arch_arg:-${detected:-$default_arch}}" run=1 why=""
  if [[ -z "$gpu" ]]; then
    run=0 why="no GPU was found"
    say "$backend: no GPU found: compiling for $arch only, nothing will run"
  elif ((compile_only)); then
    run=0 why="--compile-only was given"
  fi

  local flags=("${backend_flags[@]}" "-DKokkos_ARCH_$arch=ON")
  [[ "$backend" == hip ]] && flags+=(-DKokkos_ENABLE_ROCTHRUST=OFF)
  flags+=(-DKokkos_ENABLE_SERIAL=ON)
  # nvcc_wrapper compiles for sm_70 unless told otherwise, which CUDA 13 no longer supports:
  # CMake's compiler checks (Kokkos' and Tributary's) get the architecture too.
  local cxxflags=()
  [[ "$backend" == cuda ]] && cxxflags=("-DCMAKE_CXX_FLAGS=-arch=sm_${arch//[!0-9]/}")
  flags+=("${cxxflags[@]}")
  local lower build out
  lower=$(tr '[:upper:]' '[:lower:]' <<<"$arch")
  build="$root/build/gpu-$backend-$lower"
  if [[ -n "${TRIBUTARY_GPU_BUILD:-}" ]]; then
    build="$TRIBUTARY_GPU_BUILD"
    ((${#backends[@]} > 1)) && build="$TRIBUTARY_GPU_BUILD-$backend"
  fi
  out="${out_arg:-$build/report}"
  [[ -n "$out_arg" ]] && ((${#backends[@]} > 1)) && out="$out_arg/$backend"
  mkdir -p "$out"

  local t0 kokkos t_kokkos t_build
  t0=$(date +%s)
  kokkos=$("$here/build-kokkos.sh" -c "$cxx" -B "${TRIBUTARY_GPU_KOKKOS:-$root/build/kokkos-installs}" "${flags[@]}")
  t_kokkos=$(($(date +%s) - t0))
  [[ "$backend" == cuda ]] && cxx="$kokkos/bin/nvcc_wrapper"

  # Only what uses Kokkos: hipcc and nvcc_wrapper compile every source for the device.
  local mpi=() gen=()
  [[ -n "${TRIBUTARY_MPI:-}" ]] && mpi=("-DTRIBUTARY_MPI=$TRIBUTARY_MPI")
  have ninja && gen=(-G Ninja)
  t0=$(date +%s)
  cmake -S "$root" -B "$build" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER="$cxx" \
    -DKokkos_ROOT="$kokkos" -DCMAKE_PREFIX_PATH="$kokkos" "${mpi[@]}" "${cxxflags[@]}" >&2
  local targets=(tributary test_device test_staged test_values test_regional hello_reduce
    histogram_swap particle_regions heat2d cg_poisson bench_device)
  cmake --build "$build" -j "$TRIBUTARY_JOBS" --target "${targets[@]}" >&2
  t_build=$(($(date +%s) - t0))

  local report="$out/report.md"
  {
    echo "# Tributary on the GPU: $backend, Kokkos_ARCH_$arch"
    echo
    echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC'), host $(hostname)"
    echo "- GPU: ${gpu:-none found}"
    echo "- compiler: $cxx ($("$cxx" --version 2>/dev/null | head -n 1 || true))"
    [[ -n "$cuda_id" ]] && echo "- CUDA: $(command -v nvcc), $cuda_id"
    echo "- Kokkos: $kokkos ($t_kokkos s), Tributary build: $build ($t_build s)"
    echo "- commit: $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)"
  } >"$report"
  # What the CUDA build carries: the kernels in test_device's fat binary, per architecture.
  if [[ "$backend" == cuda ]] && have python3; then
    {
      echo
      echo "## Device code in test_device"
      echo
      "$here/cuda-kernels.py" "$build/tests/device/test_device" 2>&1 | sed 's/^/    /' || true
    } >>"$report"
  fi

  if ((!run)); then
    printf '\nCOMPILED ONLY (%s): no test, example or benchmark ran.\n' "$why" >>"$report"
    cat "$report"
    echo "$backend ($arch): COMPILED ONLY, NOTHING RAN ($why); report: $report" >"$summary"
    return 0
  fi

  # The suites at 1 and 2 ranks, heat2d, the fence tests and the benchmark; a failure is
  # reported, and the rest still runs.
  local status=0
  ctest --test-dir "$build" --output-on-failure -LE extended -L '^np[12]$' \
    -R '^(test_device|test_staged|test_values|test_regional)\.np[12]$|^example\.' \
    >"$out/ctest.log" 2>&1 || status=1
  ctest --test-dir "$build" --output-on-failure -R '^device\.' >>"$out/ctest.log" 2>&1 || status=1
  source "$here/common.sh"
  local np
  : >"$out/heat2d.txt"
  for np in 1 2; do
    TRIBUTARY_BUILD="$build" tributary_launcher "$np"
    "${TRIBUTARY_LAUNCH[@]}" "$build/example_apps/heat2d" --steps 10 >>"$out/heat2d.txt" 2>&1 ||
      status=1
  done
  TRIBUTARY_BUILD="$build" tributary_launcher 1
  GTEST_FILTER='*NoFenceInSteadyState*' "${TRIBUTARY_LAUNCH[@]}" "$build/tests/device/test_device" \
    --tributary-np=1 >"$out/fences.txt" 2>&1 || status=1
  GTEST_FILTER='*NoFenceInSteadyState*' "${TRIBUTARY_LAUNCH[@]}" "$build/tests/device/test_staged" \
    --tributary-np=1 >>"$out/fences.txt" 2>&1 || status=1
  "${TRIBUTARY_LAUNCH[@]}" "$build/bench/device/bench_device" --csv "$out/device.csv" \
    >"$out/bench_device.txt" 2>&1 || status=1
  {
    echo
    echo "## Tests (device, values, regional and example suites at 1 and 2 ranks; fence check)"
    echo
    grep -E 'tests passed|tests failed|\*\*\*Failed|\*\*\*Timeout|Not Run' "$out/ctest.log" | sed 's/^/    /'
    echo
    echo "heat2d --steps 10 at 1 and 2 ranks:"
    echo
    grep -E '^(OK|FAILED)' "$out/heat2d.txt" | sed 's/^/    /' || echo "    (no OK line: see heat2d.txt)"
    echo
    echo "## Against the goals"
    echo
    echo "Device partial sum >= 80 % of the device's copy bandwidth (bench_device, 1 rank):"
    echo
    grep -E 'vs a copy kernel' "$out/bench_device.txt" | sed 's/^/    /' || echo "    (no figure: see bench_device.txt)"
    echo
    echo "No host fence in steady state (Kokkos' fence callback counts none over 5 generations):"
    echo
    grep -E '^\[ +(OK|FAILED) +\] .*NoFenceInSteadyState' "$out/fences.txt" | sed 's/^/    /' ||
      echo "    (no result: see fences.txt)"
    echo
    echo "## Device benchmark (1 rank; bench_device)"
    echo
    grep -E '^\|' "$out/bench_device.txt" || echo "(no table: see bench_device.txt)"
    echo
    echo "Logs: ctest.log, heat2d.txt, fences.txt, bench_device.txt, device.csv beside this report."
  } >>"$report"
  cat "$report"
  echo "$backend ($arch): $( ((status)) && echo FAILED || echo OK ) on $gpu; report: $report" >"$summary"
  return "$status"
}

status=0 lines=()
for b in "${backends[@]}"; do
  echo "$b: FAILED before its report (see the messages above)" >"$summary"
  set +e
  (one_backend "$b")
  rc=$?
  set -e
  ((rc == 0)) || status=1
  lines+=("$(cat "$summary")")
done
for line in "${lines[@]}"; do echo "test-gpu: $line"; done
if ((status)); then
  echo "test-gpu: FAILED"
elif ! printf '%s\n' "${lines[@]}" | grep -qv 'COMPILED ONLY'; then
  echo "test-gpu: COMPILED ONLY, NOTHING RAN (${backends[*]}): no test, example or benchmark ran"
else
  echo "test-gpu: OK"
fi
exit "$status"
