#!/usr/bin/env bash
# One command for a machine with a GPU: finds CUDA (nvcc) or HIP (hipcc) and the GPU's
# architecture, builds Kokkos 4 from the tarball in ../shared/deps for it
# (scripts/build-kokkos.sh), builds Tributary, runs the device suites, the examples and the
# device benchmark, and writes a short report with the figures.
#   scripts/test-gpu.sh [--compile-only] [--backend cuda|hip] [--arch ARCH] [--out DIR]
# The backend is the GPU's (nvidia-smi, rocminfo); without a GPU, CUDA if nvcc is found,
# else HIP; --backend chooses.
# ARCH is Kokkos' name without the prefix (HOPPER90, AMPERE80, AMD_GFX90A, AMD_GFX942, ...);
# by default it comes from the GPU (nvidia-smi's compute capability, rocminfo's gfx name).
# Without a GPU it compiles for a default architecture (AMPERE80, AMD_GFX90A), runs
# nothing, and says so in the report and in its last line. Variables:
#   TRIBUTARY_GPU_KOKKOS  where Kokkos installs go (default build/kokkos-installs)
#   TRIBUTARY_GPU_BUILD   Tributary's build folder (default build/gpu-<backend>-<arch>)
#   TRIBUTARY_JOBS        build parallelism (default nproc)
#   TRIBUTARY_MPI         MPI pin, as in the other scripts (openmpi, mpich)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
compile_only=0 backend="" arch="" out=""
while (($#)); do
  case "$1" in
    --compile-only) compile_only=1; shift ;;
    --backend) backend="$2"; shift 2 ;;
    --arch) arch="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    -h | --help) sed -n '2,16p' "$0"; exit 0 ;;
    *) echo "test-gpu: unknown argument $1" >&2; exit 2 ;;
  esac
done
say() { echo "test-gpu: $*" >&2; }

# The backend of the GPU that is there; without one, the first compiler found.
if [[ -z "$backend" ]]; then
  if command -v nvcc >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then backend=cuda
  elif command -v hipcc >/dev/null 2>&1 && rocminfo 2>/dev/null | grep -qE 'gfx[0-9a-f]+'; then backend=hip
  elif command -v nvcc >/dev/null 2>&1; then backend=cuda
  elif command -v hipcc >/dev/null 2>&1; then backend=hip
  else say "neither nvcc (CUDA) nor hipcc (HIP) found"; exit 1; fi
fi

# The GPU, if any, and its Kokkos architecture.
gpu="" detected=""
case "$backend" in
  cuda)
    if command -v nvidia-smi >/dev/null 2>&1 &&
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
    # Kokkos 4.6.01 predates CUDA 13's runtime API (cudaGraphAddDependencies,
    # cudaMemPrefetchAsync): its CUDA backend does not compile there (checked: CUDA 13.0).
    cuda_major=$(nvcc --version 2>/dev/null | sed -n 's/.*release \([0-9]*\)\..*/\1/p' | head -n 1)
    if [[ -n "$cuda_major" ]] && ((cuda_major >= 13)); then
      say "warning: nvcc is CUDA $cuda_major; Kokkos 4.6.01 does not compile with CUDA 13 (use CUDA 12 or older)"
    fi
    cxx=nvcc_wrapper  # Kokkos' wrapper around nvcc, taken from the tarball
    backend_flags=(-DKokkos_ENABLE_CUDA=ON)
    ;;
  hip)
    if command -v rocminfo >/dev/null 2>&1 && [[ -e /dev/kfd ]]; then
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
  *) say "unknown backend $backend"; exit 2 ;;
esac
arch="${arch:-${detected:-$default_arch}}"
run=1
if [[ -z "$gpu" ]]; then
  run=0
  say "no $backend GPU found: compiling for $arch only, nothing will run"
elif ((compile_only)); then
  run=0
fi

