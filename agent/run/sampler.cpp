#include "agent/run/sampler.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <set>

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "collectors/clock.hpp"
#include "collectors/fs_root.hpp"

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

// What a blocked thread of process `dir` waits in: its system call and, for a call on a
// descriptor, the descriptor's link (collectors/blocked_call.hpp). Running again by the time
// its call is read: nothing.
std::optional<collectors::WaitKind> blocked_in(const fs::path& dir, const fs::path& thread,
                                               bool uninterruptible, std::string& buf) {
    if (!read_small(thread / "syscall", buf)) return collectors::WaitKind::unreadable;
    const auto call = collectors::parse_proc_syscall(buf);
    if (!call) return std::nullopt;
    const auto link = [&](int fd) -> std::optional<std::string> {
        char target[512];
        const auto path = dir / "fd" / std::to_string(fd);
        const ssize_t n = ::readlink(path.c_str(), target, sizeof target);
        if (n <= 0) return std::nullopt;
        return std::string(target, static_cast<std::size_t>(n));
    };
    const auto block = [](std::string_view path) {
        struct stat st {};
        return ::stat(std::string(path).c_str(), &st) == 0 && S_ISBLK(st.st_mode);
    };
    return collectors::classify_wait(*call, uninterruptible, link, block);
}

// 1 where ceiling's helper thread (own_helper_tid) is runnable, else 0.
double own_helper_runnable(const fs::path& proc, std::string& buf) {
    const pid_t tid = own_helper_tid.load(std::memory_order_relaxed);
    if (tid <= 0 || !read_small(proc / "self" / "task" / std::to_string(tid) / "stat", buf))
        return 0;
    const auto f = collectors::parse_proc_stat(buf);
    return f && f->state == 'R' ? 1 : 0;
}

// Children of every thread of `pid` (a child belongs to the thread that forked it), how
// many of its threads are runnable (state R: running or queued for a CPU), so that a run
// queue past the CPUs can be told the program's own from other work's, what each blocked one
// waits in, and each thread's CPU time, so that threads taking turns can be told from threads
// working at once.
void scan_threads(const fs::path& proc, pid_t pid, std::vector<pid_t>& out, std::string& buf,
                  double& runnable, std::vector<ThreadCpu>& cpu, double tick_s,
                  const WaitAccumulator* waits) {
    const fs::path dir = proc / std::to_string(pid), task = dir / "task";
    DIR* d = ::opendir(task.c_str());
    if (!d) return;
    while (dirent* e = ::readdir(d)) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
        if (read_small(task / e->d_name / "stat", buf))
            if (const auto f = collectors::parse_proc_stat(buf)) {
                if (f->state == 'R') runnable += 1;
                if (const auto tid = collectors::parse_int(e->d_name)) {
                    ThreadCpu t{static_cast<pid_t>(*tid), f->start_ticks,
                                (f->utime_ticks + f->stime_ticks) * tick_s};
                    if (read_small(task / e->d_name / "schedstat", buf)) {
                        double run = 0, queued = 0;
                        if (std::sscanf(buf.c_str(), "%lf %lf", &run, &queued) == 2) {
                            t.run_ns = run, t.queued_ns = queued;
                            t.read_ns = collectors::now_ns();
                        }
                    }
                    if (f->state == 'S' || f->state == 'D') {
                        t.blocked =
                            waits ? waits->unchanged(t.tid, t.start_ticks, t.run_ns) : std::nullopt;
                        if (!t.blocked)
                            t.blocked = blocked_in(dir, task / e->d_name, f->state == 'D', buf);
                    }
                    t.pid = pid;
                    cpu.push_back(t);
                }
            }
        if (!read_small(task / e->d_name / "children", buf)) continue;
        std::string_view s(buf);
        while (!s.empty()) {
            const auto sp = s.find(' ');
            const auto tok = s.substr(0, sp);
            if (const auto child = collectors::parse_int(tok); child && *child > 0)
                out.push_back(static_cast<pid_t>(*child));
            if (sp == std::string_view::npos) break;
            s.remove_prefix(sp + 1);
        }
    }
    ::closedir(d);
}

}  // namespace

