#include "collectors/software_events.hpp"

#include <string>

namespace ceiling::collectors {

namespace {

constexpr SoftwareEvent table[] = {
    // task-clock counts nanoseconds of CPU time of the counted tasks.
    {"task_clock_s", "task-clock", PERF_COUNT_SW_TASK_CLOCK, "s", 1e-9},
    {"context_switches", "context-switches", PERF_COUNT_SW_CONTEXT_SWITCHES, "count", 1},
    {"cpu_migrations", "cpu-migrations", PERF_COUNT_SW_CPU_MIGRATIONS, "count", 1},
    // Minor and major faults come from rusage (process_accounting); one total here.
    {"page_faults", "page-faults", PERF_COUNT_SW_PAGE_FAULTS, "count", 1},
};

}  // namespace

std::span<const SoftwareEvent> software_events() { return table; }

const SoftwareEvent* find_software_event(std::string_view name) {
    for (const auto& e : table)
        if (e.name == name || e.perf_name == name) return &e;
    return nullptr;
}

CounterSpec software_counter_spec(const SoftwareEvent& e) {
    CounterSpec s;
    s.name = std::string(e.name);
    s.encoding = {PERF_TYPE_SOFTWARE, e.config, 0, 0};
    s.unit = std::string(e.unit);
    s.scale = e.scale;
    s.source = ReadingSource::software;
    s.scope = EventScope::software;
    return s;
}

std::vector<CounterSpec> software_counter_specs() {
    std::vector<CounterSpec> specs;
    for (const auto& e : table) specs.push_back(software_counter_spec(e));
    return specs;
}

Capability probe_software_events(PerfEventApi& api, const PerfEnvironment* env) {
    PerfEventSetOptions opts;
    opts.environment = env;
    auto set = PerfEventSet::open(CountTarget::calling_thread(), {software_counter_spec(table[0])},
                                  api, opts);
    if (!set.failures().empty()) return set.failures().front().explanation;
    return Capability::yes(set.user_space_only()
                               ? "task-clock, context switches, migrations, page faults "
                                 "(kernel-mode work excluded by perf_event_paranoid)"
                               : "task-clock, context switches, migrations, page faults");
}

SoftwareEventCollector::SoftwareEventCollector(CountTarget target, PerfEventApi& api)
    : target_(std::move(target)), api_(&api) {}

void SoftwareEventCollector::start() {
    set_.emplace(PerfEventSet::open(target_, software_counter_specs(), *api_));
    if (set_->opened() == 0) {
        const Capability why = set_->failures().front().explanation;
        set_.reset();
        throw CollectorError(why);
    }
    if (target_.enable_on_exec) return;  // armed: the kernel enables them at exec
    set_->reset();
    set_->enable();
}

Readings SoftwareEventCollector::read() { return set_ ? set_->read() : Readings{}; }

Readings SoftwareEventCollector::stop() {
    if (!set_) return {};
    set_->disable();
    Readings r = set_->read();
    set_.reset();
    return r;
}

}  // namespace ceiling::collectors
