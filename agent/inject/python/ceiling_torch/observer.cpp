// ceiling's op observer: each ATen op a range, from a RecordFunction callback of ours rather
// than a Python dispatch mode (issue: op ranges at torch.profiler's cost). A dispatch mode
// costs every op a trip through Python (an empty one alone 5-7 us an op on an AVX2 EPYC VM);
// this callback stays in C++ for every call whose key it has seen, and calls Python only for
// a key's first call, to run the formula (formulas.py) on the real arguments.
//
// Built by observer.py with torch.utils.cpp_extension against the running torch's headers,
// once per torch version (its C++ ABI is the version's), and loaded as an extension module.
// It records through libceiling_torch_nvtx's capsule `api`, so that its ranges share the
// domain and the per-thread nesting of the module ranges opened from Python.
//
// Which ops: those a TorchDispatchMode would see, which runs below autograd, after composite
// ops (linear, conv2d) are decomposed and with every op inside another op's kernel hidden:
// here, the outermost op of each nest on a thread whose operator has no
// CompositeImplicitAutograd kernel, or has one but runs under inference mode (with
// autograd's keys excluded, such an op reaches the mode whole). profiler:: ops (markers) and
// ops inside a parallel region (a kernel's own) never open a range.
#include <torch/extension.h>

#include <ATen/Parallel.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/record_function.h>
#include <c10/core/InferenceMode.h>
#include <torch/csrc/jit/python/pybind_utils.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace {

// libceiling_torch_nvtx's capsule (torch_nvtx.cpp declares the same struct).
struct ObserverApi {
    int version;
    void (*push)(const char*);
    void (*pop)();
    const char* (*module_class)();
};

const ObserverApi* api = nullptr;
// describe(op name, overload, args, kwargs, module class) -> bytes or None. Never freed: a
// static py::object would be released after the interpreter is gone, without the GIL.
py::object* describe = nullptr;
std::atomic<bool> running{false};

struct Op {
    std::string name;      // "aten::addmm"
    std::string overload;  // "" for default
    bool taken;            // opens a range (not a profiler marker, no CompositeImplicit kernel)
    bool implicit;         // has a CompositeImplicitAutograd kernel: taken under inference mode
};

// Operators by the address of their schema's name (RecordFunction::name() of an op points
// into its registered schema, which outlives every call), and call keys' messages. One lock:
// ops run on several threads; uncontended it costs tens of nanoseconds. Entries are never
// removed, so a message's address stays valid without the lock: past messages_max distinct
// keys (a program whose shapes never repeat) new keys are described on every call instead.
std::mutex lock;
std::unordered_map<const char*, Op> ops;
std::unordered_map<std::string, std::string> messages;
constexpr std::size_t messages_max = 200000;  // as modules.py's MESSAGES_MAX
thread_local std::unordered_map<const char*, const Op*> thread_ops;  // this thread's view of ops
std::atomic<long> calls{0}, described{0};

bool logging = false;  // tests: each range's message, in order
std::vector<std::string> log;

// The callback is per thread (attach): an uninstrumented call switches it off on its own
// thread only (quiet), and then runs as bare as without ceiling: a global callback, even
// one that returns at once, costs every op RecordFunction's own work (+1.2 us an op of 4.2
// on the EPYC VM, 48-op model, against +1.6 us for the whole observer).
thread_local at::CallbackHandle handle = 0;
thread_local int depth = 0;             // ranges this observer opened and has not closed
thread_local std::vector<char> opened;  // per RecordFunction entered: whether it opened one
thread_local bool describing = false;   // inside describe (its own ops are not the program's)

const Op* op_of(const at::RecordFunction& fn) {
    const char* id = fn.name();
    if (auto it = thread_ops.find(id); it != thread_ops.end()) return it->second;
    const auto name = fn.operator_name();
    if (!name) return nullptr;  // a named scope, not an operator: its name is not kept
    const auto handle = c10::Dispatcher::singleton().findOp(*name);
    Op op{name->name, name->overload_name, false, false};
    op.implicit = handle && handle->hasKernelForDispatchKey(c10::DispatchKey::CompositeImplicitAutograd);
    op.taken = !op.implicit && op.name.rfind("profiler::", 0) != 0;
    std::lock_guard<std::mutex> g(lock);
    const Op* known = &ops.emplace(id, std::move(op)).first->second;
    thread_ops.emplace(id, known);
    return known;
}

template <typename T>
void put(std::string& key, T v) {
    key.append(reinterpret_cast<const char*>(&v), sizeof v);
}

