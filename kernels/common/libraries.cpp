#include "kernels/common/libraries.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <string_view>

#include <omp.h>

#include "kernels/cpu_features.hpp"

#ifdef CEILING_HAVE_OPENBLAS
#include <cblas.h>
#endif
#ifdef CEILING_HAVE_DNNL
#include <dnnl.hpp>
#endif
#ifdef CEILING_HAVE_OPENCV
#include <opencv2/core.hpp>
#include <opencv2/core/utility.hpp>
#endif

namespace ceiling::kernels {
namespace {

// OpenBLAS core names fit for a CPU with a feature, and the one to suggest otherwise
// (OPENBLAS_CORETYPE accepts these names).
struct CoreFit {
    bool needs_avx512;  // row applies to CPUs with AVX-512F (else to CPUs with AVX2)
    std::array<std::string_view, 6> good;
    std::string_view suggest;
};
constexpr CoreFit core_fits[] = {
    {true, {"SkylakeX", "Cooperlake", "SapphireRapids"}, "SkylakeX"},
    {false, {"Haswell", "Zen", "SkylakeX", "Cooperlake", "SapphireRapids"}, "Haswell"},
};

}  // namespace

std::string openblas_better_core(const std::string& chosen, bool avx512f, bool avx2) {
    for (const auto& fit : core_fits) {
        if (fit.needs_avx512 ? !avx512f : !avx2) continue;
        const bool good = std::any_of(fit.good.begin(), fit.good.end(), [&](std::string_view g) {
            return !g.empty() && chosen.find(g) != std::string::npos;
        });
        return good ? std::string{} : std::string(fit.suggest);
    }
    return {};
}

#ifdef CEILING_HAVE_OPENBLAS
const LibraryInfo& openblas_info() {
    static const LibraryInfo info = [] {
        LibraryInfo i;
        i.available = true;
        const std::string config = openblas_get_config();
        const std::string core = openblas_get_corename();
        // config starts "OpenBLAS 0.3.21 ..."; keep the name and version.
        const auto second_space = config.find(' ', config.find(' ') + 1);
        i.description = config.substr(0, second_space) + ", core " + core;
        const auto& f = cpu_features();
        if (auto better = openblas_better_core(core, f.avx512f, f.avx2); !better.empty())
            i.advice = "OpenBLAS chose its " + core + " kernels, not ones for this CPU's " +
                       (f.avx512f ? "AVX-512" : "AVX2") + ": run with OPENBLAS_CORETYPE=" + better;
        return i;
    }();
    return info;
}
void openblas_set_threads(int threads) { openblas_set_num_threads(threads); }
void openblas_sgemm(const float* a, const float* b, float* c, int m, int n, int k) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, a, std::max(k, 1), b,
                std::max(n, 1), 0.0f, c, std::max(n, 1));
}
void openblas_sgemv(const float* w, const float* x, float* y, int m, int k) {
    cblas_sgemv(CblasRowMajor, CblasNoTrans, m, k, 1.0f, w, std::max(k, 1), x, 1, 0.0f, y, 1);
}
#else
const LibraryInfo& openblas_info() {
    static const LibraryInfo info{
        false, "built without OpenBLAS (install libopenblas-dev, reconfigure)", {}};
    return info;
}
void openblas_set_threads(int) {}
void openblas_sgemm(const float*, const float*, float*, int, int, int) {}
void openblas_sgemv(const float*, const float*, float*, int, int) {}
#endif

#ifdef CEILING_HAVE_DNNL
namespace {
// dnnl::cpu_isa values and their names (the enum has no to-string in 2.6).
struct IsaName {
    dnnl::cpu_isa isa;
    std::string_view name;
};
constexpr IsaName isa_names[] = {
    {dnnl::cpu_isa::sse41, "sse41"},
    {dnnl::cpu_isa::avx, "avx"},
    {dnnl::cpu_isa::avx2, "avx2"},
    {dnnl::cpu_isa::avx512_mic, "avx512_mic"},
    {dnnl::cpu_isa::avx512_mic_4ops, "avx512_mic_4ops"},
    {dnnl::cpu_isa::avx512_core, "avx512_core"},
    {dnnl::cpu_isa::avx512_core_vnni, "avx512_core_vnni"},
    {dnnl::cpu_isa::avx512_core_bf16, "avx512_core_bf16"},
    {dnnl::cpu_isa::avx512_core_amx, "avx512_core_amx"},
    {dnnl::cpu_isa::avx2_vnni, "avx2_vnni"},
};
}  // namespace
const LibraryInfo& dnnl_info() {
    static const LibraryInfo info = [] {
        LibraryInfo i;
        i.available = true;
        const auto* v = dnnl::version();
        std::string isa = "unknown ISA";
        const auto effective = dnnl::get_effective_cpu_isa();
        for (const auto& n : isa_names)
            if (n.isa == effective) isa = n.name;
        i.description = "oneDNN " + std::to_string(v->major) + "." + std::to_string(v->minor) +
                        "." + std::to_string(v->patch) + ", ISA " + isa;
        return i;
    }();
    return info;
}
#else
const LibraryInfo& dnnl_info() {
    static const LibraryInfo info{
        false, "built without oneDNN (install libdnnl-dev, reconfigure)", {}};
    return info;
}
#endif
// The Debian build uses the OpenMP runtime: the team size of the next parallel region.
void dnnl_set_threads(int threads) { omp_set_num_threads(threads); }

#ifdef CEILING_HAVE_OPENCV
const LibraryInfo& opencv_info() {
    static const LibraryInfo info = [] {
        LibraryInfo i;
        i.available = true;
        i.description = std::string("OpenCV ") + CV_VERSION;
        const std::string build = cv::getBuildInformation();
        const auto p = build.find("Parallel framework:");
        if (p != std::string::npos) {
            auto line = build.substr(p + 19, build.find('\n', p) - p - 19);
            line.erase(0, line.find_first_not_of(' '));
            i.description += ", parallel framework " + line;
        }
        return i;
    }();
    return info;
}
void opencv_set_threads(int threads) { cv::setNumThreads(threads); }
#else
const LibraryInfo& opencv_info() {
    static const LibraryInfo info{
        false, "built without OpenCV (install libopencv-dev, reconfigure)", {}};
    return info;
}
void opencv_set_threads(int) {}
#endif

}  // namespace ceiling::kernels
