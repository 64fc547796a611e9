#pragma once
// Regions of a wrapped program: the NVTX ranges libceiling_inject_nvtx.so recorded
// (agent/inject/nvtx_event_format.hpp), turned into instances with nesting, then into
// the RecordedRegions of a run record.
//
// Declared work. A region says how much work one instance does by ending its NVTX message
// with a brace group, so it can be placed on the roofline where no PMU counts it:
//     "gemm 1024 {ops=2.1G bytes=12M precision=fp32 engine=vector}"
// Keys: ops (operations, an FMA counts 2), bytes (compulsory bytes), working_set (bytes),
// precision (fp64 fp32 fp16 bf16 tf32 int8), engine (scalar vector matrix), device (cpu gpu).
// Numbers take k/K, M, G, T (powers of 1000) or Ki, Mi, Gi, Ti (powers of 1024). The group
// is not part of the region's name ("gemm 1024"). A message string is used because every
// NVTX binding can send one (C, C++, torch.cuda.nvtx.range_push, nvtx for Python), whereas
// event payloads hold a single number and are missing from most bindings.

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <sys/types.h>

#include "agent/run/cumulative_timeline.hpp"
#include "agent/run/interned.hpp"
#include "agent/run/optional_double.hpp"
#include "agent/run/interned_work.hpp"
#include "agent/run/sampler.hpp"
#include "diagnosis/run_record.hpp"