std::optional<double> working_threads(const std::vector<double>& cpu_s) {
    double sum = 0, squares = 0;
    for (const double c : cpu_s) {
        sum += c;
        squares += c * c;
    }
    if (!(squares > 0)) return std::nullopt;
    return sum * sum / squares;
}

std::optional<TreeSample> sample_tree(pid_t root, const fs::path& proc,
                                      const WaitAccumulator* waits) {
    static const double tick_s = 1.0 / static_cast<double>(::sysconf(_SC_CLK_TCK));
    static const double page_bytes = static_cast<double>(::sysconf(_SC_PAGESIZE));
    TreeSample s;
    s.t_ns = collectors::now_ns();
    s.io = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
    // (pid, index of its parent in `read`): a process is read after its parent, so the
    // descendants' CPU adds up from the last process read back to the first.
    std::vector<std::pair<pid_t, int>> todo{{root, -1}};
    struct Read {
        int parent;
        double own_s, waited_s;
    };
    std::vector<Read> read;
    std::vector<pid_t> children;
    std::set<pid_t> seen;
    std::string buf;
    // First, at the sample's instant: the tree's walk below can take milliseconds.
    if (read_small(proc / "stat", buf))
        if (const auto host = collectors::parse_host_cpu_ticks(buf))
            s.host_busy_s = host->busy() * tick_s;
    bool root_alive = false;
    double runnable = 0;
    while (!todo.empty()) {
        const auto [pid, parent] = todo.back();
        todo.pop_back();
        if (!seen.insert(pid).second) continue;
        const fs::path dir = proc / std::to_string(pid);
        if (!read_small(dir / "stat", buf)) continue;
        const auto f = collectors::parse_proc_stat(buf);
        if (!f) continue;
        if (pid == root) root_alive = true;
        const double own_s = (f->utime_ticks + f->stime_ticks) * tick_s;
        const double waited_s = (f->cutime_ticks + f->cstime_ticks) * tick_s;
        s.cpu_s += own_s + waited_s;
        s.system_s += (f->stime_ticks + f->cstime_ticks) * tick_s;
        const int index = static_cast<int>(read.size());
        read.push_back({parent, own_s, waited_s});
        s.descendants.push_back({pid, f->start_ticks, 0.0});
        s.threads += f->num_threads;
        s.rss_bytes += f->rss_pages * page_bytes;
        s.processes += 1;
        // The command name lies between the first '(' and the last ')' of stat.
        const auto open = buf.find('('), close = buf.rfind(')');
        std::string name = open != std::string::npos && close != std::string::npos && close > open
                               ? buf.substr(open + 1, close - open - 1)
                               : std::string();
        if (read_small(dir / "status", buf))
            if (const auto hwm = collectors::parse_proc_status(buf).vm_hwm_bytes)
                s.peaks.push_back({pid, f->start_ticks, *hwm, std::move(name), own_s});
        // One unreadable io file (another user's setuid child) makes the tree's totals
        // unknown for this sample, not smaller.
        s.io = read_small(dir / "io", buf) ? collectors::add(s.io, collectors::parse_proc_io(buf))
                                           : collectors::ProcIo{};
        children.clear();
        scan_threads(proc, pid, children, buf, runnable, s.thread_cpu, tick_s, waits);
        for (const pid_t c : children) todo.emplace_back(c, index);
    }
    if (!root_alive) return std::nullopt;
    for (std::size_t i = read.size(); i-- > 0;) {
        double& below = s.descendants[i].cpu_s;  // its children's subtrees, added below
        below += read[i].waited_s;
        if (read[i].parent >= 0)
            s.descendants[static_cast<std::size_t>(read[i].parent)].cpu_s += read[i].own_s + below;
    }
    s.own_runnable = runnable;
    if (read_small(proc / "loadavg", buf))
        if (const auto running = collectors::parse_loadavg_runnable(buf))
            s.host_runnable = std::max(0.0, *running - 1 - own_helper_runnable(proc, buf));
    return s;
}

