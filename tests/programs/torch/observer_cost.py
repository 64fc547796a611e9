"""A design measurement, not a test: what an op observer of ceiling's own on torch's
RecordFunction would cost per op, beside ceiling's dispatch mode and torch.profiler, in one
process (issue: op ranges at torch.profiler's cost; docs/benchmarks.md quotes it).

The observer is a prototype, built here with torch.utils.cpp_extension against the running
torch's headers (about a minute): a global RecordFunction callback with the inputs, which
takes each op at the level a TorchDispatchMode sees (the outermost op of each nest whose
operator has no CompositeImplicitAutograd kernel), keys it by its inputs' shapes, dtypes and
ints, and opens an NVTX range named by the key (formulas would then run once per key).
Rounds alternate bare, observer, ceiling's mode and torch.profiler (record_shapes=True) on
16 x (Linear(64, 64) + ReLU), batch 1, one thread: 48 ops a call.

    PYTHONPATH=<build>/agent/torch CEILING_TORCH_NVTX_LIB=<build>/agent/torch/libceiling_torch_nvtx.so \\
        python observer_cost.py [--rounds N] [--nvtx-include DIR] [--compare]

--compare instead runs a few programs (an MLP forward and training step, MobileNetV2, ResNet-18,
a transformer layer, causal attention with its backward) once under a dispatch mode that lists
its ops and once under the observer, and prints where the two saw different ops.

torch 2.x with a C++ compiler and ninja; outside `ceiling run` NVTX ranges are no-ops (a
recorded push and pop adds ~0.25 us, timed alone)."""
import argparse
import statistics
import sys
import time

import torch
from torch.utils.cpp_extension import load_inline

OBSERVER = r'''
#include <torch/extension.h>
#include <ATen/record_function.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <nvtx3/nvToolsExt.h>
#include <cstdio>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace {
nvtxDomainHandle_t domain = nullptr;
thread_local int depth = 0;             // open observed ops on this thread
thread_local std::vector<char> opened;  // per open RecordFunction: whether it opened a range
std::unordered_map<std::string, bool> implicit;  // operator -> CompositeImplicitAutograd kernel
std::mutex implicit_mutex;
at::CallbackHandle handle = 0;
std::atomic<long> observed{0};
bool logging = false;                // keep each observed op's name (--compare)
std::vector<std::string> names_log;
std::mutex log_mutex;

bool is_implicit(const c10::OperatorName& name) {
    const std::string key = name.name + "." + name.overload_name;
    std::lock_guard<std::mutex> lock(implicit_mutex);
    if (auto it = implicit.find(key); it != implicit.end()) return it->second;
    const auto op = c10::Dispatcher::singleton().findOp(name);
    const bool v = op && op->hasKernelForDispatchKey(c10::DispatchKey::CompositeImplicitAutograd);
    implicit.emplace(key, v);
    return v;
}

std::unique_ptr<at::ObserverContext> enter(const at::RecordFunction& fn) {
    bool range = false;
    if (depth == 0) {
        const auto name = fn.operator_name();
        if (name && !is_implicit(*name)) {
            std::size_t h = std::hash<std::string>()(name->name);
            for (const auto& v : fn.inputs()) {
                if (v.isTensor() && v.toTensor().defined()) {
                    for (const auto s : v.toTensor().sizes()) h = h * 31 + static_cast<std::size_t>(s);
                    h = h * 31 + static_cast<std::size_t>(v.toTensor().scalar_type());
                } else if (v.isInt()) {
                    h = h * 31 + static_cast<std::size_t>(v.toInt());
                }
            }
            char message[40];
            std::snprintf(message, sizeof message, "op %zx", h);
            nvtxEventAttributes_t a{};
            a.version = NVTX_VERSION;
            a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
            a.messageType = NVTX_MESSAGE_TYPE_ASCII;
            a.message.ascii = message;
            nvtxDomainRangePushEx(domain, &a);
            range = true;
            ++depth;
            observed.fetch_add(1, std::memory_order_relaxed);
            if (logging) {
                std::lock_guard<std::mutex> lock(log_mutex);
                names_log.push_back(name->name + (name->overload_name.empty() ? ".default" : "." + name->overload_name));
            }
        }
    }
    opened.push_back(range);
    return nullptr;
}

void leave(const at::RecordFunction&, at::ObserverContext*) {
    if (opened.empty()) return;
    const bool range = opened.back();
    opened.pop_back();
    if (range) {
        --depth;
        nvtxDomainRangePop(domain);
    }
}
}  // namespace

void start() {
    if (!domain) domain = nvtxDomainCreateA("torch");
    handle = at::addGlobalCallback(at::RecordFunctionCallback(enter, leave)
                                       .needsInputs(true)
                                       .scopes({at::RecordScope::FUNCTION}));
}
void stop() {
    if (handle) at::removeCallback(handle);
    handle = 0;
}
long count() { return observed.load(); }
void set_logging(bool on) { logging = on; }
std::vector<std::string> take_log() {
    std::lock_guard<std::mutex> lock(log_mutex);
    std::vector<std::string> out;
    out.swap(names_log);
    return out;
}
'''


