#pragma once
// The libraries of the library variants, each behind a few functions so their headers
// stay out of ceiling. Each is optional at build time (CEILING_HAVE_OPENBLAS / _DNNL /
// _OPENCV); where one is missing, *_info().available is false and `description` says how
// to get it, and the variants that need it are listed as unavailable.
//
// They live in libceiling_libraries.so (kernels/libraries/), which is loaded the first time
// one of these functions is called, not linked: OpenBLAS, oneDNN and OpenCV (with what
// they pull in: protobuf, OpenCL, X11...) cost every ceiling process ~10 ms of loading,
// relocation and exit, and a spinning OpenBLAS thread, which `ceiling run` added to every
// program it wrapped. Where the module cannot be loaded, every library reads unavailable
// and says why.

#include <cstddef>
#include <string>

namespace ceiling::kernels {

struct LibraryInfo {
    bool available = false;
    std::string description;  // "OpenBLAS 0.3.21, core Prescott"; why missing when unavailable
    std::string advice;       // a known handicap on this machine and its fix, else empty
};

// OpenBLAS: which core (kernel set) it chose at load time. Debian's 0.3.21 does not know
// Sapphire/Emerald Rapids and falls back to Prescott (SSE3) unless OPENBLAS_CORETYPE is set.
const LibraryInfo& openblas_info();
// The core name a CPU with these features should get, given the core OpenBLAS chose:
// empty when the chosen one is already fit. A table of (feature, good cores, suggestion).
std::string openblas_better_core(const std::string& chosen, bool avx512f, bool avx2);
void openblas_set_threads(int threads);
// Row-major C = A * B (beta = 0) and y = W x.
void openblas_sgemm(const float* a, const float* b, float* c, int m, int n, int k);
void openblas_sgemv(const float* w, const float* x, float* y, int m, int k);

const LibraryInfo& dnnl_info();    // "oneDNN 2.6.3, ISA avx512_core_amx"
const LibraryInfo& opencv_info();  // "OpenCV 4.6.0, parallel framework TBB"

}  // namespace ceiling::kernels
