#pragma once
// The interface between ceiling and libceiling_libraries.so (kernels/libraries/): one table
// of functions, found by dlsym under `ceiling_library_table`. Both sides are built from the
// same tree; `version` and `size` still guard against a module left from another build.
// An entry is null when the module was built without its library.

#include <memory>
#include <span>
#include <string>

#include "kernels/common/bf16.hpp"
#include "kernels/common/libraries.hpp"
#include "kernels/conv/conv_dnnl.hpp"
#include "kernels/gemm/gemm_dnnl.hpp"
#include "kernels/nms/nms.hpp"
#include "kernels/resize/resize.hpp"

namespace ceiling::kernels {

struct LibraryTable {
    static constexpr int current_version = 1;
    int version;
    std::size_t size;  // sizeof(LibraryTable) where the module was built

    // Always present: what was found, or why not ("built without OpenBLAS (...)").
    // openblas's description has no advice: ceiling adds it, knowing the CPU.
    LibraryInfo (*openblas_info)();
    std::string (*openblas_corename)();
    LibraryInfo (*dnnl_info)();
    LibraryInfo (*opencv_info)();

    void (*openblas_set_threads)(int threads);
    void (*openblas_sgemm)(const float* a, const float* b, float* c, int m, int n, int k);
    void (*openblas_sgemv)(const float* w, const float* x, float* y, int m, int k);
    std::unique_ptr<DnnlMatmulBf16::Impl> (*dnnl_matmul_bf16)(int m, int n, int k, const Bf16* b,
                                                              int threads);
    std::unique_ptr<DnnlConv::Impl> (*dnnl_conv)(DnnlConvKind kind, ConvShape s,
                                                 const float* weights, int threads);
    std::unique_ptr<OpenCvNms::Impl> (*opencv_nms)(std::span<const Box> boxes,
                                                   std::span<const float> scores,
                                                   float score_threshold);
    std::unique_ptr<OpenCvResize::Impl> (*opencv_resize)(ResizeShape s);
};

// The module's table, loaded on the first call: $CEILING_LIBRARIES, else beside the running
// program, else ../lib/ceiling/ beside it, else where this build put it. Null when none
// loads; `why_not()` then says what was tried.
const LibraryTable* library_table();
const std::string& library_table_why_not();

}  // namespace ceiling::kernels

extern "C" const ceiling::kernels::LibraryTable* ceiling_library_table();
