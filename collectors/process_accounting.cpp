#include "collectors/process_accounting.hpp"

#include <initializer_list>
#include <string>
#include <vector>

#include <unistd.h>

#include "collectors/clock.hpp"

namespace ceiling::collectors {

namespace {

double seconds(const timeval& tv) {
    return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) * 1e-6;
}

std::optional<double> minus(std::optional<double> a, std::optional<double> b) {
    if (!a || !b) return std::nullopt;
    return *a - *b;
}

// Splits on spaces, skipping empty fields.
std::vector<std::string_view> fields(std::string_view s) {
    std::vector<std::string_view> out;
    while (!s.empty()) {
        const auto start = s.find_first_not_of(' ');
        if (start == std::string_view::npos) break;
        s.remove_prefix(start);
        const auto end = s.find(' ');
        out.push_back(s.substr(0, end));
        s = end == std::string_view::npos ? std::string_view{} : s.substr(end);
    }
    return out;
}

// "VmHWM:	  123 kB" -> 123 * 1024; plain numbers stay as they are.
std::optional<double> status_value(std::string_view v) {
    v = trim(v);
    double scale = 1;
    if (v.size() > 3 && v.substr(v.size() - 3) == " kB") {
        scale = 1024;
        v.remove_suffix(3);
    }
    auto n = parse_int(v);
    if (!n) return std::nullopt;
    return static_cast<double>(*n) * scale;
}

// One reading per known value of a table of (name, value, unit): the software readings of
// process usage and I/O, an unknown value left out (never a 0).
struct ReadingRow {
    const char* name;
    const std::optional<double>* value;
    const char* unit;
};
Readings readings_of(std::initializer_list<ReadingRow> rows) {
    Readings r;
    for (const auto& row : rows)
        if (*row.value) {
            Reading reading;
            reading.name = row.name;
            reading.value = **row.value;
            reading.unit = row.unit;
            reading.source = ReadingSource::software;
            r.values.push_back(std::move(reading));
        }
    return r;
}

}  // namespace

ProcessUsage usage_from_rusage(const rusage& ru) {
    ProcessUsage u;
    u.user_s = seconds(ru.ru_utime);
    u.system_s = seconds(ru.ru_stime);
    u.max_rss_bytes = static_cast<double>(ru.ru_maxrss) * 1024.0;  // Linux reports KiB
    u.minor_faults = static_cast<double>(ru.ru_minflt);
    u.major_faults = static_cast<double>(ru.ru_majflt);
    u.voluntary_switches = static_cast<double>(ru.ru_nvcsw);
    u.involuntary_switches = static_cast<double>(ru.ru_nivcsw);
    return u;
}

ProcessUsage usage_delta(const ProcessUsage& before, const ProcessUsage& after) {
    ProcessUsage d;
    d.user_s = minus(after.user_s, before.user_s);
    d.system_s = minus(after.system_s, before.system_s);
    d.max_rss_bytes = after.max_rss_bytes;
    d.minor_faults = minus(after.minor_faults, before.minor_faults);
    d.major_faults = minus(after.major_faults, before.major_faults);
    d.voluntary_switches = minus(after.voluntary_switches, before.voluntary_switches);
    d.involuntary_switches = minus(after.involuntary_switches, before.involuntary_switches);
    return d;
}

std::optional<ProcStat> parse_proc_stat(std::string_view text) {
    const auto close = text.rfind(')');
    if (close == std::string_view::npos) return std::nullopt;
    // After ')' comes field 3 (state); index i here is field i + 3.
    const auto f = fields(trim(text.substr(close + 1)));
    if (f.size() < 22) return std::nullopt;
    auto num = [&](int field) { return parse_int(f[static_cast<std::size_t>(field - 3)]); };
    auto minflt = num(10), majflt = num(12), utime = num(14), stime = num(15), cutime = num(16),
         cstime = num(17), threads = num(20), start = num(22), rss = num(24);
    if (!minflt || !majflt || !utime || !stime || !cutime || !cstime || !threads || !start ||
        !rss || f[0].size() != 1)
        return std::nullopt;
    ProcStat s;
    s.state = f[0][0];
    s.minor_faults = static_cast<double>(*minflt);
    s.major_faults = static_cast<double>(*majflt);
    s.utime_ticks = static_cast<double>(*utime);
    s.stime_ticks = static_cast<double>(*stime);
    s.cutime_ticks = static_cast<double>(*cutime);
    s.cstime_ticks = static_cast<double>(*cstime);
    s.num_threads = static_cast<double>(*threads);
    s.start_ticks = static_cast<double>(*start);
    s.rss_pages = static_cast<double>(*rss);
    return s;
}