void put_tensor(std::string& key, const at::Tensor& t) {
    if (!t.defined()) {
        key += 'N';
        return;
    }
    key += 'T';
    const auto sizes = t.sizes();
    put(key, static_cast<std::int64_t>(sizes.size()));
    for (const auto s : sizes) put(key, static_cast<std::int64_t>(s));
    put(key, static_cast<int>(t.scalar_type()));
}

// What a formula reads of an argument (modules.py's _key_of): a tensor's shape and dtype,
// never its values; a list's items; anything else by value. False: no key (described afresh).
bool put_value(std::string& key, const c10::IValue& v) {
    if (v.isTensor()) {
        put_tensor(key, v.toTensor());
    } else if (v.isNone()) {
        key += 'N';
    } else if (v.isInt()) {
        key += 'I';
        put(key, v.toInt());
    } else if (v.isDouble()) {
        key += 'D';
        put(key, v.toDouble());
    } else if (v.isBool()) {
        key += v.toBool() ? 'Y' : 'F';
    } else if (v.isString()) {
        const auto& s = v.toStringRef();
        key += 'S';
        put(key, s.size());
        key += s;
    } else if (v.isIntList()) {
        const auto l = v.toIntList();
        key += 'L';
        put(key, l.size());
        for (const std::int64_t x : l) put(key, x);
    } else if (v.isTensorList()) {
        const auto l = v.toTensorList();
        key += 'l';
        put(key, l.size());
        for (const at::Tensor& t : l) put_tensor(key, t);
    } else if (v.isList()) {  // optional tensors (index), doubles, bools
        const auto l = v.toListRef();
        key += 'G';
        put(key, l.size());
        for (const auto& x : l)
            if (!put_value(key, x)) return false;
    } else if (v.isDevice()) {
        key += 'd';
        put(key, static_cast<int>(v.toDevice().type()));
        put(key, static_cast<int>(v.toDevice().index()));
    } else if (v.isGenerator()) {
        key += 'g';  // no formula reads a generator
    } else if (v.isComplexDouble()) {
        key += 'C';
        put(key, v.toComplexDouble().real());
        put(key, v.toComplexDouble().imag());
    } else {
        return false;
    }
    return true;
}

// The op, the enclosing module's class, each input's key. False where an input has none.
bool key_of(const at::RecordFunction& fn, const Op& op, const char* module_class, std::string& key) {
    put(key, &op);
    if (module_class) key += module_class;
    key += '\0';
    try {
        for (const auto& v : fn.inputs())
            if (!put_value(key, v)) return false;
    } catch (const std::exception&) {  // sizes of a tensor without them (nested, sparse CSR)
        return false;
    }
    return true;
}

// The arguments as a TorchDispatchMode receives them (torch's parseIValuesToPyArgsKwargs):
// positional ones up to the last that differs from its default, keyword-only ones that
// differ from theirs. Under the GIL.
std::pair<py::tuple, py::dict> python_arguments(const at::RecordFunction& fn) {
    const auto schema = fn.operator_schema();
    const auto inputs = fn.inputs();
    const auto& arguments = schema->arguments();
    const std::size_t n = std::min(arguments.size(), inputs.size());
    std::size_t kwarg_only = 0;
    while (kwarg_only < n && !arguments[kwarg_only].kwarg_only()) ++kwarg_only;
    auto is_default = [&](std::size_t i) {
        const auto& d = arguments[i].default_value();
        return d.has_value() && *d == inputs[i];
    };
    std::size_t positional = kwarg_only;
    while (positional > 0 && is_default(positional - 1)) --positional;
    py::tuple args(positional);
    for (std::size_t i = 0; i < positional; ++i) args[i] = torch::jit::toPyObject(inputs[i]);
    py::dict kwargs;
    for (std::size_t i = kwarg_only; i < n; ++i)
        if (!is_default(i)) kwargs[py::str(arguments[i].name())] = torch::jit::toPyObject(inputs[i]);
    return {std::move(args), std::move(kwargs)};
}

// A call's message from Python's formula (empty: no range).
std::string describe_call(const at::RecordFunction& fn, const Op& op, const char* module_class) {
    described.fetch_add(1, std::memory_order_relaxed);
    describing = true;
    std::string message;
    {
        py::gil_scoped_acquire gil;
        try {
            auto [args, kwargs] = python_arguments(fn);
            const py::object cls = module_class ? py::object(py::str(module_class)) : py::object(py::none());
            const py::object r = (*describe)(op.name, op.overload, args, kwargs, cls);
            if (!r.is_none()) message = r.cast<std::string>();
        } catch (const std::exception&) {  // py::error_already_set included: listed, never guessed
            message = op.name + (op.overload.empty() ? "" : "." + op.overload);  // formulas.op_name
            message.replace(message.find("::"), 2, ".");
            message += " [no formula]";
        }
    }
    describing = false;
    return message;
}

