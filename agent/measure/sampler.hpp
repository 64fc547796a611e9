#pragma once
// Samples a running program and its descendants from /proc every interval, on a thread of
// its own, into time series: CPU cores busy, resident memory, threads, bytes read and
// written per second. Kept small and separate so that the collectors' perf_event sampling
// (exact CPU time, hardware rates) can replace the /proc readings behind the same series.

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <sys/types.h>

#include "diagnosis/run_record.hpp"

namespace ceiling::measure {

// Totals over the process tree at one instant. CPU and I/O are cumulative (rates come from
// differences), memory and threads are levels.
struct TreeSample {
    std::int64_t t_ns = 0;
    double cpu_s = 0;      // utime + stime + reaped children's, every process in the tree
    double rss_bytes = 0;  // sum of resident sets
    double threads = 0;
    double processes = 0;
    double read_bytes = 0;   // rchar: bytes returned by read-like calls (page cache included)
    double write_bytes = 0;  // wchar
};

// One reading of the tree rooted at `root`, from the /proc tree at `proc` (injectable for
// tests). nullopt when the root is gone.
std::optional<TreeSample> sample_tree(pid_t root, const std::filesystem::path& proc = "/proc");

class Sampler {
  public:
    // Starts sampling `root` every `interval_s` on a thread of its own. `cpu_seconds`, when
    // given and answering, replaces /proc's tick-granular CPU time (e.g. perf task-clock of
    // the whole tree).
    using CpuReader = std::function<std::optional<double>()>;
    Sampler(pid_t root, double interval_s, CpuReader cpu_seconds = {});
    ~Sampler();
    Sampler(const Sampler&) = delete;
    Sampler& operator=(const Sampler&) = delete;
    // Stops the thread; the samples taken, oldest first.
    std::vector<TreeSample> stop();
    // Highest tree-wide resident memory seen (0 before the first sample).
    double peak_rss_bytes() const { return peak_rss_bytes_.load(); }
    double peak_threads() const { return peak_threads_.load(); }

  private:
    void loop(pid_t root, double interval_s, const CpuReader& cpu_seconds);
    std::atomic<bool> stop_{false};
    std::atomic<double> peak_rss_bytes_{0};
    std::atomic<double> peak_threads_{0};
    std::vector<TreeSample> samples_;
    std::thread thread_;
};

// The series of a record from samples, times relative to `start_ns`. CPU/I-O rates use a
// trailing window of at least `min_window_s` because /proc counts CPU time in clock ticks
// (10 ms at USER_HZ 100): a 10 ms window would read 0 or 1 core, never 0.5.
std::vector<Series> series_from_samples(const std::vector<TreeSample>& samples,
                                        std::int64_t start_ns, double min_window_s = 0.05);

// Halves the number of points (averaging neighbours) until each series has at most
// `max_points`, so hour-long runs keep a bounded record.
void decimate(std::vector<Series>& series, std::size_t max_points);

}  // namespace ceiling::measure
