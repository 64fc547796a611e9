"""What an op range costs, measured from inside the model's own calls: a model of many small
ops (16 x Linear(64, 64) + ReLU, batch 1: 48 ATen ops a call) or MobileNetV2 (batch 1),
one intra-op thread, called CALLS times, each call timed by itself.

    python3 op_cost.py [--model mlp|mobilenet_v2] [--calls N] [--profiler]

Prints one JSON line: the torch version, ops per call (counted by a dispatch mode before
timing), the median time of even and of odd calls, and with --profiler how long the
profiler's stop took (it turns what it recorded into events: a cost no call time shows). Under `ceiling run --torch` even calls
are instrumented and odd ones run bare (modules.py alternates them), so (even - odd) / ops is
ceiling's cost per op range in the same run; alone, both are bare; with --profiler every call
runs under torch.profiler with record_shapes=True. scripts/bench-torch compares the three."""
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
        for _ in range(a.calls):
            t = time.perf_counter()
            model(x)
            times.append(time.perf_counter() - t)
        stop_s = None
        if profiler is not None:
            t = time.perf_counter()
            profiler.__exit__(None, None, None)
            stop_s = time.perf_counter() - t
    # The first two calls warm caches (and ceiling's per-shape messages) up.
    even, odd = times[2::2], times[3::2]
    print(json.dumps({"torch": torch.__version__.split("+")[0], "model": a.model, "ops": ops,
                      "even_s": statistics.median(even), "odd_s": statistics.median(odd),
                      "profiler_stop_s": stop_s}))


if __name__ == "__main__":
    main()
