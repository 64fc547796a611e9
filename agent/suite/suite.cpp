#include "agent/suite/suite.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <stdexcept>
#include <tuple>

#include <spdlog/spdlog.h>

#include "agent/machine/pmu_readings.hpp"
#include "agent/machine/roof_check.hpp"
#include "collectors/clock.hpp"
#include "collectors/default_collectors.hpp"
#include "diagnosis/diagnosis.hpp"
#include "diagnosis/roofline.hpp"
#include "kernels/gpu/gpu_kernels.hpp"

namespace ceiling::measure {
namespace {

std::string join(const std::vector<std::string>& v) {
    std::string s;
    for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
    return s;
}

// The cases of one shape, every problem and variant of it: run back to back and timed
// together (run_suite). The suite compares problems of a shape by ratio as it does variants
// (GEMV int8 against fp32 weights, dense against depthwise convolution), so host drift should
// hit both sides of those alike too. (GEMV int8's speed-up over fp32 still moved in turns:
// 3.90x and 2.77x in two runs a minute apart, 2.07x and 3.6x timed apart: the int8 kernel's
// own rate moves with the host's share of the core.)
std::string shape_group(const kernels::KernelCase& c) {
    return c.kernel + "/" + c.shape + "/" + std::string(kernels::to_string(c.work.device));
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
    out.written_bytes = w.written_bytes;
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
    // Each shape's problems and variants one after the other (naive, optimized, library of
    // 512^3, then of 1024^3...), in the order the families list their shapes: the suite's
    // comparisons are ratios of medians, and a shared host drifts between cases run seconds apart
    // (grouped by variant, the optimized and library GEMM of one shape ran ~8 s apart); run_suite
    // then times them together, in rounds.
    std::map<std::string, std::size_t> first_seen;
    for (const auto& c : out) first_seen.emplace(shape_group(c), first_seen.size());
    std::stable_sort(out.begin(), out.end(), [&](const auto& a, const auto& b) {
        return first_seen.at(shape_group(a)) < first_seen.at(shape_group(b));
    });
    return out;
}

namespace {

// A roof a case is judged against that other tenants of the host can take a share of: a
// compute roof, or the DRAM bandwidth of a kernel ("read", "triad"); by kind, name, threads.
using RoofKey = std::tuple<RoofKind, std::string, int>;

// A case prepared, checked and waiting to be timed, and what its timing has gathered.
struct Pending {
    std::size_t index = 0;  // in the suite's case list
    CaseResult result;
    std::unique_ptr<kernels::PreparedKernel> kernel;
    double first_s = 0;
    collectors::CollectorSet counters;
    std::optional<collectors::Readings> readings;
    std::vector<double> durations;
    double total_s = 0;
    std::vector<RoofKey> roofs;  // looked at in turns with it (roofs_judging)
};

// The roofs of RoofKey's kinds that the diagnosis compares `p` with, where its first run
// reached at least `from` of them (as `run` checks only roofs that can decide a verdict).
std::vector<RoofKey> roofs_judging(const Pending& p, const MachineProfile& profile, double from) {
    if (p.result.kernel_case.variant == kernels::Variant::naive) return {};  // far from any roof
    Measurement m;
    m.name = p.result.kernel_case.name();
    m.threads = p.kernel->threads();
    m.work = to_work(p.result.kernel_case.work);
    m.durations_s = {p.first_s};
    m.duration_s = summarize(m.durations_s);
    std::vector<RoofKey> out;
    for (const auto& r : diagnose_kernel(profile, m, Thresholds{}).roofs) {
        if (!r.fraction || *r.fraction < from) continue;
        if (r.kind == RoofKind::compute) out.emplace_back(r.kind, r.roof, r.threads);
        if (r.kind == RoofKind::bandwidth && r.level == "DRAM")
            out.emplace_back(r.kind, r.kernel, r.threads);
    }
    return out;
}

// The suite's roof looks, made once each (buffers and calibration) and kept for every shape.
class RoofLooks {
  public:
    explicit RoofLooks(const MachineProfile& profile) : profile_(profile) {}
    // nullptr when the roof cannot be measured here.
    RoofLook* get(const RoofKey& key) {
        const auto [it, fresh] = looks_.try_emplace(key);
        if (fresh) {
            const auto& [kind, name, threads] = key;
            it->second = kind == RoofKind::compute
                             ? RoofLook::compute(profile_, name, threads)
                             : RoofLook::dram(with_bandwidth_kernel(profile_, name), threads);
        }
        return it->second.get();
    }

