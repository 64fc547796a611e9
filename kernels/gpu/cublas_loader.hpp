#pragma once
// cuBLAS, loaded on first use. Linked at build time, libcublasLt's static initialisers ran
// in every `ceiling` process, GPU or not: about half a second and 200 MB of resident
// memory before `ceiling run` could start the user's program. Only the library GEMM cases
// and the cuBLAS reference roofs need it, so they load it here (dlopen) when they run.
// CUDA builds only.

#include <cublas_v2.h>

namespace ceiling::kernels::gpu {

// The cuBLAS entry points ceiling calls (cublasCreate/Destroy are the _v2 symbols).
struct Cublas {
    decltype(&cublasCreate_v2) create;
    decltype(&cublasDestroy_v2) destroy;
    decltype(&cublasSetMathMode) set_math_mode;
    // The C symbol (the header adds an inline C++ overload taking cudaDataType compute).
    cublasStatus_t (*gemm_ex)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int m, int n, int k,
                              const void* alpha, const void* a, cudaDataType a_type, int lda,
                              const void* b, cudaDataType b_type, int ldb, const void* beta, void* c,
                              cudaDataType c_type, int ldc, cublasComputeType_t compute,
                              cublasGemmAlgo_t algo);
    decltype(&cublasGetStatusString) status_string;
};

// Loads the library once per process. Throws GpuError ("cuBLAS could not be loaded: ...")
// when it or a symbol is missing; the caller reports that case or roof as unavailable.
const Cublas& cublas();

// Throws GpuError("WHAT failed: cuBLAS's message") unless rc is success.
void cublas_check(cublasStatus_t rc, const char* what);

}  // namespace ceiling::kernels::gpu
