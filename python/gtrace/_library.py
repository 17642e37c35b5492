"""Finds the libgtrace.so that is already loaded in this process (never loads one itself).

gtrace records only when the library was injected at start (``gtrace profile``, LD_PRELOAD,
NVTX_INJECTION64_PATH/CUDA_INJECTION64_PATH). Loading it later from Python would start a session
that misses everything before, so this module only looks for a copy that is loaded already:
  1. the process's global symbols (LD_PRELOAD puts the library there);
  2. the files named by GTRACE_LIBRARY_PATH (set by the preloaded library), NVTX_INJECTION64_PATH
     and CUDA_INJECTION64_PATH, opened with RTLD_NOLOAD (found only when already loaded).
"""
import ctypes
import os

API_VERSION = 1

_ENV_PATHS = ("GTRACE_LIBRARY_PATH", "NVTX_INJECTION64_PATH", "CUDA_INJECTION64_PATH")


def _bind(lib):
    """The library's API functions with their C types, or None when it has none (an older build)."""
    try:
        version = lib.gtrace_api_version
    except AttributeError:
        return None
    version.restype = ctypes.c_int
    version.argtypes = []
    if version() != API_VERSION:
        return None
    for name in ("gtrace_api_start", "gtrace_api_stop", "gtrace_api_is_active"):
        fn = getattr(lib, name)
        fn.restype = ctypes.c_int
        fn.argtypes = []
    lib.gtrace_api_mark.restype = ctypes.c_int
    lib.gtrace_api_mark.argtypes = [ctypes.c_char_p]
    lib.gtrace_api_step.restype = ctypes.c_int64
    lib.gtrace_api_step.argtypes = []
    return lib


def find_loaded():
    """The loaded libgtrace.so as a ctypes.CDLL with its API bound, or None."""
    try:
        lib = _bind(ctypes.CDLL(None))
        if lib is not None:
            return lib
    except OSError:
        pass
    noload = getattr(os, "RTLD_NOLOAD", 4) | getattr(os, "RTLD_NOW", 2)
    for var in _ENV_PATHS:
        path = os.environ.get(var)
        if not path:
            continue
        try:
            lib = _bind(ctypes.CDLL(path, mode=noload))
        except OSError:  # not loaded in this process
            continue
        if lib is not None:
            return lib
    return None
