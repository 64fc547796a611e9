// libceiling_torch_nvtx.so: the NVTX calls of ceiling's PyTorch instrumentation
// (ceiling_torch/nvtx.py binds them with ctypes). It holds its own copy of the header-only
// NVTX v3 loader, which reads NVTX_INJECTION64_PATH at the first call and loads the library
// `ceiling run` names there (libceiling_inject_nvtx.so): the Python side then records like
// any NVTX program, with no Python package for NVTX. Outside `ceiling run` every call is
// NVTX's no-op.
//
// One domain ("torch") for every range the instrumentation opens, so that its ranges nest
// among themselves (push/pop nesting is per thread and per domain) and ceiling can tell
// them from the program's own ranges. One argument per call: ctypes converts each one.
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