  private:
    const MachineProfile& profile_;
    std::map<RoofKey, std::unique_ptr<RoofLook>> looks_;
};

bool timed_enough(const Pending& p, const SuiteOptions& o) {
    const auto n = static_cast<int>(p.durations.size());
    // A case slower than a second gets the minimum for a distribution, 3 runs.
    if (n >= 3 && p.first_s > 1.0) return true;
    return n >= o.max_repeats || (n >= o.min_repeats && p.total_s >= o.min_time_s);
}

// Times the pending cases of one shape (its variants) in rounds, each case a quarter of its
// minimum time per round in turn (one run per round when a run takes longer), so
// that a host that slows down for a few seconds slows every variant alike: the suite's
// comparisons are ratios of their medians, and timed one after the other they had moved
// with the host by 20-30 % on a shared VM. The counters run per round and add up. Alone, a
// case is timed in one round, as before.
// The roofs the cases are judged against get one look before the first round and one after
// each (`looks`, null: none): the profile's roofs were measured minutes or days before, and
// on a shared host the FMA roof was seen to move between 0.7 and 1.1 of it within a minute
// while the GEMM beside it kept a steady fraction of the roof measured in the same rounds.
// Returns one check per roof, naming the cases it was measured beside.
std::vector<RoofCheck> time_in_rounds(std::vector<Pending>& cases, const SuiteOptions& o,
                                      RoofLooks* looks) {
    std::map<RoofKey, std::vector<std::string>> beside;
    if (looks)
        for (const auto& p : cases)
            for (const auto& key : p.roofs)
                if (looks->get(key)) beside[key].push_back(p.result.kernel_case.name());
    const auto look = [&] {
        for (const auto& [key, names] : beside) looks->get(key)->look();
    };
    for (const auto& [key, names] : beside) looks->get(key)->forget();
    look();
    constexpr int rounds = 4;
    const double quota_s = cases.size() > 1 ? o.min_time_s / rounds : INFINITY;
    for (bool left = true; left;) {
        left = false;
        for (auto& p : cases) {
            if (timed_enough(p, o)) continue;
            p.counters.start();
            double round_s = 0;
            do {
                const std::int64_t begin = collectors::now_ns();
                p.kernel->run();
                const std::int64_t end = collectors::now_ns();
                p.result.spans_ns.emplace_back(begin, end);
                const double d = static_cast<double>(end - begin) * 1e-9;
                p.durations.push_back(d);
                p.total_s += d;
                round_s += d;
            } while (!timed_enough(p, o) && round_s < quota_s);
            auto r = p.counters.stop();
            p.readings = p.readings ? collectors::combine_readings(*p.readings, r) : std::move(r);
            left = left || !timed_enough(p, o);
        }
        look();
    }
    for (auto& p : cases) {
        auto& r = p.result;
        const auto& c = r.kernel_case;
        const auto readings = p.readings.value_or(collectors::Readings{});
        r.measurement.name = c.name();
        r.measurement.threads = p.kernel->threads();
        r.measurement.work = to_work(c.work);
        r.measurement.durations_s = p.durations;
        r.measurement.duration_s = summarize(p.durations);
        r.measurement.counters = to_counter_values(readings);
        const double runs = static_cast<double>(p.durations.size());
        if (const auto ops = readings.value("fp_ops")) {
            r.measurement.measured_ops = *ops / runs;
            r.measurement.measured_ops_source = Source::pmu;
        }
        if (const auto bytes = readings.value("dram_bytes")) {
            r.measurement.measured_bytes = *bytes / runs;
            r.measurement.measured_bytes_source = Source::pmu;
        }
        p.kernel.reset();  // its buffers go before the next shape's are made
    }
    std::vector<RoofCheck> checks;
    for (const auto& [key, names] : beside) {
        checks.push_back(looks->get(key)->check());
        checks.back().beside = names;
    }
    return checks;
}

}  // namespace

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
    setup.largest_cache_bytes = profile.host.last_level_cache_bytes();

    // Consecutive cases of one shape, its problems and variants (select_cases orders them
    // so), are timed together, in rounds; a naive variant, minutes slow and never compared
    // by ratio, alone.
    std::vector<std::optional<CaseResult>> done(cases.size());
    std::vector<Pending> pending;
    std::optional<RoofLooks> looks;
    if (options.roof_checks) looks.emplace(profile);
    const auto time_pending = [&] {
        if (looks)
            for (auto& p : pending) p.roofs = roofs_judging(p, profile, options.roof_check_from);
        for (auto& c : time_in_rounds(pending, options, looks ? &*looks : nullptr))
            result.roof_checks.push_back(std::move(c));
        for (auto& p : pending) done[p.index] = std::move(p.result);
        pending.clear();
    };
    const auto joins = [&](const kernels::KernelCase& c) {
        const auto& first = pending.front().result.kernel_case;
        return c.variant != kernels::Variant::naive && first.variant != kernels::Variant::naive &&
               shape_group(c) == shape_group(first);
    };
    for (std::size_t i = 0; i < cases.size(); ++i) {
        const auto& c = cases[i];
        if (!pending.empty() && !joins(c)) time_pending();
        CaseResult r;
        r.kernel_case = c;
        if (options.on_step) options.on_step(c.name());
        if (!c.unavailable.empty()) {
            r.status = CaseStatus::unavailable;
            r.message = c.unavailable;
            done[i] = std::move(r);
            continue;
        }
        // Too big beside the shape's other variants (kernels::check_fits, allocating
        // nothing): those are timed and freed first, and this one gets the memory alone.
        if (!pending.empty() && !kernels::check_fits(c, setup).empty()) time_pending();
        std::unique_ptr<kernels::PreparedKernel> k;
        try {
            k = kernels::prepare(c, setup);
        } catch (const kernels::KernelUnavailable& e) {
            r.status = CaseStatus::unavailable;
            r.message = e.what();
        } catch (const std::exception& e) {
            r.status = CaseStatus::failed;
            r.message = std::string("setup failed: ") + e.what();
        }
        if (!k) {
            done[i] = std::move(r);
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
            done[i] = std::move(r);
            continue;
        }
        // Warm-up: one more run when the first was short (page faults, lazy init, clocks).
        if (first_s < options.min_time_s / 4) k->run();
        // Wall clock and rusage, perf_event software events, and the CPU PMU where one is
        // usable: counted FLOPs and bytes then sit beside the analytic ones.
        Pending p;
        p.index = i;
        p.result = std::move(r);
        p.kernel = std::move(k);
        p.first_s = first_s;
        p.counters = collectors::make_region_collectors();
        pending.push_back(std::move(p));
    }
    if (!pending.empty()) time_pending();
    for (auto& r : done) result.cases.push_back(std::move(*r));
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
