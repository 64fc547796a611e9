// ceiling_gpu_kernels: runs each GPU reference case exactly once (after a marker kernel that
// names it), checks it against the CPU reference and prints one line per case. It is the
// program scripts/gpu-check runs under `ncu --metrics` and under ceiling's own CUDA injection
// library, so both count the same kernels. Also prints the metric table as JSON, so the
// comparison uses ceiling's formulas and names.
//
//   ceiling_gpu_kernels [--case NAME]...    run (all available cases by default)
//   ceiling_gpu_kernels --list              case names and their analytic work
//   ceiling_gpu_kernels --metric-table      derived metrics as JSON
//   ceiling_gpu_kernels --time PROFILE      time each case (CUDA events, after warm-up) and
//                                           print its rates against PROFILE's GPU roofs
// Exit status: 0 all checks passed, 1 a check or CUDA call failed, 2 bad usage.

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <iostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "collectors/cupti/metric_table.hpp"
#include "diagnosis/machine_profile.hpp"
#include "diagnosis/statistics.hpp"
#include "kernels/gpu/gpu_kernels.hpp"

namespace {

namespace kg = ceiling::kernels::gpu;
namespace cg = ceiling::collectors::gpu;

int metric_table() {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& m : cg::derived_metrics()) {
        nlohmann::json terms = nlohmann::json::array();
        for (const auto& t : m.terms) terms.push_back({{"metric", t.metric}, {"coefficient", t.coefficient}});
        out.push_back({{"name", m.name}, {"unit", m.unit}, {"precision", m.precision}, {"engine", m.engine},
                       {"terms", terms}});
    }
    std::cout << out.dump(1) << "\n";
    return 0;
}

int list(const std::vector<kg::GpuCase>& cases) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& c : cases)
        out.push_back({{"name", c.name()}, {"ops", c.work.ops}, {"bytes", c.work.compulsory_bytes},
                       {"precision", ceiling::kernels::to_string(c.work.precision)},
                       {"engine", ceiling::kernels::to_string(c.work.engine)}, {"unavailable", c.unavailable}});
    std::cout << out.dump(1) << "\n";
    return 0;
}

// Achieved rates of each case against the GPU roofs of a saved profile: the fraction of the
// best compute roof of the case's precision and engine, and of the best HBM roof.
int time_cases(const std::vector<kg::GpuCase>& cases, const std::string& profile_path) {
    std::ifstream in(profile_path);
    if (!in) {
        std::cerr << "ceiling_gpu_kernels: cannot read " << profile_path << "\n";
        return 2;
    }
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto profile = ceiling::parse_machine_profile(text);
    if (profile.gpus.empty()) {
        std::cerr << "ceiling_gpu_kernels: " << profile_path << " has no GPU section\n";
        return 1;
    }
    const auto& gpu = profile.gpus.front();
    const auto* hbm = gpu.best_bandwidth_roof("HBM");
    nlohmann::json out = nlohmann::json::array();
    int failed = 0;
    for (const auto& c : cases) {
        if (!c.unavailable.empty()) continue;
        try {
            const auto run = kg::run_gpu_case(c, gpu.index, {3, 10});
            const auto s = ceiling::summarize(run.seconds);
            const auto p = ceiling::parse_precision(ceiling::kernels::to_string(c.work.precision));
            const auto e = ceiling::parse_engine(ceiling::kernels::to_string(c.work.engine));
            const auto* roof = p && e ? gpu.best_compute_roof(*p, *e) : nullptr;
            nlohmann::json j = {{"name", c.name()}, {"median_s", s.median}, {"rel_spread", s.rel_spread},
                                {"ops_per_s", c.work.ops / s.median}, {"bytes_per_s", c.work.compulsory_bytes / s.median}};
            if (roof) {
                j["compute_roof"] = roof->name;
                j["compute_fraction"] = c.work.ops / s.median / roof->ops_per_s.median;
            }
            if (hbm) {
                j["bandwidth_roof"] = hbm->name;
                j["bandwidth_fraction"] = c.work.compulsory_bytes / s.median / hbm->bytes_per_s.median;
            }
            out.push_back(j);
        } catch (const kg::GpuError& err) {
            out.push_back({{"name", c.name()}, {"error", err.what()}});
            ++failed;
        }
    }
    std::cout << out.dump(1) << "\n";
    return failed ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
    const auto cases = kg::gpu_cases();
    std::vector<std::string> chosen;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--metric-table") return metric_table();
        if (a == "--list") return list(cases);
        if (a == "--time" && i + 1 < argc) return time_cases(cases, argv[i + 1]);
        if (a == "--case" && i + 1 < argc) {
            chosen.push_back(argv[++i]);
            continue;
        }
        std::cerr << "usage: ceiling_gpu_kernels [--case NAME]... | --list | --metric-table | --time PROFILE\n";
        return 2;
    }
    const auto availability = kg::gpu_availability();
    if (availability.devices.empty()) {
        std::cerr << "ceiling_gpu_kernels: " << availability.reason << "\n";
        return 1;
    }
    int failed = 0, index = 0;
    for (const auto& c : cases) {
        ++index;
        if (!chosen.empty() && std::find(chosen.begin(), chosen.end(), c.name()) == chosen.end()) continue;
        try {
            kg::launch_marker(0, index);  // "ceiling_marker_kernel": the cases' boundary in traces
            const auto v = kg::run_gpu_case_once(c, 0);
            std::printf("case %d %s %s max_error=%.3g tolerance=%.3g (%s)\n", index, c.name().c_str(),
                        v.ok ? "ok" : "FAILED", v.max_error, v.tolerance, v.detail.c_str());
            if (!v.ok) ++failed;
        } catch (const kg::GpuError& e) {
            std::printf("case %d %s FAILED %s\n", index, c.name().c_str(), e.what());
            ++failed;
        }
    }
    kg::launch_marker(0, 0);  // closes the last case
    std::fflush(stdout);
    return failed ? 1 : 0;
}
