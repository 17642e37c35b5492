#!/usr/bin/env bash
# Compares the NCCL plugin's hot-path sequences of two libgtrace.so builds with one
# nccl_hotpath_bench binary, alternating runs (base, new, base, new, ...), and prints per sequence
# both medians, the ratio of medians and the median of the paired ratios. Used for the NCCL raw
# capture's off cost (bench/results/2026-11-25-rawcap-nccl-cpu.md): with GTRACE_RAW_CAPTURE_DIR
# unset the new build adds one relaxed load at the top of each exported plugin entry point.
#   bash bench/nccl_overhead/compare_capture_off.sh BENCH BASE_LIB NEW_LIB [PAIRS=11]
set -euo pipefail
bench=$1 base=$2 new=$3 pairs=${4:-11}
unset GTRACE_RAW_CAPTURE_DIR
run() { "$bench" "$1" | awk '/  [A-Za-z]/ {print $NF}' | paste -sd' '; }
out=$(for i in $(seq 1 "$pairs"); do echo "$(run "$base") | $(run "$new")"; done)
python3 - "$out" <<'PY'
import statistics as s, sys
names = ["KernelCh start + state + stop", "Coll start + stop", "CollApi start + stop", "untracked start + stop"]
rows = [l.split("|") for l in sys.argv[1].splitlines() if "|" in l]
for k, name in enumerate(names):
    b = [float(r[0].split()[k]) for r in rows]; n = [float(r[1].split()[k]) for r in rows]
    print(f"{name:32s} pairs {len(rows)}: median base {s.median(b):.1f} ns, new {s.median(n):.1f} ns, "
          f"ratio of medians {s.median(n) / s.median(b):.3f}, median paired ratio {s.median([y / x for x, y in zip(b, n)]):.3f}")
PY
