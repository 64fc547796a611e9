"""ceiling's op observer (ceiling_torch/observer.cpp) against its dispatch mode: the same ops
with the same declared work, program by program, in this process. model_zoo.py and
training_checks.py hold the mode's counts to independent ones in process; this holds the
observer, which `ceiling run --torch` uses where it is built, to the mode.

Each case runs once under the mode (its ranges recorded by range_tree's Recorder standing in
for nvtx.push) and once under the observer (its C++ ranges kept by its test log); the op
ranges' messages (op, class, ops, bytes, working set, written, precision) must be the same,
as many of each. Where the mode changes what it sees, a case compares less, and says so:

- the mode's presence changes what some programs run: with autograd recording, gradients
  and TransformerEncoderLayer's residuals are added with `add` where the program run bare
  (and the observer) uses `add_`, and the mode sees `detach` calls (no work) the observer
  does not; torch.arange under a mode first allocates with `empty`. Those cases compare
  each class's total ops and bytes, and the matrix products' messages one by one.

Prints "same NAME: N ops" or "DIFFER NAME: ..." per case and "N checks, M failed"; exits 1
on a failure, 2 where the observer is not built for this torch (observer.py build).
Usage: PYTHONPATH=<build>/agent/torch python observer_checks.py"""
import os
import re
import sys
from collections import Counter

import torch
import torch.nn as nn
import torch.nn.functional as F

from range_tree import Recorder  # beside this script

WORK = re.compile(r"^(\S+) \[([^\]]*)\](?: \{ops=(\d+) bytes=(\d+))?")


def cases():
    """(name, call, exact): exact False where the mode changes what it sees (a backward)."""
    import torchvision
    torch.manual_seed(0)
    layers = []
    for _ in range(4):
        layers += [nn.Linear(64, 64), nn.ReLU()]
    mlp, x = nn.Sequential(*layers), torch.randn(8, 64)
    optimizer = torch.optim.AdamW(mlp.parameters())

    def training_step():
        optimizer.zero_grad()
        mlp(x).square().mean().backward()
        optimizer.step()

    def no_grad(fn):
        def run():
            with torch.no_grad():
                fn()
        return run

    def inference(fn):
        def run():
            with torch.inference_mode():
                fn()
        return run

    image = torch.randn(1, 3, 224, 224)
    encoder = nn.TransformerEncoderLayer(256, 8, batch_first=True).eval()
    tokens = torch.randn(2, 16, 256)
    all_cases = [
        ("MLP forward, no_grad", no_grad(lambda: mlp(x)), True),
        ("MLP forward, inference_mode", inference(lambda: mlp(x)), True),
        ("MLP training step (AdamW)", training_step, False),
        ("TransformerEncoderLayer forward (eval, fused path)", no_grad(lambda: encoder(tokens)), True),
        ("TransformerEncoderLayer forward with grad", lambda: encoder(tokens), False),
        ("cat, index, interpolate outside any module", no_grad(lambda: F.interpolate(
            torch.cat([image, image])[:, 1:], scale_factor=0.5, mode="bilinear")), True),
    ]
    for name in ("mobilenet_v2", "resnet18", "efficientnet_b0", "vit_b_16"):
        model = getattr(torchvision.models, name)().eval()
        all_cases.append((f"{name} forward", no_grad(lambda m=model: m(image)), True))
    if hasattr(F, "scaled_dot_product_attention"):
        from model_zoo import Block
        block = Block().eval()
        prompt, token = torch.randn(1, 64, block.d), torch.randn(1, 1, block.d)
        all_cases.append(("decoder block prefill and KV-cache decode",
                          no_grad(lambda: (block(prompt, 0), block(token, 64))), False))
        q = torch.randn(1, 4, 32, 16, requires_grad=True)
        all_cases.append(("causal SDPA forward and backward", lambda: F.scaled_dot_product_attention(
            q, q, q, is_causal=True).sum().backward(), False))
    return all_cases


def fresh_roots(modules):
    """Every model's next call is its first (instrumented) again."""
    modules._roots.clear()
    modules._labels.clear()


def op_messages(messages):
    return Counter(m for m in messages if " [" in m)


def under_mode(modules, nvtx, run):
    recorder = Recorder()
    seen = []
    nvtx.push = lambda m: (seen.append(m.decode()), recorder.push(m))
    nvtx.pop = recorder.pop
    observer, modules._observer = modules._observer, None
    fresh_roots(modules)
    try:
        with modules._mode:
            run()
    finally:
        modules._observer = observer
    return op_messages(seen)


def under_observer(modules, run):
    observer = modules._observer
    fresh_roots(modules)
    observer.set_logging(True)
    observer.quiet(False)
    try:
        run()
    finally:
        observer.quiet(True)
        observer.set_logging(False)
    return op_messages(observer.take_log())


def by_class(counter):
    """Each class's (ops, bytes) in all, and the matrix products' messages."""
    totals, products = Counter(), Counter()
    for message, n in counter.items():
        m = WORK.match(message)
        if not m or m.group(1) in ("aten.detach", "aten.detach_"):
            continue
        cls = m.group(2)
        if m.group(3):
            totals[cls + " ops"] += n * int(m.group(3))
            totals[cls + " bytes"] += n * int(m.group(4))
        if cls in ("linear", "matmul") or cls.startswith(("conv", "attention")):
            products[message] += n
    return totals, products


def main():
    from ceiling_torch import modules, nvtx
    torch.set_num_threads(1)
    if torch.nn.Module.__call__ is not modules._call:
        os.environ.pop("CEILING_TORCH_OPS", None)
        modules.torch.nn.Module.__call__ = modules._call
        why = modules._start_observer()
        if why:
            print(f"the observer is not built for torch {torch.__version__}: {why}")
            return 2
    modules._thread.state.mode_on = True  # neither path enters the mode for good
    modules._observer.attach()
    modules._observer.quiet(True)
    nvtx.mark = lambda _m: None
    checked = failed = 0
    for name, run, exact in cases():
        run()  # lazy initialisations (AdamW's state, the fused path's checks) in neither count
        mode, observed = under_mode(modules, nvtx, run), under_observer(modules, run)
        checked += 1
        if exact:
            same = mode == observed and sum(mode.values()) > 0
            only_mode, only_observer = mode - observed, observed - mode
        else:
            (mode_totals, mode_products), (obs_totals, obs_products) = by_class(mode), by_class(observed)
            same = mode_totals == obs_totals and mode_products == obs_products and sum(obs_products.values()) > 0
            only_mode = (mode_totals - obs_totals) + (mode_products - obs_products)
            only_observer = (obs_totals - mode_totals) + (obs_products - mode_products)
        if same:
            print(f"same   {name}: {sum(observed.values())} ops" + ("" if exact else
                  " (each class's work and the products: the mode changes the calls)"))
            continue
        failed += 1
        print(f"DIFFER {name}: the mode {sum(mode.values())} ops, the observer {sum(observed.values())}")
        for what, c in (("only the mode", only_mode), ("only the observer", only_observer)):
            for k, n in sorted(c.items())[:8]:
                print(f"         {what}: {n} x {k}")
    print(f"torch {torch.__version__}: {checked} checks, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
