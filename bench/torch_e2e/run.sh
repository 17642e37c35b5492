#!/usr/bin/env bash
# End-to-end slowdown of a torch training loop under gtrace (GPU machine, by hand or from
# scripts/gpu-check.d/90-bench.sh). Configurations run alternately, ROUNDS times each, in one job:
#   bare | gtrace -t cuda,nvtx,nccl | same + --gpu-metrics-devices=all at 10 kHz | nsys (if found)
# Writes bench/results/<date>-gpu-torch.md with medians (of per-process median step times) and
# ratios to bare.   bash bench/torch_e2e/run.sh [BUILD_DIR] [ROUNDS]
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$src/build}" && pwd)
rounds=${2:-3}
work=$(mktemp -d /tmp/gtrace-torch-e2e-XXXXXX)
g="$build/bin/gtrace"
py=(python3 "$src/bench/torch_e2e/torch_e2e.py")
nsys_bin=$(command -v nsys || ls /usr/local/cuda/bin/nsys /opt/nvidia/nsight-*/bin/nsys 2>/dev/null | head -1 || true)
configs=(bare gtrace metrics)
[ -n "$nsys_bin" ] && configs+=(nsys)
for r in $(seq "$rounds"); do
  for c in "${configs[@]}"; do
    out="$work/$c-$r.json"
    case $c in
      bare) "${py[@]}" --out "$out" >/dev/null ;;
      gtrace) "$g" profile -o "$work/g-$r" -t cuda,nvtx,nccl -- "${py[@]}" --out "$out" >/dev/null 2>&1 ;;
      metrics) "$g" profile -o "$work/m-$r" -t cuda,nvtx,nccl --gpu-metrics-devices=all --gpu-metrics-frequency=10000 \
                 -- "${py[@]}" --out "$out" >/dev/null 2>&1 ;;
      nsys) "$nsys_bin" profile -o "$work/n-$r" -t cuda,nvtx --force-overwrite true "${py[@]}" --out "$out" >/dev/null 2>&1 ;;
    esac
  done
done
med() { python3 -c "import json,statistics,sys; print('%.3f' % statistics.median(json.load(open(f))['median_ms'] for f in sys.argv[1:]))" "$@"; }
mkdir -p "$src/bench/results"
res="$src/bench/results/$(date -u +%Y-%m-%d)-gpu-torch.md"
{
  echo "# torch training loop under gtrace — $(date -u +%FT%TZ)"
  echo
  echo "- GPU: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"
  echo "- commit: $(git -C "$src" rev-parse --short HEAD 2>/dev/null || echo unknown); torch $(python3 -c 'import torch; print(torch.__version__)')"
  echo "- 6-layer transformer encoder (d_model 512, batch 16 x 256), AdamW, 400 timed steps after 50 warm-up;"
  echo "  $rounds processes per configuration, alternating; the table gives the median of per-process medians."
  echo
  echo "| configuration | median step (ms) | vs bare |"
  echo "|---|---|---|"
  base=$(med "$work"/bare-*.json)
  for c in "${configs[@]}"; do
    m=$(med "$work"/$c-*.json)
    echo "| $c | $m | $(python3 -c "print('%.3fx' % ($m / $base))") |"
  done
} > "$res"
cat "$res"
