# common.bash: helpers every check part sources (not a part itself: gpu-check.sh runs *.sh only).
#   . "$GT_SRC/scripts/gpu-check.d/common.bash"
# Needs bash and coreutils only, so that a part reaches its "no GPU" SKIP on any machine.

# gt_now: seconds since the epoch without a child process (a child would inherit a caller's
# LD_PRELOAD=libgtrace.so and GTRACE_OUTPUT, and could write a stream of its own).
gt_now() { echo "${EPOCHSECONDS:-$(date +%s)}"; }

# gt_require_gpu LABEL: when this machine has no usable NVIDIA GPU, append "SKIP LABEL: no GPU (...)"
# to $GT_RESULTS and end the part (exit 0). Called first in every part, before anything that needs
# python modules, CUDA libraries or the GPU image's tools.
gt_require_gpu() {
  local why=""
  if ! command -v nvidia-smi >/dev/null 2>&1; then
    why="no GPU: no NVIDIA driver (nvidia-smi missing)"
  elif ! nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
    why="no GPU: nvidia-smi lists none ($(nvidia-smi -L 2>&1 | head -1))"
  fi
  if [ -n "$why" ]; then
    echo "SKIP $1: $why" | tee -a "$GT_RESULTS"
    exit 0
  fi
}

# gt_timeout SECONDS CMD...: `timeout SECONDS CMD...`, shortened so that the part ends before its
# deadline (GT_PART_DEADLINE, set by gpu-check.sh: epoch seconds); at least 5 s. Exit status 124 on
# a timeout, as timeout's. Environment assignments before gt_timeout reach CMD.
gt_timeout() {
  local want=$1 left
  shift
  if [ -n "${GT_PART_DEADLINE:-}" ]; then
    left=$((GT_PART_DEADLINE - $(gt_now)))
    [ "$left" -lt "$want" ] && want=$left
    [ "$want" -lt 5 ] && want=5
  fi
  timeout -k 5 "$want" "$@"
}

# res VERDICT CHECK TEXT: one result line "VERDICT <part>/CHECK: TEXT" on stdout and in $GT_RESULTS.
# The part sets `name` (its label) before its first result.
res() { echo "$1 $name/$2: $3" | tee -a "$GT_RESULTS"; }

# relay: turns the "PASS check: text" / "FAIL check: text" / "SKIP check: text" lines a helper script
# prints into results.
relay() { while IFS= read -r line; do
  case "$line" in PASS\ *|FAIL\ *|SKIP\ *) v=${line%% *}; rest=${line#* }; res "$v" "${rest%%:*}" "${rest#*: }";; esac; done; }

# gt_metrics_setup PART: the setup 30-metrics and 31-metrics-cost share. Ends the part with a SKIP
# when there is no PyTorch with CUDA; otherwise sets py, work (emptied), gtrace, wl (the workload),
# cmp (the comparison script), copy_mib and CUDA_VISIBLE_DEVICES, and prints the GPU's clocks and
# whether profiling is admin-only (both decide what the counters can show).
gt_metrics_setup() {
  py=$(command -v python3 || true)
  if [ -z "$py" ] || ! "$py" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
    res SKIP all "no PyTorch with CUDA here"
    exit 0
  fi
  work="$GT_WORK/$1"
  rm -rf "$work" && mkdir -p "$work"
  gtrace="$GT_BUILD/bin/gtrace"
  wl="$GT_SRC/samples/cuda/gpu_metrics_workload.py"
  cmp="$GT_SRC/scripts/gpu-check.d/metrics_compare.py"
  export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0}
  copy_mib=2048
  nvidia-smi -i "${CUDA_VISIBLE_DEVICES%%,*}" --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
  grep -i RmProfilingAdminOnly /proc/driver/nvidia/params 2>/dev/null || true
}
