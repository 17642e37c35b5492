"""mp_workers.py METHOD KIND: four multiprocessing workers x 100 NVTX ranges (issue 14).

METHOD is the start method (fork, spawn, forkserver); KIND is "process" (four Process objects) or
"pool" (a Pool of four, one task each). The parent records one range "parent". Each worker records
100 ranges "work" over about 150 ms -- less than one flush interval -- and ends the way
multiprocessing ends it (os._exit in forked and forkserver workers). A barrier makes the four pool
tasks run in four different workers, so every worker process holds exactly 100 ranges.
Prints "done <exit codes>".
"""
import multiprocessing as mp
import sys
import time

import nvtx

_barrier = None


def _init(barrier):
    global _barrier
    _barrier = barrier


def work(_):
    if _barrier is not None:
        _barrier.wait(timeout=60)
    for _ in range(100):
        nvtx.push_range("work")
        time.sleep(0.0015)
        nvtx.pop_range()
    return 0


def main():
    method, kind = sys.argv[1], sys.argv[2]
    ctx = mp.get_context(method)
    nvtx.push_range("parent")
    nvtx.pop_range()
    if kind == "process":
        procs = [ctx.Process(target=work, args=(i,)) for i in range(4)]
        for p in procs:
            p.start()
        for p in procs:
            p.join()
        codes = [p.exitcode for p in procs]
    else:
        barrier = ctx.Barrier(4)
        with ctx.Pool(4, initializer=_init, initargs=(barrier,)) as pool:
            codes = pool.map(work, range(4), chunksize=1)
            pool.close()
            pool.join()
    print("done", " ".join(str(c) for c in codes), flush=True)


if __name__ == "__main__":
    main()
