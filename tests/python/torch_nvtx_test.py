#!/usr/bin/env python3
"""python.torch_nvtx: torch.cuda.nvtx and torch.autograd.profiler.emit_nvtx() ranges, on CPU.

    python3 tests/python/torch_nvtx_test.py BUILD_DIR

Installs PyPI's torch 2.15.0 wheel (539 MB download, --no-deps) and the CUDA runtime wheel it loads
(nvidia-cuda-runtime, 2 MB) into BUILD_DIR/python-torch/venv once, with stand-ins for the other CUDA
libraries torch links but never calls here (tests/fakes/torch_cuda_stubs.py: about 2 GB of wheels
saved), then runs tests/python/torch_nvtx_program.py under `gtrace profile -t nvtx
--python-backtrace=none --export=sqlite` and asserts every NVTX_EVENTS row: names in torch's own
spelling (emit_nvtx: "<op>, seq = N, op_id = M[, sizes = ..., input_op_ids = ...]",
torch/csrc/profiler/util.cpp getNvtxStr), event types, the default domain, nesting, the thread of
each end. Exit 77 (ctest: skipped) with the reason when PyPI cannot be reached, a tool is missing
or the wheel cannot be imported here. torch is pinned: the expected rows, sequence numbers and op
ids included, are those of torch 2.15.0 (another version needs its rows reviewed and written here).
"""
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile

SOURCE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TORCH = "torch==2.15.0"
CUDART = "nvidia-cuda-runtime==13.2.86"  # what torch 2.15.0's metadata requires
# torch's pure-Python requirements that `import torch` reaches (small).
PURE = ["typing_extensions", "sympy", "filelock", "fsspec", "jinja2", "networkx"]

# Every NVTX_EVENTS row, by start time: nesting depth among the push/pop ranges of the main thread
# (from the recorded times), eventType, text. 59 push/pop, 60 start/end, 34 mark; domain 0 each.
EXPECTED = """\
0 59 step 0
1 59 forward 1
2 34 checkpoint
1 60 loader [ended on another thread]
1 59 aten::mul, seq = 0, op_id = 1
2 59 aten::to, op_id = 2
3 59 aten::_to_copy, op_id = 3
4 59 aten::empty_strided, op_id = 4
4 59 aten::copy_, op_id = 5
1 59 aten::sum, seq = 1, op_id = 6
2 59 aten::sum, op_id = 7
3 59 aten::as_strided, op_id = 8
3 59 aten::fill_, op_id = 9
1 59 aten::ones_like, op_id = 10
2 59 aten::empty_like, op_id = 11
3 59 aten::empty_strided, op_id = 12
2 59 aten::fill_, op_id = 13
1 59 autograd::engine::evaluate_function: SumBackward0, op_id = 14
2 59 SumBackward0, seq = 1, op_id = 15
3 59 aten::expand, op_id = 16
4 59 aten::as_strided, op_id = 17
1 59 autograd::engine::evaluate_function: MulBackward0, op_id = 18
2 59 MulBackward0, seq = 0, op_id = 19
3 59 aten::mul, op_id = 20
4 59 aten::to, op_id = 21
5 59 aten::_to_copy, op_id = 22
6 59 aten::empty_strided, op_id = 23
6 59 aten::copy_, op_id = 24
1 59 autograd::engine::evaluate_function: torch::autograd::AccumulateGrad, op_id = 25
2 59 torch::autograd::AccumulateGrad, op_id = 26
3 59 aten::detach, op_id = 27
4 59 detach, op_id = 28
1 59 aten::add, seq = 2, op_id = 29, sizes = [[2, 3], [2, 3], []], input_op_ids = [(0,-1), (0,-1), (0,-1)]
""".splitlines()


def skip(why):
    print("SKIP: " + why)
    sys.exit(77)


def fail(why):
    print("FAIL: " + why)
    sys.exit(1)


def clean_env():
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("GTRACE_") and k not in (
               "LD_PRELOAD", "NVTX_INJECTION64_PATH", "CUDA_INJECTION64_PATH", "NCCL_PROFILER_PLUGIN",
               "PYTHONPATH", "LD_LIBRARY_PATH")}
    env["PYTHONNOUSERSITE"] = "1"
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    return env


