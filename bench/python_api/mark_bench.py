#!/usr/bin/env python3
"""Cost of gtrace.mark(name) from Python, beside its floor, on this CPU (no GPU).

    python3 bench/python_api/mark_bench.py BUILD_DIR [--baseline OTHER_BUILD_DIR]
                                                         # writes bench/results/<date>-python-mark.md

Re-runs itself 5 times with BUILD_DIR/lib/libgtrace.so preloaded (recording: the default capture
range is the whole run) and the in-tree package (python/gtrace). In each process, alternating
repetition by repetition (21 repetitions of 20000 calls each; the median of the per-call means):
  mark      gtrace.mark("step")                     the API as users call it
  raw       lib.gtrace_api_mark(b"step")            the ctypes call of the library's entry point
  floor     libc strlen(b"step") through ctypes     a ctypes call of a trivial C function (the floor)
  noop      gtrace.mark("step") without the library (a separate process: the no-op path)
The table gives the median over processes. The NVTX mark itself (ring record) is part of mark/raw.
With --baseline, each run also has a traced process with OTHER_BUILD_DIR/lib/libgtrace.so (an older
library, e.g. before a change), between the two others, so both libraries are measured alternately
against their own floor.
"""
import ctypes
import datetime
import os
import platform
import statistics
import subprocess
import sys
import time

SOURCE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
REPS, CALLS, RUNS = 21, 20000, 5


def per_call_ns(fn):
    start = time.perf_counter_ns()
    for _ in range(CALLS):
        fn()
    return (time.perf_counter_ns() - start) / CALLS


def child(mode):
    sys.path.insert(0, os.path.join(SOURCE, "python"))
    import gtrace
    libc = ctypes.CDLL(None)
    libc.strlen.argtypes = [ctypes.c_char_p]
    libc.strlen.restype = ctypes.c_size_t
    cases = {"floor": lambda: libc.strlen(b"step")}
    if mode == "traced":
        lib = gtrace._api()
        assert lib is not None, "libgtrace.so is not loaded"
        cases["mark"] = lambda: gtrace.mark("step")
        cases["raw"] = lambda: lib.gtrace_api_mark(b"step")
    else:
        cases["noop"] = lambda: gtrace.mark("step")
    results = {k: [] for k in cases}
    for _ in range(REPS):
        for k, fn in cases.items():
            results[k].append(per_call_ns(fn))
    for k, v in results.items():
        print("%s %.1f" % (k, statistics.median(v)))


def main(build, baseline=None):
    env = {k: v for k, v in os.environ.items() if not k.startswith("GTRACE_") and k != "LD_PRELOAD"}
    out_dir = "/tmp/gtrace-mark-bench-%d" % os.getpid()
    os.makedirs(out_dir, exist_ok=True)
    values = {}
    runs = [("traced", build, "")] + ([("traced", baseline, "base_")] if baseline else []) + [("plain", None, "")]
    for _ in range(RUNS):
        for mode, lib_build, prefix in runs:
            e = dict(env)
            if mode == "traced":
                e.update({"LD_PRELOAD": os.path.join(lib_build, "lib", "libgtrace.so"),
                          "GTRACE_OUTPUT": os.path.join(out_dir, "mark-%p"), "GTRACE_BUFFER_MB": "256"})
            p = subprocess.run([sys.executable, __file__, "--child", mode], env=e, capture_output=True, text=True,
                               check=True)
            for line in p.stdout.split("\n"):
                if line:
                    k, v = line.split()
                    values.setdefault(prefix + k, []).append(float(v))
    subprocess.run(["rm", "-rf", out_dir])
    med = {k: statistics.median(v) for k, v in values.items()}
    commit = subprocess.run(["git", "-C", SOURCE, "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    dirty = subprocess.run(["git", "-C", SOURCE, "diff", "--quiet"]).returncode != 0
    now = datetime.datetime.now(datetime.timezone.utc)
    text = """# gtrace.mark() from Python: CPU cost — %s

- machine: %s, %d cores; %s; load average %s
- commit: %s%s; CPython %s; library: %s
- how: `python3 bench/python_api/mark_bench.py BUILD_DIR` (see its docstring): %d processes x %d
  repetitions x %d calls, alternating the cases inside each process; median of per-call means, then
  the median over processes.

| case | ns per call | over the floor |
|---|---|---|
| floor: a ctypes call of libc `strlen(b"step")` | %.0f | 1.00 |
| `lib.gtrace_api_mark(b"step")` (ctypes, recording) | %.0f | %.2f |
| `gtrace.mark("step")` (recording) | %.0f | %.2f |
| `gtrace.mark("step")` without the library (no-op) | %.0f | %.2f |

%s
`gtrace.mark` is a ctypes call plus the UTF-8 encoding of the name and the package's lookup of the
loaded library; the library's own share (an NVTX mark: one ring record) is what `raw` adds to the floor.
""" % (now.strftime("%Y-%m-%dT%H:%MZ"), platform.processor() or platform.machine(), os.cpu_count(),
       platform.platform(), " ".join(open("/proc/loadavg").read().split()[:3]), commit,
       " (with uncommitted changes)" if dirty else "", platform.python_version(), build, RUNS, REPS, CALLS,
       med["floor"], med["raw"], med["raw"] / med["floor"], med["mark"], med["mark"] / med["floor"],
       med["noop"], med["noop"] / med["floor"], baseline_rows(med, baseline))
    path = os.path.join(SOURCE, "bench", "results", now.strftime("%Y-%m-%d") + "-python-mark.md")
    with open(path, "w") as f:
        f.write(text)
    print(text)


def baseline_rows(med, baseline):
    if not baseline:
        return ""
    return ("\nThe baseline library (%s), in processes alternated with the ones above, against the floor\n"
            "measured in its own processes:\n\n"
            "| case | ns per call | over its floor |\n|---|---|---|\n"
            "| floor (baseline processes) | %.0f | 1.00 |\n"
            "| `lib.gtrace_api_mark(b\"step\")`, baseline library | %.0f | %.2f |\n"
            "| `gtrace.mark(\"step\")`, baseline library | %.0f | %.2f |\n"
            "\nLibrary share (raw minus floor): %.0f ns now, %.0f ns baseline.\n" % (
                baseline, med["base_floor"], med["base_raw"], med["base_raw"] / med["base_floor"], med["base_mark"],
                med["base_mark"] / med["base_floor"], med["raw"] - med["floor"], med["base_raw"] - med["base_floor"]))


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        child(sys.argv[2])
    elif len(sys.argv) == 4 and sys.argv[2] == "--baseline":
        main(os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[3]))
    elif len(sys.argv) == 2:
        main(os.path.abspath(sys.argv[1]))
    else:
        sys.exit(__doc__)
