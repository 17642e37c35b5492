#!/usr/bin/env python3
"""python.api: the Python capture-window API (python/gtrace) over the build's libgtrace.so, on CPU.

    python3 tests/python/api_test.py BUILD_DIR [unittest args]

Each case runs a small Python program with libgtrace.so preloaded (as `gtrace profile` does) and
the in-tree package on PYTHONPATH, exports its stream with the build's CLI and checks the exact
NVTX rows and capture-window diagnostics: marks made with gtrace.mark() appear only inside windows.
No CUDA is involved: the windows are the library's own (inject/cupti/capture_window.cc).
"""
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import textwrap
import unittest

SOURCE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = None  # set from argv

NAME_SQL = "coalesce(text, (SELECT value FROM StringIds WHERE id = textId))"


def clean_env():
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("GTRACE_") and k not in (
               "LD_PRELOAD", "NVTX_INJECTION64_PATH", "CUDA_INJECTION64_PATH", "NCCL_PROFILER_PLUGIN")}
    env["PYTHONPATH"] = os.path.join(SOURCE, "python")
    return env


class Run:
    def __init__(self, proc, db):
        self.proc, self.db = proc, db

    def rows(self, sql):
        con = sqlite3.connect(self.db)
        try:
            return ["|".join("NULL" if v is None else str(v) for v in r) for r in con.execute(sql)]
        finally:
            con.close()

    def marks(self):
        """(eventType|name|count) for every NVTX row, by name."""
        return self.rows("SELECT eventType, %s, count(*) FROM NVTX_EVENTS GROUP BY 1, 2 ORDER BY 2" % NAME_SQL)

    def windows(self):
        if not self.rows("SELECT name FROM sqlite_master WHERE name = 'DIAGNOSTIC_EVENT'"):
            return []  # created with the first diagnostic
        return self.rows("SELECT text FROM DIAGNOSTIC_EVENT WHERE text LIKE 'capture window%' ORDER BY timestamp")


class ApiTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="gtrace-pyapi-")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def program(self, body):
        path = os.path.join(self.dir, "prog.py")
        with open(path, "w") as f:
            f.write("import gtrace\n" + textwrap.dedent(body))
        return path

    def traced(self, body, env_extra=None, via_cli=None):
        """Runs the program traced (LD_PRELOAD, or `gtrace profile` with the flags in via_cli) and exports."""
        prog = self.program(body)
        env = clean_env()
        out = os.path.join(self.dir, "run")
        if via_cli is None:
            env["LD_PRELOAD"] = os.path.join(BUILD, "lib", "libgtrace.so")
            env["GTRACE_OUTPUT"] = out
            argv = [sys.executable, prog]
        else:
            argv = [os.path.join(BUILD, "bin", "gtrace"), "profile", "-o", out] + via_cli + ["--", sys.executable, prog]
        env.update(env_extra or {})
        proc = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        db = os.path.join(self.dir, "run.sqlite")
        exp = subprocess.run([os.path.join(BUILD, "bin", "gtrace"), "export", "-o", db, out + ".gtrace"],
                             capture_output=True, text=True, timeout=120)
        self.assertEqual(exp.returncode, 0, exp.stdout + exp.stderr)
        return Run(proc, db)

    def test_start_stop_context_decorator_repeat(self):
        r = self.traced("""
            gtrace.mark("before")
            seen = [gtrace.is_loaded(), gtrace.is_active()]
            seen.append(gtrace.start())
            seen.append(gtrace.is_active())
            for _ in range(3):
                gtrace.mark("in-1")
            seen.append(gtrace.start())   # already open
            seen.append(gtrace.stop())
            seen.append(gtrace.stop())    # already closed
            seen.append(gtrace.is_active())
            gtrace.mark("between")
            with gtrace.capture():
                seen.append(gtrace.is_active())
                gtrace.mark("in-2")
                gtrace.mark("in-2")
            @gtrace.capture()
            def work():
                gtrace.mark("in-3")
            work()
            gtrace.mark("between")
            work()
            gtrace.mark("after")
            print(seen)
            """, {"GTRACE_CAPTURE_RANGE": "cudaProfilerApi", "GTRACE_CAPTURE_RANGE_END": "repeat"})
        self.assertEqual(r.proc.stdout, "[True, False, True, True, False, True, False, False, True]\n")
        self.assertEqual(r.marks(), ["34|in-1|3", "34|in-2|2", "34|in-3|2"])
        self.assertEqual(r.windows(), [
            "capture window %d %s (gtrace.start/stop)" % (i, oc) for i in (1, 2, 3, 4) for oc in ("opened", "closed")])
        # Every mark lies inside a window: none outside [open, close] of its window.
        self.assertEqual(r.rows(
            "SELECT count(*) FROM NVTX_EVENTS n WHERE NOT EXISTS (SELECT 1 FROM DIAGNOSTIC_EVENT o, DIAGNOSTIC_EVENT c "
            "WHERE o.text LIKE 'capture window % opened%' AND c.text = replace(o.text, 'opened', 'closed') "
            "AND n.start BETWEEN o.timestamp AND c.timestamp)"), ["0"])

    def test_end_stop_allows_one_window_and_nested_capture_keeps_it(self):
        r = self.traced("""
            with gtrace.capture():
                gtrace.mark("outer")
                with gtrace.capture():     # opens nothing, so closes nothing
                    gtrace.mark("inner")
                gtrace.mark("outer")
            print(gtrace.start(), gtrace.is_active())   # --capture-range-end=stop: no second window
            gtrace.mark("late")
            """, {"GTRACE_CAPTURE_RANGE": "cudaProfilerApi"})
        self.assertEqual(r.proc.stdout, "False False\n")
        self.assertEqual(r.marks(), ["34|inner|1", "34|outer|2"])
        self.assertEqual(r.windows(), ["capture window 1 opened (gtrace.start/stop)",
                                       "capture window 1 closed (gtrace.start/stop); capture finished"])

    def test_threads_mark_and_step_concurrently(self):
        # ctypes releases the GIL around each call: these threads are in the library at the same time.
        r = self.traced("""
            import threading
            def worker(name):
                for _ in range(200):
                    gtrace.mark(name)
            def stepper(out):
                out.append(max(gtrace.step() for _ in range(100)))
            gtrace.start()
            steps = []
            threads = [threading.Thread(target=worker, args=("t%d" % i,)) for i in range(4)]
            threads += [threading.Thread(target=stepper, args=(steps,)) for _ in range(2)]
            for t in threads: t.start()
            for t in threads: t.join()
            gtrace.stop()
            threads = [threading.Thread(target=worker, args=("late",)) for _ in range(2)]
            for t in threads: t.start()
            for t in threads: t.join()
            print(max(steps), gtrace.step())
            """, {"GTRACE_CAPTURE_RANGE": "cudaProfilerApi"})
        self.assertEqual(r.proc.stdout, "200 201\n")  # every step counted once
        self.assertEqual(r.marks(), ["34|t0|200", "34|t1|200", "34|t2|200", "34|t3|200"])
        self.assertEqual(r.rows("SELECT count(DISTINCT globalTid) FROM NVTX_EVENTS"), ["4"])

    def test_whole_run_without_capture_range(self):
        r = self.traced("""
            print(gtrace.is_active(), gtrace.start(), gtrace.stop(), gtrace.is_active())
            gtrace.mark("a")
            gtrace.mark("a")
            """)
        self.assertEqual(r.proc.stdout, "True False False True\n")
        self.assertEqual(r.marks(), ["34|a|2"])
        self.assertEqual(r.windows(), [])  # a plain whole-run trace logs no window events

    def step_program(self, steps):
        return """
            active = []
            numbers = []
            for i in range(%d):
                gtrace.mark("step%%d" %% i)
                active.append(int(gtrace.is_active()))
                numbers.append(gtrace.step())
            gtrace.mark("end")
            print("".join(map(str, active)), numbers)
            """ % steps

    def test_steps_window_by_variable(self):
        r = self.traced(self.step_program(7), {"GTRACE_CAPTURE_RANGE": "steps:2-4"})
        self.assertEqual(r.proc.stdout, "0011100 [1, 2, 3, 4, 5, 6, 7]\n")
        self.assertEqual(r.marks(), ["34|step2|1", "34|step3|1", "34|step4|1"])
        self.assertEqual(r.windows(), ["capture window 1 opened (--capture-range=steps)",
                                       "capture window 1 closed (--capture-range=steps); capture finished"])

    def test_steps_from_zero_single_step(self):
        r = self.traced(self.step_program(3), {"GTRACE_CAPTURE_RANGE": "steps:0-0"})
        self.assertEqual(r.proc.stdout, "100 [1, 2, 3]\n")
        self.assertEqual(r.marks(), ["34|step0|1"])

    def test_steps_window_past_the_last_step_stays_open(self):
        r = self.traced(self.step_program(4), {"GTRACE_CAPTURE_RANGE": "steps:3-10"})
        self.assertEqual(r.proc.stdout, "0001 [1, 2, 3, 4]\n")
        self.assertEqual(r.marks(), ["34|end|1", "34|step3|1"])

    def test_steps_flag_of_gtrace_profile(self):
        r = self.traced(self.step_program(5), via_cli=["--capture-range=steps:1-2"])
        self.assertEqual(r.proc.stdout, "01100 [1, 2, 3, 4, 5]\n")
        self.assertEqual(r.marks(), ["34|step1|1", "34|step2|1"])

    def test_bad_steps_flag_is_a_usage_error(self):
        for bad in ("steps:3-1", "steps:2", "steps:a-b", "steps:-4"):
            proc = subprocess.run([os.path.join(BUILD, "bin", "gtrace"), "profile", "--capture-range=" + bad, "--",
                                   "true"], capture_output=True, text=True, env=clean_env(), timeout=60)
            self.assertNotEqual(proc.returncode, 0, bad)
            self.assertIn("--capture-range: '%s' (expected steps:A-B, A <= B)" % bad, proc.stderr)

    def test_bad_steps_variable_warns_and_records_whole_run(self):
        r = self.traced(self.step_program(2), {"GTRACE_CAPTURE_RANGE": "steps:5-1"})
        self.assertEqual(r.proc.stdout, "11 [1, 2]\n")
        self.assertEqual(r.marks(), ["34|end|1", "34|step0|1", "34|step1|1"])
        self.assertIn("gtrace: GTRACE_CAPTURE_RANGE: 'steps:5-1': expected steps:A-B with step numbers A <= B; "
                      "capturing the whole run", r.proc.stderr)

    def test_nvtx_package_ranges_only_inside_window(self):
        probe = subprocess.run([sys.executable, "-c", "import nvtx"], capture_output=True)
        if probe.returncode != 0:
            self.skipTest("the nvtx package is not installed (scripts/setup.sh installs it)")
        # The domains are created outside the window: the nvtx package asks nvtxDomainIsEnabled once
        # then, and must be told yes (inject/nvtx/nvtx_payload_hooks.cc).
        r = self.traced("""
            import nvtx
            nvtx.push_range("out"); nvtx.pop_range()
            with gtrace.capture():
                with nvtx.annotate("in"):
                    nvtx.mark("m")
                with nvtx.annotate("in"):
                    pass
            nvtx.push_range("out"); nvtx.pop_range()
            """, {"GTRACE_CAPTURE_RANGE": "cudaProfilerApi"})
        self.assertEqual(r.marks(), ["59|in|2", "34|m|1"])

    def test_marks_of_forked_children_go_to_their_own_streams(self):
        # The entry points check the installed session without getpid() (inject/api_entry.cc); a fork
        # must still be noticed: each child starts its own stream, the parent's keeps only its marks.
        prog = self.program("""
            import os
            gtrace.mark("parent-before")
            pids = []
            for n in range(2):
                pid = os.fork()
                if pid == 0:
                    for i in range(3):
                        gtrace.mark("child%d" % n)
                    os._exit(0)
                pids.append(pid)
            for pid in pids:
                os.waitpid(pid, 0)
            gtrace.mark("parent-after")
            print("ok")
            """)
        env = clean_env()
        env["LD_PRELOAD"] = os.path.join(BUILD, "lib", "libgtrace.so")
        env["GTRACE_OUTPUT"] = os.path.join(self.dir, "run-%p")
        proc = subprocess.run([sys.executable, prog], env=env, capture_output=True, text=True, timeout=120)
        self.assertEqual((proc.returncode, proc.stdout), (0, "ok\n"), proc.stderr)
        streams = sorted(f for f in os.listdir(self.dir) if f.endswith(".gtrace"))
        self.assertEqual(len(streams), 3, streams)
        got = []
        for f in streams:
            db = os.path.join(self.dir, f + ".sqlite")
            exp = subprocess.run([os.path.join(BUILD, "bin", "gtrace"), "export", "-o", db, os.path.join(self.dir, f)],
                                 capture_output=True, text=True, timeout=120)
            self.assertEqual(exp.returncode, 0, exp.stdout + exp.stderr)
            got.append(";".join(Run(proc, db).marks()))
        self.assertEqual(sorted(got), ["34|child0|3", "34|child1|3", "34|parent-after|1;34|parent-before|1"])

    def test_noop_without_library(self):
        prog = self.program("""
            import logging
            logging.basicConfig(level=logging.INFO, format="%(message)s")
            with gtrace.capture():
                gtrace.mark("x")
            @gtrace.capture()
            def f():
                return 7
            print(gtrace.is_loaded(), gtrace.start(), gtrace.stop(), gtrace.is_active(), gtrace.step(), f())
            """)
        proc = subprocess.run([sys.executable, prog], env=clean_env(), capture_output=True, text=True, timeout=60)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(proc.stdout, "False False False False -1 7\n")
        self.assertEqual(proc.stderr.splitlines(), [
            "gtrace: libgtrace.so is not loaded in this process (run under `gtrace profile`); "
            "gtrace.start/stop/mark/step do nothing"])
        self.assertEqual(os.listdir(self.dir), ["prog.py"])  # no stream written

    def test_disabled_library_is_a_noop(self):
        prog = self.program("""
            print(gtrace.is_loaded(), gtrace.start(), gtrace.is_active(), gtrace.step())
            gtrace.mark("x")
            """)
        env = clean_env()
        env.update({"LD_PRELOAD": os.path.join(BUILD, "lib", "libgtrace.so"), "GTRACE_DISABLE": "1",
                    "GTRACE_OUTPUT": os.path.join(self.dir, "run")})
        proc = subprocess.run([sys.executable, prog], env=env, capture_output=True, text=True, timeout=60)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(proc.stdout, "True False False -1\n")
        self.assertEqual(proc.stderr, "")
        self.assertEqual(os.listdir(self.dir), ["prog.py"])


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: api_test.py BUILD_DIR [unittest args]")
    BUILD = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
