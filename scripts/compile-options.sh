# shellcheck shell=bash disable=SC2034,SC2154
# Shared by compile-hip.sh and compile-cuda.sh, which source it: their options.
#
#   compile_options SCRIPT DEFAULT_BUILD "$@"
#
# with the caller's root set, sets reduced (0 or 1, --reduced), kokkos_base (-B, default
# build/ci-kokkos) and build (--build, default DEFAULT_BUILD); -h and --help print
# SCRIPT's header comment.
compile_options() {
  local script="$1" name
  name="$(basename "$1")"
  build="$2"
  shift 2
  reduced=0
  kokkos_base="$root/build/ci-kokkos"
  while [[ $# -gt 0 ]]; do
    case "$1" in
      --reduced) reduced=1; shift ;;
      -B) kokkos_base="$2"; shift 2 ;;
      --build) build="$2"; shift 2 ;;
      -h | --help) sed -n '2,/^[^#]/{/^#/p}' "$script"; exit 0 ;;
      *) echo "$name: unknown argument '$1'" >&2; exit 2 ;;
    esac
  done
}
