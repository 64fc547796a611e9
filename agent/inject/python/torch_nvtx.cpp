// libceiling_torch_nvtx.so: the NVTX calls of ceiling's PyTorch instrumentation
// (ceiling_torch/nvtx.py). It holds its own copy of the header-only NVTX v3 loader, which
// reads NVTX_INJECTION64_PATH at the first call and loads the library `ceiling run` names
// there (libceiling_inject_nvtx.so): the Python side then records like any NVTX program,
// with no Python package for NVTX. Outside `ceiling run` every call is NVTX's no-op.
//
// One domain ("torch") for every range the instrumentation opens, so that its ranges nest
// among themselves (push/pop nesting is per thread and per domain) and ceiling can tell
// them from the program's own ranges.
//
// Two faces, one library. Built with Python's headers (CEILING_TORCH_PYTHON), it is also a
// CPython extension module on the stable ABI (any CPython from 3.8), which nvtx.py imports:
// a push and a pop then cost 0.15 us from Python where ctypes took 0.79 us (one VM), and an
// op range is a push and a pop (issue: op ranges at torch.profiler's cost). The module also
// runs the dispatch mode's body per op (py_dispatch). The plain C functions stay for ctypes,
// where the interpreter cannot import the module (PyPy, an older CPython).
#include <nvtx3/nvToolsExt.h>

#include <string>
#include <vector>

namespace {

nvtxDomainHandle_t domain = nullptr;

nvtxEventAttributes_t attributes(const char* message) {
    nvtxEventAttributes_t a{};
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = message;
    return a;
}

}  // namespace

extern "C" {

// Creates the domain; before it, pushes and pops go to the default domain.
__attribute__((visibility("default"))) void ceiling_torch_init(const char* domain_name) {
    domain = nvtxDomainCreateA(domain_name);
}

__attribute__((visibility("default"))) void ceiling_torch_push(const char* message) {
    const nvtxEventAttributes_t a = attributes(message);
    nvtxDomainRangePushEx(domain, &a);
}

__attribute__((visibility("default"))) void ceiling_torch_pop() { nvtxDomainRangePop(domain); }

__attribute__((visibility("default"))) void ceiling_torch_mark(const char* message) {
    const nvtxEventAttributes_t a = attributes(message);
    nvtxDomainMarkEx(domain, &a);
}

}  // extern "C"

// What the op observer (ceiling_torch/observer.cpp, built against the program's torch) reads
// per op without Python: the class of the innermost open module call on this thread, which
// Python keeps here through push_module and pop_module. The observer takes it, and push and
// pop, from the capsule `api` (ObserverApi: the same struct is declared in observer.cpp).
namespace {

thread_local std::vector<std::string> module_classes;

const char* innermost_module_class() { return module_classes.empty() ? nullptr : module_classes.back().c_str(); }

}  // namespace

#ifdef CEILING_TORCH_PYTHON
#define PY_SSIZE_T_CLEAN
#define Py_LIMITED_API 0x03080000
#include <Python.h>

#include <initializer_list>