namespace ceiling::measure {

struct DeclaredName {
    std::string name;          // the message without its brace group
    std::optional<Work> work;  // when the group declared ops or bytes
    std::string error;         // non-empty: the group was malformed (then name = message)
};
DeclaredName parse_declared_work(std::string_view message);

// An amount counted while an instance was open; the true amount lies within value +- error.
struct CountedAmount {
    double value = 0;
    double error = 0;
    bool low_confidence = false;  // multiplexed too thinly, or a proxy (bytes from cache misses)
};

// Trivially copyable (interned strings and work), 192 bytes: a capture may hold hundreds of
// thousands, and every pass over them reads their bytes (~10 ms for 200 000 on a 2-vCPU VM).
struct RegionInstance {
    Interned name;    // declared-work group removed
    Interned path;    // enclosing names on this thread and domain, then name, '/'-joined
    Interned parent;  // path of the enclosing instance; empty at top level
    Interned domain;
    InternedWork work;  // declared (one interned copy per distinct work)
    int pid = 0;
    int tid = 0;
    std::int64_t start_ns = 0;
    std::int64_t end_ns = 0;
    std::int64_t child_ns = 0;  // time inside directly enclosed push/pop instances
    int depth = 0;
    bool push_pop = true;   // false: a start/end range (may end on another thread)
    bool unclosed = false;  // still open when its process ended; ends at the program's end
    // CPU time of its whole process (every thread, not only this one) while it was open,
    // interpolated from the injection library's CPU-time reads; the true value lies within
    // cpu_s +- cpu_error_s. Absent when the image recorded no CPU-time read.
    OptionalDouble cpu_s;
    double cpu_error_s = 0;
    // CPU time of the processes below its process (those it started, and theirs) while it
    // was open (attribute_descendant_cpu); absent when its process's descendants used none.
    OptionalDouble descendant_cpu_s;
    // Its error: the sampler's readings bracket it, and the instance's ends fall between
    // two of them (a pool's workers reaped just before the range ends grow the last interval).
    double descendant_cpu_error_s = 0;
    // Time its process's threads were runnable but queued for a CPU while it was open
    // (thread-seconds, SampleSources::queued); absent where not read.
    OptionalDouble queued_s;
    // CPU time the host's other processes (all but its own, those it started and ceiling)
    // used while it was open (attribute_other_cpu); absent where not covered.
    OptionalDouble other_cpu_s;
    // The cores its process kept busy at once while it was open (attribute_peak_busy):
    // absent where the sampler's looks did not cover it.
    OptionalDouble peak_busy_cores;
    // How many threads of the program shared its work while it was open
    // (attribute_working_threads): absent where no window of the sampler's covered it.
    OptionalDouble working_threads;
    // What other recording threads of its process spent while it was open in ranges of
    // theirs open beside it (attribute_beside_cpu): absent where its thread did not read its
    // CPU time.
    OptionalDouble beside_cpu_s;
    // CPU time of its process's threads that record no ranges while it was open: its cpu_s
    // less every recording thread's own (attribute_process_cpu). Its helpers (an OpenMP
    // team, a BLAS pool) or work beside it (a loader thread): CPU time cannot tell which.
    // Absent where its process recorded no thread's CPU time, or it has no cpu_s.
    OptionalDouble unranged_cpu_s;
    // Bytes storage served the program (its whole process tree, /proc's read_bytes and
    // write_bytes), interpolated from the sampler's readings while it was open, and its CPU
    // time in the kernel (stime) that must have fallen inside it (the interpolation's lower
    // bound; attribute_sampled); absent where they did not cover it.
    OptionalDouble storage_read_bytes;
    OptionalDouble storage_write_bytes;
    OptionalDouble system_cpu_s;
    // Thread-seconds its program's threads spent blocked on storage (flushes, file I/O) while
    // it was open, interpolated from the sampler's looks at their system calls; absent where
    // they did not cover it.
    OptionalDouble storage_wait_s;
};

// FLOPs and DRAM bytes the PMU counted in the whole process tree while an instance was open
// (attribute_counts, agent/run/region_counters.hpp); absent where the samples did not span it.
struct InstanceCounts {
    std::optional<CountedAmount> ops;
    std::optional<CountedAmount> bytes;
};

struct MarkInstance {
    Interned name;
    Interned domain;
    int pid = 0;
    int tid = 0;
    std::int64_t t_ns = 0;
};

// Everything the injection library recorded during one execution.
struct NvtxCapture {
    std::vector<RegionInstance> instances;  // sorted by (pid, tid, start, -duration)
    // Empty where nothing was counted (no validated PMU: most runs), else one per instance,
    // in their order: kept apart so that the passes over the instances do not read them.
    std::vector<InstanceCounts> counts;
    std::vector<MarkInstance> marks;
    std::map<std::pair<int, int>, std::string> thread_names;  // (pid, tid) -> name
    std::vector<std::string> warnings;  // unbalanced pops, malformed declared work, bad files
    // What the injection library wrote: events (ranges' ends, marks, CPU-time reads), and
    // the time that cost the program, from the costs it timed in the process (the chunk
    // headers' range_ns and cpu_read_ns): absent when a chunk with events had none.
    std::uint64_t recorded_events = 0;
    // Events the injection library could not record when the capture's file system was full.
    std::uint64_t dropped_events = 0;
    // Push/pop ranges nested deeper than max_range_depth: not made regions (their time stays
    // in the enclosing region at that depth).
    std::uint64_t deeper_ranges = 0;
    std::optional<double> recording_s;
    // The largest peak resident set of its processes that recorded, each read at its exit
    // (IMAGE.peak): exact however short the program; absent where none exited normally.
    std::optional<double> peak_rss_bytes;
    // Of recording_s, what timing those costs took (once in each process that recorded).
    std::optional<double> timing_cost_s;
    // What recording one range (push and pop) cost, the dearest of its processes' timings;
    // about half of it lies between the range's two clock reads, inside its duration.
    std::optional<double> range_cost_s;
};

// The deepest push/pop nesting kept as regions. A region's path names every range above it,
// so a record grows with ranges x depth: a recursion that pushes a range per call (5000
// levels gave a 309 MiB record, a million exhausted memory) stays linear in its ranges. Real
// programs nest tens of levels (a model's modules, then its ops).
inline constexpr std::size_t max_range_depth = 256;

// Reads a capture directory while the program writes it, and once it ended.
// read_available reads what the program's threads have written so far: the events before
// the first one not yet written in each thread's last chunk, and none stamped after the
// reading began. finish reads the rest after the program ended at `end_ns`; open ranges end
// there. `cpus`: the most cores the program could keep busy, which bounds the error of CPU
// time between reads (0: this machine's logical CPUs). Never two calls at once; the capture
// is the same however the reading was split.
class NvtxCaptureReader {
  public:
    explicit NvtxCaptureReader(const std::filesystem::path& dir);
    ~NvtxCaptureReader();
    NvtxCaptureReader(const NvtxCaptureReader&) = delete;
    NvtxCaptureReader& operator=(const NvtxCaptureReader&) = delete;

