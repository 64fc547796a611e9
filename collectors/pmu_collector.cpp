#include "collectors/pmu_collector.hpp"

#include <algorithm>
#include <set>
#include <utility>

#include "collectors/pmu_metrics.hpp"
#include "collectors/sysfs_pmu.hpp"

namespace ceiling::collectors {

namespace {

constexpr std::string_view event_prefix = "event:";

CounterSpec core_spec(const std::string& name, const EventEncoding& e) {
    CounterSpec s;
    s.name = name;
    s.encoding = e;
    s.unit = "count";
    s.source = ReadingSource::pmu;
    s.scope = EventScope::hardware;
    return s;
}

// Encodes a table event for the table's model ("spr::FP_ARITH_INST_RETIRED:SCALAR_DOUBLE").
std::optional<CounterSpec> encode(const PfmApi& pfm, const UarchEvents& t, std::string_view event,
                                  std::vector<std::string>& notes) {
    const PfmResult r = pfm.encode(std::string(t.pmu) + "::" + std::string(event));
    if (!r.value) {
        notes.push_back("cannot encode " + std::string(event) + " for " + std::string(t.pmu) +
                        ": " + r.error);
        return std::nullopt;
    }
    return core_spec(std::string(event), r.value->encoding);
}

// Adds `c` into the total for one name (uncore instances, or one event on several CPUs).
void add_into(EventCounts& counts, const std::string& name, const ScaledCount& c) {
    auto [it, inserted] = counts.try_emplace(name, c);
    if (inserted) return;
    ScaledCount& t = it->second;
    if (!t.value || !c.value) {
        t.value.reset();
        t.note = t.note.empty() ? c.note : t.note;
        return;
    }
    *t.value += *c.value;
    if (c.running_fraction)
        t.running_fraction = std::min(t.running_fraction.value_or(1.0), *c.running_fraction);
    t.low_confidence = t.low_confidence || c.low_confidence;
    if (t.note.empty()) t.note = c.note;
}

void collect(const PerfEventSet& set, EventCounts& counts) {
    const auto values = set.read_counts();
    for (std::size_t i = 0; i < values.size(); ++i) {
        if (!values[i]) continue;
        std::string name = set.specs()[i].name;
        // Uncore specs are named "PMU/event": summed over PMU instances by event.
        if (const auto slash = name.find('/'); slash != std::string::npos)
            name = name.substr(slash + 1);
        add_into(counts, name, *values[i]);
    }
}

Reading derived_reading(const std::string& name, const DerivedValue& d, const std::string& unit) {
    Reading r;
    r.name = name;
    r.value = *d.value;
    r.unit = unit;
    r.source = ReadingSource::pmu;
    r.running_fraction = d.running_fraction;
    r.low_confidence = d.low_confidence;
    r.estimate = d.estimate;
    r.note = d.note;
    return r;
}

}  // namespace

Capability probe_cpu_pmu(PerfEventApi& api, const PerfEnvironment& env) {
    CounterSpec cycles = core_spec("cycles", {PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, 0, 0});
    PerfEventSetOptions opts;
    opts.environment = &env;
    auto set = PerfEventSet::open(CountTarget::calling_thread(), {cycles}, api, opts);
    if (!set.failures().empty()) return set.failures().front().explanation;
    return Capability::yes(set.user_space_only()
                               ? "user-space counting only (perf_event_paranoid=" +
                                     std::to_string(env.paranoid.value_or(2)) + ")"
                               : "user and kernel counting");
}

namespace {
// Kernel PMUs that count DRAM traffic at the memory controller.
struct MemoryControllerPmu {
    std::string_view prefix;
    std::string_view what;
};
constexpr MemoryControllerPmu memory_controller_pmus[] = {
    {"uncore_imc", "Intel integrated memory controller"},
    {"amd_umc", "AMD unified memory controller"},
    {"amd_df", "AMD data fabric"},
};
}  // namespace

Capability probe_memory_controller(const FsRoot& root, PerfEventApi& api,
                                   const PerfEnvironment& env) {
    for (const auto& mc : memory_controller_pmus) {
        const auto pmus = sysfs_pmus(root, mc.prefix);
        if (pmus.empty()) continue;
        const std::string which = std::string(mc.what) + " (" + pmus.front() +
                                  (pmus.size() > 1 ? ".." + pmus.back() : "") + ")";
        if (!env.system_wide_allowed())
            return Capability::no(which +
                                      " present, but CPU-wide events need perf_event_paranoid<=0 "
                                      "or CAP_PERFMON (perf_event_paranoid=" +
                                      (env.paranoid ? std::to_string(*env.paranoid) : "unknown") +
                                      ")",
                                  "sudo sysctl kernel.perf_event_paranoid=0 (or sudo setcap "
                                  "cap_perfmon+ep <path to ceiling>)");
        // Try one named event of the first instance, as the collector would.
        for (const auto& event : sysfs_event_names(root, pmus.front())) {
            const SysfsLookup l = resolve_sysfs_event(root, pmus.front(), event);
            if (!l.event) continue;
            CounterSpec s = core_spec(event, l.event->encoding);
            s.scope = EventScope::system_wide;
            PerfEventSetOptions opts;
            opts.environment = &env;
            auto set = PerfEventSet::open(
                CountTarget::cpu_wide({l.event->cpus.empty() ? 0 : l.event->cpus.front()}), {s},
                api, opts);
            if (!set.failures().empty()) return set.failures().front().explanation;
            return Capability::yes(which);
        }
        return Capability::yes(which + ", no named events (raw encodings only)");
    }
    if (env.virtual_machine)
        return Capability::no(
            "no memory-controller PMU exposed in this VM (uncore counters are not "
            "virtualised)",
            "measure DRAM traffic on bare metal; here bytes come from analytic "
            "counts or cache-miss estimates");
    return Capability::no("no memory-controller PMU exposed (uncore_imc / amd_umc absent)",
                          "load the uncore driver (modprobe intel_uncore) or use a kernel that "
                          "supports this CPU's uncore");
}

PmuPlan plan_pmu_events(const PmuOptions& options, const PmuBackends& b) {
    return plan_pmu_events(options, b, probe_cpu_pmu(*b.perf, *b.environment));
}

PmuPlan plan_pmu_events(const PmuOptions& options, const PmuBackends& b, Capability cpu_pmu) {
    PmuPlan plan;
    const PerfEnvironment& env = *b.environment;
    plan.capability = std::move(cpu_pmu);
    if (!plan.capability.available) return plan;

    const PfmApi& pfm = *b.pfm;
    if (Capability s = pfm.status(); !s.available) plan.notes.push_back(s.reason);
    plan.pmu = pfm.host_pmu();
    plan.table = plan.pmu ? find_uarch_events(*plan.pmu) : nullptr;
    if (!plan.table) {
        // Generic hardware events still work: the kernel knows cycles and instructions.
        plan.notes.push_back(plan.pmu ? "no FLOP/byte event table for PMU model " + *plan.pmu
                                      : "libpfm4 does not recognise this CPU's PMU");
        plan.core.push_back(
            core_spec("cycles", {PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, 0, 0}));
        plan.core.push_back(
            core_spec("instructions", {PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, 0, 0}));
        plan.capability.reason += "; cycles and instructions only";
    } else {
        const UarchEvents& t = *plan.table;
        // Intel counts cycles and instructions on fixed counters, beside the programmable ones.
        plan.hardware_counters = t.general_counters + (t.vendor == "GenuineIntel" ? 2 : 0);
        for (std::string_view e : {t.cycles, t.instructions})
            if (auto s = encode(pfm, t, e, plan.notes)) plan.core.push_back(std::move(*s));
        for (const FlopTerm& f : t.flops) {
            if (std::find(options.flop_groups.begin(), options.flop_groups.end(), f.group) ==
                options.flop_groups.end())
                continue;
            if (auto s = encode(pfm, t, f.event, plan.notes)) plan.core.push_back(std::move(*s));
        }
        if (options.memory) {
            for (const ByteRecipe& r : t.dram_bytes) {
                if (!r.sysfs_pmu.empty()) {
                    const auto pmus = sysfs_pmus(*b.root, r.sysfs_pmu);
                    if (pmus.empty()) {
                        plan.notes.push_back("no " + std::string(r.sysfs_pmu) + " PMU exposed: " +
                                             std::string(r.name) + " unavailable");
                        continue;
                    }
                    if (!env.system_wide_allowed()) {
                        plan.notes.push_back(
                            std::string(r.name) +
                            " needs perf_event_paranoid<=0 or "
                            "CAP_PERFMON (sudo sysctl kernel.perf_event_paranoid=0)");
                        continue;
                    }
                    std::vector<CounterSpec> specs;
                    std::vector<int> cpus;
                    bool complete = true;
                    for (const auto& pmu : pmus)
                        for (const ByteTerm& term : r.terms) {
                            const SysfsLookup l = resolve_sysfs_event(*b.root, pmu, term.event);
                            if (!l.event) {
                                complete = false;
                                continue;
                            }
                            CounterSpec s =
                                core_spec(pmu + "/" + std::string(term.event), l.event->encoding);
                            s.scope = EventScope::system_wide;
                            specs.push_back(std::move(s));
                            if (cpus.empty()) cpus = l.event->cpus;
                        }
                    if (!complete || specs.empty()) continue;
                    plan.uncore = std::move(specs);
                    plan.uncore_cpus = cpus.empty() ? std::vector<int>{0} : cpus;
                    plan.bytes = &r;
                    break;
                }
                std::vector<CounterSpec> specs;
                for (const ByteTerm& term : r.terms)
                    if (auto s = encode(pfm, t, term.event, plan.notes))
                        specs.push_back(std::move(*s));
                if (specs.size() != r.terms.size()) continue;
                plan.core.insert(plan.core.end(), specs.begin(), specs.end());
                plan.bytes = &r;
                break;
            }
            if (!plan.bytes) plan.notes.push_back("no DRAM traffic events usable here");
        }
    }
    for (const CounterSpec& extra : options.extra) {
        CounterSpec s = extra;
        s.name = std::string(event_prefix) + extra.name;
        plan.core.push_back(std::move(s));
    }
    return plan;
}

PmuCollector::PmuCollector(CountTarget target, PmuOptions options, PmuBackends backends)
    : target_(std::move(target)), options_(std::move(options)), backends_(backends) {
    if (!backends_.perf) backends_.perf = &system_perf_event_api();
    if (!backends_.root) backends_.root = &FsRoot::system();
    if (!backends_.environment) {
        own_env_ = read_perf_environment(*backends_.root);
        backends_.environment = &*own_env_;
    }
}

PmuCollector::~PmuCollector() = default;

const PmuPlan& PmuCollector::plan() {
    if (plan_) return *plan_;
    Capability cpu_pmu = probe_cpu_pmu(*backends_.perf, *backends_.environment);
    // libpfm4's tables take ~2 ms to initialise (a tenth of `ceiling run -- /bin/true`):
    // only where there is a PMU to encode events for.
    if (cpu_pmu.available && !backends_.pfm) {
        own_pfm_ = make_pfm_api();
        backends_.pfm = own_pfm_.get();
    }
    plan_ = plan_pmu_events(options_, backends_, std::move(cpu_pmu));
    return *plan_;
}

Capability PmuCollector::probe() { return plan().capability; }

void PmuCollector::start() {
    const PmuPlan& p = plan();
    if (!p.capability.available) throw CollectorError(p.capability);
    PerfEventSetOptions opts;
    opts.min_running_fraction = options_.min_running_fraction;
    opts.hardware_counters = p.hardware_counters;
    opts.environment = backends_.environment;
    core_set_.emplace(PerfEventSet::open(target_, p.core, *backends_.perf, opts));
    if (!p.uncore.empty())
        uncore_set_.emplace(PerfEventSet::open(CountTarget::cpu_wide(p.uncore_cpus), p.uncore,
                                               *backends_.perf, opts));
    for (auto* set : {&core_set_, &uncore_set_}) {
        if (!*set) continue;
        // An exec target's core counters are armed: the kernel enables them at exec.
        if (set == &core_set_ && target_.enable_on_exec) continue;
        (*set)->reset();
        (*set)->enable();
    }
}

Readings PmuCollector::read() { return core_set_ ? derive() : Readings{}; }

Readings PmuCollector::stop() {
    if (!core_set_) return {};
    for (auto* set : {&core_set_, &uncore_set_})
        if (*set) (*set)->disable();
    Readings r = derive();
    core_set_.reset();
    uncore_set_.reset();
    return r;
}

Readings PmuCollector::derive() const {
    Readings r;
    const PmuPlan& p = *plan_;

    EventCounts counts;
    collect(*core_set_, counts);
    if (uncore_set_) collect(*uncore_set_, counts);
    // Raw events first (with their own multiplexing warnings), then what they mean.
    Readings raw = core_set_->read();
    if (uncore_set_) raw.append(uncore_set_->read());
    r.warnings = std::move(raw.warnings);
    for (auto& v : raw.values) {
        if (v.name == "cycles" || v.name == "instructions" || v.name.rfind(event_prefix, 0) == 0) {
            r.values.push_back(std::move(v));
            continue;
        }
        v.name = std::string(event_prefix) + v.name;
        r.values.push_back(std::move(v));
    }
    auto count_of = [&](std::string_view name) -> std::optional<double> {
        auto it = counts.find(name);
        return it == counts.end() ? std::nullopt : it->second.value;
    };
    if (p.table) {
        // Table events are reported under generic names too.
        for (auto [generic, native] : {std::pair{"cycles", p.table->cycles},
                                       std::pair{"instructions", p.table->instructions}}) {
            const auto it = counts.find(native);
            if (it == counts.end() || !it->second.value) continue;
            Reading g;
            g.name = generic;
            g.value = *it->second.value;
            g.unit = "count";
            g.source = ReadingSource::pmu;
            g.running_fraction = it->second.running_fraction;
            g.low_confidence = it->second.low_confidence;
            g.note = it->second.note;
            r.values.push_back(std::move(g));
            counts.try_emplace(generic, it->second);
        }
    }
    if (auto ipc = ratio(count_of("instructions"), count_of("cycles"))) {
        Reading g;
        g.name = "instructions_per_cycle";
        g.value = *ipc;
        g.unit = "ratio";
        g.source = ReadingSource::pmu;
        r.values.push_back(std::move(g));
    }
    if (p.table) {
        std::vector<std::string_view> groups(options_.flop_groups.begin(),
                                             options_.flop_groups.end());
        const DerivedValue all = flops_from_counts(p.table->flops, counts, groups);
        if (all.value) r.values.push_back(derived_reading("fp_ops", all, "flop"));
        std::set<std::string_view> precisions;
        for (const FlopTerm& f : p.table->flops)
            if (f.precision != "mixed") precisions.insert(f.precision);
        for (std::string_view prec : precisions) {
            const DerivedValue d = flops_from_counts(p.table->flops, counts, groups, prec);
            if (d.value)
                r.values.push_back(derived_reading("fp_ops_" + std::string(prec), d, "flop"));
        }
    }
    if (p.bytes) {
        const DerivedValue d = bytes_from_counts(*p.bytes, counts);
        if (d.value) r.values.push_back(derived_reading("dram_bytes", d, "bytes"));
    }
    return r;
}

}  // namespace ceiling::collectors
