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
        python observer_cost.py [--rounds N] [--nvtx-include DIR]

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
'''


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=25)
    parser.add_argument("--nvtx-include", default="/usr/local/cuda/include")
    a = parser.parse_args()
    t = time.time()
    # -DNDEBUG as libtorch was built: RecordFunction's inline inputs() asserts otherwise.
    observer = load_inline("ceiling_observer_cost", cpp_sources=OBSERVER,
                           functions=["start", "stop", "count"],
                           extra_include_paths=[a.nvtx_include], extra_cflags=["-O2", "-DNDEBUG"])
    print(f"observer built in {time.time() - t:.0f} s", file=sys.stderr)
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
    main()
