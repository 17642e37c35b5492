"""Known Python call chains into the fake CUPTI (tests/fakes, a test double), for
--python-backtrace=cuda (tests/callstack/python_frames_test.py reads the `# LINE:` markers).

    python3 pyframes_app.py LIBGT_FAKE_CUPTI_SO

main -> train_step -> backward_like -> cudaMemcpy (20 ms), once through ctypes.CDLL (the GIL is
released around the call, as PyTorch does in .cpu()/.to()) and once through ctypes.PyDLL (the GIL
is held); then the same chain from a Python thread; then a cudaMemcpy from a native thread that has
no Python state; then a 1 us cudaMemcpy (under the threshold: no stack).
"""
import ctypes
import sys
import threading

MEMCPY = 31  # CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020
SLOW_NS = 20_000_000

fake = ctypes.CDLL(sys.argv[1])  # releases the GIL around each call
fake_gil = ctypes.PyDLL(sys.argv[1])  # keeps the GIL
for lib in (fake, fake_gil):
    for fn in (lib.fake_Api, lib.fake_ApiOnNewThread):
        fn.argtypes = [ctypes.c_int, ctypes.c_uint32, ctypes.c_uint64]
        fn.restype = ctypes.c_uint32


def backward_like(lib):
    lib.fake_Api(0, MEMCPY, SLOW_NS)  # LINE: backward_like->api


def train_step(lib):
    backward_like(lib)  # LINE: train_step->backward_like


def worker():
    train_step(fake)  # LINE: worker->train_step


def main():
    if fake.fake_cuInit() != 1:
        sys.exit("fake_cuInit failed")
    train_step(fake)  # LINE: main->train_step
    train_step(fake_gil)  # LINE: main->train_step_gil
    t = threading.Thread(target=worker, name="py-worker")
    t.start()
    t.join()
    fake.fake_ApiOnNewThread(0, MEMCPY, SLOW_NS)  # LINE: main->native_thread
    fake.fake_Api(0, MEMCPY, 1000)


if __name__ == "__main__":
    main()  # LINE: module->main
