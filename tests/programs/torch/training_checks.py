"""Checks that a training step is whole in the model: a Linear+ReLU MLP trained with AdamW,
its forward, backward and optimizer step each a model range with every op counted.

Without arguments it runs the instrumentation in this process (ceiling_torch's ranges
recorded instead of sent to NVTX) and compares, per step, against counts made by hand:

- the optimizer step is a top-level range "AdamW.step (model step)" (torch 1.13: through
  Optimizer._hook_for_profile; 2.x: the global step hooks), its ops Adam's 14 per parameter
  element (with decoupled weight decay) plus one per parameter tensor (its step count), for
  each path this torch runs: the default, foreach=True and fused=True (a SKIP line names the
  torch version where a path is not there, and the default path is still checked);
- the fused path ran aten._fused_adamw_ and the foreach path aten._foreach_* ops: an
  expected op not seen fails;
- no range is torch's own profiler marker (Optimizer.step#AdamW.step);
- the forward's matrix products (and bias adds) and the backward's equal the layers' by
  hand, so forward + backward products are 3x the forward's, less the first layer's input
  gradient (its input needs none).

With --ceiling BINARY it runs the same training under `ceiling run --torch` and checks the
run record: the step, backward and forward are model regions at the top level with the
same work per call. Exits 1 on any failure, printing what it compared.
Usage: PYTHONPATH=<build>/agent/torch python3 training_checks.py [--ceiling BINARY]"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

import torch
import torch.nn.functional as F

from range_tree import Recorder  # beside this script

LAYERS = [(64, 256), (256, 256), (256, 10)]  # (in, out) of each Linear, ReLU between
BATCH = 32
STEPS = 5
# Adam per parameter element (formulas_training.ADAM_OPS, counted here by hand from torch's
# update): decoupled decay p *= 1 - lr * wd (1); m = lerp(m, g, 1 - b1) (3);
# v = b2 * v + (1 - b2) * g * g (4); denominator sqrt(v) / sqrt(1 - b2^t) + eps (3);
# p -= lr / (1 - b1^t) * m / denominator (3).
ADAMW_OPS_PER_ELEMENT = 1 + 3 + 4 + 3 + 3

failures = []
checked = 0


def expect(what, got, want):
    global checked
    checked += 1
    status = "ok  " if got == want else "FAIL"
    print(f"{status} {what}: {got}, by hand {want}")
    if got != want:
        failures.append(what)


def hand_counts():
    """Per training step: the parameters' elements and tensors, the forward's products (with
    its bias adds), the backward's (each layer's weight gradient, and the input gradient of
    every layer but the first)."""
    elements = sum(i * o + o for i, o in LAYERS)
    tensors = 2 * len(LAYERS)
    products = [2 * BATCH * i * o for i, o in LAYERS]
    forward = sum(products) + sum(BATCH * o for _, o in LAYERS)
    backward = sum(products) + sum(products[1:])
    return elements, tensors, forward, backward


def make_model():
    torch.manual_seed(0)
    layers = []
    for n, (i, o) in enumerate(LAYERS):
        layers += [torch.nn.Linear(i, o)] + ([torch.nn.ReLU()] if n + 1 < len(LAYERS) else [])
    return torch.nn.Sequential(*layers)


def train(model, optimizer, steps):
    x, y = torch.randn(BATCH, LAYERS[0][0]), torch.randint(0, LAYERS[-1][1], (BATCH,))
    for _ in range(steps):
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()


def optimizer_paths():
    """(name, model, optimizer) of each AdamW path this torch has on CPU, each with a model
    of its own; a SKIP line for the others."""
    model = make_model()
    paths = [("default", model, torch.optim.AdamW(model.parameters()))]
    for flag in ("foreach", "fused"):
        model = make_model()
        try:
            paths.append((f"{flag}=True", model, torch.optim.AdamW(model.parameters(), **{flag: True})))
        except (TypeError, RuntimeError, ValueError) as e:
            print(f"SKIP AdamW({flag}=True): torch {torch.__version__} has no such CPU path "
                  f"({type(e).__name__}: {e}); the default path's step is checked instead")
    return paths


# --- in this process: the instrumentation's ranges, recorded --------------------------------

OP_RANGE = re.compile(r"^(\S+) \[(.+)\] \{ops=(\d+) ")


def op_work(name):
    """(op, class, ops) of an op range's name, ops None without a formula."""
    m = OP_RANGE.match(name)
    if m:
        return m.group(1), m.group(2), int(m.group(3))
    if name.endswith(" [no formula]"):
        return name[: -len(" [no formula]")], "no formula", None
    return None