def setup(work):
    """The venv with torch and the stand-ins; returns (python, stub dir)."""
    venv, stubs, log = os.path.join(work, "venv"), os.path.join(work, "stubs"), os.path.join(work, "setup.log")
    python = os.path.join(venv, "bin", "python")
    for tool in ("cc", "nm", "readelf"):
        if not shutil.which(tool):
            skip("%s not found (the CUDA library stand-ins are compiled here)" % tool)
    env = clean_env()
    stamp = os.path.join(venv, "gtrace-torch-ok")
    if not os.path.exists(stamp) or not os.path.isdir(stubs):
        shutil.rmtree(venv, ignore_errors=True)
        shutil.rmtree(stubs, ignore_errors=True)
        with open(log, "w") as out:
            if subprocess.run([sys.executable, "-m", "venv", venv], stdout=out, stderr=out).returncode:
                skip("python3 -m venv failed (python3-venv missing?)")
            print("installing %s and %s (--no-deps, 541 MB) into %s (once)" % (TORCH, CUDART, venv), flush=True)
            pip = [python, "-m", "pip", "install", "-q", "--progress-bar", "off"]
            for argv in (pip + ["--no-deps", TORCH, CUDART], pip + PURE):
                if subprocess.run(argv, stdout=out, stderr=out, env=env, timeout=1500).returncode:
                    shutil.rmtree(venv, ignore_errors=True)
                    skip("pip install failed (no PyPI access, or no %s wheel for this Python); see %s" % (TORCH, log))
        site = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                              capture_output=True, text=True, env=env).stdout.strip()
        made = subprocess.run([sys.executable, os.path.join(SOURCE, "tests", "fakes", "torch_cuda_stubs.py"), site, stubs],
                              capture_output=True, text=True)
        print(made.stdout + made.stderr, end="")
        if made.returncode:
            fail("torch_cuda_stubs.py failed")
        with open(stamp, "w") as f:
            f.write(TORCH + "\n")
    env["LD_LIBRARY_PATH"] = stubs
    probe = subprocess.run([python, "-W", "ignore", "-c", "import torch; print(torch.__version__, torch.cuda.is_available())"],
                           capture_output=True, text=True, env=env, timeout=300)
    if probe.returncode:
        skip("the torch wheel cannot be imported here: " + (probe.stderr.strip().splitlines() or ["?"])[-1])
    print("torch", probe.stdout.strip(), "(version, CUDA available)")
    return python, stubs


def nested_rows(db):
    """EXPECTED's format, from the database: depth from the recorded times of push/pop ranges."""
    con = sqlite3.connect(db)
    rows = con.execute("SELECT start, end, eventType, coalesce(text, '<textId ' || textId || '>'), domainId, globalTid,"
                       " endGlobalTid FROM NVTX_EVENTS ORDER BY start, end DESC").fetchall()
    con.close()
    out, open_ends = [], []
    main_tid = rows[0][5] if rows else None
    for start, end, kind, text, domain, tid, end_tid in rows:
        while open_ends and open_ends[-1] <= start:
            open_ends.pop()
        line = "%d %d %s" % (len(open_ends), kind, text)
        if domain != 0:
            line += " [domain %s]" % domain
        if tid != main_tid:
            line += " [thread %s]" % tid
        if kind == 60 and end_tid is not None and end_tid != tid:
            line += " [ended on another thread]"
        if kind == 34 and end is not None:
            line += " [mark with an end]"
        if kind == 59:
            if end is None or end <= start:
                line += " [no duration]"
            open_ends.append(end)
        out.append(line)
    return out


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: torch_nvtx_test.py BUILD_DIR")
    build = os.path.abspath(sys.argv[1])
    work = os.path.join(build, "python-torch")
    os.makedirs(work, exist_ok=True)
    python, stubs = setup(work)

    tmp = tempfile.mkdtemp(prefix="gtrace-torch-nvtx-")
    try:
        env = clean_env()
        env["LD_LIBRARY_PATH"] = stubs
        out = os.path.join(tmp, "run")
        argv = [os.path.join(build, "bin", "gtrace"), "profile", "-t", "nvtx", "--python-backtrace=none", "-o", out,
                "--export=sqlite", "--", python, "-W", "ignore", os.path.join(SOURCE, "tests", "python", "torch_nvtx_program.py")]
        proc = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=600)
        print(proc.stdout, end="")
        complaints = [l for l in proc.stderr.splitlines() if l.startswith("gtrace:") and "gtrace: wrote" not in l]
        if proc.returncode or "depths [0, 0]" not in proc.stdout or complaints:
            print(proc.stderr)
            fail("the torch program under gtrace: exit %d, complaints %s" % (proc.returncode, complaints))
        if "grad [[2.0, 2.0, 2.0], [2.0, 2.0, 2.0]]" not in proc.stdout:
            fail("the program's result changed under gtrace")
        got = nested_rows(out + ".sqlite")
        if got != EXPECTED:
            print("expected:\n  " + "\n  ".join(EXPECTED))
            print("got:\n  " + "\n  ".join(got))
            for i, (a, b) in enumerate(zip(EXPECTED, got)):
                if a != b:
                    print("first difference at row %d: expected %r, got %r" % (i, a, b))
                    break
            fail("NVTX_EVENTS differ (%d rows expected, %d got)" % (len(EXPECTED), len(got)))
        print("PASS: %d NVTX_EVENTS rows exactly as expected (torch.cuda.nvtx, emit_nvtx)" % len(got))

        # The nsys-style report over them: one instance per distinct op range, in torch's spelling.
        stats = subprocess.run([os.path.join(build, "bin", "gtrace"), "stats", "--report", "nvtx_sum", "--format", "json",
                                out + ".sqlite"], capture_output=True, text=True, env=env, timeout=120)
        try:
            report = json.loads(stats.stdout)
        except ValueError:
            report = []
        names = sorted((r["Style"], r["Range"], r["Instances"]) for r in report)
        want = sorted({("PushPop" if l.split(" ")[1] == "59" else "StartEnd",
                        ":" + l.split(" ", 2)[2].replace(" [ended on another thread]", ""), 1)
                       for l in EXPECTED if l.split(" ")[1] in ("59", "60")})
        if stats.returncode or names != want:
            print(stats.stderr)
            print("expected:", [w for w in want if w not in names], "got:", [n for n in names if n not in want])
            fail("nvtx_sum ranges differ (%d expected, %d got)" % (len(want), len(names)))
        print("PASS: nvtx_sum names %d ranges" % len(names))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
