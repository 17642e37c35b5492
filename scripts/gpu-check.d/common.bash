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