std::unique_ptr<at::ObserverContext> enter(const at::RecordFunction& fn) {
    bool range = false;
    if (depth == 0 && !describing && running && !at::in_parallel_region()) {
        const Op* op = op_of(fn);
        if (op && (op->taken || (op->implicit && op->name.rfind("profiler::", 0) != 0 &&
                                 c10::InferenceMode::is_enabled()))) {
            calls.fetch_add(1, std::memory_order_relaxed);
            const char* module_class = api->module_class();
            thread_local std::string key;
            key.clear();
            const bool keyed = key_of(fn, *op, module_class, key);
            const std::string* message = nullptr;  // a kept message: never moved nor freed
            if (keyed) {
                std::lock_guard<std::mutex> g(lock);
                if (auto it = messages.find(key); it != messages.end()) message = &it->second;
            }
            std::string fresh;
            if (!message) {
                fresh = describe_call(fn, *op, module_class);
                message = &fresh;
                std::lock_guard<std::mutex> g(lock);
                if (keyed && messages.size() < messages_max) message = &messages.emplace(key, fresh).first->second;
            }
            if (!message->empty()) {
                api->push(message->c_str());
                range = true;
                ++depth;
                // The ops it runs inside are its own work: with the callback off until it
                // ends, torch records none of them (RecordFunction boxes every input of
                // every op while a callback wants inputs). Its end still runs: a
                // RecordFunction keeps the callbacks it started with.
                if (handle) at::disableCallback(handle);  // 0: a thread torch handed it to
                if (logging) {
                    std::lock_guard<std::mutex> g(lock);
                    log.push_back(*message);
                }
            }
        }
    }
    opened.push_back(range);
    return nullptr;
}

void leave(const at::RecordFunction&, at::ObserverContext*) {
    if (opened.empty()) return;  // entered before start()
    const bool range = opened.back();
    opened.pop_back();
    if (range) {
        --depth;
        api->pop();
        if (depth == 0 && handle) at::reenableCallback(handle);
    }
}

void start(py::capsule capsule, py::object describe_function) {
    if (running) return;
    api = static_cast<const ObserverApi*>(capsule.get_pointer());
    if (!api || api->version != 1) throw std::runtime_error("libceiling_torch_nvtx's api is not version 1");
    describe = new py::object(std::move(describe_function));
    running = true;
}

// This thread's ops observed from now on: torch hands a thread's callbacks on to the threads
// that work for it (autograd's device threads, intra-op workers, at::launch), as it hands a
// dispatch mode on. Called on each thread that calls a module (modules._enter_mode).
void attach() {
    if (handle) return;
    handle = at::addThreadLocalCallback(
        at::RecordFunctionCallback(enter, leave).needsInputs(true).scopes({at::RecordScope::FUNCTION}));
}

// quiet(True): this thread's callback off until quiet(False) (an uninstrumented call).
void quiet(bool on) {
    if (!handle) return;
    if (on)
        at::disableCallback(handle);
    else
        at::reenableCallback(handle);
}

// At the interpreter's exit (atexit): no callback may take the GIL once it is gone; other
// threads' callbacks stay, but do nothing.
void stop() {
    running = false;
    if (handle) at::removeCallback(handle);
    handle = 0;
}

py::dict stats() {
    py::dict d;
    d["calls"] = calls.load();
    d["described"] = described.load();
    std::lock_guard<std::mutex> g(lock);
    d["keys"] = messages.size();
    d["operators"] = ops.size();
    return d;
}

void set_logging(bool on) {
    std::lock_guard<std::mutex> g(lock);
    logging = on;
}

std::vector<std::string> take_log() {
    std::lock_guard<std::mutex> g(lock);
    std::vector<std::string> out;
    out.swap(log);
    return out;
}

}  // namespace

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.doc() = "ceiling's op observer: ATen ops as NVTX ranges from a RecordFunction callback";
    m.def("start", &start, "start(api capsule, describe): what every range is recorded through");
    m.def("attach", &attach, "attach(): this thread's ops observed from now on");
    m.def("quiet", &quiet, "quiet(on): this thread's callback off (True) or on again (False)");
    m.def("stop", &stop, "stop(): no more ranges (call before the interpreter exits)");
    m.def("stats", &stats, "ops observed, keys described, distinct keys and operators");
    m.def("set_logging", &set_logging, "tests: keep each range's message");
    m.def("take_log", &take_log, "tests: the messages kept since the last call");
}
