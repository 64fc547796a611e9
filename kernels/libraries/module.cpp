// libceiling_libraries.so: OpenBLAS, oneDNN and OpenCV behind one table of functions
// (kernels/common/library_module.hpp), loaded by ceiling when a library variant is wanted.
#include "kernels/libraries/module.hpp"

#include <algorithm>

#include <omp.h>

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

namespace ceiling::kernels::libraries {
namespace {

#ifdef CEILING_HAVE_OPENBLAS
LibraryInfo openblas_info() {
    const std::string config = openblas_get_config();
    // config starts "OpenBLAS 0.3.21 ..."; keep the name and version.
    const auto second_space = config.find(' ', config.find(' ') + 1);
    return {true, config.substr(0, second_space) + ", core " + openblas_get_corename(), {}};
}
std::string openblas_corename() { return openblas_get_corename(); }
void openblas_set_threads(int threads) { openblas_set_num_threads(threads); }
void openblas_sgemm(const float* a, const float* b, float* c, int m, int n, int k) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, a, std::max(k, 1), b,
                std::max(n, 1), 0.0f, c, std::max(n, 1));
}
void openblas_sgemv(const float* w, const float* x, float* y, int m, int k) {
    cblas_sgemv(CblasRowMajor, CblasNoTrans, m, k, 1.0f, w, std::max(k, 1), x, 1, 0.0f, y, 1);
}
#else
LibraryInfo openblas_info() {
    return {false, "built without OpenBLAS (install libopenblas-dev, reconfigure)", {}};
}
std::string openblas_corename() { return {}; }
#endif

#ifdef CEILING_HAVE_DNNL
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
LibraryInfo dnnl_info() {
    const auto* v = dnnl::version();
    std::string isa = "unknown ISA";
    const auto effective = dnnl::get_effective_cpu_isa();
    for (const auto& n : isa_names)
        if (n.isa == effective) isa = n.name;
    return {true,
            "oneDNN " + std::to_string(v->major) + "." + std::to_string(v->minor) + "." +
                std::to_string(v->patch) + ", ISA " + isa,
            {}};
}
#else
LibraryInfo dnnl_info() {
    return {false, "built without oneDNN (install libdnnl-dev, reconfigure)", {}};
}
#endif

#ifdef CEILING_HAVE_OPENCV
LibraryInfo opencv_info() {
    LibraryInfo i{true, std::string("OpenCV ") + CV_VERSION, {}};
    const std::string build = cv::getBuildInformation();
    const auto p = build.find("Parallel framework:");
    if (p != std::string::npos) {
        auto line = build.substr(p + 19, build.find('\n', p) - p - 19);
        line.erase(0, line.find_first_not_of(' '));
        i.description += ", parallel framework " + line;
    }
    return i;
}
#else
LibraryInfo opencv_info() {
    return {false, "built without OpenCV (install libopencv-dev, reconfigure)", {}};
}
#endif

}  // namespace

#ifdef CEILING_HAVE_DNNL
void dnnl_set_threads(int threads) { omp_set_num_threads(threads); }
#endif

}  // namespace ceiling::kernels::libraries

extern "C" __attribute__((visibility("default"))) const ceiling::kernels::LibraryTable*
ceiling_library_table() {
    namespace l = ceiling::kernels::libraries;
    static const ceiling::kernels::LibraryTable table{
        ceiling::kernels::LibraryTable::current_version,
        sizeof(ceiling::kernels::LibraryTable),
        l::openblas_info,
        l::openblas_corename,
        l::dnnl_info,
        l::opencv_info,
#ifdef CEILING_HAVE_OPENBLAS
        l::openblas_set_threads,
        l::openblas_sgemm,
        l::openblas_sgemv,
#else
        nullptr,
        nullptr,
        nullptr,
#endif
#ifdef CEILING_HAVE_DNNL
        l::make_dnnl_matmul_bf16,
        l::make_dnnl_conv,
#else
        nullptr,
        nullptr,
#endif
#ifdef CEILING_HAVE_OPENCV
        l::make_opencv_nms,
        l::make_opencv_resize,
#else
        nullptr,
        nullptr,
#endif
    };
    return &table;
}
