#include "collectors/energy.hpp"

#include <cerrno>
#include <cmath>

#include "collectors/clock.hpp"
#include "collectors/sysfs_pmu.hpp"

namespace ceiling::collectors {

namespace {

constexpr std::string_view powercap_dir = "/sys/class/powercap";

// "intel-rapl:0" (package) and "intel-rapl:0:0" (its DRAM or core subdomain). The
// "intel-rapl-mmio:*" tree repeats package domains through another interface: skipped so
// energy is not counted twice.
bool is_rapl_zone(const std::string& name) { return name.rfind("intel-rapl:", 0) == 0; }

std::string reading_name(std::string domain) {
    for (char& c : domain)
        if (c == '-' || c == ' ' || c == '.') c = '_';
    return "energy_" + domain + "_j";
}

bool counts_toward_total(const std::string& domain) {
    return domain.rfind("package", 0) == 0 || domain == "dram" ||
           domain.rfind("energy-pkg", 0) == 0 || domain == "energy-ram";
}

}  // namespace

double energy_delta_uj(double before_uj, double after_uj, std::optional<double> max_range_uj) {
    if (after_uj >= before_uj) return after_uj - before_uj;
    // The counter wrapped (every few minutes at high power on some parts).
    if (max_range_uj) return *max_range_uj - before_uj + after_uj;
    return 0;
}

PowercapScan scan_powercap(const FsRoot& root) {
    PowercapScan scan;
    int denied = 0;
    for (const auto& zone : root.list(powercap_dir)) {
        if (!is_rapl_zone(zone)) continue;
        const std::string dir = std::string(powercap_dir) + "/" + zone;
        const auto energy = root.read(dir + "/energy_uj");
        if (!energy.content) {
            if (energy.error == EACCES || energy.error == EPERM) ++denied;
            continue;
        }
        EnergyDomain d;
        d.name = root.read_line(dir + "/name").value_or(zone);
        d.path = dir;
        if (auto max = root.read_int(dir + "/max_energy_range_uj"))
            d.max_range_uj = static_cast<double>(*max);
        scan.domains.push_back(std::move(d));
    }
    if (!scan.domains.empty()) {
        std::string names;
        for (const auto& d : scan.domains) names += (names.empty() ? "" : ", ") + d.name;
        scan.capability = Capability::yes("powercap: " + names);
    } else if (denied > 0) {
        scan.capability = Capability::no(
            "RAPL energy counters are readable by root only (Linux 5.10+, CVE-2020-8694)",
            "sudo chmod a+r /sys/class/powercap/intel-rapl:*/energy_uj, or run as root");
    } else {
        scan.capability =
            Capability::no("no RAPL powercap interface (/sys/class/powercap/intel-rapl:* absent)",
                           "on bare metal: sudo modprobe intel_rapl_msr; VMs rarely expose RAPL");
    }
    return scan;
}

EnergyCollector::EnergyCollector(const FsRoot& root, PerfEventApi& api, const PerfEnvironment* env)
    : root_(&root), api_(&api), env_(env ? *env : read_perf_environment(root)) {}

Capability EnergyCollector::probe() {
    if (probed_) return *probed_;
    PowercapScan scan = scan_powercap(*root_);
    if (scan.capability.available) {
        interface_ = "powercap";
        domains_ = std::move(scan.domains);
        probed_ = scan.capability;
        return *probed_;
    }
    // The perf power PMU (RAPL through perf_event): CPU-wide, so it needs the privilege.
    std::vector<CounterSpec> specs;
    for (const auto& event : sysfs_event_names(*root_, "power")) {
        if (event.rfind("energy-", 0) != 0) continue;
        const SysfsLookup l = resolve_sysfs_event(*root_, "power", event);
        if (!l.event) continue;
        CounterSpec s;
        s.name = event;
        s.encoding = l.event->encoding;
        s.scale = l.event->scale;  // 2^-32 J per count on Intel
        s.unit = "J";
        s.source = ReadingSource::pmu;
        s.scope = EventScope::system_wide;
        specs.push_back(std::move(s));
        if (perf_cpus_.empty())
            perf_cpus_ = l.event->cpus.empty() ? std::vector<int>{0} : l.event->cpus;
    }
    if (specs.empty()) {
        probed_ = Capability::no(scan.capability.reason + "; no perf power PMU either",
                                 scan.capability.fix);
        return *probed_;
    }
    PerfEventSetOptions opts;
    opts.environment = &env_;
    auto trial = PerfEventSet::open(CountTarget::cpu_wide(perf_cpus_), specs, *api_, opts);
    if (trial.opened() == 0) {
        probed_ = trial.failures().front().explanation;
        probed_->reason =
            "RAPL via the perf power PMU: " + probed_->reason + " (" + scan.capability.reason + ")";
        return *probed_;
    }
    interface_ = "perf power PMU";
    perf_specs_.clear();
    domains_.clear();
    std::string names;
    for (std::size_t i = 0; i < specs.size(); ++i) {
        bool opened = true;
        for (const auto& f : trial.failures()) opened = opened && f.counter != specs[i].name;
        if (!opened) continue;
        domains_.push_back({specs[i].name, "power/" + specs[i].name, std::nullopt});
        names += (names.empty() ? "" : ", ") + specs[i].name;
        perf_specs_.push_back(specs[i]);
    }
    probed_ = Capability::yes("perf power PMU: " + names);
    return *probed_;
}

std::vector<double> EnergyCollector::read_powercap() const {
    std::vector<double> out;
    for (const auto& d : domains_) {
        const auto v = root_->read_int(d.path + "/energy_uj");
        out.push_back(v ? static_cast<double>(*v) : std::nan(""));
    }
    return out;
}

void EnergyCollector::start() {
    const Capability c = probe();
    if (!c.available) throw CollectorError(c);
    begin_ns_ = now_ns();
    if (interface_ == "powercap") {
        begin_uj_ = read_powercap();
        return;
    }
    PerfEventSetOptions opts;
    opts.environment = &env_;
    perf_set_.emplace(
        PerfEventSet::open(CountTarget::cpu_wide(perf_cpus_), perf_specs_, *api_, opts));
    perf_set_->reset();
    perf_set_->enable();
}

Readings EnergyCollector::stop() { return collect(true); }

Readings EnergyCollector::read() { return collect(false); }

Readings EnergyCollector::collect(bool stopping) {
    Readings r;
    const double interval_s = static_cast<double>(now_ns() - begin_ns_) * 1e-9;
    std::vector<std::pair<std::string, std::optional<double>>> joules;
    if (interface_ == "powercap") {
        const auto end = read_powercap();
        for (std::size_t i = 0; i < domains_.size() && i < begin_uj_.size(); ++i) {
            if (std::isnan(begin_uj_[i]) || std::isnan(end[i])) {
                joules.emplace_back(domains_[i].name, std::nullopt);
                continue;
            }
            joules.emplace_back(
                domains_[i].name,
                energy_delta_uj(begin_uj_[i], end[i], domains_[i].max_range_uj) * 1e-6);
        }
    } else if (perf_set_) {
        if (stopping) perf_set_->disable();
        const Readings p = perf_set_->read();
        for (const auto& d : domains_) {
            const Reading* v = p.find(d.name);
            joules.emplace_back(d.name, v ? std::optional<double>(v->value) : std::nullopt);
        }
        r.warnings = p.warnings;
        if (stopping) perf_set_.reset();
    }
    double total = 0;
    bool any_total = false, total_low = false;
    std::optional<double> fallback_total;
    for (const auto& [domain, value] : joules) {
        if (!value) {
            r.warnings.push_back("energy of " + domain + " could not be read");
            continue;
        }
        Reading e;
        e.name = reading_name(domain);
        e.value = *value;
        e.unit = "J";
        e.source = ReadingSource::pmu;
        // A RAPL counter that did not move over 10 ms of anything is not measuring.
        if (*value == 0 && interval_s > 0.01) {
            e.low_confidence = true;
            e.note = "did not advance: this RAPL interface reads 0 (common in VMs)";
        }
        if (counts_toward_total(domain)) {
            total += *value;
            any_total = true;
            total_low = total_low || e.low_confidence;
        } else if (!fallback_total) {
            fallback_total = *value;
        }
        r.values.push_back(std::move(e));
    }
    if (any_total || fallback_total) {
        Reading t;
        t.name = "energy_j";
        t.value = any_total ? total : *fallback_total;
        t.unit = "J";
        t.source = ReadingSource::pmu;
        t.low_confidence = any_total ? total_low : (*fallback_total == 0 && interval_s > 0.01);
        if (t.low_confidence) t.note = "a RAPL domain did not advance";
        r.values.push_back(std::move(t));
    }
    return r;
}

Capability EnergyCollector::verify(std::chrono::milliseconds busy) {
    const Capability c = probe();
    if (!c.available) return c;
    start();
    const std::int64_t end =
        now_ns() + std::chrono::duration_cast<std::chrono::nanoseconds>(busy).count();
    volatile double x = 1;
    while (now_ns() < end)
        for (int i = 0; i < 1000; ++i) x = x * 1.0000001 + 1e-9;
    const Readings r = stop();
    for (const auto& v : r.values)
        if (v.value > 0) return c;
    return Capability::no(interface_ +
                              " RAPL counters do not advance under load (this VM passes "
                              "the interface through without data)",
                          "measure energy on bare metal");
}

}  // namespace ceiling::collectors
