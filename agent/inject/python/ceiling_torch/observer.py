"""ceiling's op observer (observer.cpp): built once per torch version, then loaded.

A dispatch mode (modules._OpMode) costs each op a trip through Python; the observer, a
RecordFunction callback in C++, costs a fraction of that (docs/benchmarks.md), but it is
C++ against the running torch's headers, so it is built with torch.utils.cpp_extension for
each torch version (about a minute) and kept in ceiling's cache:

    ~/.cache/ceiling/torch-observer/<torch version>-<python>-<source hash>/

Building never happens inside the measured program: `ceiling run --torch` builds after a
run whose torch had none (`python observer.py build`, agent/run/torch_run.cpp), and the
run itself takes its ops through the dispatch mode. CEILING_TORCH_OPS=mode keeps the mode.

    python observer.py build    build for this interpreter's torch (exit 0) or say why not
    python observer.py where    the folder this torch's build is or would be kept in
"""
import hashlib
import importlib.machinery
import importlib.util
import os
import sys

NAME = "ceiling_torch_observer"
SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "observer.cpp")


def folder():
    """Where this torch's build is kept: its version, the interpreter's ABI and the source's
    hash name it (a changed observer.cpp is built again)."""
    import torch
    with open(SOURCE, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()[:12]
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    tag = f"{torch.__version__}-{sys.implementation.cache_tag}-{digest}".replace("+", "_")
    return os.path.join(cache, "ceiling", "torch-observer", tag)


def _library(where):
    suffix = importlib.machinery.EXTENSION_SUFFIXES
    for name in sorted(os.listdir(where)) if os.path.isdir(where) else ():
        if name.startswith(NAME) and any(name.endswith(s) for s in suffix + [".so"]):
            return os.path.join(where, name)
    return None


FAILED = "failed"  # in the folder: why this torch's build failed (not tried again)


def load():
    """The built observer's module, or (None, why not)."""
    where = folder()
    path = _library(where)
    if path is None:
        try:
            with open(os.path.join(where, FAILED)) as f:
                return None, f"its build for this torch failed: {f.read().strip()}"
        except OSError:
            return None, f"not built for this torch yet: ceiling builds it after this run, into {where}"
    try:
        loader = importlib.machinery.ExtensionFileLoader(NAME, path)
        spec = importlib.util.spec_from_file_location(NAME, path, loader=loader)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module, ""
    except (ImportError, OSError) as e:
        return None, f"cannot load {path}: {e}"


def _reason(error):
    """One line of a failed build: the compiler's first error, else the exception's last line."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    for line in lines:
        if "error:" in line:  # path/observer.cpp:18:10: fatal error: ... -> observer.cpp:18:10: ...
            return line.split(" ", 1)[0].rsplit("/", 1)[-1] + (" " + line.split(" ", 1)[1] if " " in line else "")
    return f"{type(error).__name__}: {lines[-1] if lines else ''}"


def build():
    """Builds this torch's observer into folder() unless it is there already, or leaves the
    reason it could not in folder()/failed (so that later runs do not try again) and raises
    with it. Older builds for the same torch and interpreter (an earlier observer.cpp) are
    removed."""
    import shutil

    import torch  # noqa: F401  (cpp_extension needs it imported)
    where = folder()
    if _library(where) is not None:  # the folder's name holds the source's hash: built already
        return where
    prefix = os.path.basename(where).rsplit("-", 1)[0] + "-"
    parent = os.path.dirname(where)
    for old in os.listdir(parent) if os.path.isdir(parent) else ():
        if old.startswith(prefix) and os.path.join(parent, old) != where:
            shutil.rmtree(os.path.join(parent, old), ignore_errors=True)
    os.makedirs(where, exist_ok=True)
    try:
        from torch.utils import cpp_extension
        # -DNDEBUG as libtorch is built: RecordFunction's inline inputs() asserts otherwise.
        cpp_extension.load(NAME, [SOURCE], extra_cflags=["-O2", "-DNDEBUG"], build_directory=where,
                           verbose=False)
        if _library(where) is None:
            raise RuntimeError(f"the build left no library in {where}")
    except Exception as e:
        reason = _reason(e)
        with open(os.path.join(where, FAILED), "w") as f:
            f.write(reason + "\n")
        raise RuntimeError(reason) from e
    return where


def main(argv):
    if len(argv) != 2 or argv[1] not in ("build", "where"):
        sys.stderr.write(__doc__)
        return 2
    try:
        if argv[1] == "where":
            print(folder())
        else:
            print(build())
    except Exception as e:  # one line, which ceiling shows
        sys.stderr.write(f"{_reason(e)}\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