    void read_available();
    std::size_t instances_read() const;  // so far
    NvtxCapture finish(std::int64_t end_ns, int cpus = 0);

  private:
    struct State;
    std::unique_ptr<State> state_;
};

// A capture read at once, after the program ended (NvtxCaptureReader::finish).
NvtxCapture read_nvtx_capture(const std::filesystem::path& dir, std::int64_t end_ns, int cpus = 0);

// What other recording threads of its process spent, while each push/pop instance was
// open, inside their own outermost ranges (RegionInstance::beside_cpu_s), from each thread's
// CPU-time reads (`thread_timelines`, keyed by image and thread id; `instance_image` the
// image of each instance). Called by read_nvtx_capture.
void attribute_beside_cpu(
    NvtxCapture& cap, const std::vector<const std::string*>& instance_image,
    const std::map<std::pair<std::string, int>, CumulativeTimeline>& thread_timelines);

// Each instance's CPU time of its whole process (cpu_s, cpu_error_s) from its image's reads
// (`process_timelines`, by image), and of its process's threads that record no ranges
// (unranged_cpu_s): cpu_s less what every recording thread of its image used meanwhile
// (`thread_timelines`, as for attribute_beside_cpu). One pass for both: each pass over a
// capture of 200 000 instances reads and writes tens of megabytes. Called by
// read_nvtx_capture.
void attribute_process_cpu(
    NvtxCapture& cap, const std::vector<const std::string*>& instance_image,
    const std::map<std::string, CumulativeTimeline>& process_timelines,
    const std::map<std::pair<std::string, int>, CumulativeTimeline>& thread_timelines);

// The CPU time of each instance's process's descendants while it was open, from the
// sampler's timelines of it (Sampler::descendant_cpu; one per process whose descendants used
// any). `cores` bounds how fast that time grows, and so the interpolation's error.
void attribute_descendant_cpu(NvtxCapture& cap, const std::vector<ProcessTimeline>& below,
                              double cores);

// The CPU time the host's other processes (all but the instance's own process, those it
// started and ceiling) used while each instance was open: the host's (Sampler::host_cpu)
// less the instance's cpu_s and descendant_cpu_s, so after attribute_descendant_cpu. What a
// range that waited for another process (a local server, a sibling worker) can show of where
// its work ran, and what tells cores left idle from cores busy with the program's other
// processes. None for an instance without its process's CPU time.
void attribute_other_cpu(NvtxCapture& cap, const std::vector<TimelinePoint>& host, double cores);

// A cumulative quantity of the program from the sampler's readings (oldest first: what
// storage served its process tree, its CPU time in the kernel) over each instance, into
// `field`: interpolated between readings, over the part of the instance they cover (90 % of
// it or more, scaled to the whole); untouched where they cover less or are fewer than two.
// With `at_least_rate` (the most it grows per second: CPU time, the CPUs) what it must have
// grown by inside the instance instead, the interpolation's lower bound: a 3 ms range in a
// 10 ms interval whose kernel time was an allocation's page faults before it read "100 % in
// the kernel" by interpolation.
void attribute_sampled(NvtxCapture& cap, const std::vector<TimelinePoint>& points,
                       OptionalDouble RegionInstance::*field,
                       std::optional<double> at_least_rate = std::nullopt);
// Several such quantities in one pass over the instances (a capture of 200 000 instances is
// tens of megabytes: each pass over it cost as much as the arithmetic).
struct SampledQuantity {
    const std::vector<TimelinePoint>* points;
    OptionalDouble RegionInstance::*field;
    std::optional<double> at_least_rate;
};
void attribute_sampled(NvtxCapture& cap, const std::vector<SampledQuantity>& quantities);

// The cores the process kept busy at once while each instance was open, from exact CPU-time
// reads of the whole process (the sampler's, every interval, of a program that is one
// process; `cpu` cumulative, oldest first). Each interval between two reads inside an
// instance is a look; the instance gets the busy cores that its busiest 10 % of looked-at
// time reached (a time-weighted 90th percentile), when at least `min_looks` looks lie inside
// it. The mean (busy_cores) hides a team that left cores idle: two OpenMP threads, one with
// three times the other's share, read 1.34 busy cores and 97 % of that roof, "done", while
// the region held both cores a third of its time and the rest waited.
void attribute_peak_busy(NvtxCapture& cap, const std::vector<TimelinePoint>& cpu,
                         int min_looks = 3);

// How many threads shared the program's work while each instance was open: the sampler's
// windows (SampledPeaks::thread_windows, oldest first) that overlap it, weighted by the
// overlap. A window is 0.5 s, so for a shorter instance this is the threads around it.
void attribute_working_threads(NvtxCapture& cap, const std::vector<ThreadWindow>& windows);

// Everything the sampler measured that instances take figures from, each source optional
// (absent: those figures are left untouched). What each gives is said at the attribute_*
// function that places it alone, above (those are one-source uses of SamplePlacement, which
// `run` uses with every source at once).
struct SampleSources {
    const std::vector<ThreadWindow>* thread_windows = nullptr;  // working_threads
    std::vector<SampledQuantity> sampled{};                      // storage, kernel time
    const std::vector<ProcessTimeline>* descendant_cpu = nullptr;
    double descendant_cores = 1;  // how fast descendant CPU time can grow
    // The time each instance's process's threads queued for a CPU while it was open
    // (Sampler::process_queued), placed as descendant_cpu is.
    const std::vector<ProcessTimeline>* queued = nullptr;
    double queued_threads = 1;    // how fast queued time can grow
    const std::vector<TimelinePoint>* host_cpu = nullptr;  // other_cpu_s (after descendants')
    double host_cores = 1;
    const std::vector<TimelinePoint>* process_cpu = nullptr;  // peak_busy_cores
    int min_looks = 3;
};

// The sources' timelines, built once; `place` gives consecutive instances (in the capture's
// order) all their figures, a block of them at a time, each block visited by every source
// while it is in cache: 200 000 instances are 50 MB, and a pass of each source over all of
// them cost more than its arithmetic. `place` is const: threads may place disjoint spans of
// one capture at once (each instance's figures are written by one thread only).
class SamplePlacement {
  public:
    explicit SamplePlacement(SampleSources sources);
    SamplePlacement(const SamplePlacement&) = delete;  // its timelines point into s_
    SamplePlacement& operator=(const SamplePlacement&) = delete;
    void place(std::span<RegionInstance> instances) const;

