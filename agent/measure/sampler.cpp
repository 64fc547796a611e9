#include "agent/measure/sampler.hpp"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdlib>
#include <set>

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include "collectors/clock.hpp"

namespace ceiling::measure {

namespace fs = std::filesystem;

namespace {

// Small /proc files are read with one read(2): no iostreams on a 10 ms path.
bool read_small(const fs::path& path, std::string& out) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    out.resize(4096);
    std::size_t used = 0;
    for (;;) {
        const ssize_t n = ::read(fd, out.data() + used, out.size() - used);
        if (n <= 0) break;
        used += static_cast<std::size_t>(n);
        if (used == out.size()) out.resize(out.size() * 2);
    }
    ::close(fd);
    out.resize(used);
    return used > 0;
}

double to_number(std::string_view s) {
    double v = 0;
    std::from_chars(s.data(), s.data() + s.size(), v);
    return v;
}

// proc(5) stat: the command name (field 2) may hold spaces and ')', so fields are counted
// from the last ')'. Field 3 (state) is then token 0.
struct StatFields {
    double utime = 0, stime = 0, cutime = 0, cstime = 0, threads = 0, rss_pages = 0;
};
bool parse_stat(const std::string& text, StatFields& f) {
    const auto close = text.rfind(')');
    if (close == std::string::npos) return false;
    std::vector<std::string_view> tokens;
    std::string_view rest(text);
    rest.remove_prefix(close + 1);
    std::size_t i = 0;
    while (i < rest.size()) {
        while (i < rest.size() && rest[i] == ' ') ++i;
        const std::size_t j = rest.find(' ', i);
        const std::size_t e = j == std::string_view::npos ? rest.size() : j;
        if (e > i) tokens.push_back(rest.substr(i, e - i));
        i = e;
    }
    // Token k is field k + 3: utime 14, stime 15, cutime 16, cstime 17, num_threads 20, rss 24.
    if (tokens.size() < 22) return false;
    f.utime = to_number(tokens[11]);
    f.stime = to_number(tokens[12]);
    f.cutime = to_number(tokens[13]);
    f.cstime = to_number(tokens[14]);
    f.threads = to_number(tokens[17]);
    f.rss_pages = to_number(tokens[21]);
    return true;
}

double io_field(const std::string& text, std::string_view key) {
    const auto at = text.find(key);
    if (at == std::string::npos) return 0;
    return to_number(std::string_view(text).substr(at + key.size()));
}

// Children of every thread of `pid` (a child belongs to the thread that forked it).
void add_children(const fs::path& proc, pid_t pid, std::vector<pid_t>& out, std::string& buf) {
    const fs::path task = proc / std::to_string(pid) / "task";
    DIR* d = ::opendir(task.c_str());
    if (!d) return;
    while (dirent* e = ::readdir(d)) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
        if (!read_small(task / e->d_name / "children", buf)) continue;
        std::string_view s(buf);
        while (!s.empty()) {
            const auto sp = s.find(' ');
            const auto tok = s.substr(0, sp);
            if (!tok.empty()) out.push_back(static_cast<pid_t>(to_number(tok)));
            if (sp == std::string_view::npos) break;
            s.remove_prefix(sp + 1);
        }
    }
    ::closedir(d);
}

}  // namespace

std::optional<TreeSample> sample_tree(pid_t root, const fs::path& proc) {
    static const double tick_s = 1.0 / static_cast<double>(::sysconf(_SC_CLK_TCK));
    static const double page_bytes = static_cast<double>(::sysconf(_SC_PAGESIZE));
    TreeSample s;
    s.t_ns = collectors::now_ns();
    std::vector<pid_t> todo{root};
    std::set<pid_t> seen;
    std::string buf;
    bool root_alive = false;
    while (!todo.empty()) {
        const pid_t pid = todo.back();
        todo.pop_back();
        if (!seen.insert(pid).second) continue;
        const fs::path dir = proc / std::to_string(pid);
        StatFields f;
        if (!read_small(dir / "stat", buf) || !parse_stat(buf, f)) continue;
        if (pid == root) root_alive = true;
        s.cpu_s += (f.utime + f.stime + f.cutime + f.cstime) * tick_s;
        s.threads += f.threads;
        s.rss_bytes += f.rss_pages * page_bytes;
        s.processes += 1;
        if (read_small(dir / "io", buf)) {
            s.read_bytes += io_field(buf, "rchar:");
            s.write_bytes += io_field(buf, "wchar:");
        }
        add_children(proc, pid, todo, buf);
    }
    if (!root_alive) return std::nullopt;
    return s;
}