void PeakAccumulator::add(const TreeSample& s) {
    if (!s.probe) ++peaks_.samples;
    auto raise = [](std::optional<double>& peak, double v) {
        peak = std::max(peak.value_or(v), v);
    };
    // An exited, unreaped root has no memory left: no reading, never a peak of 0.
    if (s.rss_bytes > 0) {
        raise(peaks_.tree_rss_bytes, s.rss_bytes);
        raise(peaks_.threads, s.threads);
    }
    for (const auto& p : s.peaks) {
        raise(peaks_.process_hwm_bytes, p.hwm_bytes);
        double& hwm = hwm_[{p.pid, p.start_ticks}];
        hwm = std::max(hwm, p.hwm_bytes);
    }
    // Threads' CPU time in windows: one closes at the first sample past thread_window_s and
    // the next opens there.
    if (!s.thread_cpu.empty()) {
        if (!window_start_ns_) {
            open_window(s);
        } else {
            note_threads(s.thread_cpu);
            if (static_cast<double>(s.t_ns - *window_start_ns_) * 1e-9 >= thread_window_s) {
                if (const auto w = thread_window(s.t_ns)) thread_windows_.push_back(*w);
                open_window(s);
            }
        }
        last_thread_ns_ = s.t_ns;
    }
    // The run queues hold their values until the next sample: step functions.
    host_runnable_.add(s.t_ns, s.host_runnable);
    own_runnable_.add(s.t_ns, s.own_runnable);
    peaks_.waiting_thread_s = s.waited_s;
}

std::optional<collectors::WaitKind> WaitAccumulator::unchanged(pid_t tid, double start_ticks,
                                                               std::optional<double> run_ns) const {
    const auto it = threads_.find({tid, start_ticks});
    if (it == threads_.end() || !run_ns || it->second.run_ns != run_ns) return std::nullopt;
    return it->second.blocked;
}

void WaitAccumulator::add(TreeSample& s) {
    for (const auto& t : s.thread_cpu) {
        Seen& seen = threads_[{t.tid, t.start_ticks}];
        seen.sample_ns = s.t_ns;
        const std::int64_t at = t.read_ns ? t.read_ns : s.t_ns;
        if (seen.t_ns) {
            const double dt_ns = static_cast<double>(at - *seen.t_ns);
            double blocked_ns = 0;
            if (t.run_ns && t.queued_ns && seen.run_ns && seen.queued_ns)
                blocked_ns = std::max(
                    0.0, dt_ns - (*t.run_ns - *seen.run_ns) - (*t.queued_ns - *seen.queued_ns));
            else if (t.blocked)
                blocked_ns = dt_ns;
            if (t.queued_ns && seen.queued_ns)
                queued_s_[t.pid] += std::max(0.0, *t.queued_ns - *seen.queued_ns) * 1e-9;
            const auto kind = t.blocked ? t.blocked : seen.blocked ? seen.blocked : seen.last_kind;
            if (blocked_ns > 0 && kind)
                waited_s_[static_cast<std::size_t>(*kind)] += blocked_ns * 1e-9;
        }
        seen.t_ns = at;
        seen.run_ns = t.run_ns;
        seen.queued_ns = t.queued_ns;
        seen.blocked = t.blocked;
        if (t.blocked) seen.last_kind = t.blocked;
    }
    // Threads gone since are dropped: a program that starts a thread per task keeps this map
    // no larger than its threads alive at once.
    std::erase_if(threads_, [&](const auto& entry) { return entry.second.sample_ns != s.t_ns; });
    s.waited_s = waited_s_;
    // The processes of this look only, and only those kept: a program that starts a process
    // per task keeps the map, and each look's copy, no larger than its processes alive.
    std::vector<pid_t> live;
    for (const auto& t : s.thread_cpu) live.push_back(t.pid);
    std::sort(live.begin(), live.end());
    std::erase_if(queued_s_, [&](const auto& entry) {
        return !std::binary_search(live.begin(), live.end(), entry.first);
    });
    s.queued_s.assign(queued_s_.begin(), queued_s_.end());
}

double storage_waited_s(const TreeSample& s) {
    double sum = 0;
    for (const auto k : collectors::storage_wait_kinds)
        sum += s.waited_s[static_cast<std::size_t>(k)];
    return sum;
}

void PeakAccumulator::open_window(const TreeSample& s) {
    window_start_ns_ = s.t_ns;
    window_samples_ = 0;
    window_threads_.clear();
    note_threads(s.thread_cpu);
}

