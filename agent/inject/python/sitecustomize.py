"""Loaded by Python at start-up under `ceiling run --torch`, which puts this folder first on
PYTHONPATH: installs ceiling's PyTorch instrumentation (ceiling_torch/), which waits for the
program to import torch, then runs the sitecustomize this one hides (Debian has one)."""
import os
import sys


def _ceiling_torch():
    here = os.path.dirname(os.path.abspath(__file__))
    # Only under `ceiling run`: elsewhere NVTX records nothing and the instrumentation would
    # only slow the program down.
    if os.environ.get("CEILING_NVTX_DIR"):
        try:
            from ceiling_torch import calls
            calls.install()
        except Exception as e:  # the program runs regardless
            sys.stderr.write(f"ceiling --torch: instrumentation not installed: {e}\n")
    import importlib.machinery
    import importlib.util
    others = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", others)
    if spec is not None and spec.loader is not None:
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)


_ceiling_torch()
del _ceiling_torch