Sampler::Sampler(pid_t root, double interval_s, CpuReader cpu_seconds)
    : thread_([this, root, interval_s, cpu = std::move(cpu_seconds)] {
          loop(root, interval_s, cpu);
      }) {}

Sampler::~Sampler() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
}

void Sampler::loop(pid_t root, double interval_s, const CpuReader& cpu_seconds) {
    const auto interval = std::chrono::nanoseconds(static_cast<std::int64_t>(interval_s * 1e9));
    auto next = std::chrono::steady_clock::now();
    while (!stop_.load()) {
        if (auto s = sample_tree(root)) {
            if (cpu_seconds)
                if (const auto cpu = cpu_seconds()) s->cpu_s = *cpu;
            samples_.push_back(*s);
            peak_rss_bytes_ = std::max(peak_rss_bytes_.load(), s->rss_bytes);
            peak_threads_ = std::max(peak_threads_.load(), s->threads);
        }
        // Absolute deadlines: the sampling cost does not stretch the interval.
        next += interval;
        const auto now = std::chrono::steady_clock::now();
        if (next < now) next = now;
        // Sleep in short slices so stop() returns promptly after the program ends.
        while (!stop_.load() && std::chrono::steady_clock::now() < next)
            std::this_thread::sleep_for(std::min<std::chrono::nanoseconds>(
                next - std::chrono::steady_clock::now(), std::chrono::milliseconds(5)));
    }
}

std::vector<TreeSample> Sampler::stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    return std::move(samples_);
}

std::vector<Series> series_from_samples(const std::vector<TreeSample>& samples,
                                        std::int64_t start_ns, double min_window_s) {
    auto make = [](const char* name, const char* unit) {
        Series s;
        s.name = name;
        s.unit = unit;
        s.source = Source::software;
        return s;
    };
    Series cpu = make("cpu_cores", "cores");
    Series rss = make("rss_bytes", "bytes");
    Series threads = make("threads", "count");
    Series reads = make("read_bytes_per_s", "bytes/s");
    Series writes = make("write_bytes_per_s", "bytes/s");
    std::size_t j = 0;  // start of the trailing window
    for (std::size_t i = 0; i < samples.size(); ++i) {
        const auto& s = samples[i];
        const double t = static_cast<double>(s.t_ns - start_ns) * 1e-9;
        rss.t_s.push_back(t);
        rss.values.push_back(s.rss_bytes);
        threads.t_s.push_back(t);
        threads.values.push_back(s.threads);
        if (i == 0) continue;
        while (j + 1 < i &&
               static_cast<double>(s.t_ns - samples[j + 1].t_ns) * 1e-9 >= min_window_s)
            ++j;
        const auto& b = samples[j];
        const double dt = static_cast<double>(s.t_ns - b.t_ns) * 1e-9;
        if (dt <= 0) continue;
        // A child that exits before being reaped takes its CPU time out of the sum for a
        // moment: a rate is never negative.
        cpu.t_s.push_back(t);
        cpu.values.push_back(std::max(0.0, (s.cpu_s - b.cpu_s) / dt));
        reads.t_s.push_back(t);
        reads.values.push_back(std::max(0.0, (s.read_bytes - b.read_bytes) / dt));
        writes.t_s.push_back(t);
        writes.values.push_back(std::max(0.0, (s.write_bytes - b.write_bytes) / dt));
    }
    return {cpu, rss, threads, reads, writes};
}

void decimate(std::vector<Series>& series, std::size_t max_points) {
    if (max_points < 2) return;
    for (auto& s : series) {
        while (s.values.size() > max_points) {
            std::vector<double> t, v;
            for (std::size_t i = 0; i + 1 < s.values.size(); i += 2) {
                t.push_back(s.t_s[i + 1]);
                v.push_back((s.values[i] + s.values[i + 1]) / 2);
            }
            s.t_s = std::move(t);
            s.values = std::move(v);
        }
    }
}

}  // namespace ceiling::measure
