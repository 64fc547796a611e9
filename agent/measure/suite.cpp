#include "agent/measure/suite.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>

#include <spdlog/spdlog.h>

#include "agent/measure/pmu_readings.hpp"
#include "collectors/clock.hpp"
#include "collectors/default_collectors.hpp"
#include "kernels/gpu/gpu_kernels.hpp"

namespace ceiling::measure {
namespace {

std::string join(const std::vector<std::string>& v) {
    std::string s;
    for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
    return s;
}

template <typename T>
T parse_or_throw(std::optional<T> v, std::string_view what, std::string_view name) {
    if (!v)
        throw std::invalid_argument("unknown " + std::string(what) + " '" + std::string(name) +
                                    "'");
    return *v;
}

}  // namespace

Work to_work(const kernels::KernelWork& w) {
    Work out;
    out.precision = parse_or_throw(parse_precision(kernels::to_string(w.precision)), "precision",
                                   kernels::to_string(w.precision));
    out.engine = parse_or_throw(parse_engine(kernels::to_string(w.engine)), "engine",
                                kernels::to_string(w.engine));
    out.device = parse_or_throw(parse_device(kernels::to_string(w.device)), "device",
                                kernels::to_string(w.device));
    out.ops = w.ops;
    out.compulsory_bytes = w.compulsory_bytes;
    out.working_set_bytes = w.working_set_bytes;
    return out;
}

std::vector<kernels::KernelCase> select_cases(const std::vector<std::string>& kernel_names,
                                              const std::vector<std::string>& variant_names,
                                              CaseSet set) {
    std::vector<std::string> valid_kernels;
    for (auto k : kernels::kernel_names()) valid_kernels.emplace_back(k);
    for (const auto& k : kernel_names)
        if (std::find(valid_kernels.begin(), valid_kernels.end(), k) == valid_kernels.end())
            throw std::invalid_argument("unknown kernel '" + k +
                                        "' (valid: " + join(valid_kernels) + ")");
    std::vector<std::string> valid_variants;
    for (auto v : kernels::variant_names) valid_variants.emplace_back(v);
    for (const auto& v : variant_names)
        if (!kernels::parse_variant(v))
            throw std::invalid_argument("unknown variant '" + v +
                                        "' (valid: " + join(valid_variants) + ")");

    const std::set<std::string> ks(kernel_names.begin(), kernel_names.end());
    const std::set<std::string> vs(variant_names.begin(), variant_names.end());
    std::vector<kernels::KernelCase> out;
    for (auto& c : kernels::standard_cases()) {
        if (set == CaseSet::quick ? !c.in_quick : set == CaseSet::standard && !c.in_default) continue;
        if (!ks.empty() && !ks.count(c.kernel)) continue;
        if (!vs.empty() && !vs.count(std::string(kernels::to_string(c.variant)))) continue;
        out.push_back(std::move(c));
    }
    // Each shape's variants one after the other (naive, optimized, library of 512^3, then of
    // 1024^3...), in the order the families list their shapes: the suite's comparisons are
    // ratios of medians, and a shared host drifts between cases run seconds apart (grouped
    // by variant, the optimized and library GEMM of one shape ran ~8 s apart).
    const auto group = [](const kernels::KernelCase& c) {
        return c.kernel + "/" + c.problem + "/" + c.shape + "/" + std::string(kernels::to_string(c.work.device));
    };
    std::map<std::string, std::size_t> first_seen;
    for (const auto& c : out) first_seen.emplace(group(c), first_seen.size());
    std::stable_sort(out.begin(), out.end(), [&](const auto& a, const auto& b) {
        return first_seen.at(group(a)) < first_seen.at(group(b));
    });
    return out;
}

SuiteResult run_suite(const std::vector<kernels::KernelCase>& cases, const MachineProfile& profile,
                      const SuiteOptions& options) {
    SuiteResult result;
    result.start_ns = collectors::now_ns();
    kernels::SetupOptions setup;
    setup.threads = options.threads;
    // The measured end of the last cache plateau is what the VM really gives us; the
    // nominal size may be the host's whole L3.
    std::size_t llc = 0;
    for (const auto& r : profile.bandwidth_roofs)
        if (r.level != "DRAM" && r.threads == 1 && r.kernel == "read")
            llc = std::max<std::size_t>(llc, r.max_working_set_bytes);
    if (llc == 0) llc = profile.host.last_level_cache_bytes();
    if (llc > 0) setup.last_level_cache_bytes = llc;

    for (const auto& c : cases) {
        CaseResult r;
        r.kernel_case = c;
        if (options.on_step) options.on_step(c.name());
        if (!c.unavailable.empty()) {
            r.status = CaseStatus::unavailable;
            r.message = c.unavailable;
            result.cases.push_back(std::move(r));
            continue;
        }
        std::unique_ptr<kernels::PreparedKernel> k;
        try {
            k = kernels::prepare(c, setup);
        } catch (const kernels::KernelUnavailable& e) {
            r.status = CaseStatus::unavailable;
            r.message = e.what();
            result.cases.push_back(std::move(r));
            continue;
        } catch (const std::exception& e) {
            r.status = CaseStatus::failed;
            r.message = std::string("setup failed: ") + e.what();
            result.cases.push_back(std::move(r));
            continue;
        }
        r.detail = k->detail();
        // Correct first: a kernel that computes the wrong thing is not timed.
        const double first_s = collectors::time_s([&] { k->run(); });
        r.verification = k->verify();
        if (!r.verification->ok) {
            r.status = CaseStatus::check_failed;
            r.message = r.verification->detail;
            spdlog::error("{}: result differs from the reference: {}", c.name(),
                          r.verification->detail);
            result.cases.push_back(std::move(r));
            continue;
        }
        // Warm-up: one more run when the first was short (page faults, lazy init, clocks).
        if (first_s < options.min_time_s / 4) k->run();

        // Wall clock and rusage, perf_event software events, and the CPU PMU where one is
        // usable: counted FLOPs and bytes then sit beside the analytic ones.
        collectors::CollectorSet counters = collectors::make_region_collectors();
        counters.start();
        std::vector<double> durations;
        double total = 0;
        while (static_cast<int>(durations.size()) < options.max_repeats &&
               (static_cast<int>(durations.size()) < options.min_repeats ||
                total < options.min_time_s)) {
            // A case slower than a second gets the minimum for a distribution, 3 runs.
            if (durations.size() >= 3 && first_s > 1.0) break;
            const std::int64_t begin = collectors::now_ns();
            k->run();
            const std::int64_t end = collectors::now_ns();
            r.spans_ns.emplace_back(begin, end);
            const double d = static_cast<double>(end - begin) * 1e-9;
            durations.push_back(d);
            total += d;
        }
        const auto readings = counters.stop();

        r.measurement.name = c.name();
        r.measurement.threads = k->threads();
        r.measurement.work = to_work(c.work);
        r.measurement.durations_s = durations;
        r.measurement.duration_s = summarize(durations);
        r.measurement.counters = to_counter_values(readings);
        const double runs = static_cast<double>(durations.size());
        if (const auto ops = readings.value("fp_ops")) {
            r.measurement.measured_ops = *ops / runs;
            r.measurement.measured_ops_source = Source::pmu;
        }
        if (const auto bytes = readings.value("dram_bytes")) {
            r.measurement.measured_bytes = *bytes / runs;
            r.measurement.measured_bytes_source = Source::pmu;
        }
        result.cases.push_back(std::move(r));
    }
    if (options.devices != SuiteDevices::cpu) run_gpu_suite(options, result);
    result.wall_s = static_cast<double>(collectors::now_ns() - result.start_ns) * 1e-9;
    return result;
}

void run_gpu_suite(const SuiteOptions& options, SuiteResult& result) {
    namespace kg = kernels::gpu;
    const auto available = kg::gpu_availability();
    if (available.devices.empty()) {
        if (options.devices == SuiteDevices::gpu)
            throw std::runtime_error("no GPU cases can run: " + available.reason);
        result.notes.push_back("GPU cases not run: " + available.reason);
        return;
    }
    auto selected = [](const std::vector<std::string>& names, const std::string& name) {
        return names.empty() || std::find(names.begin(), names.end(), name) != names.end();
    };
    // Launches are microseconds to milliseconds: a fixed count gives a distribution.
    const kg::TimingPlan plan{2, options.quick ? 10 : 30};
    std::vector<kg::GpuCase> cases;
    for (auto& g : kg::gpu_cases())
        if (selected(options.kernel_names, g.kernel) &&
            selected(options.variant_names, std::string(kernels::to_string(g.variant))))
            cases.push_back(std::move(g));
    if (options.add_steps) options.add_steps(static_cast<int>(cases.size()));
    for (const auto& g : cases) {
        CaseResult r;
        r.kernel_case.kernel = "gpu-" + g.kernel;
        r.kernel_case.problem = g.problem;
        r.kernel_case.variant = g.variant;
        r.kernel_case.shape = g.shape;
        r.kernel_case.implementation = g.implementation;
        r.kernel_case.work = g.work;
        r.detail = available.devices.front().name;
        if (options.on_step) options.on_step(r.kernel_case.name());
        if (!g.unavailable.empty()) {
            r.status = CaseStatus::unavailable;
            r.message = g.unavailable;
            result.cases.push_back(std::move(r));
            continue;
        }
        try {
            // run_gpu_case checks the result against the CPU reference before it times
            // anything, and throws (naming the wrong result) when the check fails.
            const auto run = kg::run_gpu_case(g, 0, plan);
            r.verification = run.verification;
            r.measurement.name = r.kernel_case.name();
            r.measurement.work = to_work(g.work);
            r.measurement.durations_s = run.seconds;
            r.measurement.duration_s = summarize(run.seconds);
        } catch (const std::exception& e) {
            r.status = CaseStatus::failed;
            r.message = e.what();
            spdlog::error("{}", r.message);
        }
        result.cases.push_back(std::move(r));
    }
}

}  // namespace ceiling::measure
