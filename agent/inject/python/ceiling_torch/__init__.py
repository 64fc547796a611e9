"""ceiling's PyTorch instrumentation, loaded by sitecustomize.py under `ceiling run --torch`.

Every ATen operator becomes an NVTX range declaring its work (formulas.py), nested under the
nn.Module whose forward called it (modules.py); calls into image and array libraries become
ranges too (calls.py). Nothing is imported from torch until the program imports it.
"""
