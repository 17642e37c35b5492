#!/usr/bin/env bash
# Compares the CUPTI subscriber callback's early-out (graph launch, no window open) of two builds of
# bench/launch_overhead/hot_path_bench.cc, alternating runs, and prints both medians, the ratio of
# medians and the median of the paired ratios. Used for the raw-capture check it added
# (bench/results/2026-11-25-rawcap-cpu.md).
#   bash bench/launch_overhead/compare_early_out.sh BASE_BENCH NEW_BENCH [PAIRS=21]
set -euo pipefail
base=$1 new=$2 pairs=${3:-21}
f=BM_GraphLaunchCallbackOutsideWindow
run() { "$1" --benchmark_filter="^$f\$" --benchmark_min_time=0.3 --benchmark_format=csv 2>/dev/null | grep "^\"$f\"" | cut -d, -f3; }
out=$(for i in $(seq 1 "$pairs"); do echo "$(run "$base") $(run "$new")"; done)
python3 - "$out" <<'PY'
import statistics as s, sys
pairs = [tuple(map(float, l.split())) for l in sys.argv[1].splitlines() if l.strip()]
b = [p[0] for p in pairs]; n = [p[1] for p in pairs]
print(f"pairs {len(pairs)}; median base {s.median(b):.2f} ns, new {s.median(n):.2f} ns, "
      f"ratio of medians {s.median(n) / s.median(b):.3f}, median paired ratio {s.median([y / x for x, y in pairs]):.3f}")
PY
