#include "kernels/gpu/cublas_loader.hpp"

#include <dlfcn.h>

#include <mutex>
#include <string>

#include "kernels/gpu/gpu_kernels.hpp"

namespace ceiling::kernels::gpu {
namespace {

template <typename F>
void resolve(void* lib, const char* name, F& out) {
    out = reinterpret_cast<F>(dlsym(lib, name));
    if (!out) throw GpuError(std::string("cuBLAS could not be loaded: no symbol ") + name);
}

Cublas load() {
    // The soname of the toolkit we built against, then its full path: the binary carries
    // no run path to the toolkit's lib directory once cuBLAS is not linked.
    void* lib = dlopen(CEILING_CUBLAS_SONAME, RTLD_NOW | RTLD_LOCAL);
    std::string why = lib ? "" : std::string(dlerror());
    if (!lib) lib = dlopen(CEILING_CUBLAS_PATH, RTLD_NOW | RTLD_LOCAL);
    if (!lib) throw GpuError("cuBLAS could not be loaded: " + why + "; " + dlerror());
    Cublas c{};
    resolve(lib, "cublasCreate_v2", c.create);
    resolve(lib, "cublasDestroy_v2", c.destroy);
    resolve(lib, "cublasSetMathMode", c.set_math_mode);
    resolve(lib, "cublasGemmEx", c.gemm_ex);
    resolve(lib, "cublasGetStatusString", c.status_string);
    return c;  // the library stays loaded for the process's life
}

}  // namespace

const Cublas& cublas() {
    static std::once_flag once;
    static Cublas c;
    static std::string error;
    std::call_once(once, [] {
        try {
            c = load();
        } catch (const GpuError& e) {
            error = e.what();
        }
    });
    if (!error.empty()) throw GpuError(error);
    return c;
}

void cublas_check(cublasStatus_t rc, const char* what) {
    if (rc != CUBLAS_STATUS_SUCCESS)
        throw GpuError(std::string(what) + " failed: " + cublas().status_string(rc));
}

}  // namespace ceiling::kernels::gpu