void PeakAccumulator::note_threads(const std::vector<ThreadCpu>& threads) {
    const int at = window_samples_++;
    for (const auto& t : threads) {
        // A thread the window's first sample did not see started within it: all its time.
        const auto [it, fresh] = window_threads_.try_emplace(
            {t.tid, t.start_ticks}, WindowThread{at, at, at == 0 ? t.cpu_s : 0.0, t.cpu_s});
        if (!fresh) {
            it->second.last = at;
            it->second.last_cpu_s = t.cpu_s;
        }
    }
}

// Who shared the window's work: the threads alive together through one of its intervals
// between samples (seen at both ends), the one whose threads used the most of their CPU time
// in the window. The whole window where they did the work (threads that took turns, a
// pool's workers); threads started one after another are never alive through one interval
// together (a sample may catch the one ending and the next starting), so they count as one,
// either's time, not the sum of both; workers that ended within it (a pool torn down before
// the program ends) count at an interval that saw them, not lost to a main thread alone at
// its end.
std::optional<ThreadWindow> PeakAccumulator::thread_window(std::int64_t now_ns) const {
    if (!window_start_ns_) return std::nullopt;
    auto used = [](const WindowThread& t) { return std::max(0.0, t.last_cpu_s - t.start_cpu_s); };
    auto through = [](const WindowThread& t, int k) { return t.first < k && k <= t.last; };
    int best = -1;
    double best_sum = 0;
    for (int k = window_samples_ - 1; k >= 1; --k) {
        double sum = 0;
        for (const auto& [key, t] : window_threads_)
            if (through(t, k)) sum += used(t);
        if (sum > best_sum) best = k, best_sum = sum;
    }
    if (best < 0) return std::nullopt;
    std::vector<double> shares;
    for (const auto& [key, t] : window_threads_)
        if (through(t, best)) shares.push_back(used(t));
    const auto w = working_threads(shares);
    if (!w) return std::nullopt;
    return ThreadWindow{*window_start_ns_, now_ns, *w, best_sum};
}

void StepIntegral::add(std::int64_t t_ns, std::optional<double> value) {
    if (last_) sum_ += last_->second * static_cast<double>(t_ns - last_->first) * 1e-9;
    if (value) {
        last_ = {t_ns, *value};
        known_ = true;
    } else {
        last_.reset();
    }
}

std::optional<double> StepIntegral::until(std::int64_t end_ns) const {
    if (!known_) return std::nullopt;
    double s = sum_;
    if (last_ && end_ns > last_->first)
        s += last_->second * static_cast<double>(end_ns - last_->first) * 1e-9;
    return s;
}

SampledPeaks PeakAccumulator::finish(std::int64_t end_ns,
                                     std::optional<collectors::HostCpuTicks> host_start,
                                     std::optional<collectors::HostCpuTicks> host_end,
                                     double clock_ticks_per_s) const {
    SampledPeaks p = peaks_;
    if (!hwm_.empty()) {
        double sum = 0;
        for (const auto& [key, hwm] : hwm_) sum += hwm;
        p.process_hwm_sum_bytes = sum;
    }
    // The last window, however short, closes at the last sample.
    p.thread_windows = thread_windows_;
    if (const auto w = thread_window(last_thread_ns_))
        if (w->end_ns > w->start_ns) p.thread_windows.push_back(*w);
    double weighted = 0, weight = 0;
    for (const auto& w : p.thread_windows) {
        weighted += w.working_threads * w.cpu_s;
        weight += w.cpu_s;
    }
    if (weight > 0) p.working_threads = weighted / weight;
    // Within one clock tick the host's CPU time reads 0: unknown, not 0. The run queue is
    // kept only beside it, since it is read per CPU as one over the other.
    if (host_start && host_end && host_end->total > host_start->total && clock_ticks_per_s > 0) {
        p.host_cpu_s = (host_end->total - host_start->total) / clock_ticks_per_s;
        p.host_steal_s = std::max(0.0, host_end->steal - host_start->steal) / clock_ticks_per_s;
        if (host_start->tasks_started && host_end->tasks_started)
            p.host_tasks_started =
                std::max(0.0, *host_end->tasks_started - *host_start->tasks_started);
        p.host_runnable_thread_s = host_runnable_.until(end_ns);
        p.own_runnable_thread_s = own_runnable_.until(end_ns);
    }
    return p;
}

