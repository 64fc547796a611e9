// Measures what the collectors cost a program: runs a fixed-work CPU-bound program (about
// 2 s) bare and under the collectors (perf_event software events inherited from exec, plus
// a sampler reading them and /proc every 10 ms), alternating, and reports the medians.
// Driven by scripts/bench-collectors; the goal is an overhead of at most 1%.
//
//   ceiling_bench_collectors BUSY_PROGRAM [SECONDS] [RUNS] [INTERVAL_MS]

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <sys/resource.h>
#include <sys/wait.h>

#include "collectors/clock.hpp"
#include "collectors/counted_process.hpp"
#include "collectors/process_accounting.hpp"
#include "collectors/sampler.hpp"

namespace {

using namespace ceiling::collectors;

struct Run {
    double wall_s = 0;
    double cpu_s = 0;  // user + system of the program (wait4), less sensitive to other tenants
    std::size_t samples = 0;
    double task_clock_s = 0;
};

double cpu_of(const ProcessUsage& u) { return u.user_s.value_or(0) + u.system_s.value_or(0); }

Run bare_run(const std::string& program, long long iterations) {
    GatedChild child = GatedChild::fork({program, std::to_string(iterations)});
    const std::int64_t t0 = now_ns();
    if (child.release() != 0) {
        std::fprintf(stderr, "cannot run %s\n", program.c_str());
        std::exit(1);
    }
    int status = 0;
    rusage ru{};
    while (wait4(child.pid(), &status, 0, &ru) < 0 && errno == EINTR) {
    }
    Run r;
    r.wall_s = static_cast<double>(now_ns() - t0) * 1e-9;
    r.cpu_s = cpu_of(usage_from_rusage(ru));
    return r;
}

Run measured_run(const std::string& program, long long iterations, int interval_ms) {
    LaunchOptions opts;
    opts.argv = {program, std::to_string(iterations)};
    CountedProcess p = CountedProcess::launch(opts);
    const std::string pid = std::to_string(p.pid());
    Sampler sampler(std::chrono::milliseconds(interval_ms), [&] {
        Readings r = p.read();
        if (auto u = read_proc_usage(FsRoot::system(), pid)) r.append(usage_readings(*u));
        return r;
    });
    sampler.start();
    CountedProcess::Result result = p.wait();
    const auto samples = sampler.stop();
    Run m;
    m.wall_s = result.exit.wall_s;
    m.cpu_s = cpu_of(result.exit.usage);
    m.samples = samples.size();
    m.task_clock_s = result.readings.value("task_clock_s").value_or(-1);
    return m;
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s BUSY_PROGRAM [SECONDS] [RUNS] [INTERVAL_MS]\n", argv[0]);
        return 2;
    }
    const std::string program = argv[1];
    const double seconds = argc > 2 ? std::atof(argv[2]) : 2.0;
    const int runs = argc > 3 ? std::atoi(argv[3]) : 5;
    const int interval_ms = argc > 4 ? std::atoi(argv[4]) : 10;

    // Calibrate the fixed amount of work to about `seconds` of CPU time on this machine.
    long long iterations = 100'000'000;
    for (int i = 0; i < 2; ++i) {
        const double t = bare_run(program, iterations).cpu_s;
        iterations =
            static_cast<long long>(static_cast<double>(iterations) * seconds / std::max(t, 1e-3));
    }

    std::vector<double> bare_wall, bare_cpu, wall, cpu;
    Run last;
    for (int i = 0; i < runs; ++i) {
        // Alternate the order so drift (thermal, other tenants) hits both sides alike.
        Run b, m;
        if (i % 2 == 0) {
            b = bare_run(program, iterations);
            m = measured_run(program, iterations, interval_ms);
        } else {
            m = measured_run(program, iterations, interval_ms);
            b = bare_run(program, iterations);
        }
        bare_wall.push_back(b.wall_s);
        bare_cpu.push_back(b.cpu_s);
        wall.push_back(m.wall_s);
        cpu.push_back(m.cpu_s);
        last = m;
        std::printf(
            "run %d: bare %.4f s (cpu %.4f s), under collectors %.4f s (cpu %.4f s, %zu samples)\n",
            i + 1, b.wall_s, b.cpu_s, m.wall_s, m.cpu_s, m.samples);
    }
    const double bw = median(bare_wall), mw = median(wall), bc = median(bare_cpu), mc = median(cpu);
    const double overhead = mw / bw - 1.0, cpu_overhead = mc / bc - 1.0;
    std::printf("\nprogram: %s %lld (fixed work, about %.1f s of CPU)\n", program.c_str(),
                iterations, seconds);
    std::printf(
        "collectors: perf_event software events from exec (inherited), read with /proc "
        "accounting every %d ms\n",
        interval_ms);
    std::printf(
        "median of %d: bare %.4f s, under collectors %.4f s (program CPU time: %.4f s vs %.4f s, "
        "%+.2f%%)\n",
        runs, bw, mw, bc, mc, cpu_overhead * 100);
    std::printf("last run: %zu samples, task-clock %.4f s\n", last.samples, last.task_clock_s);
    if (mc < 0.8 * mw)
        std::printf(
            "note: the program got %.0f%% of a CPU: other work shares this machine, so the "
            "wall-time figure is noisy\n",
            100 * mc / mw);
    std::printf("overhead: %+.2f%% wall time (target <= 1%%): %s\n", overhead * 100,
                overhead <= 0.01 ? "met" : "NOT met");
    return 0;
}
