"""Post-import hooks, and calls into image libraries as ranges.

Pre- and post-processing is where a program's time goes when it is not the model: decoding
and resizing images happen in libraries whose calls ceiling names without the script being
touched. LIBRARY_CALLS lists, per module, the functions (or Class.method) wrapped when the
module is imported; each call becomes a range "PIL.Image.Image.resize()" in domain "torch",
with the ATen operators it runs nested inside. Python code of the script itself is not
traced (sys.settrace and sys.setprofile slow pure-Python loops 1.5-3x in CPython 3.11):
its time shows as time outside every region.
"""
import functools
import importlib.util
import sys

from . import nvtx

LIBRARY_CALLS = {
    "PIL.Image": ("open", "fromarray", "Image.load", "Image.resize", "Image.convert",
                  "Image.crop", "Image.transpose", "Image.rotate", "Image.filter",
                  "Image.thumbnail", "Image.save", "Image.tobytes"),
    "cv2": ("imread", "imdecode", "imwrite", "imencode", "resize", "cvtColor", "warpAffine",
            "warpPerspective", "GaussianBlur", "copyMakeBorder", "remap"),
}

_hooks = {}  # module name -> callbacks run once it is imported


def _report(what, error):
    sys.stderr.write(f"ceiling --torch: {what}: {type(error).__name__}: {error}\n")


def _run_hooks(name, module):
    for callback in _hooks.pop(name, ()):
        try:
            callback(module)
        except Exception as e:  # the program must run even when instrumenting fails
            _report(f"could not instrument {name}", e)


class _Finder:
    """A meta path finder that finds nothing itself: for a hooked module it asks the other
    finders, then runs the hooks right after the real loader executed the module."""

    def __init__(self):
        self._busy = set()

    def find_spec(self, name, path=None, target=None):
        if name not in _hooks or name in self._busy:
            return None
        self._busy.add(name)
        try:
            spec = importlib.util.find_spec(name)
        finally:
            self._busy.discard(name)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return None
        execute = spec.loader.exec_module

        def exec_module(module):
            execute(module)
            _run_hooks(name, module)

        spec.loader.exec_module = exec_module  # this spec's own loader instance
        return spec


_finder = _Finder()


def when_imported(name, callback):
    if name in sys.modules:
        callback(sys.modules[name])
        return
    _hooks.setdefault(name, []).append(callback)
    if _finder not in sys.meta_path:
        sys.meta_path.insert(0, _finder)


def _ranged(function, message):
    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        if nvtx.tls.quiet:
            return function(*args, **kwargs)
        nvtx.push(message)
        try:
            return function(*args, **kwargs)
        finally:
            nvtx.pop()
    return wrapper


def wrap_library(module):
    for path in LIBRARY_CALLS.get(module.__name__, ()):
        owner = module
        *parents, attribute = path.split(".")
        for p in parents:
            owner = getattr(owner, p, None)
        function = getattr(owner, attribute, None) if owner is not None else None
        if function is None:
            continue  # another version of the library: nothing to wrap
        setattr(owner, attribute, _ranged(function, f"{module.__name__}.{path}()".encode()))


def install():
    for name in LIBRARY_CALLS:
        when_imported(name, wrap_library)
    when_imported("torch", lambda _torch: importlib.import_module("ceiling_torch.modules").install())
