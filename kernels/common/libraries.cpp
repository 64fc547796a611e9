#include "kernels/common/libraries.hpp"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string_view>
#include <vector>

#include <dlfcn.h>

#include "kernels/common/library_module.hpp"
#include "kernels/cpu_features.hpp"
#include "kernels/registry.hpp"

namespace ceiling::kernels {
namespace {

namespace fs = std::filesystem;

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

constexpr const char* module_name = "libceiling_libraries.so";

struct Loaded {
    const LibraryTable* table = nullptr;
    std::string why_not;
};

// dlopen'ed once and never closed: OpenBLAS and OpenMP threads may still be parked in it.
Loaded load_module() {
    std::vector<fs::path> candidates;
    if (const char* e = std::getenv("CEILING_LIBRARIES"); e && *e) {
        candidates.emplace_back(e);
    } else {
        std::error_code ec;
        const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
        if (!ec) {
            candidates.push_back(exe.parent_path() / module_name);
            candidates.push_back(exe.parent_path() / "../lib/ceiling" / module_name);
        }
#ifdef CEILING_LIBRARIES_BUILD_PATH
        candidates.emplace_back(CEILING_LIBRARIES_BUILD_PATH);
#endif
    }
    Loaded l;
    std::string tried;
    for (const auto& c : candidates) {
        std::error_code ec;
        if (!fs::exists(c, ec)) {
            tried += (tried.empty() ? "" : ", ") + c.string();
            continue;
        }
        void* h = ::dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            l.why_not = std::string(module_name) + " does not load: " + ::dlerror();
            return l;
        }
        using Entry = const LibraryTable* (*)();
        const auto entry = reinterpret_cast<Entry>(::dlsym(h, "ceiling_library_table"));
        const LibraryTable* t = entry ? entry() : nullptr;
        if (!t || t->version != LibraryTable::current_version || t->size != sizeof(LibraryTable)) {
            l.why_not = c.string() + " is from another build of ceiling (rebuild it)";
            return l;
        }
        l.table = t;
        return l;
    }
    l.why_not = std::string(module_name) + " not found (looked at " + tried +
                "; set CEILING_LIBRARIES to its path)";
    return l;
}

const Loaded& loaded() {
    static const Loaded l = load_module();
    return l;
}

LibraryInfo unloaded_info() { return {false, loaded().why_not, {}}; }

// The table, or an error saying why a library object cannot be made.
const LibraryTable& table_for(const char* what, bool present) {
    const auto* t = library_table();
    if (!t) throw std::runtime_error(std::string(what) + ": " + library_table_why_not());
    if (!present) throw std::runtime_error(std::string(what) + ": not built into " + module_name);
    return *t;
}

}  // namespace

const LibraryTable* library_table() { return loaded().table; }
const std::string& library_table_why_not() { return loaded().why_not; }

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

const LibraryInfo& openblas_info() {
    static const LibraryInfo info = [] {
        const auto* t = library_table();
        if (!t) return unloaded_info();
        LibraryInfo i = t->openblas_info();
        if (!i.available) return i;
        const std::string core = t->openblas_corename();
        const auto& f = cpu_features();
        if (auto better = openblas_better_core(core, f.avx512f, f.avx2); !better.empty())
            i.advice = "OpenBLAS chose its " + core + " kernels, not ones for this CPU's " +
                       (f.avx512f ? "AVX-512" : "AVX2") + ": run with OPENBLAS_CORETYPE=" + better;
        return i;
    }();
    return info;
}

const LibraryInfo& dnnl_info() {
    static const LibraryInfo info = library_table() ? library_table()->dnnl_info() : unloaded_info();
    return info;
}

const LibraryInfo& opencv_info() {
    static const LibraryInfo info =
        library_table() ? library_table()->opencv_info() : unloaded_info();
    return info;
}

void openblas_set_threads(int threads) {
    const auto& t = table_for("OpenBLAS", openblas_info().available);
    t.openblas_set_threads(threads);
}
void openblas_sgemm(const float* a, const float* b, float* c, int m, int n, int k) {
    const auto& t = table_for("OpenBLAS", openblas_info().available);
    t.openblas_sgemm(a, b, c, m, n, k);
}
void openblas_sgemv(const float* w, const float* x, float* y, int m, int k) {
    const auto& t = table_for("OpenBLAS", openblas_info().available);
    t.openblas_sgemv(w, x, y, m, k);
}

DnnlMatmulBf16::DnnlMatmulBf16(int m, int n, int k, const Bf16* b, int threads)
    : impl_(table_for("oneDNN", dnnl_info().available).dnnl_matmul_bf16(m, n, k, b, threads)) {
    if (!impl_)
        throw KernelUnavailable(dnnl_info().description + " has no bf16 matmul for this CPU");
}

DnnlConv::DnnlConv(DnnlConvKind kind, ConvShape s, const float* weights, int threads)
    : impl_(table_for("oneDNN", dnnl_info().available).dnnl_conv(kind, s, weights, threads)) {}

OpenCvNms::OpenCvNms(std::span<const Box> boxes, std::span<const float> scores,
                     float score_threshold)
    : impl_(table_for("OpenCV", opencv_info().available).opencv_nms(boxes, scores, score_threshold)) {}

OpenCvResize::OpenCvResize(ResizeShape s)
    : impl_(table_for("OpenCV", opencv_info().available).opencv_resize(s)) {}

}  // namespace ceiling::kernels