flags=("${backend_flags[@]}" "-DKokkos_ARCH_$arch=ON")
[[ "$backend" == hip ]] && flags+=(-DKokkos_ENABLE_ROCTHRUST=OFF)
flags+=(-DKokkos_ENABLE_SERIAL=ON)
# nvcc_wrapper compiles for sm_70 unless told otherwise, which CUDA 13 no longer supports:
# CMake's compiler checks (Kokkos' and Tributary's) get the architecture too.
cxxflags=()
[[ "$backend" == cuda ]] && cxxflags=("-DCMAKE_CXX_FLAGS=-arch=sm_${arch//[!0-9]/}")
flags+=("${cxxflags[@]}")
build="${TRIBUTARY_GPU_BUILD:-$root/build/gpu-$backend-$(tr '[:upper:]' '[:lower:]' <<<"$arch")}"
out="${out:-$build/report}"
mkdir -p "$out"
export TRIBUTARY_JOBS="${TRIBUTARY_JOBS:-$(nproc)}"

t0=$(date +%s)
kokkos=$("$here/build-kokkos.sh" -c "$cxx" -B "${TRIBUTARY_GPU_KOKKOS:-$root/build/kokkos-installs}" "${flags[@]}")
t_kokkos=$(($(date +%s) - t0))
[[ "$backend" == cuda ]] && cxx="$kokkos/bin/nvcc_wrapper"

# Only what uses Kokkos: hipcc and nvcc_wrapper compile every source for the device.
mpi=()
[[ -n "${TRIBUTARY_MPI:-}" ]] && mpi=("-DTRIBUTARY_MPI=$TRIBUTARY_MPI")
gen=()
command -v ninja >/dev/null 2>&1 && gen=(-G Ninja)
t0=$(date +%s)
cmake -S "$root" -B "$build" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER="$cxx" \
  -DKokkos_ROOT="$kokkos" -DCMAKE_PREFIX_PATH="$kokkos" "${mpi[@]}" "${cxxflags[@]}" >&2
cmake --build "$build" -j "$TRIBUTARY_JOBS" --target tributary test_device test_staged hello_reduce \
  histogram_swap particle_regions heat2d cg_poisson bench_device >&2
t_build=$(($(date +%s) - t0))

report="$out/report.md"
{
  echo "# Tributary on the GPU: $backend, Kokkos_ARCH_$arch"
  echo
  echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC'), host $(hostname)"
  echo "- GPU: ${gpu:-none found}"
  echo "- compiler: $cxx ($("$cxx" --version 2>/dev/null | head -n 1 || true))"
  echo "- Kokkos: $kokkos ($t_kokkos s), Tributary build: $build ($t_build s)"
  echo "- commit: $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)"
} >"$report"

if ((!run)); then
  why="no GPU was found"
  ((compile_only)) && [[ -n "$gpu" ]] && why="--compile-only was given"
  printf '\nCOMPILED ONLY (%s): no test, example or benchmark ran.\n' "$why" >>"$report"
  cat "$report"
  echo "test-gpu: COMPILED ONLY, NOTHING RAN ($why); report: $report"
  exit 0
fi

# The device suites and the examples; a failure is reported, and the rest still runs.
status=0
ctest --test-dir "$build" --output-on-failure -R '^(test_device|test_staged)\.np[1-4]$|^device\.|^example\.' \
  -LE extended >"$out/ctest.log" 2>&1 || status=1
source "$here/common.sh"
TRIBUTARY_BUILD="$build" tributary_launcher 1
"${TRIBUTARY_LAUNCH[@]}" "$build/bench/device/bench_device" --csv "$out/device.csv" \
  >"$out/bench_device.txt" 2>&1 || status=1
{
  echo
  echo "## Tests (device suites and examples)"
  echo
  grep -E 'tests passed|tests failed|\*\*\*Failed|\*\*\*Timeout|Not Run' "$out/ctest.log" | sed 's/^/    /'
  echo
  echo "## Device benchmark (1 rank; bench_device)"
  echo
  grep -E '^\|' "$out/bench_device.txt" || echo "(no table: see bench_device.txt)"
  echo
  echo "Logs: ctest.log, bench_device.txt, device.csv beside this report."
} >>"$report"
cat "$report"
echo "test-gpu: $( ((status)) && echo FAILED || echo OK ) on $gpu; report: $report"
exit "$status"
