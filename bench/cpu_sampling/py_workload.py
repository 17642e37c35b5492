"""Fixed Python work for bench/cpu_sampling/run_python.sh: UNITS rounds of a small arithmetic loop,
run DEPTH Python frames deep (nested calls), on the main thread. Prints the main thread's CPU time
(user + system: the SIGPROF handler of --python-sampling runs on this thread and is charged to it)
and the process's (adds gtrace's drain thread).

    python3 py_workload.py UNITS DEPTH
"""
import sys
import time


def work(units):
    x = 0
    for u in range(units):
        for i in range(100):
            x += i * u
    return x


def nest(depth, units):
    if depth <= 1:
        return work(units)
    return nest(depth - 1, units)


def main():
    units, depth = int(sys.argv[1]), int(sys.argv[2])
    t0, p0, w0 = time.thread_time_ns(), time.process_time_ns(), time.monotonic_ns()
    nest(depth - 2, units)  # main and <module> are the other two frames
    t1, p1, w1 = time.thread_time_ns(), time.process_time_ns(), time.monotonic_ns()
    print("wall_ns=%d work_cpu_ns=%d process_cpu_ns=%d" % (w1 - w0, t1 - t0, p1 - p0))


if __name__ == "__main__":
    main()