namespace {

std::optional<collectors::HostCpuTicks> host_ticks(const fs::path& proc) {
    std::string buf;
    if (!read_small(proc / "stat", buf)) return std::nullopt;
    return collectors::parse_host_cpu_ticks(buf);
}

}  // namespace

Sampler::Sampler(pid_t root, double interval_s, CpuReader cpu_seconds, fs::path proc)
    : proc_(std::move(proc)) {
    // The program first: a shell utility may be gone within a millisecond.
    take(root, cpu_seconds, false);
    host_start_ = host_ticks(proc_);
    thread_ = std::thread(
        [this, root, interval_s, cpu = std::move(cpu_seconds)] { loop(root, interval_s, cpu); });
}

Sampler::~Sampler() { stop_thread(); }

std::optional<double> Sampler::host_tasks_started_now(const fs::path& proc) {
    const auto t = host_ticks(proc);
    return t ? t->tasks_started : std::nullopt;
}

void Sampler::stop_thread() {
    {
        const std::lock_guard lock(wake_mutex_);
        stop_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
}

void Sampler::take(pid_t root, const CpuReader& cpu_seconds, bool probe) {
    auto s = sample_tree(root, proc_, &waits_);
    if (!s) return;
    s->probe = probe;
    waits_.add(*s);
    accumulator_.add(*s);
    peak_rss_bytes_ = std::max(peak_rss_bytes_.load(), s->rss_bytes);
    peak_threads_ = std::max(peak_threads_.load(), s->threads);
    for (const auto& p : s->peaks) {
        const auto [it, added] = seen_index_.try_emplace({p.pid, p.start_ticks}, seen_.size());
        if (added) seen_.push_back({p.pid, p.name, s->t_ns, s->t_ns});
        seen_[it->second].last_ns = s->t_ns;
        seen_[it->second].cpu_s = p.cpu_s;
        seen_[it->second].name = p.name;  // the latest: a forked shell becomes what it execs
    }
    const auto extend = [t_ns = s->t_ns](ProcessSeries& series, pid_t pid, double value) {
        auto& points = series.timeline.points;
        series.timeline.pid = pid;
        if (!points.empty() && points.back().value == value) {
            series.unchanged = TimelinePoint{t_ns, value};
            return;
        }
        if (series.unchanged) points.push_back(*series.unchanged);
        series.unchanged.reset();
        points.push_back({t_ns, value});
    };
    for (const auto& d : s->descendants)
        extend(descendants_[{d.pid, d.start_ticks}], d.pid, d.cpu_s);
    for (const auto& [pid, queued] : s->queued_s) extend(queued_[{pid, 0.0}], pid, queued);
    s->descendants.clear();
    // ceiling's own CPU time (this sampler, mostly) is not the host's other work.
    if (s->host_busy_s)
        host_cpu_.push_back(
            {s->t_ns, *s->host_busy_s - static_cast<double>(collectors::process_cpu_ns()) * 1e-9});
    if (probe) return;
    // The sample's time is the CPU read's (the /proc scan before it takes a while, longer
    // with many threads): regions are judged on CPU time over these instants.
    if (cpu_seconds) {
        const std::int64_t t0 = collectors::now_ns();
        if (const auto cpu = cpu_seconds()) {
            s->cpu_s = *cpu;
            s->t_ns = t0 + (collectors::now_ns() - t0) / 2;
        }
    }
    // Folded into the accumulator; an hour of samples need not keep them.
    s->peaks.clear();
    s->thread_cpu.clear();
    samples_.push_back(std::move(*s));
}

void Sampler::loop(pid_t root, double interval_s, const CpuReader& cpu_seconds) {
    using clock = std::chrono::steady_clock;
    const auto interval = std::chrono::nanoseconds(static_cast<std::int64_t>(interval_s * 1e9));
    // Probes at 0.1, 0.2, 0.4 ... ms until the first interval: a program shorter than one
    // interval (a shell utility runs for about 1 ms) would otherwise be seen once, as it
    // starts.
    const auto begin = clock::now();
    auto probe_at = std::chrono::nanoseconds(100'000);
    auto next_regular = begin + interval;
    bool probing = true;
    while (!stop_.load()) {
        probing = probing && begin + probe_at < next_regular;
        const auto next = probing ? begin + probe_at : next_regular;
        {
            std::unique_lock lock(wake_mutex_);
            if (wake_.wait_until(lock, next, [this] { return stop_.load(); })) break;
        }
        take(root, cpu_seconds, probing);
        if (probing) {
            probe_at *= 2;
        } else {
            // Absolute deadlines: the sampling cost does not stretch the interval.
            next_regular += interval;
            if (next_regular < clock::now()) next_regular = clock::now();
        }
    }
}

std::vector<SeenProcess> Sampler::processes() const { return seen_; }

namespace {
// The timelines of the processes whose value grew above zero: the rest judge nothing.
std::vector<ProcessTimeline> grown(const std::map<std::pair<pid_t, double>, ProcessSeries>& all) {
    std::vector<ProcessTimeline> out;
    for (const auto& [key, series] : all) {
        if (series.timeline.points.empty() || !(series.timeline.points.back().value > 0)) continue;
        out.push_back(series.timeline);
        if (series.unchanged) out.back().points.push_back(*series.unchanged);
    }
    return out;
}
}  // namespace

std::vector<ProcessTimeline> Sampler::descendant_cpu() const { return grown(descendants_); }
std::vector<ProcessTimeline> Sampler::process_queued() const { return grown(queued_); }

std::vector<TreeSample> Sampler::stop() {
    stop_thread();
    auto start = host_start_;
    if (start && tasks_before_) start->tasks_started = tasks_before_;
    peaks_ = accumulator_.finish(collectors::now_ns(), start, host_ticks(proc_),
                                 static_cast<double>(::sysconf(_SC_CLK_TCK)));
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
    // Rates of the tree's I/O counters (collectors::ProcIo says what each counts).
    using Io = std::optional<double> collectors::ProcIo::*;
    const std::pair<const char*, Io> io_rates[] = {
        {"read_call_bytes_per_s", &collectors::ProcIo::read_call_bytes},
        {"write_call_bytes_per_s", &collectors::ProcIo::write_call_bytes},
        {"storage_read_bytes_per_s", &collectors::ProcIo::storage_read_bytes},
        {"storage_write_bytes_per_s", &collectors::ProcIo::storage_write_bytes},
    };
    std::vector<Series> io;
    for (const auto& [name, member] : io_rates) io.push_back(make(name, "bytes/s"));
    std::vector<const TreeSample*> regular;
    for (const auto& s : samples)
        if (!s.probe) regular.push_back(&s);
    std::size_t j = 0;  // start of the trailing window
    for (std::size_t i = 0; i < regular.size(); ++i) {
        const auto& s = *regular[i];
        const double t = static_cast<double>(s.t_ns - start_ns) * 1e-9;
        rss.t_s.push_back(t);
        rss.values.push_back(s.rss_bytes);
        threads.t_s.push_back(t);
        threads.values.push_back(s.threads);
        if (i == 0) continue;
        while (j + 1 < i &&
               static_cast<double>(s.t_ns - regular[j + 1]->t_ns) * 1e-9 >= min_window_s)
            ++j;
        const auto& b = *regular[j];
        const double dt = static_cast<double>(s.t_ns - b.t_ns) * 1e-9;
        if (dt <= 0) continue;
        // A child that exits before being reaped takes its CPU time out of the sum for a
        // moment: a rate is never negative.
        cpu.t_s.push_back(t);
        cpu.values.push_back(std::max(0.0, (s.cpu_s - b.cpu_s) / dt));
        for (std::size_t k = 0; k < io.size(); ++k) {
            const auto now = s.io.*io_rates[k].second, before = b.io.*io_rates[k].second;
            if (!now || !before) continue;  // unknown, never 0
            io[k].t_s.push_back(t);
            io[k].values.push_back(std::max(0.0, (*now - *before) / dt));
        }
    }
    std::vector<Series> out = {cpu, rss, threads};
    out.insert(out.end(), io.begin(), io.end());
    return out;
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
