#!/usr/bin/env python3
"""Runs HTA's loader and its temporal, kernel and communication breakdowns on gtrace's per-rank
Kineto files of the viewer fixture (tests/viewers/viewer_fixture.cc) and compares the numbers with
what the fixture's rows imply. usage: hta_check.py TRACE_DIR RANKS"""
import logging
import sys
import warnings

warnings.filterwarnings("ignore")
logging.disable(logging.WARNING)

from hta.trace_analysis import TraceAnalysis  # noqa: E402


def expect(what, got, want):
    if got != want:
        print(f"FAIL {what}: got {got!r}, want {want!r}")
        expect.failures += 1
    else:
        print(f"ok   {what}: {got!r}")


expect.failures = 0


def main():
    trace_dir, ranks = sys.argv[1], int(sys.argv[2])
    analyzer = TraceAnalysis(trace_dir=trace_dir)
    expect("ranks loaded", sorted(analyzer.t.get_ranks()), list(range(ranks)))

    # Per rank (us): GPU work on streams 7/13/20 spans 3000..8400 (the stream sync ends last);
    # busy 3750 (1000+100+50+200+1100+1300); compute kernels (not nccl/memcpy/memset/sync) 2100.
    temporal = analyzer.get_temporal_breakdown(visualize=False)
    for _, row in temporal.iterrows():
        r = int(row["rank"])
        expect(f"rank {r} kernel_time(us)", int(row["kernel_time(us)"]), 5400)
        expect(f"rank {r} idle_time(us)", int(row["idle_time(us)"]), 1650)
        expect(f"rank {r} compute_time(us)", int(row["compute_time(us)"]), 2100)
        expect(f"rank {r} non_compute_time(us)", int(row["non_compute_time(us)"]), 1650)
    expect("temporal rows", len(temporal), ranks)

    kernel_types, kernels = analyzer.get_gpu_kernel_breakdown(visualize=False)
    sums = {row["kernel_type"]: int(row["sum"]) for _, row in kernel_types.iterrows()}
    # HTA splits GPU time by kernel type, overlaps apart. Per rank: compute alone 3000..4000,
    # 4400..4600, 6800..6900 (1300); the NCCL kernel alone 5800..6000 (200); both 6000..6800 (800);
    # memcpy + memset (150).
    overlapping = [k for k in sums if "overlapping" in k]
    expect("kernel types", sorted(k for k in sums if "overlapping" not in k), ["COMMUNICATION", "COMPUTATION", "MEMORY"])
    expect("COMPUTATION sum(us)", sums.get("COMPUTATION"), 1300 * ranks)
    expect("COMMUNICATION sum(us)", sums.get("COMMUNICATION"), 200 * ranks)
    expect("MEMORY sum(us)", sums.get("MEMORY"), 150 * ranks)
    expect("overlapping types", [sorted(k.split(" overlapping ")) for k in overlapping], [["COMMUNICATION", "COMPUTATION"]])
    expect("COMPUTATION/COMMUNICATION overlap sum(us)", sums.get(overlapping[0]) if overlapping else None, 800 * ranks)
    nccl = kernels[kernels["kernel_type"] == "COMMUNICATION"]
    expect("communication kernels", sorted(set(nccl["name"])),
           ["ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)"])
    compute = kernels[kernels["kernel_type"] == "COMPUTATION"]
    per_kernel = {row["name"]: int(row["sum (us)"]) for _, row in compute[compute["rank"] == 0].iterrows()}
    expect("rank 0 compute kernel sums(us)", per_kernel,
           {"void compute_kernel<float>(float *, int)": 1500, "void other_kernel(int)": 700,
            "graph_node_a(float *)": 100, "graph_node_b(float *)": 100})

    # The NCCL kernel (5800..6800) overlaps compute 6000..6800: 80 %.
    overlap = analyzer.get_comm_comp_overlap(visualize=False)
    for _, row in overlap.iterrows():
        expect(f"rank {int(row['rank'])} comp_comm_overlap_pctg", float(row["comp_comm_overlap_pctg"]), 80.0)
    return 1 if expect.failures else 0


if __name__ == "__main__":
    sys.exit(main())
