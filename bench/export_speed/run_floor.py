#!/usr/bin/env python3
"""Export speed against the bare SQLite insert floor (issue 16).

For an NVTX-heavy stream (bench/export_speed/make_stream: push/pop pairs on 8 threads) and a
kernel-heavy stream (bench/stream_sizes/cuda_training: kernels + the API calls that launch them, in
the compact encoding the library writes), >= 10 M events each:
  - one core: `taskset -c 0 gtrace export -o X.sqlite S` against `taskset -c 0 insert_floor REF X`,
    where REF is gtrace's own export of S (so the floor inserts exactly the rows gtrace writes);
  - all cores: the same events as 2 streams (2 processes), `gtrace export --per-rank -j 2` against
    `insert_floor` with one thread per database.
Rounds alternate (export, floor, export, floor, ...); medians; ratio = floor time / export time
(>= 0.8 is the target), for wall-clock seconds and for CPU seconds (user + system, all threads: what
a shared machine cannot inflate). The export's figures include process start and stream reading; the
floor's only its timed section (create, insert, commit, index, close).

  python3 bench/export_speed/run_floor.py [--build build] [--work DIR] [--rounds R] [--events N]
"""
import argparse
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import time


def run(cmd, **kw):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)
    if r.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{r.stderr}")
    return r


def children_cpu():
    u = resource.getrusage(resource.RUSAGE_CHILDREN)
    return u.ru_utime + u.ru_stime


def timed(cmd):
    """Wall seconds and CPU seconds (user + system, all threads) of one child process."""
    c0, t0 = children_cpu(), time.monotonic()
    r = run(cmd)
    return time.monotonic() - t0, children_cpu() - c0, r


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--work", default="/tmp/gt-export-floor")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--events", type=int, default=10_000_000)
    ap.add_argument("--only", default="", help="nvtx or cuda")
    a = ap.parse_args()
    b = os.path.join(a.build, "bin")
    gtrace, floor = os.path.join(b, "gtrace"), os.path.join(b, "insert_floor")
    os.makedirs(a.work, exist_ok=True)
    w = lambda n: os.path.join(a.work, n)
    one = ["taskset", "-c", "0"]

    # Inputs. make_stream: --events counts NVTX events (2 per range). cuda_training: per launch one
    # kernel + one cudaLaunchKernel, +0.1 memcpy call, +0.01 sync call = 2.11 events.
    launches = int(a.events / 2.11) + 1
    kinds = {}
    if a.only in ("", "nvtx"):
        run([os.path.join(b, "make_stream"), w("nvtx.gtrace"), "--events", str(a.events)])
        for i in range(2):
            run([os.path.join(b, "make_stream"), w(f"nvtx-{i}.gtrace"), "--events", str(a.events // 2),
                 "--pid", str(5000 + i)])
        kinds["nvtx"] = ([w("nvtx.gtrace")], [w("nvtx-0.gtrace"), w("nvtx-1.gtrace")])
    if a.only in ("", "cuda"):
        run([os.path.join(b, "cuda_training"), w("cuda"), "--launches", str(launches), "--rounds", "1",
             "--only", "compact"])
        for i in range(2):
            run([os.path.join(b, "cuda_training"), w(f"cuda-{i}"), "--launches", str(launches // 2), "--rounds",
                 "1", "--only", "compact"])
        kinds["cuda"] = ([w("cuda-compact.gtrace")], [w("cuda-0-compact.gtrace"), w("cuda-1-compact.gtrace")])

    results = []
    for kind, (single, pair) in kinds.items():
        # The rows gtrace writes: its own export of each input (the floor's source).
        ref = w(f"ref-{kind}.sqlite")
        if os.path.exists(ref):
            os.remove(ref)
        run([gtrace, "export", "-o", ref, single[0]])
        refdir = w(f"ref-{kind}-ranks")
        shutil.rmtree(refdir, ignore_errors=True)
        run([gtrace, "export", "--per-rank", "-j", "2", "-o", refdir] + pair)
        parts = sorted(os.path.join(refdir, f) for f in os.listdir(refdir) if f.endswith(".sqlite"))
        if len(parts) != 2:
            sys.exit(f"expected 2 per-rank databases in {refdir}, found {parts}")
        rows = run([floor, ref, w("floor-probe.sqlite")]).stdout
        for mode in ("1 core", "2 cores"):
            exp_s, floor_s, exp_c, floor_c = [], [], [], []
            for r in range(a.rounds):
                out = w("out.sqlite")
                if mode == "1 core":
                    if os.path.exists(out):
                        os.remove(out)
                    t, c, _ = timed(one + [gtrace, "export", "-o", out, single[0]])
                    fr = run(one + [floor, ref, w("floor.sqlite")]).stdout
                else:
                    outdir = w("out-ranks")
                    shutil.rmtree(outdir, ignore_errors=True)
                    t, c, _ = timed([gtrace, "export", "--per-rank", "-j", "2", "-o", outdir] + pair)
                    fr = run([floor, parts[0], w("floor-0.sqlite"), parts[1], w("floor-1.sqlite")]).stdout
                exp_s.append(t)
                exp_c.append(c)
                floor_s.append(float(re.search(r"floor_s=([0-9.]+)", fr).group(1)))
                floor_c.append(float(re.search(r"floor_cpu_s=([0-9.]+)", fr).group(1)))
                print(f"{kind} {mode} round {r + 1}: export {exp_s[-1]:.3f} s ({exp_c[-1]:.3f} CPU), "
                      f"floor {floor_s[-1]:.3f} s ({floor_c[-1]:.3f} CPU)", flush=True)
            e, f = statistics.median(exp_s), statistics.median(floor_s)
            ec, fc = statistics.median(exp_c), statistics.median(floor_c)
            results.append((kind, mode, e, f, ec, fc, exp_s, floor_s, exp_c, floor_c, rows.strip()))
    print("\n| stream | cores | export wall s | floor wall s | floor/export (wall) | export CPU s | floor CPU s | "
          "floor/export (CPU) |")
    print("|---|---|---|---|---|---|---|---|")
    for kind, mode, e, f, ec, fc, *_ in results:
        print(f"| {kind} | {mode} | {e:.3f} | {f:.3f} | {f / e:.2f} | {ec:.3f} | {fc:.3f} | {fc / ec:.2f} |")
    print("\nRounds (export wall / floor wall / export CPU / floor CPU):")
    for kind, mode, e, f, ec, fc, es, fs, ecs, fcs, rows in results:
        fmt = lambda xs: ", ".join(f"{x:.2f}" for x in xs)
        print(f"- {kind}, {mode}: [{fmt(es)}] / [{fmt(fs)}] / [{fmt(ecs)}] / [{fmt(fcs)}]")
    for kind, mode, *rest in results:
        if mode == "1 core":
            print(f"{kind}: {rest[-1]}")


if __name__ == "__main__":
    main()
