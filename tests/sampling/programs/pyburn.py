"""CPU burner for sampling.python_sampling (--python-sampling): the main thread spends 70 % of its CPU
time in burn_a and 30 % in burn_b, in 10 ms rounds of its own CPU time (time.thread_time), for
TOTAL_MS of CPU time; with "worker" a Python thread also burns WORKER_MS in worker_c first; with
"own-sigprof" the program installs its own SIGPROF handler after 100 ms (gtrace must step back).
Prints "done <main thread CPU ms> <own SIGPROF handler calls>".

    python3 pyburn.py TOTAL_MS [worker WORKER_MS] [own-sigprof]
"""
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


def main(argv):
    total_ms = int(argv[1])
    args = argv[2:]
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
