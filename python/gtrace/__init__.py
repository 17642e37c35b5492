"""gtrace's Python API: capture windows, marks and steps, over the libgtrace.so injected in this process.

    import gtrace

    with gtrace.capture():          # a window: recorded only inside (needs --capture-range=cudaProfilerApi,
        train_one_epoch()           # as cudaProfilerStart/Stop; works without CUDA)

    @gtrace.capture()               # the same, as a decorator
    def evaluate(): ...

    for batch in loader:
        train_step(batch)
        gtrace.step()               # ends a step: --capture-range=steps:10-19 records steps 10..19

    gtrace.mark("checkpoint")       # an NVTX mark (default domain), only inside a window

Run under ``gtrace profile`` (or with LD_PRELOAD=libgtrace.so). Without the library every function
is a harmless no-op (one INFO line on the "gtrace" logger, once): the same script runs unprofiled.
The window is the library's, process-wide: the same one cudaProfilerStart/Stop open and close.
"""
import contextlib
import logging
import threading

from . import _library

__all__ = ["start", "stop", "is_active", "is_loaded", "mark", "step", "capture"]

_log = logging.getLogger("gtrace")
_lock = threading.Lock()
_lib = None
_looked = False


def _api():
    """The bound library, looked up once; None when gtrace is not loaded in this process."""
    global _lib, _looked
    if _looked:
        return _lib
    with _lock:
        if not _looked:
            _lib = _library.find_loaded()
            if _lib is None:
                _log.info("gtrace: libgtrace.so is not loaded in this process (run under `gtrace profile`); "
                          "gtrace.start/stop/mark/step do nothing")
            _looked = True
    return _lib


def is_loaded():
    """True when libgtrace.so is loaded in this process (this API then reaches it)."""
    return _api() is not None


def start():
    """Opens a capture window (as cudaProfilerStart). True when this call opened one.

    Acts only with --capture-range=cudaProfilerApi (GTRACE_CAPTURE_RANGE=cudaProfilerApi), within the
    limits of --capture-range-end (stop: one window; repeat[:N]).
    """
    lib = _api()
    return lib is not None and lib.gtrace_api_start() == 1


def stop():
    """Closes the capture window (as cudaProfilerStop). True when this call closed one."""
    lib = _api()
    return lib is not None and lib.gtrace_api_stop() == 1


def is_active():
    """True while gtrace records in this process (a capture window is open)."""
    lib = _api()
    return lib is not None and lib.gtrace_api_is_active() == 1


def mark(name):
    """An instantaneous NVTX mark `name` in the default domain (exported as eventType 34)."""
    lib = _api()
    if lib is not None:
        lib.gtrace_api_mark(str(name).encode("utf-8", "replace"))


def step():
    """Ends the current step (steps count from 0 when recording starts). Returns the new step's
    number, or -1 without the library. With --capture-range=steps:A-B the window opens when step A
    begins and closes for good when step B ends."""
    lib = _api()
    return -1 if lib is None else int(lib.gtrace_api_step())


class capture(contextlib.ContextDecorator):
    """Context manager and decorator: start() on entry, stop() on exit.

    Closes only a window it opened itself, so nesting and an enclosing window are left alone.
    """

    def __init__(self):
        self._opened = []

    def __enter__(self):
        self._opened.append(start())
        return self

    def __exit__(self, *exc):
        if self._opened.pop():
            stop()
        return False
