// Measures what the collectors cost a program: runs a fixed-work CPU-bound program (about
// 2 s) bare and under the collectors (perf_event software events inherited from exec, plus
// a sampler reading them and /proc every 10 ms), alternating, and reports the medians.
// Driven by scripts/bench-collectors; the goal is an overhead of at most 1%.
//
//   ceiling_bench_collectors BUSY_PROGRAM [SECONDS] [RUNS] [INTERVAL_MS]

#include <sys/wait.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "collectors/clock.hpp"
#include "collectors/counted_process.hpp"
#include "collectors/process_accounting.hpp"
#include "collectors/sampler.hpp"

namespace {

using namespace ceiling::collectors;

double bare_run(const std::string& program, long long iterations) {
    GatedChild child = GatedChild::fork({program, std::to_string(iterations)});
    const std::int64_t t0 = now_ns();
    if (child.release() != 0) {
        std::fprintf(stderr, "cannot run %s\n", program.c_str());
        std::exit(1);
    }
    int status = 0;
    while (waitpid(child.pid(), &status, 0) < 0 && errno == EINTR) {
    }
    return static_cast<double>(now_ns() - t0) * 1e-9;
}

struct MeasuredRun {
    double wall_s = 0;
    std::size_t samples = 0;
    double task_clock_s = 0;
};

MeasuredRun measured_run(const std::string& program, long long iterations, int interval_ms) {
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
    MeasuredRun m;
    m.wall_s = result.exit.wall_s;
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

    // Calibrate the fixed amount of work to about `seconds` on this machine.
    long long iterations = 100'000'000;
    for (int i = 0; i < 2; ++i) {
        const double t = bare_run(program, iterations);
        iterations = static_cast<long long>(static_cast<double>(iterations) * seconds / std::max(t, 1e-3));
    }

    std::vector<double> bare, measured;
    std::size_t samples = 0;
    double task_clock = 0;
    for (int i = 0; i < runs; ++i) {
        // Alternate the order so drift (thermal, other tenants) hits both sides alike.
        MeasuredRun m;
        if (i % 2 == 0) {
            bare.push_back(bare_run(program, iterations));
            m = measured_run(program, iterations, interval_ms);
        } else {
            m = measured_run(program, iterations, interval_ms);
            bare.push_back(bare_run(program, iterations));
        }
        measured.push_back(m.wall_s);
        samples = m.samples;
        task_clock = m.task_clock_s;
        std::printf("run %d: bare %.4f s, under collectors %.4f s (%zu samples)\n", i + 1,
                    bare.back(), measured.back(), m.samples);
    }
    const double b = median(bare), c = median(measured);
    const double overhead = c / b - 1.0;
    std::printf("\nprogram: %s %lld (fixed work, about %.1f s)\n", program.c_str(), iterations, seconds);
    std::printf("collectors: perf_event software events from exec (inherited), sampled every %d ms "
                "with /proc accounting\n", interval_ms);
    std::printf("median of %d: bare %.4f s, under collectors %.4f s\n", runs, b, c);
    std::printf("last run: %zu samples, task-clock %.4f s\n", samples, task_clock);
    std::printf("overhead: %+.2f%% (target <= 1%%): %s\n", overhead * 100,
                overhead <= 0.01 ? "met" : "NOT met");
    return 0;
}
