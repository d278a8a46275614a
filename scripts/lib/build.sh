# Shared by scripts/run-tests and scripts/run-tutorials (sourced, not run):
# picks the CMake preset and build directory, then configures and builds.
#
#   CI=true            -> preset `ci` (warnings are errors, lit required)
#   otherwise          -> preset $BLOCC_PRESET, default `dev`
#   $BLOCC_BUILD_DIR   -> build there instead of the preset's directory (lets
#                         several checkouts' or engineers' builds coexist)
#   $BLOCC_DEPS_WITH   -> optional dependency groups for scripts/install-deps

BLOCC_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

# Where scripts/install-deps puts the CUDA toolkit's cuobjdump and
# nvdisasm (optional: tests read the machine code ptxas makes with them, and
# skip that check without them); scripts/run-tests puts it on PATH.
blocc_cuda_tools_dir() {
  echo "${BLOCC_CUDA_TOOLS:-${XDG_CACHE_HOME:-$HOME/.cache}/blocc/cuda-tools}"
}

blocc_preset() {
  if [[ "${CI:-}" == true ]]; then
    echo ci
  else
    echo "${BLOCC_PRESET:-dev}"
  fi
}

# The preset's binaryDir; keep in step with CMakePresets.json.
blocc_build_dir() {
  if [[ -n "${BLOCC_BUILD_DIR:-}" ]]; then
    case "$BLOCC_BUILD_DIR" in
      /*) echo "$BLOCC_BUILD_DIR" ;;
      *) echo "$BLOCC_ROOT/$BLOCC_BUILD_DIR" ;;
    esac
    return
  fi
  case "$1" in
    debug) echo "$BLOCC_ROOT/build-debug" ;;
    *) echo "$BLOCC_ROOT/build" ;;
  esac
}

# Usage: blocc_configure_and_build PRESET BUILD_DIR [TARGET...]
# Prints CMake's and Ninja's output; returns non-zero on any failure.
blocc_configure_and_build() {
  local preset="$1" build_dir="$2"; shift 2
  local cache="$build_dir/CMakeCache.txt"
  if [[ -f "$cache" ]] && ! grep -q '^CMAKE_GENERATOR:INTERNAL=Ninja$' "$cache"; then
    echo "error: $build_dir was configured with another generator than Ninja;" \
      "remove it (rm -rf '$build_dir') or set BLOCC_BUILD_DIR" >&2
    return 1
  fi
  echo "== configure (preset $preset, $build_dir)"
  (cd "$BLOCC_ROOT" && cmake --preset "$preset" -B "$build_dir") || return 1
  echo "== build"
  local targets=()
  for t in "$@"; do targets+=(--target "$t"); done
  cmake --build "$build_dir" "${targets[@]}" || return 1
}