  private:
    struct Sampled {
        const SampledQuantity* q;
        CumulativeTimeline timeline;
        // It never grew (no storage traffic, no waits): 0 wherever covered, as interpolating
        // would give, without it (most of a run's quantities, most runs).
        bool flat = false;
    };
    SampleSources s_;
    std::vector<Sampled> sampled_;
    std::vector<CumulativeTimeline> descendant_, queued_;
    CumulativeTimeline host_;
};
// The sampler's figures on every instance of `cap`, on two threads where it has many.
void place_samples(NvtxCapture& cap, const SamplePlacement& placement);

// The record's regions from the captures of the timed executions, depth first (each region
// right after the one enclosing it, siblings in the order they first started): instance
// counts, per execution totals, self time, instance durations (at most `durations_limit`
// kept), declared work per instance, busy cores, counted work (where every instance has a
// count). `model` marks the regions whose name or path it matches and, when given, splits the
// wall time in no model region among the regions that held it (RecordedRegion::non_model_s).
std::vector<RecordedRegion> aggregate_regions(const std::vector<const NvtxCapture*>& executions,
                                              const std::optional<std::regex>& model,
                                              std::size_t durations_limit = 10000);

// Wall time covered by at least one instance that `select` accepts (union over threads and
// nesting), in seconds; with `ends`, also the first such instance's start and the last one's
// end (CLOCK_MONOTONIC ns), left as they are where none is accepted. One pass for both.
double covered_s(const NvtxCapture& capture,
                 const std::function<bool(const RegionInstance&)>& select,
                 std::pair<std::int64_t, std::int64_t>* ends = nullptr);

// Whether `model` matches a region's name or its path (search, not full match, so
// "forward|backward" works as people write it).
bool is_model_region(const std::regex& model, const std::string& name, const std::string& path);

}  // namespace ceiling::measure
