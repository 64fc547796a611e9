#pragma once
// Counted work per NVTX region: FLOPs and DRAM bytes from a CPU PMU that passed its
// self-validation (pmu_self_validation.hpp), given to the region instances of one execution,
// so that regions that declare no work still reach the decision table.
//
// How. The PMU counts the whole process tree (every thread and child, from exec) and is read
// every sampling interval while the program runs: cumulative counts at known instants on
// CLOCK_MONOTONIC, the clock of the NVTX events. Reading hardware counters inside the program
// at every push and pop would cost system calls per range and see only the calling thread;
// sampling from outside costs the program nothing and sees every thread.
//
// Each instance gets the growth of each count between its start and its end, interpolated
// linearly inside the sampling intervals that hold them (cumulative_timeline.hpp).
// Error bound: the counts only grow, so at each end the error is at most what was counted in
// the interval holding it: per instance at most two intervals' counts, per region the sum
// over its instances (kept as "fp_ops_error" / "dram_bytes_error" beside the counts). A region
// whose bound exceeds 10 % of its count is low-confidence: its instances are short beside the
// sampling interval. An instance outside the sampled span gets no count, and a region is
// counted only when every instance is (a partial sum would understate its work). Like busy
// cores, a count is the whole tree's while the instance was open: threads doing other work
// at the same time count too.

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <sys/types.h>

#include "agent/machine/pmu_self_validation.hpp"
#include "agent/run/region.hpp"
#include "collectors/pmu_collector.hpp"
#include "collectors/reading.hpp"

namespace ceiling::measure {

// One read of the cumulative counts (the PMU collector's read()).
struct CounterSample {
    std::int64_t t_ns = 0;  // CLOCK_MONOTONIC
    collectors::Readings readings;
};

// Which counts may be given to regions: only those the self-validation trusted.
struct RegionCounting {
    bool flops = false;
    bool bytes = false;
    std::string why_not;  // when neither: one line for the record's notes
    bool any() const { return flops || bytes; }
};

// Sets the counted ops ("fp_ops") and bytes ("dram_bytes") of every instance the samples
// span (NvtxCapture::counts), for the quantities `counting` allows. Samples in any order.
void attribute_counts(NvtxCapture& capture, const std::vector<CounterSample>& samples,
                      const RegionCounting& counting);

// Probes the CPU PMU and runs its self-validation once (a few hundred ms where a PMU exists,
// nothing where none does; with options.cache, once per boot). Seams as in run_pmu_self_validation. why_not stays empty where
// no PMU is usable at all: each region's unknown line says so.
RegionCounting plan_region_counting(const collectors::PmuBackends& backends = {},
                                    const PmuSelfValidationOptions& options = {});

// Reads a PMU counting a child from its exec every interval on a thread of its own.
class RegionCounterSampler {
  public:
    // Opens the counters on a child blocked before exec (CountTarget::exec_child). When they
    // cannot be opened, failure() says why and nothing is sampled.
    RegionCounterSampler(pid_t child, double interval_s,
                         const collectors::PmuBackends& backends = {});
    ~RegionCounterSampler();
    RegionCounterSampler(const RegionCounterSampler&) = delete;
    RegionCounterSampler& operator=(const RegionCounterSampler&) = delete;
    // Once the child runs: sample until stop().
    void start();
    // A last read after the program ended, then the samples, oldest first.
    std::vector<CounterSample> stop();
    const std::string& failure() const { return failure_; }

  private:
    collectors::PmuCollector pmu_;
    double interval_s_;
    std::int64_t opened_ns_ = 0;
    std::string failure_;
    std::mutex mutex_;
    std::vector<CounterSample> samples_;
    std::atomic<bool> stop_{false};
    std::thread thread_;
    void sample();
};

// After an execution: the counts attributed to its capture's instances, and the totals added
// to its counters (so the record shows the PMU counted); a failure to count becomes a note.
void finish_region_counting(RegionCounterSampler& sampler, const RegionCounting& counting,
                            NvtxCapture& capture, std::vector<CounterValue>& counters,
                            std::vector<std::string>& notes);

}  // namespace ceiling::measure