namespace {

// The bytes object's own buffer is passed on (NVTX's injection copies the message before returning).
const char* bytes_of(PyObject* message) {
    char* s = nullptr;
    Py_ssize_t n = 0;
    return PyBytes_AsStringAndSize(message, &s, &n) < 0 ? nullptr : s;
}

PyObject* none() {
    Py_INCREF(Py_None);
    return Py_None;
}

// init, push and mark: one bytes argument, passed on as a C string.
template <void (*record)(const char*)>
PyObject* with_bytes(PyObject*, PyObject* message) {
    const char* s = bytes_of(message);
    if (!s) return nullptr;
    record(s);
    return none();
}

PyObject* py_pop(PyObject*, PyObject*) {
    ceiling_torch_pop();
    return none();
}

// The dispatch mode's body in C (ceiling_torch/modules.py, _OpMode.__torch_dispatch__, is
// the same in Python, for ctypes): per op it looks the op's entry up, builds the key of the
// call (the op, the enclosing module's class, each argument's shape and dtype or value),
// finds the message the formula gave that key, and calls the op inside a range: 0.2-0.5 us
// an op less than the same body in Python (issue: op ranges at torch.profiler's cost; relu
// and addmm timed alone on an EPYC VM). What is not the hot path (an op or a key seen for
// the first time) calls back into Python.
struct Dispatch {
    PyObject* entries = nullptr;   // id(op) -> (op, formula entry, callable, is profiler marker)
    PyObject* messages = nullptr;  // call key -> range message (bytes)
    PyObject* thread = nullptr;    // threading.local whose .state.stack names the open modules
    PyObject* entry = nullptr;     // entry(op): the tuple for entries
    PyObject* describe = nullptr;  // describe(op, entry, args, kwargs, module_class, key)
    PyObject* tensor = nullptr;    // torch.Tensor
    // ceiling_torch.nvtx, whose push and pop are read per op as the Python body reads them (a
    // test's recorder stands in for them), and this module's own, then called without Python.
    PyObject* ranges = nullptr;
    PyObject* own_push = nullptr;
    PyObject* own_pop = nullptr;
    PyObject* state = nullptr;  // interned attribute names
    PyObject* stack = nullptr;
    PyObject* shape = nullptr;
    PyObject* dtype = nullptr;
    PyObject* push = nullptr;
    PyObject* pop = nullptr;
} dispatch_state;

PyObject* py_configure(PyObject* self, PyObject* args) {
    Dispatch& d = dispatch_state;
    PyObject *entries, *messages, *thread, *entry, *describe, *tensor, *ranges;
    if (!PyArg_ParseTuple(args, "O!O!OOOOO", &PyDict_Type, &entries, &PyDict_Type, &messages,
                          &thread, &entry, &describe, &tensor, &ranges))
        return nullptr;
    for (PyObject* o : {entries, messages, thread, entry, describe, tensor, ranges}) Py_INCREF(o);
    d.entries = entries;
    d.messages = messages;
    d.thread = thread;
    d.entry = entry;
    d.describe = describe;
    d.tensor = tensor;
    d.ranges = ranges;
    d.state = PyUnicode_InternFromString("state");
    d.stack = PyUnicode_InternFromString("stack");
    d.shape = PyUnicode_InternFromString("shape");
    d.dtype = PyUnicode_InternFromString("dtype");
    d.push = PyUnicode_InternFromString("push");
    d.pop = PyUnicode_InternFromString("pop");
    if (!d.state || !d.stack || !d.shape || !d.dtype || !d.push || !d.pop) return nullptr;
    d.own_push = PyObject_GetAttr(self, d.push);
    d.own_pop = PyObject_GetAttr(self, d.pop);
    if (!d.own_push || !d.own_pop) return nullptr;
    return none();
}

// nvtx.push(message) or nvtx.pop(), whichever stands there now; false with an exception set.
bool call_range(PyObject* name, PyObject* own, void (*direct)(const char*), PyObject* message) {
    PyObject* f = PyObject_GetAttr(dispatch_state.ranges, name);
    if (!f) return false;
    bool ok = true;
    if (f == own) {
        const char* s = message ? bytes_of(message) : "";
        ok = s != nullptr;
        if (ok) direct(s);
    } else {
        PyObject* r = PyObject_CallFunctionObjArgs(f, message, nullptr);
        ok = r != nullptr;
        Py_XDECREF(r);
    }
    Py_DECREF(f);
    return ok;
}

void pop_direct(const char*) { ceiling_torch_pop(); }

bool open_range(PyObject* message) {
    return call_range(dispatch_state.push, dispatch_state.own_push, ceiling_torch_push, message);
}

// Closes the range whether or not the op raised; the op's exception, if any, stays the one
// raised (as a finally clause keeps it).
bool close_range() {
    PyObject *type, *value, *traceback;
    PyErr_Fetch(&type, &value, &traceback);
    const bool ok = call_range(dispatch_state.pop, dispatch_state.own_pop, pop_direct, nullptr);
    if (type) {
        if (!ok) PyErr_Clear();
        PyErr_Restore(type, value, traceback);
    }
    return ok;
}

// What a formula reads of an argument, as a key (modules.py, _key_of): a tensor's shape and
// dtype (never its values), a list's or tuple's items as a tuple, anything else as it is.
PyObject* key_of(PyObject* a) {
    const Dispatch& d = dispatch_state;
    const int is_tensor = PyObject_IsInstance(a, d.tensor);
    if (is_tensor < 0) return nullptr;
    if (is_tensor) {
        PyObject* shape = PyObject_GetAttr(a, d.shape);
        if (!shape) return nullptr;
        PyObject* dtype = PyObject_GetAttr(a, d.dtype);
        if (!dtype) {
            Py_DECREF(shape);
            return nullptr;
        }
        PyObject* key = PyTuple_Pack(2, shape, dtype);
        Py_DECREF(shape);
        Py_DECREF(dtype);
        return key;
    }
    const bool list = PyList_Check(a);
    if (!list && !PyTuple_Check(a)) {
        Py_INCREF(a);
        return a;
    }
    const Py_ssize_t n = list ? PyList_Size(a) : PyTuple_Size(a);
    PyObject* key = PyTuple_New(n);
    if (!key) return nullptr;
    for (Py_ssize_t i = 0; i < n; ++i) {
        PyObject* item = key_of(list ? PyList_GetItem(a, i) : PyTuple_GetItem(a, i));
        if (!item || PyTuple_SetItem(key, i, item) < 0) {  // SetItem steals item
            Py_DECREF(key);
            return nullptr;
        }
    }
    return key;
}

// (id(op), module class, argument keys, keyword keys or None).
PyObject* call_key(PyObject* func, PyObject* module_class, PyObject* args, PyObject* kwargs) {
    PyObject* arg_keys = key_of(args);
    if (!arg_keys) return nullptr;
    PyObject* kw_keys = Py_None;
    Py_INCREF(kw_keys);
    if (kwargs && PyDict_Size(kwargs) > 0) {
        Py_DECREF(kw_keys);
        kw_keys = PyTuple_New(PyDict_Size(kwargs));
        Py_ssize_t pos = 0, i = 0;
        PyObject *k, *v;
        while (kw_keys && PyDict_Next(kwargs, &pos, &k, &v)) {
            PyObject* vk = key_of(v);
            PyObject* pair = vk ? PyTuple_Pack(2, k, vk) : nullptr;
            Py_XDECREF(vk);
            if (!pair || PyTuple_SetItem(kw_keys, i++, pair) < 0) Py_CLEAR(kw_keys);
        }
        if (!kw_keys) {
            Py_DECREF(arg_keys);
            return nullptr;
        }
    }
    PyObject* id = PyLong_FromVoidPtr(func);
    PyObject* key = id ? PyTuple_Pack(4, id, module_class, arg_keys, kw_keys) : nullptr;
    Py_XDECREF(id);
    Py_DECREF(arg_keys);
    Py_DECREF(kw_keys);
    return key;
}

// The class name of the innermost open module call on this thread, or None (borrowed).
PyObject* module_class_of(PyObject** owner) {
    const Dispatch& d = dispatch_state;
    PyObject* state = PyObject_GetAttr(d.thread, d.state);
    if (!state) return nullptr;
    PyObject* stack = PyObject_GetAttr(state, d.stack);
    Py_DECREF(state);
    if (!stack) return nullptr;
    const Py_ssize_t n = PyList_Check(stack) ? PyList_Size(stack) : 0;
    *owner = stack;  // keeps the item alive while it is used
    return n > 0 ? PyList_GetItem(stack, n - 1) : Py_None;
}

// The op's tuple in entries (new reference), made by entry(op) the first time.
PyObject* entry_of(PyObject* func) {
    const Dispatch& d = dispatch_state;
    PyObject* id = PyLong_FromVoidPtr(func);
    if (!id) return nullptr;
    PyObject* known = PyDict_GetItemWithError(d.entries, id);  // borrowed
    Py_XINCREF(known);
    if (!known && !PyErr_Occurred()) {
        known = PyObject_CallFunctionObjArgs(d.entry, func, nullptr);
        if (known && PyDict_SetItem(d.entries, id, known) < 0) Py_CLEAR(known);
    }
    Py_DECREF(id);
    return known;
}

// The range message of a call (new reference): the one its key was given before, else
// describe's (which keeps it under the key; a key that cannot be hashed is None).
PyObject* message_of(PyObject* func, PyObject* entry, PyObject* args, PyObject* kwargs) {
    const Dispatch& d = dispatch_state;
    PyObject* stack_owner = nullptr;
    PyObject* module_class = module_class_of(&stack_owner);
    if (!module_class) return nullptr;
    PyObject* key = call_key(func, module_class, args, kwargs);
    PyObject* message = key ? PyDict_GetItemWithError(d.messages, key) : nullptr;  // borrowed
    Py_XINCREF(message);
    if (key && !message && PyErr_Occurred() && PyErr_ExceptionMatches(PyExc_TypeError)) {
        PyErr_Clear();  // an argument that cannot be a key: described afresh
        Py_CLEAR(key);
        Py_INCREF(Py_None);
        key = Py_None;
    }
    if (key && !message && !PyErr_Occurred()) {
        PyObject* kw = kwargs ? kwargs : PyDict_New();
        if (kw)
            message = PyObject_CallFunctionObjArgs(d.describe, func, entry, args, kw, module_class,
                                                   key, nullptr);
        if (kw != kwargs) Py_XDECREF(kw);
    }
    Py_XDECREF(key);
    Py_XDECREF(stack_owner);
    return message;
}

// mode.__torch_dispatch__(func, types, args=(), kwargs=None), for bind.
PyObject* py_dispatch(PyObject*, PyObject* call_args) {
    if (!dispatch_state.entries) {
        PyErr_SetString(PyExc_RuntimeError, "ceiling_torch: dispatch before configure");
        return nullptr;
    }
    PyObject *func, *types, *args = nullptr, *kwargs = nullptr;
    if (!PyArg_UnpackTuple(call_args, "dispatch", 2, 4, &func, &types, &args, &kwargs))
        return nullptr;
    PyObject* empty_args = args ? nullptr : PyTuple_New(0);
    if (!args) args = empty_args;
    // No keywords as none at all: pybind11 takes 0.5 us longer over an empty dict (2.14).
    if (kwargs == Py_None || (kwargs && PyDict_Check(kwargs) && PyDict_Size(kwargs) == 0))
        kwargs = nullptr;
    PyObject* result = nullptr;
    PyObject* known = args ? entry_of(func) : nullptr;
    if (known) {
        PyObject* callable = PyTuple_GetItem(known, 2);
        if (PyObject_IsTrue(PyTuple_GetItem(known, 3))) {  // a profiler marker: no range
            result = PyObject_Call(callable, args, kwargs);
        } else if (PyObject* message = message_of(func, PyTuple_GetItem(known, 1), args, kwargs)) {
            if (open_range(message)) {
                result = PyObject_Call(callable, args, kwargs);
                if (!close_range()) Py_CLEAR(result);
            }
            Py_DECREF(message);
        }
        Py_DECREF(known);
    }
    Py_XDECREF(empty_args);
    return result;
}

PyMethodDef dispatch_method = {
    "__torch_dispatch__", py_dispatch, METH_VARARGS,
    "__torch_dispatch__(func, types, args=(), kwargs=None): ceiling's op mode's body"};

// bind(mode): dispatch as a method of `mode`, to be set as the instance's __torch_dispatch__
// (torch calls a mode's __torch_dispatch__ only where its __self__ is the mode).
PyObject* py_bind(PyObject*, PyObject* mode) { return PyCFunction_NewEx(&dispatch_method, mode, nullptr); }

// push_module(message, class_name): a module call's range, its class the innermost on this
// thread until pop_module (the observer's key and formulas read it).
PyObject* py_push_module(PyObject*, PyObject* args) {
    PyObject *message, *cls;
    if (!PyArg_ParseTuple(args, "SS", &message, &cls)) return nullptr;
    const char* m = bytes_of(message);
    const char* c = bytes_of(cls);
    if (!m || !c) return nullptr;
    module_classes.emplace_back(c);
    ceiling_torch_push(m);
    return none();
}

PyObject* py_pop_module(PyObject*, PyObject*) {
    if (!module_classes.empty()) module_classes.pop_back();
    ceiling_torch_pop();
    return none();
}

// The observer's view of this library (observer.cpp declares the same struct).
struct ObserverApi {
    int version;
    void (*push)(const char*);
    void (*pop)();
    const char* (*module_class)();
};
const ObserverApi observer_api = {1, ceiling_torch_push, ceiling_torch_pop, innermost_module_class};

PyMethodDef methods[] = {
    {"configure", py_configure, METH_VARARGS,
     "configure(entries, messages, thread, entry, describe, tensor_type, nvtx): what dispatch reads"},
    {"bind", py_bind, METH_O, "bind(mode): the dispatch mode's body as a method of mode"},
    {"init", with_bytes<ceiling_torch_init>, METH_O, "init(domain: bytes): the domain every later call records in"},
    {"push", with_bytes<ceiling_torch_push>, METH_O, "push(message: bytes): opens a range on this thread"},
    {"pop", py_pop, METH_NOARGS, "pop(): closes this thread's innermost range"},
    {"mark", with_bytes<ceiling_torch_mark>, METH_O, "mark(message: bytes): an instant event"},
    {"push_module", py_push_module, METH_VARARGS,
     "push_module(message: bytes, class_name: bytes): a module call's range, its class the innermost"},
    {"pop_module", py_pop_module, METH_NOARGS, "pop_module(): closes the range push_module opened"},
    {nullptr, nullptr, 0, nullptr},
};

PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "libceiling_torch_nvtx",
    "NVTX ranges of ceiling's PyTorch instrumentation (ceiling_torch/nvtx.py)", -1, methods,
    nullptr, nullptr, nullptr, nullptr,
};

}  // namespace

// The module's name is the library's, so that Python's loader finds this function.
PyMODINIT_FUNC PyInit_libceiling_torch_nvtx() {
    PyObject* m = PyModule_Create(&module);
    if (!m) return nullptr;
    PyObject* api = PyCapsule_New(const_cast<ObserverApi*>(&observer_api), "libceiling_torch_nvtx.api", nullptr);
    if (!api || PyModule_AddObject(m, "api", api) < 0) {  // AddObject steals api on success
        Py_XDECREF(api);
        Py_DECREF(m);
        return nullptr;
    }
    return m;
}
#endif
