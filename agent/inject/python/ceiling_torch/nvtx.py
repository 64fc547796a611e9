"""NVTX ranges through libceiling_torch_nvtx.so: push, pop, mark in domain "torch".

The library's NVTX copy loads ceiling's injection library from NVTX_INJECTION64_PATH, so
these ranges land in the run's capture like any program's. The library is imported as a
CPython extension module where it was built as one (a push and a pop from Python 0.15 us on
one VM), and called through ctypes otherwise (0.79 us there); `via` says which. Without the library (a ceiling built
without NVTX headers) every call is a no-op and `available` says why.
"""
import ctypes
import importlib.machinery
import importlib.util
import os
import threading

DOMAIN = b"torch"

available = False
reason = ""
via = ""
native = None  # the extension module where it loaded: its dispatch is the op mode's body


def _noop(*_args):
    return None


class _Local(threading.local):
    quiet = False  # inside an uninstrumented model call: open no range


tls = _Local()
push = _noop
pop = _noop
mark = _noop


def _as_module(path):
    """The library as an extension module, or None where it is not one (built without
    Python's headers) or this interpreter cannot load it."""
    name = "libceiling_torch_nvtx"
    try:
        loader = importlib.machinery.ExtensionFileLoader(name, path)
        spec = importlib.util.spec_from_file_location(name, path, loader=loader)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    except (ImportError, OSError):
        return None


def _as_ctypes(path):
    lib = ctypes.CDLL(path)
    lib.ceiling_torch_init.argtypes = [ctypes.c_char_p]
    lib.ceiling_torch_push.argtypes = [ctypes.c_char_p]
    lib.ceiling_torch_mark.argtypes = [ctypes.c_char_p]
    lib.ceiling_torch_pop.argtypes = []
    for f in (lib.ceiling_torch_init, lib.ceiling_torch_push, lib.ceiling_torch_pop, lib.ceiling_torch_mark):
        f.restype = None
    # Bound C functions called directly: one ctypes conversion, no Python frame in between.
    return lib.ceiling_torch_init, lib.ceiling_torch_push, lib.ceiling_torch_pop, lib.ceiling_torch_mark


def _load():
    global available, reason, via, native, push, pop, mark
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    path = os.environ.get("CEILING_TORCH_NVTX_LIB") or os.path.join(here, "libceiling_torch_nvtx.so")
    module = _as_module(path)
    if module is not None:
        init, push, pop, mark = module.init, module.push, module.pop, module.mark
        via = "extension module"
        native = module
    else:
        try:
            init, push, pop, mark = _as_ctypes(path)
        except OSError as e:
            reason = f"cannot load {path}: {e}"
            return
        via = "ctypes"
    init(DOMAIN)
    available = True


_load()
