#include "kernels/registry.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include "diagnosis/format.hpp"
#include "kernels/common/check.hpp"
#include "kernels/common/family.hpp"
#include "kernels/parallel.hpp"

namespace ceiling::kernels {
namespace {

// Suite order: the compute-bound classic first, then the bandwidth-bound decode step,
// then the vision kernels.
using FamilyGetter = const KernelFamily& (*)();
constexpr FamilyGetter families[] = {gemm_family, gemv_family, conv_family, nms_family,
                                     resize_family};
const std::vector<std::string_view>& family_names() {
    static const std::vector<std::string_view> names = [] {
        std::vector<std::string_view> v;
        for (auto get : families) v.push_back(get().name);
        return v;
    }();
    return names;
}

const KernelFamily* find_family(std::string_view name) {
    for (auto get : families)
        if (get().name == name) return &get();
    return nullptr;
}

std::string join(const auto& names) {
    std::string s;
    for (const auto& n : names) {
        if (!s.empty()) s += ", ";
        s += n;
    }
    return s;
}

// MemAvailable: what the kernel can have without swapping or evicting others' pages.
std::optional<std::size_t> mem_available_bytes() {
    std::ifstream in("/proc/meminfo");
    std::string key;
    std::size_t kib = 0;
    std::string unit;
    while (in >> key >> kib >> unit)
        if (key == "MemAvailable:") return kib * 1024;
    return std::nullopt;
}

}  // namespace

std::string_view to_string(WorkPrecision p) {
    return work_precision_names.at(static_cast<std::size_t>(p));
}
std::string_view to_string(WorkEngine e) { return work_engine_names.at(static_cast<std::size_t>(e)); }
std::string_view to_string(WorkDevice d) { return work_device_names.at(static_cast<std::size_t>(d)); }
std::string_view to_string(Variant v) { return variant_names.at(static_cast<std::size_t>(v)); }

std::optional<Variant> parse_variant(std::string_view s) {
    for (std::size_t i = 0; i < variant_names.size(); ++i)
        if (variant_names[i] == s) return static_cast<Variant>(i);
    return std::nullopt;
}

std::string KernelCase::name() const {
    return kernel + "/" + problem + "/" + std::string(to_string(variant)) + "/" + shape;
}

PreparedKernel::PreparedKernel(int buffer_sets, int threads)
    : sets_(std::max(1, buffer_sets)), threads_(std::max(1, threads)) {}

void PreparedKernel::run() {
    last_ = next_;
    run_set(next_);
    next_ = (next_ + 1) % sets_;
}

Verification PreparedKernel::verify() const {
    if (last_ < 0) return {false, 0, 0, "not run yet: call run() before verify()"};
    return verify_set(last_);
}

std::span<const std::string_view> kernel_names() { return family_names(); }

std::vector<std::string_view> problem_names(std::string_view kernel) {
    const auto* f = find_family(kernel);
    if (!f) return {};
    return {f->problems.begin(), f->problems.end()};
}

std::vector<KernelCase> standard_cases() {
    std::vector<KernelCase> all;
    for (auto get : families) {
        auto cases = get().standard_cases();
        std::move(cases.begin(), cases.end(), std::back_inserter(all));
    }
    return all;
}

KernelCase make_case(std::string_view kernel, std::string_view problem, Variant variant,
                     std::string_view shape) {
    const auto* f = find_family(kernel);
    if (!f)
        throw std::invalid_argument("unknown kernel '" + std::string(kernel) +
                                    "' (valid: " + join(family_names()) + ")");
    if (std::find(f->problems.begin(), f->problems.end(), problem) == f->problems.end())
        throw std::invalid_argument("unknown " + std::string(kernel) + " problem '" +
                                    std::string(problem) + "' (valid: " + join(f->problems) + ")");
    return f->make_case(problem, variant, shape);
}

int rotation_sets(double working_set_bytes, std::size_t last_level_cache_bytes,
                  std::size_t largest_cache_bytes) {
    const auto llc = static_cast<double>(last_level_cache_bytes);
    if (working_set_bytes < llc || working_set_bytes <= 0) return 1;
    // Between two uses of one set, the other sets (and the set itself) touch >= 4 x the
    // cache: enough for any replacement policy to have evicted it. A VM's measured plateau
    // can end well inside a nominal L3 that still holds part of the data (a 2-vCPU Xeon VM:
    // plateau 16 MiB, L3 105 MiB; a 64 MiB decode GEMM reused back to back streamed 5 % faster
    // than with its data evicted).
    const double cache = std::max(llc, static_cast<double>(largest_cache_bytes));
    return static_cast<int>(std::ceil(4 * cache / working_set_bytes));
}

int rotation_sets(double working_set_bytes, const SetupOptions& options) {
    return rotation_sets(working_set_bytes, options.last_level_cache_bytes,
                         options.largest_cache_bytes);
}

std::size_t required_bytes(const KernelCase& c, const SetupOptions& options) {
    const int sets = rotation_sets(c.work.working_set_bytes, options);
    const int threads = c.multithreaded ? resolve_threads(options) : 1;
    return c.fixed_bytes + static_cast<std::size_t>(sets) * c.bytes_per_set +
           static_cast<std::size_t>(threads) * c.bytes_per_thread;
}

std::string check_fits(const KernelCase& c, const SetupOptions& options) {
    const auto available = options.available_memory_bytes ? options.available_memory_bytes
                                                           : mem_available_bytes();
    if (!available) return {};  // unknown: let the allocation decide
    const std::size_t need = required_bytes(c, options);
    // Leave a tenth for the rest of the process and the page cache's minimum.
    const auto usable = static_cast<double>(*available) * 0.9;
    if (static_cast<double>(need) <= usable) return {};
    const int sets = rotation_sets(c.work.working_set_bytes, options);
    std::ostringstream s;
    s << c.name() << " needs " << bytes(static_cast<double>(need)) << " ("
      << sets << " buffer set" << (sets > 1 ? "s" : "") << " of "
      << bytes(static_cast<double>(c.bytes_per_set)) << " + workspace) but only "
      << bytes(static_cast<double>(*available))
      << " of memory is available: choose a smaller shape";
    return s.str();
}

int resolve_threads(const SetupOptions& options) {
    return options.threads > 0 ? options.threads : available_cpus();
}

std::unique_ptr<PreparedKernel> prepare(const KernelCase& c, const SetupOptions& options) {
    if (!c.unavailable.empty()) throw KernelUnavailable(c.name() + ": " + c.unavailable);
    if (auto why = check_fits(c, options); !why.empty()) throw KernelUnavailable(why);
    if (!c.setup) throw KernelUnavailable(c.name() + ": no setup function");
    const int sets = rotation_sets(c.work.working_set_bytes, options);
    return c.setup(options, sets);
}

}  // namespace ceiling::kernels