def ops_under(node, classes=None):
    """The declared ops of every op range under node (of these classes), and the ops seen
    without a formula."""
    total, unformulated = 0, []
    for child in node.children:
        w = op_work(child.name)
        if w is not None:
            if w[2] is None:
                unformulated.append(w[0])
            elif classes is None or w[1] in classes:
                total += w[2]
        sub, missing = ops_under(child, classes)
        total += sub
        unformulated += missing
    return total, unformulated


def names_under(node):
    for child in node.children:
        yield child.name
        yield from names_under(child)


def check_in_process():
    from ceiling_torch import modules, nvtx
    recorder = Recorder()
    nvtx.push, nvtx.pop, nvtx.mark = recorder.push, recorder.pop, lambda _m: None
    if torch.nn.Module.__call__ is not modules._call:  # not already installed by sitecustomize
        # The dispatch mode, whose ranges go through nvtx.push (the recorder); the op
        # observer's go from C++. observer_checks.py holds the observer to the mode's ops.
        os.environ["CEILING_TORCH_OPS"] = "mode"
        modules.install()
    elements, tensors, forward, backward = hand_counts()
    print(f"torch {torch.__version__}: MLP {LAYERS}, batch {BATCH}, AdamW, {STEPS} steps per path; "
          f"{elements} parameter elements in {tensors} tensors")
    for path, model, optimizer in optimizer_paths():
        recorder.root.children.clear()
        train(model, optimizer, STEPS)
        check_path(path, recorder.root, elements, tensors, forward, backward)
    check_paths_seen()
    recorder.root.children.clear()
    check_compiled(recorder.root, elements, tensors)


def check_compiled(root, elements, tensors):
    """torch.compile'd model: it must run compiled (Dynamo compiles no frame while a dispatch
    mode is on, so the instrumentation steps aside), its forward and backward each one range
    without a formula (their work unknown, said), the optimizer's step still counted."""
    if not hasattr(torch, "compile"):
        print(f"SKIP torch.compile: torch {torch.__version__} has none")
        return
    from ceiling_torch import modules
    from torch._dynamo.utils import counters
    model = make_model()
    compiled = torch.compile(model)
    try:
        train(compiled, torch.optim.AdamW(model.parameters()), 2)
    except Exception as e:  # inductor needs a C compiler: a host without one cannot compile
        print(f"SKIP torch.compile: torch {torch.__version__} could not compile here "
              f"({type(e).__name__}: {str(e)[:200]})")
        return
    expect("[compiled] frames Dynamo compiled (it ran compiled, not eagerly)", counters["frames"]["ok"] > 0, True)
    tops = root.children
    calls = [n for n in tops if re.fullmatch(r"Sequential(#\d+)? \(model\)", n.name)]
    backwards = [n for n in tops if n.name == "backward (model step)"]
    steps = [n for n in tops if n.name == "AdamW.step (model step)"]
    expect("[compiled] each forward's ranges", [[c.name for c in n.children] for n in calls],
           [[modules.COMPILED.decode()]] * 2)
    expect("[compiled] each backward's ranges", [[c.name for c in n.children] for n in backwards],
           [[modules.COMPILED_BACKWARD.decode()]] * 2)
    expect("[compiled] each step's ops (not compiled: counted)", [ops_under(s)[0] for s in steps],
           [ADAMW_OPS_PER_ELEMENT * elements + tensors] * 2)


# The ops each explicit path must run (an expected fast path not taken fails).
EXPECTED_OPS = {"foreach=True": "aten._foreach_", "fused=True": "aten._fused_adamw_"}
seen_ops = {}


