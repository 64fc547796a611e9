#include "collectors/perf_events.hpp"

#include <cerrno>
#include <cstdio>
#include <utility>

#include <unistd.h>

#include "collectors/fs_root.hpp"
#include "diagnosis/format.hpp"

namespace ceiling::collectors {

namespace {

// Where each counter of a target is opened: (pid, cpu) pairs.
std::vector<std::pair<pid_t, int>> placements(const CountTarget& t) {
    std::vector<std::pair<pid_t, int>> out;
    auto threads_of = [&](const std::string& pid) {
        for (const auto& tid : FsRoot::system().list("/proc/" + pid + "/task"))
            if (auto v = parse_int(tid)) out.emplace_back(static_cast<pid_t>(*v), -1);
    };
    switch (t.kind) {
        case CountTarget::Kind::calling_thread:
            out.emplace_back(0, -1);
            break;
        case CountTarget::Kind::this_process:
            threads_of("self");
            if (out.empty()) out.emplace_back(0, -1);
            break;
        case CountTarget::Kind::process:
            if (t.enable_on_exec)
                out.emplace_back(t.pid, -1);  // one thread before exec; inherit covers the rest
            else
                threads_of(std::to_string(t.pid));
            if (out.empty()) out.emplace_back(t.pid, -1);
            break;
        case CountTarget::Kind::cpus:
            for (int c : t.cpus) out.emplace_back(-1, c);
            break;
    }
    return out;
}

perf_event_attr make_attr(const CounterSpec& s, const CountTarget& t, bool exclude_kernel) {
    perf_event_attr a{};
    a.size = sizeof a;
    a.type = s.encoding.type;
    a.config = s.encoding.config;
    a.config1 = s.encoding.config1;
    a.config2 = s.encoding.config2;
    a.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
    a.disabled = 1;
    a.inherit = t.inherit ? 1 : 0;
    a.enable_on_exec = t.enable_on_exec ? 1 : 0;
    a.exclude_kernel = exclude_kernel ? 1 : 0;
    a.exclude_hv = exclude_kernel ? 1 : 0;
    return a;
}

bool is_permission_error(int e) { return e == EACCES || e == EPERM; }

}  // namespace

CountTarget CountTarget::calling_thread() { return {Kind::calling_thread, 0, false, false, {}}; }
CountTarget CountTarget::this_process() { return {Kind::this_process, 0, true, false, {}}; }
CountTarget CountTarget::exec_child(pid_t pid) { return {Kind::process, pid, true, true, {}}; }
CountTarget CountTarget::process(pid_t pid) { return {Kind::process, pid, true, false, {}}; }
CountTarget CountTarget::cpu_wide(std::vector<int> cpus) {
    return {Kind::cpus, -1, false, false, std::move(cpus)};
}

PerfEventSet::PerfEventSet(PerfEventApi& api, std::vector<CounterSpec> specs,
                           double min_running_fraction)
    : api_(&api),
      specs_(std::move(specs)),
      fds_(specs_.size()),
      min_running_fraction_(min_running_fraction) {}

PerfEventSet PerfEventSet::open(const CountTarget& target, std::vector<CounterSpec> specs,
                                PerfEventApi& api, const PerfEventSetOptions& options) {
    PerfEventSet set(api, std::move(specs), options.min_running_fraction);
    std::optional<PerfEnvironment> own_env;
    auto env = [&]() -> const PerfEnvironment& {
        if (options.environment) return *options.environment;
        if (!own_env) own_env = read_perf_environment();
        return *own_env;
    };

    const auto where = placements(target);
    int hardware = 0;
    for (std::size_t i = 0; i < set.specs_.size(); ++i) {
        const CounterSpec& spec = set.specs_[i];
        if (spec.scope == EventScope::hardware) ++hardware;
        // Kernel-mode counting first; under perf_event_paranoid >= 2 an unprivileged
        // process gets EACCES and retries user-space only (what perf stat does). CPU-wide
        // events have no such fallback: they need the privilege itself.
        bool exclude_kernel = set.user_space_only_;
        int first_error = 0;
        for (const auto& [pid, cpu] : where) {
            int fd = api.open(make_attr(spec, target, exclude_kernel), pid, cpu, -1,
                              PERF_FLAG_FD_CLOEXEC);
            if (fd < 0 && is_permission_error(-fd) && !exclude_kernel &&
                spec.scope != EventScope::system_wide) {
                exclude_kernel = true;
                fd = api.open(make_attr(spec, target, true), pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
                if (fd >= 0) set.user_space_only_ = true;
            }
            if (fd >= 0) {
                set.fds_[i].push_back(fd);
            } else if (-fd == ESRCH && target.kind != CountTarget::Kind::calling_thread) {
                continue;  // a thread that exited between listing and opening
            } else if (first_error == 0) {
                first_error = -fd;
            }
        }
        if (set.fds_[i].empty()) {
            const int err = first_error ? first_error : ESRCH;
            Capability why = explain_open_error(err, spec.scope, env());
            set.warnings_.push_back("cannot count " + spec.name + ": " + why.reason +
                                    (why.fix.empty() ? "" : " (fix: " + why.fix + ")"));
            set.failures_.push_back({spec.name, err, std::move(why)});
        }
    }
    if (options.hardware_counters && hardware > *options.hardware_counters)
        set.warnings_.push_back(std::to_string(hardware) + " hardware events for " +
                                std::to_string(*options.hardware_counters) +
                                " counters: the kernel multiplexes them and the counts are "
                                "scaled from the time each one ran");
    return set;
}

PerfEventSet::PerfEventSet(PerfEventSet&& o) noexcept
    : api_(o.api_),
      specs_(std::move(o.specs_)),
      fds_(std::move(o.fds_)),
      failures_(std::move(o.failures_)),
      warnings_(std::move(o.warnings_)),
      min_running_fraction_(o.min_running_fraction_),
      user_space_only_(o.user_space_only_) {
    o.fds_.clear();
}

PerfEventSet& PerfEventSet::operator=(PerfEventSet&& o) noexcept {
    if (this != &o) {
        close_all();
        api_ = o.api_;
        specs_ = std::move(o.specs_);
        fds_ = std::move(o.fds_);
        failures_ = std::move(o.failures_);
        warnings_ = std::move(o.warnings_);
        min_running_fraction_ = o.min_running_fraction_;
        user_space_only_ = o.user_space_only_;
        o.fds_.clear();
    }
    return *this;
}

PerfEventSet::~PerfEventSet() { close_all(); }

void PerfEventSet::close_all() {
    for (auto& fds : fds_)
        for (int fd : fds) api_->close(fd);
    fds_.clear();
}

std::size_t PerfEventSet::opened() const {
    std::size_t n = 0;
    for (const auto& fds : fds_) n += fds.empty() ? 0 : 1;
    return n;
}

void PerfEventSet::ioctl_all(unsigned long request) {
    for (auto& fds : fds_)
        for (int fd : fds) api_->ioctl(fd, request);
}

// ioctl on an inherited counter reaches its children too (perf_event_for_each_child).
void PerfEventSet::enable() { ioctl_all(PERF_EVENT_IOC_ENABLE); }
void PerfEventSet::disable() { ioctl_all(PERF_EVENT_IOC_DISABLE); }
void PerfEventSet::reset() { ioctl_all(PERF_EVENT_IOC_RESET); }

std::optional<ScaledCount> PerfEventSet::read_spec(std::size_t i) const {
    if (i >= fds_.size() || fds_[i].empty()) return std::nullopt;
    std::vector<RawCount> raws;
    for (int fd : fds_[i]) {
        RawCount r;
        if (api_->read(fd, r) == 0) raws.push_back(r);
    }
    return scale_and_sum(raws, min_running_fraction_);
}

std::vector<std::optional<ScaledCount>> PerfEventSet::read_counts() const {
    std::vector<std::optional<ScaledCount>> out(specs_.size());
    for (std::size_t i = 0; i < specs_.size(); ++i) out[i] = read_spec(i);
    return out;
}

std::optional<double> PerfEventSet::read_value(std::string_view name) const {
    for (std::size_t i = 0; i < specs_.size(); ++i) {
        if (specs_[i].name != name) continue;
        const auto c = read_spec(i);
        if (!c || !c->value) return std::nullopt;
        return *c->value * specs_[i].scale;
    }
    return std::nullopt;
}

Readings PerfEventSet::read() const {
    Readings r;
    r.warnings = warnings_;
    const auto counts = read_counts();
    std::vector<std::string> multiplexed;
    for (std::size_t i = 0; i < specs_.size(); ++i) {
        const CounterSpec& spec = specs_[i];
        if (!counts[i]) continue;
        const ScaledCount& c = *counts[i];
        if (!c.value) {
            r.warnings.push_back(spec.name + " absent: " + c.note);
            continue;
        }
        Reading reading;
        reading.name = spec.name;
        reading.value = *c.value * spec.scale;
        reading.unit = spec.unit;
        reading.source = spec.source;
        reading.running_fraction = c.running_fraction;
        reading.low_confidence = c.low_confidence;
        reading.note = c.note;
        if (user_space_only_ && spec.scope == EventScope::hardware)
            reading.note += std::string(reading.note.empty() ? "" : "; ") +
                            "user space only (perf_event_paranoid)";
        if (c.running_fraction)
            multiplexed.push_back(spec.name + " " + percent(*c.running_fraction));
        r.values.push_back(std::move(reading));
    }
    if (!multiplexed.empty()) {
        std::string w = "multiplexed (more events than counters; counts scaled up):";
        for (const auto& m : multiplexed) w += " " + m;
        r.warnings.push_back(w);
    }
    return r;
}

PerfHooksWarmup::PerfHooksWarmup()
    : opener_([this] {
          perf_event_attr attr{};
          attr.size = sizeof attr;
          attr.type = PERF_TYPE_SOFTWARE;
          attr.config = PERF_COUNT_SW_DUMMY;
          attr.disabled = 1;
          attr.exclude_kernel = 1;  // allowed at perf_event_paranoid 2
          attr.exclude_hv = 1;
          // On this (helper) thread: a per-task event. It stays accounted until closed,
          // after the thread has ended.
          fd_ = system_perf_event_api().open(attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
      }) {}

PerfHooksWarmup::~PerfHooksWarmup() {
    opener_.join();
    if (fd_ >= 0) system_perf_event_api().close(fd_);
}

}  // namespace ceiling::collectors