ProcStatus parse_proc_status(std::string_view text) {
    ProcStatus st;
    while (!text.empty()) {
        const auto nl = text.find('\n');
        const std::string_view line = text.substr(0, nl);
        text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
        const auto colon = line.find(':');
        if (colon == std::string_view::npos) continue;
        const std::string_view key = line.substr(0, colon), value = line.substr(colon + 1);
        if (key == "VmHWM")
            st.vm_hwm_bytes = status_value(value);
        else if (key == "VmRSS")
            st.vm_rss_bytes = status_value(value);
        else if (key == "Threads")
            st.threads = status_value(value);
        else if (key == "voluntary_ctxt_switches")
            st.voluntary_switches = status_value(value);
        else if (key == "nonvoluntary_ctxt_switches")
            st.involuntary_switches = status_value(value);
        else if (key == "CapEff") {
            // A hex mask without the 0x prefix.
            if (auto v = parse_int("0x" + std::string(trim(value))))
                st.cap_effective = static_cast<std::uint64_t>(*v);
        }
    }
    return st;
}

std::optional<ProcessUsage> read_proc_usage(const FsRoot& root, std::string_view pid,
                                            double clock_ticks_per_s, double page_size_bytes) {
    (void)page_size_bytes;  // peak RSS comes from VmHWM, already in bytes
    const std::string dir = "/proc/" + std::string(pid);
    auto stat_text = root.read_text(dir + "/stat");
    if (!stat_text) return std::nullopt;
    auto stat = parse_proc_stat(*stat_text);
    if (!stat) return std::nullopt;
    ProcessUsage u;
    u.user_s = stat->utime_ticks / clock_ticks_per_s;
    u.system_s = stat->stime_ticks / clock_ticks_per_s;
    u.minor_faults = stat->minor_faults;
    u.major_faults = stat->major_faults;
    if (auto status_text = root.read_text(dir + "/status")) {
        const auto st = parse_proc_status(*status_text);
        u.max_rss_bytes = st.vm_hwm_bytes;
        u.voluntary_switches = st.voluntary_switches;
        u.involuntary_switches = st.involuntary_switches;
    }
    return u;
}

std::optional<ProcessUsage> read_proc_usage(const FsRoot& root, std::string_view pid) {
    return read_proc_usage(root, pid, static_cast<double>(sysconf(_SC_CLK_TCK)),
                           static_cast<double>(sysconf(_SC_PAGESIZE)));
}

ProcIo parse_proc_io(std::string_view text) {
    struct Field {
        std::string_view key;
        std::optional<double> ProcIo::*member;
    };
    static constexpr Field io_fields[] = {
        {"rchar", &ProcIo::read_call_bytes},
        {"wchar", &ProcIo::write_call_bytes},
        {"syscr", &ProcIo::read_calls},
        {"syscw", &ProcIo::write_calls},
        {"read_bytes", &ProcIo::storage_read_bytes},
        {"write_bytes", &ProcIo::storage_write_bytes},
    };
    ProcIo io;
    while (!text.empty()) {
        const auto nl = text.find('\n');
        const std::string_view line = text.substr(0, nl);
        text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
        const auto colon = line.find(':');
        if (colon == std::string_view::npos) continue;
        const std::string_view key = line.substr(0, colon);
        for (const auto& f : io_fields)
            if (key == f.key)
                // parse_int trims: the value follows ": " (std::from_chars alone refuses the
                // space, which once read every I/O rate as 0).
                if (const auto v = parse_int(line.substr(colon + 1)); v && *v >= 0)
                    io.*f.member = static_cast<double>(*v);
    }
    return io;
}

std::optional<ProcIo> read_proc_io(const FsRoot& root, std::string_view pid) {
    const auto text = root.read_text("/proc/" + std::string(pid) + "/io");
    if (!text) return std::nullopt;
    return parse_proc_io(*text);
}

