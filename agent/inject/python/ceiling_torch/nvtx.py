"""NVTX ranges through libceiling_torch_nvtx.so (ctypes): push, pop, mark in domain "torch".

The library's NVTX copy loads ceiling's injection library from NVTX_INJECTION64_PATH, so
these ranges land in the run's capture like any program's. Without the library (a ceiling
built without NVTX headers) every call is a no-op and `available` says why.
"""
import ctypes
import os
import threading

DOMAIN = b"torch"

available = False
reason = ""


def _noop(*_args):
    return None


class _Local(threading.local):
    quiet = False  # inside an uninstrumented model call: open no range


tls = _Local()
push = _noop
pop = _noop
mark = _noop


def _load():
    global available, reason, push, pop, mark
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    path = os.environ.get("CEILING_TORCH_NVTX_LIB") or os.path.join(here, "libceiling_torch_nvtx.so")
    try:
        lib = ctypes.CDLL(path)
    except OSError as e:
        reason = f"cannot load {path}: {e}"
        return
    lib.ceiling_torch_init.argtypes = [ctypes.c_char_p]
    lib.ceiling_torch_push.argtypes = [ctypes.c_char_p]
    lib.ceiling_torch_mark.argtypes = [ctypes.c_char_p]
    lib.ceiling_torch_pop.argtypes = []
    for f in (lib.ceiling_torch_init, lib.ceiling_torch_push, lib.ceiling_torch_pop, lib.ceiling_torch_mark):
        f.restype = None
    lib.ceiling_torch_init(DOMAIN)
    # Bound C functions called directly: one ctypes conversion, no Python frame in between.
    push = lib.ceiling_torch_push
    pop = lib.ceiling_torch_pop
    mark = lib.ceiling_torch_mark
    available = True


_load()