def check_path(path, root, elements, tensors, forward, backward):
    """One optimizer path's ranges against the hand counts, each step's in one line."""
    tops = root.children
    steps = [n for n in tops if n.name == "AdamW.step (model step)"]
    expect(f"[{path}] top-level AdamW.step (model step) ranges", len(steps), STEPS)
    expect(f"[{path}] each step's ops (Adam's {ADAMW_OPS_PER_ELEMENT} per element + 1 per tensor)",
           [ops_under(s)[0] for s in steps], [ADAMW_OPS_PER_ELEMENT * elements + tensors] * STEPS)
    expect(f"[{path}] the steps' ops without a formula", [o for s in steps for o in ops_under(s)[1]], [])
    seen_ops[path] = {w[0] for s in steps for n in names_under(s) if (w := op_work(n))}
    markers = [n for n in names_under(root) if "profiler" in n]
    expect(f"[{path}] ranges of torch's profiler markers", markers, [])
    products = ("linear", "matmul")
    backwards = [n for n in tops if n.name == "backward (model step)"]
    expect(f"[{path}] each backward (model step)'s matrix products",
           [ops_under(b, products)[0] for b in backwards], [backward] * STEPS)
    expect(f"[{path}] the backwards' ops without a formula", [o for b in backwards for o in ops_under(b)[1]], [])
    # Instrumented calls only (every second one runs bare); each path's model is the
    # program's n-th Sequential, "Sequential#n (model)".
    calls = [n for n in tops if re.fullmatch(r"Sequential(#\d+)? \(model\)", n.name)]
    expect(f"[{path}] each instrumented forward's (calls 1, 3, 5) matrix products and bias adds",
           [ops_under(c, products)[0] for c in calls], [forward] * ((STEPS + 1) // 2))
    if calls and backwards:
        got = ops_under(calls[0], products)[0]
        print(f"     [{path}] forward + backward products: {(got + ops_under(backwards[0], products)[0]) / got:.3f}"
              f" x the forward's; by hand {(forward + backward) / forward:.3f} (3 x, less the first"
              f" layer's input gradient, {2 * BATCH * LAYERS[0][0] * LAYERS[0][1]} of {forward})")


def check_paths_seen():
    for path, prefix in EXPECTED_OPS.items():
        if path not in seen_ops:
            continue  # skipped above, with the version named
        found = sorted(o for o in seen_ops[path] if o.startswith(prefix))
        expect(f"[{path}] its step ran {prefix}* ops", bool(found), True)
        print(f"     [{path}] step ops: {', '.join(found)}")
    default = seen_ops.get("default", set())
    taken = ("fused" if any("_fused_" in o for o in default) else
             "foreach" if any("_foreach_" in o for o in default) else "single-tensor")
    print(f"     [default] torch {torch.__version__} took the {taken} path on CPU")


# --- under ceiling: the run record ----------------------------------------------------------

def check_record(ceiling):
    elements, tensors, forward, backward = hand_counts()
    with tempfile.TemporaryDirectory() as tmp:
        record = os.path.join(tmp, "rec.json")
        run = subprocess.run([os.path.abspath(ceiling), "run", "--torch", "-q", "-o", record, "--",
                              sys.executable, os.path.abspath(__file__), "--train-only"],
                             capture_output=True, text=True, cwd=tmp)
        if run.returncode != 0:
            print(run.stdout, run.stderr)
            failures.append(f"ceiling run exited {run.returncode}")
            return
        with open(record) as f:
            rec = json.load(f)
    regions = {r["path"]: r for r in rec["regions"]}
    print(f"torch run under {ceiling}: {len(regions)} regions; notes: "
          f"{[n for n in rec.get('notes', []) if n.startswith('torch')]}")
    want = {"torch::AdamW.step (model step)": ADAMW_OPS_PER_ELEMENT * elements + tensors,
            "torch::backward (model step)": None, "torch::Sequential (model)": None}
    for path, ops in want.items():
        r = regions.get(path)
        expect(f"{path} is a top-level model region",
               bool(r) and r["model"] and r["parent"] == "", True)
        if r and ops is not None:
            expect(f"{path} ops per call", round(r["measurement"]["work"]["ops"]), ops)
    expect("instances of the step", regions.get("torch::AdamW.step (model step)", {}).get("instances"),
           STEPS)
    expect("regions of torch's profiler markers", [p for p in regions if "profiler" in p], [])
    for top, per_call in (("torch::backward (model step)/", backward), ("torch::Sequential (model)/", forward)):
        calls = regions.get(top[:-1], {}).get("instances", 0)
        total = sum(r["instances"] * r["measurement"]["work"]["ops"] for p, r in regions.items()
                    if p.startswith(top) and r["labels"].get("op_class") in ("linear", "matmul"))
        expect(f"{top[:-1]} matrix products per call", round(total / max(1, calls)), per_call)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--ceiling", help="check a run of this ceiling binary's record instead")
    parser.add_argument("--train-only", action="store_true", help="(the program run under ceiling)")
    args = parser.parse_args()
    if args.train_only:
        model = make_model()
        train(model, torch.optim.AdamW(model.parameters()), STEPS)
        return 0
    if args.ceiling:
        check_record(args.ceiling)
    else:
        check_in_process()
    print(f"{checked} checks, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
