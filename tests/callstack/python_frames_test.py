#!/usr/bin/env python3
"""callstack.python_frames: --python-backtrace=cuda on the local CPython, on CPU.

    python3 tests/callstack/python_frames_test.py BUILD_DIR [unittest args]

Runs tests/callstack/programs/pyframes_app.py with libgtrace.so preloaded and the fake CUPTI (a test
double: it proves gtrace's logic, not CUPTI's), GTRACE_CUDABACKTRACE=memory:10000000 and
GTRACE_PYTHON_BACKTRACE=cuda, exports the stream with the build's CLI and checks CUDA_CALLCHAINS
exactly: the Python frames main -> train_step -> backward_like come back innermost first with the
file and the lines of the `# LINE:` markers, with the GIL released around the call (ctypes.CDLL),
held (ctypes.PyDLL), from a Python thread, and none from a native thread without Python state.
Exits 77 (skipped) when this interpreter is not one gtrace can read (3.9-3.13).
"""
import csv
import io
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import unittest

SOURCE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
APP = os.path.join(SOURCE, "tests", "callstack", "programs", "pyframes_app.py")
BUILD = None  # set from argv


def marker_line(marker):
    with open(APP) as f:
        for number, line in enumerate(f, 1):
            if line.rstrip().endswith("# LINE: " + marker):
                return number
    raise AssertionError("no marker " + marker)


def at(function, marker):
    return "%s at %s:%d" % (function, APP, marker_line(marker))


def clean_env():
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("GTRACE_") and k not in (
               "LD_PRELOAD", "NVTX_INJECTION64_PATH", "CUDA_INJECTION64_PATH", "NCCL_PROFILER_PLUGIN",
               "DEBUGINFOD_URLS")}
    return env


class PythonFramesTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="gtrace-pyframes-")
        fake = os.path.join(BUILD, "lib", "libgt_fake_cupti.so")
        env = clean_env()
        env.update({
            "LD_PRELOAD": os.path.join(BUILD, "lib", "libgtrace.so"),
            "GTRACE_OUTPUT": os.path.join(cls.dir, "run"),
            "GTRACE_CUPTI_PATH": fake,
            "GTRACE_FLUSH_MS": "50",
            "GTRACE_CUDABACKTRACE": "memory:10000000",
            "GTRACE_PYTHON_BACKTRACE": "cuda",
        })
        cls.proc = subprocess.run([sys.executable, APP, fake], env=env, capture_output=True, text=True, timeout=120)
        streams = [os.path.join(cls.dir, f) for f in os.listdir(cls.dir) if f.endswith(".gtrace")]
        cls.db = os.path.join(cls.dir, "run.sqlite")
        cls.export = subprocess.run([os.path.join(BUILD, "bin", "gtrace"), "export", "-o", cls.db] + streams,
                                    env=clean_env(), capture_output=True, text=True, timeout=120)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, ignore_errors=True)

    def rows(self, sql):
        con = sqlite3.connect(self.db)
        try:
            return list(con.execute(sql))
        finally:
            con.close()

    def chains(self):
        """callchainId of every backtraced call, in start order, with its thread id."""
        return self.rows("SELECT callchainId, globalTid & 16777215 FROM CUPTI_ACTIVITY_KIND_RUNTIME "
                         "WHERE eventClass = 67 ORDER BY start")

    def frames(self, chain):
        """(depth, symbol, module, originalIP is NULL) of chain `chain`, innermost first."""
        return self.rows("SELECT c.stackDepth, s.value, m.value, c.originalIP IS NULL FROM CUDA_CALLCHAINS c "
                         "JOIN StringIds s ON s.id = c.symbol JOIN StringIds m ON m.id = c.module "
                         "WHERE c.id = %d ORDER BY c.stackDepth" % chain)

    def python_symbols(self, chain):
        return [f[1] for f in self.frames(chain) if f[3]]

    def test_run_and_export_are_clean(self):
        self.assertEqual(self.proc.returncode, 0, self.proc.stderr)
        self.assertEqual([l for l in self.proc.stderr.splitlines() if l.startswith("gtrace:")], [])
        self.assertEqual(self.export.returncode, 0, self.export.stderr)
        version = "%d.%d" % sys.version_info[:2]
        self.assertEqual(self.rows("SELECT value FROM META_DATA_CAPTURE WHERE name = 'PROCESS_0:PYTHON_BACKTRACE'"),
                         [("cuda (Python %s)" % version,)])

    def test_exact_calls(self):
        # Four slow calls (CDLL, PyDLL, Python thread, native thread); the 1 us call keeps no stack.
        chains = self.chains()
        self.assertEqual(len(chains), 4, chains)
        self.assertEqual(len({c for c, _ in chains}), 4, "four distinct stacks")

    def test_gil_released_call_has_the_python_chain_in_order(self):
        chain = self.chains()[0][0]
        self.assertEqual(self.python_symbols(chain), [
            at("backward_like", "backward_like->api"),
            at("train_step", "train_step->backward_like"),
            at("main", "main->train_step"),
            at("<module>", "module->main"),
        ])
        # Python frames carry the file as module and no address.
        for depth, symbol, module, no_ip in self.frames(chain):
            if no_ip:
                self.assertEqual(module, APP, symbol)

    def test_python_frames_are_merged_where_the_interpreter_ran_them(self):
        frames = self.frames(self.chains()[0][0])
        python = [f[0] for f in frames if f[3]]
        self.assertEqual(python, list(range(python[0], python[0] + 4)), "contiguous")
        self.assertGreater(python[0], 0, "native frames (ctypes, the fake CUPTI) above them")
        below = frames[python[-1] + 1][1] if python[-1] + 1 < len(frames) else ""
        eval_loops = [f for f in frames if f[1].startswith("_PyEval_EvalFrame")]
        if eval_loops:  # the interpreter is symbolized: Python frames sit right above its first eval loop
            self.assertEqual(eval_loops[0][0], python[-1] + 1, frames)
            self.assertTrue(below.startswith("_PyEval_EvalFrame"), below)
            for f in frames[:python[0]]:
                self.assertFalse(f[1].startswith("_PyEval_EvalFrame"), f)

    def test_gil_held_call_has_the_python_chain(self):
        chain = self.chains()[1][0]
        self.assertEqual(self.python_symbols(chain), [
            at("backward_like", "backward_like->api"),
            at("train_step", "train_step->backward_like"),
            at("main", "main->train_step_gil"),
            at("<module>", "module->main"),
        ])

    def test_python_thread(self):
        chains = self.chains()
        main_tid = chains[0][1]
        chain, tid = chains[2]
        self.assertNotEqual(tid, main_tid)
        symbols = self.python_symbols(chain)
        self.assertEqual(symbols[:3], [
            at("backward_like", "backward_like->api"),
            at("train_step", "train_step->backward_like"),
            at("worker", "worker->train_step"),
        ])
        # Then threading's own frames, down to the thread's first one.
        rest = [re.sub(r" at .*", "", s) for s in symbols[3:]]
        qualified = sys.version_info >= (3, 11)  # co_qualname; 3.9/3.10 have co_name only
        self.assertIn("Thread.run" if qualified else "run", rest)
        self.assertEqual(rest[-1], "Thread._bootstrap" if qualified else "_bootstrap")
        for s in symbols[3:]:
            self.assertRegex(s, r" at .*threading\.py:\d+$")

    def test_native_thread_without_python_state_keeps_native_frames_only(self):
        chains = self.chains()
        chain, tid = chains[3]
        self.assertNotEqual(tid, chains[0][1])
        frames = self.frames(chain)
        self.assertGreater(len(frames), 0)
        self.assertEqual(self.python_symbols(chain), [])

    def test_cuda_api_callers_names_the_python_line(self):
        out = subprocess.run([os.path.join(BUILD, "bin", "gtrace"), "stats", "--report", "cuda_api_callers",
                              "--format", "csv", self.db], capture_output=True, text=True, timeout=60)
        self.assertEqual(out.returncode, 0, out.stderr)
        table = list(csv.reader(io.StringIO(out.stdout.strip())))
        self.assertEqual(table[0], ["Time (%)", "Total Time (ns)", "Num Calls", "Avg (ns)", "Med (ns)", "Max (ns)",
                                    "Name", "Caller", "Python Caller", "Stack"])
        python_callers = sorted(row[8] for row in table[1:])
        expected_api_line = at("backward_like", "backward_like->api")
        self.assertEqual(python_callers, ["", expected_api_line, expected_api_line, expected_api_line])


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: python_frames_test.py BUILD_DIR")
    BUILD = os.path.abspath(sys.argv.pop(1))
    if not (3, 9) <= sys.version_info[:2] <= (3, 13):
        print("SKIP: CPython %d.%d is not one gtrace reads (3.9-3.13)" % sys.version_info[:2])
        sys.exit(77)
    unittest.main()
