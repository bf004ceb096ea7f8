# Shared by the quick-start scripts: the build directory, the MPI pin, and the launcher
# flags that belong to the MPI library CMake found.
set -euo pipefail
TRIBUTARY_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TRIBUTARY_BUILD="${TRIBUTARY_BUILD:-$TRIBUTARY_ROOT/build/default}"
TRIBUTARY_JOBS="${TRIBUTARY_JOBS:-$(nproc)}"

tributary_configure() {
  local extra=()
  [[ -n "${TRIBUTARY_MPI:-}" ]] && extra+=("-DTRIBUTARY_MPI=$TRIBUTARY_MPI")
  local gen=()
  command -v ninja >/dev/null 2>&1 && gen=(-G Ninja)
  if [[ ! -f "$TRIBUTARY_BUILD/CMakeCache.txt" ]]; then
    cmake -S "$TRIBUTARY_ROOT" -B "$TRIBUTARY_BUILD" "${gen[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      "${extra[@]}" "$@"
  elif ((${#extra[@]} + $#)); then
    cmake -S "$TRIBUTARY_ROOT" -B "$TRIBUTARY_BUILD" "${extra[@]}" "$@"
  fi
}

# Sets TRIBUTARY_LAUNCH (an array) to the launcher and its flags for N ranks, read from the
# CMake cache: Open MPI gets --oversubscribe (and may run as root: the variables it asks
# for are exported here, in the calling shell); MPICH gets nothing extra.
tributary_launcher() {
  local np="$1"
  local mpiexec
  mpiexec=$(sed -n 's/^MPIEXEC_EXECUTABLE:FILEPATH=//p' "$TRIBUTARY_BUILD/CMakeCache.txt")
  [[ -n "$mpiexec" ]] || mpiexec=mpiexec
  if "$mpiexec" --version 2>&1 | grep -qE 'Open MPI|OpenRTE'; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    TRIBUTARY_LAUNCH=("$mpiexec" -n "$np" --oversubscribe)
  else
    TRIBUTARY_LAUNCH=("$mpiexec" -n "$np")
  fi
}