def cases():
    """Programs whose ops the observer and a dispatch mode should see alike: (name, call)."""
    import torchvision
    F = torch.nn.functional
    layers = []
    for _ in range(4):
        layers += [torch.nn.Linear(64, 64), torch.nn.ReLU()]
    mlp, x = torch.nn.Sequential(*layers), torch.randn(8, 64)
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
    mobilenet, resnet = torchvision.models.mobilenet_v2().eval(), torchvision.models.resnet18().eval()
    encoder = torch.nn.TransformerEncoderLayer(256, 8, batch_first=True).eval()
    tokens = torch.randn(2, 16, 256)
    q = torch.randn(1, 4, 32, 16, requires_grad=True)
    return [
        ("mlp forward, no_grad", no_grad(lambda: mlp(x))),
        ("mlp forward, inference_mode", inference(lambda: mlp(x))),
        ("mlp training step (AdamW)", training_step),
        ("mobilenet_v2 forward", no_grad(lambda: mobilenet(image))),
        ("resnet18 forward", no_grad(lambda: resnet(image))),
        ("TransformerEncoderLayer forward (eval)", no_grad(lambda: encoder(tokens))),
        ("TransformerEncoderLayer forward (grad)", lambda: encoder(tokens)),
        ("causal SDPA forward and backward", lambda: F.scaled_dot_product_attention(
            q, q, q, is_causal=True).sum().backward()),
        ("cat, index, interpolate", no_grad(lambda: F.interpolate(
            torch.cat([image, image])[:, 1:], scale_factor=0.5, mode="bilinear"))),
    ]


def compare(observer):
    """Each case once under a dispatch mode that lists its ops and once under the observer:
    the same ops, as many times each, or the differences. Returns the cases that differ."""
    from collections import Counter

    from torch.utils._python_dispatch import TorchDispatchMode

    seen = []

    class Names(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append(f"{func._schema.name}.{func._overloadname}")
            return func(*args, **(kwargs or {}))

    differ = 0
    for name, run in cases():
        run()  # once first: lazy initialisations (AdamW's state) run in neither count
        seen.clear()
        with Names():
            run()
        by_mode = Counter(n for n in seen if not n.startswith("profiler::"))
        observer.set_logging(True)
        observer.start()
        try:
            run()
        finally:
            observer.stop()
            observer.set_logging(False)
        by_observer = Counter(n for n in observer.take_log() if not n.startswith("profiler::"))
        if by_mode == by_observer:
            print(f"same   {name}: {sum(by_mode.values())} ops")
            continue
        differ += 1
        only_mode, only_observer = by_mode - by_observer, by_observer - by_mode
        print(f"DIFFER {name}: mode {sum(by_mode.values())} ops, observer {sum(by_observer.values())}")
        print(f"         only the mode: {dict(only_mode)}")
        print(f"         only the observer: {dict(only_observer)}")
    return differ


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=25)
    parser.add_argument("--compare", action="store_true",
                        help="compare the ops the observer takes with a dispatch mode's, per case")
    parser.add_argument("--nvtx-include", default="/usr/local/cuda/include")
    a = parser.parse_args()
    t = time.time()
    # -DNDEBUG as libtorch was built: RecordFunction's inline inputs() asserts otherwise.
    observer = load_inline("ceiling_observer_cost", cpp_sources=OBSERVER,
                           functions=["start", "stop", "count", "set_logging", "take_log"],
                           extra_include_paths=[a.nvtx_include], extra_cflags=["-O2", "-DNDEBUG"])
    print(f"observer built in {time.time() - t:.0f} s", file=sys.stderr)
    if a.compare:
        torch.set_num_threads(1)
        return 1 if compare(observer) else 0
    from ceiling_torch import modules  # ceiling's dispatch mode (its C body where it loads)
    from torch.profiler import ProfilerActivity, profile

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
        observer.start()
        try:
            return block()
        finally:
            observer.stop()

    def mode():
        with modules._OpMode() as m:
            if modules.nvtx.native is not None:
                m.__torch_dispatch__ = modules.nvtx.native.bind(m)
            return block()

    def profiled():
        with profile(activities=[ProfilerActivity.CPU], record_shapes=True):
            return block()

    variants = {"bare": block, "observer": observed, "ceiling's mode": mode, "torch.profiler": profiled}
    with torch.no_grad():
        before = observer.count()
        observed()
        print(f"ops observed per call: {(observer.count() - before) / 100:.1f} (48 expected)")
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


if __name__ == "__main__":
    sys.exit(main())
