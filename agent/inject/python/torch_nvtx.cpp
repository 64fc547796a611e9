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
// op range is a push and a pop (issue: op ranges at torch.profiler's cost). The plain C
// functions stay for ctypes, where the interpreter cannot import the module (PyPy, an older
// CPython).
#include <nvtx3/nvToolsExt.h>

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

#ifdef CEILING_TORCH_PYTHON
#define PY_SSIZE_T_CLEAN
#define Py_LIMITED_API 0x03080000
#include <Python.h>

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

PyMethodDef methods[] = {
    {"init", with_bytes<ceiling_torch_init>, METH_O, "init(domain: bytes): the domain every later call records in"},
    {"push", with_bytes<ceiling_torch_push>, METH_O, "push(message: bytes): opens a range on this thread"},
    {"pop", py_pop, METH_NOARGS, "pop(): closes this thread's innermost range"},
    {"mark", with_bytes<ceiling_torch_mark>, METH_O, "mark(message: bytes): an instant event"},
    {nullptr, nullptr, 0, nullptr},
};

PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "libceiling_torch_nvtx",
    "NVTX ranges of ceiling's PyTorch instrumentation (ceiling_torch/nvtx.py)", -1, methods,
    nullptr, nullptr, nullptr, nullptr,
};

}  // namespace

// The module's name is the library's, so that Python's loader finds this function.
PyMODINIT_FUNC PyInit_libceiling_torch_nvtx() { return PyModule_Create(&module); }
#endif
