"""What an op range costs, measured from inside the model's own calls: a model of many small
ops (16 x Linear(64, 64) + ReLU, batch 1: 48 ATen ops a call) or MobileNetV2 (batch 1),
one intra-op thread, called CALLS times, each call timed by itself.

    python3 op_cost.py [--model mlp|mobilenet_v2] [--calls N] [--profiler | --profiler-blocks B]

Prints one JSON line: the torch version, ops per call (counted by a dispatch mode before
timing), the median time of even and of odd calls, and with --profiler how long the
profiler's stop took (it turns what it recorded into events: a cost no call time shows). Under `ceiling run --torch` even calls
are instrumented and odd ones run bare (modules.py alternates them), so (even - odd) / ops is
ceiling's cost per op range in the same run; alone, both are bare; with --profiler every call
runs under torch.profiler with record_shapes=True. scripts/bench-torch compares the three.

With --profiler-blocks B the calls run in 2B blocks, every second one under a torch.profiler
session of its own: under `ceiling run --torch` the odd calls of those blocks cost what
torch.profiler adds and nothing of ceiling's, so both costs are read within one process
(profiled_odd_s against odd_s, the plain blocks' odd calls), on a host whose speed changes
between two processes run a minute apart."""
import argparse
import json
import statistics
import time

import torch
from torch.utils._python_dispatch import TorchDispatchMode


def build(name):
    if name == "mlp":
        layers = []
        for _ in range(16):
            layers += [torch.nn.Linear(64, 64), torch.nn.ReLU()]
        return torch.nn.Sequential(*layers).eval(), torch.randn(1, 64)
    import torchvision
    return torchvision.models.mobilenet_v2().eval(), torch.randn(1, 3, 224, 224)


def ops_per_call(model, x):
    count = [0]

    class Count(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            count[0] += 1
            return func(*args, **(kwargs or {}))

    with Count():
        model.forward(x)  # forward: no module call, so not one of the model's timed calls
    return count[0]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="mlp", choices=("mlp", "mobilenet_v2"))
    parser.add_argument("--calls", type=int, default=400)
    parser.add_argument("--profiler", action="store_true")
    parser.add_argument("--profiler-blocks", type=int, default=0)
    a = parser.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(0)
    model, x = build(a.model)
    times = []
    with torch.no_grad():
        ops = ops_per_call(model, x)
        profiler = None
        if a.profiler:
            profiler = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU],
                                              record_shapes=True)
            profiler.__enter__()
        # Per call: (its index among the model's calls, whether torch.profiler ran, seconds).
        blocks = 2 * a.profiler_blocks if a.profiler_blocks else 1
        per_block = a.calls // blocks // 2 * 2  # even: a block starts on an even call
        i = 0
        for b in range(blocks):
            profiled = profiler is not None or b % 2 == 1
            session = None
            if a.profiler_blocks and profiled:
                session = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU],
                                                 record_shapes=True)
                session.__enter__()
            for _ in range(per_block if a.profiler_blocks else a.calls):
                t = time.perf_counter()
                model(x)
                times.append((i, profiled, time.perf_counter() - t))
                i += 1
            if session is not None:
                session.__exit__(None, None, None)
        stop_s = None
        if profiler is not None:
            t = time.perf_counter()
            profiler.__exit__(None, None, None)
            stop_s = time.perf_counter() - t
    # The first two calls warm caches (and ceiling's per-shape messages) up.
    def median(parity, profiled):
        kept = [t for i, p, t in times if i >= 2 and i % 2 == parity and p == profiled]
        return statistics.median(kept) if kept else None
    plain = profiler is None
    print(json.dumps({"torch": torch.__version__.split("+")[0], "model": a.model, "ops": ops,
                      "even_s": median(0, not plain), "odd_s": median(1, not plain),
                      "profiled_odd_s": median(1, True) if a.profiler_blocks else None,
                      "profiler_stop_s": stop_s}))


if __name__ == "__main__":
    main()