ProcIo add(const ProcIo& a, const ProcIo& b) {
    auto sum = [](std::optional<double> x, std::optional<double> y) -> std::optional<double> {
        if (!x || !y) return std::nullopt;
        return *x + *y;
    };
    return {sum(a.read_call_bytes, b.read_call_bytes),
            sum(a.write_call_bytes, b.write_call_bytes),
            sum(a.storage_read_bytes, b.storage_read_bytes),
            sum(a.storage_write_bytes, b.storage_write_bytes),
            sum(a.read_calls, b.read_calls),
            sum(a.write_calls, b.write_calls)};
}

Readings io_readings(const ProcIo& io) {
    return readings_of({
        {"read_call_bytes", &io.read_call_bytes, "bytes"},
        {"write_call_bytes", &io.write_call_bytes, "bytes"},
        {"read_calls", &io.read_calls, "calls"},
        {"write_calls", &io.write_calls, "calls"},
        {"storage_read_bytes", &io.storage_read_bytes, "bytes"},
        {"storage_write_bytes", &io.storage_write_bytes, "bytes"},
    });
}

std::optional<HostCpuTicks> parse_host_cpu_ticks(std::string_view proc_stat) {
    // "cpu  user nice system idle iowait irq softirq steal guest guest_nice": the first line.
    const auto nl = proc_stat.find('\n');
    const std::string_view line = proc_stat.substr(0, nl);
    if (line.substr(0, 4) != "cpu ") return std::nullopt;
    const auto f = fields(line.substr(4));
    // Kernels before 2.6.11 stop before steal; without it steal is unknown, not 0.
    constexpr std::size_t idle_index = 3, iowait_index = 4, steal_index = 7;
    if (f.size() <= steal_index) return std::nullopt;
    HostCpuTicks t;
    for (std::size_t i = 0; i <= steal_index; ++i) {
        const auto v = parse_int(f[i]);
        if (!v || *v < 0) return std::nullopt;
        t.total += static_cast<double>(*v);
        if (i == steal_index) t.steal = static_cast<double>(*v);
        if (i == idle_index || i == iowait_index) t.idle += static_cast<double>(*v);
    }
    // "processes N" further down.
    constexpr std::string_view tasks = "\nprocesses ";
    if (const auto at = proc_stat.find(tasks); at != std::string_view::npos) {
        const auto rest = proc_stat.substr(at + tasks.size());
        const auto v = parse_int(trim(rest.substr(0, rest.find('\n'))));
        if (v && *v >= 0) t.tasks_started = static_cast<double>(*v);
    }
    return t;
}

std::optional<double> parse_loadavg_runnable(std::string_view loadavg) {
    // "0.52 0.58 0.59 3/1041 12345"
    const auto f = fields(trim(loadavg));
    if (f.size() < 4) return std::nullopt;
    const auto slash = f[3].find('/');
    if (slash == std::string_view::npos) return std::nullopt;
    const auto v = parse_int(f[3].substr(0, slash));
    if (!v || *v < 0) return std::nullopt;
    return static_cast<double>(*v);
}

Readings usage_readings(const ProcessUsage& u) {
    return readings_of({
        {"user_s", &u.user_s, "s"},
        {"system_s", &u.system_s, "s"},
        {"max_rss_bytes", &u.max_rss_bytes, "bytes"},
        {"minor_faults", &u.minor_faults, "count"},
        {"major_faults", &u.major_faults, "count"},
        {"voluntary_context_switches", &u.voluntary_switches, "count"},
        {"involuntary_context_switches", &u.involuntary_switches, "count"},
    });
}

ProcessUsage ProcessAccountingCollector::sample() const {
    rusage ru{};
    getrusage(scope_ == Scope::thread ? RUSAGE_THREAD : RUSAGE_SELF, &ru);
    return usage_from_rusage(ru);
}

void ProcessAccountingCollector::start() {
    begin_ = sample();
    begin_ns_ = now_ns();
}

Readings ProcessAccountingCollector::read() { return stop(); }

Readings ProcessAccountingCollector::stop() {
    const std::int64_t end_ns = now_ns();
    const ProcessUsage end = sample();
    Readings r;
    Reading wall;
    wall.name = "wall_s";
    wall.value = static_cast<double>(end_ns - begin_ns_) * 1e-9;
    wall.unit = "s";
    wall.source = ReadingSource::timing;
    r.values.push_back(std::move(wall));
    r.append(usage_readings(usage_delta(begin_, end)));
    return r;
}

}  // namespace ceiling::collectors
