"""A design measurement, not a test: what ceiling's op observer (ceiling_torch/observer.cpp)
costs per op beside its dispatch mode and torch.profiler, in one process (issue: op ranges at
torch.profiler's cost; docs/benchmarks.md quotes it). Ops only: no module ranges.

Rounds alternate bare, the observer, ceiling's mode and torch.profiler (record_shapes=True)
on 16 x (Linear(64, 64) + ReLU), batch 1, one thread: 48 ops a call. The observer must be
built for this torch (python <build>/agent/torch/ceiling_torch/observer.py build).

    PYTHONPATH=<build>/agent/torch python observer_cost.py [--rounds N]

Outside `ceiling run` NVTX ranges are no-ops (a recorded push and pop adds ~0.25 us, timed
alone); observer_checks.py compares which ops the observer and the mode take."""
import argparse
import statistics
import sys
import time

import torch


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=25)
    a = parser.parse_args()
    from ceiling_torch import modules, nvtx, observer
    from torch.profiler import ProfilerActivity, profile

    built, why = observer.load()
    if built is None:
        print(f"no observer: {why}", file=sys.stderr)
        return 2
    built.start(nvtx.native.api, modules._describe_observed)
    built.attach()
    built.quiet(True)
    torch.set_num_threads(1)
    layers = []
    for _ in range(16):
        layers += [torch.nn.Linear(64, 64), torch.nn.ReLU()]
    model, x = torch.nn.Sequential(*layers).eval(), torch.randn(1, 64)

    def block(calls=100):
        start = time.perf_counter()
        for _ in range(calls):
            model(x)
        return (time.perf_counter() - start) / calls / 48 * 1e6

    def observed():
        built.quiet(False)
        try:
            return block()
        finally:
            built.quiet(True)

    def mode():
        with modules._mode:
            return block()

    def profiled():
        with profile(activities=[ProfilerActivity.CPU], record_shapes=True):
            return block()

    variants = {"bare": block, "observer": observed, "ceiling's mode": mode, "torch.profiler": profiled}
    with torch.no_grad():
        before = built.stats()["calls"]
        observed()
        print(f"ops observed per call: {(built.stats()['calls'] - before) / 100:.1f} (48 expected)")
        results = {k: [] for k in variants}
        for _ in range(a.rounds):
            for k, f in variants.items():
                results[k].append(f())
    bare = results["bare"]
    print(f"torch {torch.__version__}, {a.rounds} rounds of 100 calls; per op, the median of each "
          "round's difference from its bare block:")
    for k, v in results.items():
        d = sorted(x - b for x, b in zip(v, bare))
        print(f"  {k:15s} {statistics.median(v):6.2f} us, +{statistics.median(d):5.2f} "
              f"(quartiles {d[len(d) // 4]:5.2f} to {d[3 * len(d) // 4]:5.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
