# `scripts/run-benchmarks gpu` (sourced by scripts/run-benchmarks): runs
# blocc's GPU benchmark programs and, in the same invocation on the same
# GPU, the Triton and PyTorch peers where python3 has torch and triton, and
# the launch overhead from Python (blocc, Triton, torch.add) where python3
# also imports blocc;
# benchmarks/gpu/report.py then prints one table (blocc over each peer,
# the copy ceiling, their bars) and writes the JSON.
#
# The programs come from PATH when all of them are there (the packed GPU
# bundle: `source .gpu/env.sh`), else from a Release build made here.

gpu_programs=(blocc_bench_gpu blocc_bench_gpu_fused blocc_bench_gpu_launch)

gpu_usage() {
  cat <<'EOF'
usage: scripts/run-benchmarks gpu [--out FILE] [--quick] [--no-peers]
  --out FILE   the merged JSON (default benchmarks/results/gpu.json)
  --quick      fewer samples (about a minute); every size
  --no-peers   blocc only (no Triton / PyTorch)
EOF
}

# Prints the directory holding every GPU benchmark program: PATH's, or a
# build made now.
gpu_program_dir() {
  local dir="" p found
  for p in "${gpu_programs[@]}"; do
    found=$(command -v "$p") || { dir=""; break; }
    dir=$(dirname "$found")
  done
  if [[ -n "$dir" ]]; then
    echo "== using the benchmark programs on PATH ($dir)" >&2
    echo "$dir"
    return 0
  fi
  local preset build_dir
  preset=$(blocc_preset)
  case "$preset" in
    dev|ci) ;;
    *) echo "preset '$preset' is not a Release build (BLOCC_PRESET=dev or ci)" >&2; return 1 ;;
  esac
  build_dir=$(blocc_build_dir "$preset")
  blocc_configure_and_build "$preset" "$build_dir" "${gpu_programs[@]}" >&2 || return 1
  echo "$build_dir/benchmarks"
}

run_gpu_suite() {
  local out="$BLOCC_ROOT/benchmarks/results/gpu.json" quick=0 peers=1
  local command="scripts/run-benchmarks gpu $*"
  while [[ $# -gt 0 ]]; do
    case "$1" in
      --out) out="$2"; shift 2 ;;
      --quick) quick=1; shift ;;
      --no-peers) peers=0; shift ;;
      -h|--help) gpu_usage; return 0 ;;
      *) gpu_usage >&2; return 2 ;;
    esac
  done
  local bin work failed=0
  bin=$(gpu_program_dir) || { echo "run-benchmarks: FAILED: the GPU benchmark programs are neither on PATH nor buildable (is the NVPTX backend on?)" >&2; return 1; }
  work=$(mktemp -d "${TMPDIR:-/tmp}/blocc-gpu-bench-XXXXXX")
  local log2n=26,28 samples=50 fused_samples=20 launch_runs=5 triton_runs=5
  if [[ $quick == 1 ]]; then
    log2n=26,28 samples=10 fused_samples=5 launch_runs=2 triton_runs=2
  fi
  notes=()
  step() { # NAME COMMAND...: runs one program, remembering a failure
    local name="$1"; shift
    echo; echo "== $*"
    "$@"
    local status=$?
    if [[ $status != 0 ]]; then
      failed=1
      notes+=("$name failed (exit status $status); its rows are missing")
    fi
  }
  step blocc_bench_gpu "$bin/blocc_bench_gpu" --log2n "$log2n" --samples "$samples" --json "$work/vector_add.json"
  step blocc_bench_gpu_fused "$bin/blocc_bench_gpu_fused" --samples "$fused_samples" --json "$work/fused.json"
  step blocc_bench_gpu_launch "$bin/blocc_bench_gpu_launch" --runs "$launch_runs" --json "$work/launch.json"
  local py="${PYTHON:-python3}" scripts="$BLOCC_ROOT/benchmarks/gpu"
  if [[ $peers == 0 ]]; then
    notes+=("peers not run (--no-peers)")
  elif ! "$py" -c 'import torch, triton' 2>/dev/null; then
    notes+=("Triton and PyTorch peers skipped: $py cannot import torch and triton")
    echo "== peers skipped: $py cannot import torch and triton"
  else
    step triton_vector_add.py "$py" "$scripts/triton_vector_add.py" ${log2n//,/ } --json "$work/peer_vector_add.json"
    step triton_fused.py "$py" "$scripts/triton_fused.py" --json "$work/peer_fused.json"
    step triton_launch.py "$py" "$scripts/triton_launch.py" --runs "$triton_runs" --json "$work/peer_launch.json"
  fi
  # Launches from Python need blocc's module (PYTHONPATH: a build's
  # <build>/python, or scripts/gpu-python run's package) and torch.
  if [[ $peers == 1 ]] && "$py" -c 'import blocc, torch' 2>/dev/null; then
    step python_launch.py "$py" "$scripts/python_launch.py" --samples "$samples" --json "$work/python_launch.json"
  elif [[ $peers == 1 ]]; then
    notes+=("launch overhead (Python) skipped: $py cannot import blocc and torch (run under scripts/gpu-python run, or with PYTHONPATH=<build>/python)")
    echo "== launch overhead from Python skipped: $py cannot import blocc and torch"
  fi
  "$py" - "$work/notes.json" "${notes[@]}" <<'EOF'
import json, sys
json.dump({"notes": sys.argv[2:]}, open(sys.argv[1], "w"))
EOF
  mkdir -p "$(dirname "$out")"
  "$py" "$scripts/report.py" --out "$out" --command "$command" \
    "$work"/*.json || failed=1
  rm -rf "$work"
  return $failed
}
