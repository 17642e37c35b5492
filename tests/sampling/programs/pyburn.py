"""CPU burner for sampling.python_sampling (--python-sampling): the main thread spends 70 % of its CPU
time in burn_a and 30 % in burn_b, in 10 ms rounds of its own CPU time (time.thread_time), for
TOTAL_MS of CPU time; with "worker" a Python thread also burns WORKER_MS in worker_c first; with
"own-sigprof" the program installs its own SIGPROF handler after 100 ms (gtrace must step back).
Under GTRACE_PYTHON_SAMPLING=true it first waits (sleeping, up to 60 s) until gtrace has taken SIGPROF,
i.e. its drain thread found this interpreter: the work starts on that event, not after a guess at how
long a loaded machine takes to get there (on a busy CI machine the first 100 ms of CPU once went by
before it, and the tests' counts of samples with Python frames came up short).
Prints "done <main thread CPU ms> <own SIGPROF handler calls>".

    python3 pyburn.py TOTAL_MS [worker WORKER_MS] [own-sigprof]
"""
import ctypes
import os
import signal
import sys
import threading
import time


def spin(seconds):
    end = time.thread_time() + seconds
    x = 0
    while True:
        for i in range(200):  # LINE: spin-loop
            x += i * i
        if time.thread_time() >= end:
            return x


def burn_a(seconds):
    end = time.thread_time() + seconds
    x = 0
    while True:
        for i in range(200):  # LINE: burn_a-loop
            x += i * i
        if time.thread_time() >= end:
            return x


def burn_b(seconds):
    end = time.thread_time() + seconds
    x = 0
    while True:
        for i in range(200):  # LINE: burn_b-loop
            x += i ^ 7
        if time.thread_time() >= end:
            return x


def worker_c(seconds):
    spin(seconds)  # LINE: worker_c-call


HANDLER_CALLS = 0


def own_handler(signum, frame):
    global HANDLER_CALLS
    HANDLER_CALLS += 1


def sigprof_handler_installed():
    """Whether SIGPROF has a handler now, read from the kernel (signal.getsignal only knows Python's)."""
    libc = ctypes.CDLL(None, use_errno=True)
    old = (ctypes.c_uint8 * 256)()  # struct sigaction: sa_handler first on Linux x86-64 and aarch64
    if libc.sigaction(signal.SIGPROF, None, old) != 0:
        return False
    return ctypes.c_void_p.from_buffer(old).value not in (None, 0, 1)  # not SIG_DFL / SIG_IGN


def wait_for_python_sampling():
    if os.environ.get("GTRACE_PYTHON_SAMPLING") != "true":
        return
    deadline = time.monotonic() + 60
    while not sigprof_handler_installed():
        if time.monotonic() > deadline:
            print("pyburn: gtrace did not take SIGPROF within 60 s", file=sys.stderr, flush=True)
            return
        time.sleep(0.001)


def main(argv):
    total_ms = int(argv[1])
    args = argv[2:]
    wait_for_python_sampling()
    if "worker" in args:
        worker_ms = int(args[args.index("worker") + 1])
        t = threading.Thread(target=worker_c, args=(worker_ms / 1000.0,), name="py-worker")
        t.start()
        t.join()
    own = "own-sigprof" in args
    start = time.thread_time()
    rounds = max(1, total_ms // 10)
    for r in range(rounds):
        if own and r == 10:
            signal.signal(signal.SIGPROF, own_handler)
        burn_a(0.007)  # LINE: main-calls-a
        burn_b(0.003)  # LINE: main-calls-b
    cpu_ms = int((time.thread_time() - start) * 1000)
    print("done %d %d" % (cpu_ms, HANDLER_CALLS), flush=True)


if __name__ == "__main__":
    main(sys.argv)  # LINE: module-calls-main
