#pragma once
// MachineProfile: the measured ceilings of one host, with how and when they were measured.
// Saved as JSON (schema_version, units in field names) and reused by every later command.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "diagnosis/statistics.hpp"
#include "diagnosis/work.hpp"

namespace ceiling {

inline constexpr int machine_profile_schema_version = 1;

struct CacheInfo {
    int level = 0;                 // 1, 2, 3, ...
    std::string type;              // "data", "unified", "instruction"
    std::uint64_t size_bytes = 0;  // one instance
    std::uint64_t line_bytes = 0;
    int shared_by_cpus = 1;  // logical CPUs sharing one instance
    int instances = 1;
};

struct HostInfo {
    std::string hostname;
    std::string os;          // kernel name and release
    std::string cpu_vendor;  // "GenuineIntel", "AuthenticAMD"
    std::string cpu_model;   // brand string
    int cpu_family = 0;
    int cpu_model_number = 0;
    int cpu_stepping = 0;
    std::string microarchitecture;  // from the uarch table; empty when unknown
    int physical_cores = 0;
    int logical_cpus = 0;
    int threads_used = 0;  // threads the all-core roofs ran with
    int cores_used = 0;    // physical cores those threads ran on (0: not recorded)
    int numa_nodes = 1;
    std::uint64_t memory_bytes = 0;
    std::string hypervisor;  // empty on bare metal
    std::vector<CacheInfo> caches;
    std::vector<std::string> isa;  // features that select roof kernels, e.g. "avx512f"

    // Size of the last-level data/unified cache instance (0 when unknown).
    std::uint64_t last_level_cache_bytes() const;
    // The data/unified cache of the given level, if known.
    const CacheInfo* cache(int level) const;
    bool has_isa(const std::string& feature) const;
};

struct BuildInfo {
    std::string version;
    std::string compiler;
    std::string build_type;
    std::string git_commit;
};

// Effective core clock under load for one vector width, from a dependent chain of
// 1-cycle-latency integer adds at that width while FMAs of the same width keep the
// frequency licence of heavy code.
struct ClockMeasurement {
    std::string width;  // "scalar", "128", "256", "512", "amx"
    int threads = 1;    // threads running at once (all-core clocks are often lower)
    Summary hz;
};

struct ComputeRoof {
    std::string name;  // e.g. "fp32_fma512"
    Precision precision = Precision::fp32;
    Engine engine = Engine::vector;
    std::string instruction;  // e.g. "vfmadd231ps zmm"
    int threads = 1;
    Summary ops_per_s;  // over repeats; the roof is the median
    // clock x instructions/cycle x ops/instruction x cores; absent when neither the table
    // nor a measurement gives the instructions per cycle, or no clock was measured.
    std::optional<double> theoretical_ops_per_s;
    // The clock this roof ran at: a chain of dependent adds woven into the roof's own loop,
    // at the shortest chain that binds (kernels/roofs/chained_x86.cpp).
    std::optional<double> clock_hz;
    std::optional<int> clock_chain;       // adds per iteration at that point
    std::optional<double> clock_density;  // roof instruction rate there / the roof's own
    std::optional<double> measured_instructions_per_cycle;  // per core: roof rate / clock
    std::optional<double> instructions_per_cycle;           // what the theoretical value used
    int cores = 0;                   // physical cores the theoretical value counts
    std::string theoretical_source;  // where instructions_per_cycle came from
    // instructions_per_cycle is the measurement's, not the peak table's (PortBasis::
    // from_measurement): measured/theoretical then agrees by construction and is no check.
    // False in profiles written before it was kept.
    bool theoretical_from_measurement = false;
    bool noisy = false;              // rel_spread above the noise threshold
};

// One point of the working-set sweep: the data the plateaus were detected from.
struct SweepPoint {
    std::string kernel;  // "read", "write", "copy", "triad"
    int threads = 1;
    std::uint64_t working_set_bytes = 0;
    Summary bytes_per_s;
};

struct BandwidthRoof {
    std::string level;   // "L1", "L2", "L3", "DRAM"
    std::string kernel;  // "read", "write", "copy", "triad"
    int threads = 1;
    Summary bytes_per_s;                      // the plateau's points; the roof is the median
    std::uint64_t min_working_set_bytes = 0;  // the plateau's extent in the sweep
    std::uint64_t max_working_set_bytes = 0;
    bool noisy = false;
    // The rate at max_working_set_bytes, the plateau's point farthest past every cache: a
    // VM may not show all the cache its vCPUs use, and the plateau's first points can still
    // sit in what it hides (a 2-vCPU Zen 5 guest: 53.6 GB/s at 128 MiB, 45.9 at 512). The roof
    // check repeats this point. 0: a profile from before it was kept.
    double far_end_bytes_per_s = 0;
};

struct LatencyMeasurement {
    std::string level;
    std::uint64_t working_set_bytes = 0;
    Summary seconds;               // per dependent load
    std::optional<double> cycles;  // seconds x scalar clock
};

struct DispatchOverheads {
    int threads = 1;
    std::optional<Summary> fork_join_s;   // empty parallel region, all threads
    std::optional<Summary> empty_call_s;  // call through a function pointer
};

// Something the profile does not contain, and why (an absent roof is never a zero).
struct Absence {
    std::string what;
    std::string reason;
};

// Sequential bandwidth of the storage under one directory, as a program there sees it:
// a file of random bytes (storage may compress or skip zeros) written in 1 MiB requests
// then made durable (fdatasync), and read back with O_DIRECT (past the page cache), four
// requests in flight (agent/machine/storage_roof.cpp).
// Not a memory level: no working set ever reaches it, so it is kept apart from
// bandwidth_roofs; `run` compares a program's storage traffic with it.
struct StorageRoof {
    std::string directory;  // where the file was written (then removed)
    std::string device;     // the block device holding it ("vda1"), empty when unknown
    std::uint64_t file_bytes = 0;
    Summary read_bytes_per_s;   // one point per pass
    Summary write_bytes_per_s;  // one point per pass, each ending with fdatasync
    // The roofs: the best pass of each (a roof is what the storage can give; on a VM's
    // virtual disk passes a second apart moved by up to 2x).
    double read_roof_bytes_per_s() const { return read_bytes_per_s.max; }
    double write_roof_bytes_per_s() const { return write_bytes_per_s.max; }
};

// --- GPU (issue 7) ---------------------------------------------------------------------------
// The measured ceilings of one GPU, each beside the theoretical value from the device's
// properties (absent when unknown). Compute roofs on tensor cores have engine matrix; roofs
// measured through a library (cuBLAS, cudaMemcpy) say so: `library` and `method`.
struct GpuComputeRoof {
    std::string name;  // "fp32_fma", "bf16_mma", "bf16_cublas", ...
    Precision precision = Precision::fp32;
    Engine engine = Engine::vector;
    bool library = false;
    std::string method;  // what ran, in words
    Summary ops_per_s;
    std::optional<double> theoretical_ops_per_s;
    std::string theoretical_basis;  // "132 SMs x 1980 MHz x 256 flop/clk/SM"
    bool noisy = false;
};

struct GpuBandwidthRoof {
    std::string name;    // "hbm_copy", "l2_read", "pcie_h2d_pinned", ...
    std::string level;   // "HBM", "L2", "PCIe"
    std::string kernel;  // "read", "write", "copy", "h2d_pinned", "d2h_pageable", ...
    bool library = false;
    std::string method;
    std::uint64_t working_set_bytes = 0;
    Summary bytes_per_s;
    std::optional<double> theoretical_bytes_per_s;
    std::string theoretical_basis;
    bool noisy = false;
};

struct GpuLatency {
    std::string name;  // "launch", "launch_sync"
    std::string method;
    Summary seconds;
};

struct GpuProfile {
    int index = 0;
    std::string name;
    std::string pci_bus_id;
    int compute_capability_major = 0;
    int compute_capability_minor = 0;
    int multiprocessors = 0;
    std::uint64_t memory_bytes = 0;
    std::uint64_t l2_bytes = 0;
    std::optional<double> sm_clock_hz;  // peak, as the driver reports it
    std::optional<double> memory_clock_hz;
    std::optional<int> memory_bus_bits;
    std::string driver;        // "580.159.03, CUDA 13.0"
    std::string cuda_runtime;  // "13.0"
    std::vector<GpuComputeRoof> compute_roofs;
    std::vector<GpuBandwidthRoof> bandwidth_roofs;
    std::vector<GpuLatency> latencies;

    // The roofs work is judged against: the highest of our own kernels' measurements
    // (nullptr: none). A library's figure (cuBLAS, cudaMemcpy) is left out: the suite times
    // those same library calls, and a case judged against its own figure is at 100% of its
    // roof by construction, however far the library is from what the device can do.
    // PCIe is measured only through cudaMemcpy, so it has figures but no roof.
    const GpuComputeRoof* best_compute_roof(Precision p, Engine e) const;
    const GpuBandwidthRoof* best_bandwidth_roof(const std::string& level) const;
};
// --- end GPU ---

struct MachineProfile {
    int schema_version = machine_profile_schema_version;
    std::string created_at;  // ISO 8601 UTC
    double duration_s = 0;   // how long the measurement took
    bool quick = false;
    BuildInfo build;
    HostInfo host;
    std::map<std::string, std::string> method;  // how things were counted, in words
    std::vector<ClockMeasurement> clocks;
    std::vector<ComputeRoof> compute_roofs;
    std::vector<BandwidthRoof> bandwidth_roofs;
    std::vector<SweepPoint> sweep;
    std::vector<LatencyMeasurement> latencies;
    DispatchOverheads overheads;
    std::vector<Absence> absent;
    // Measured GPUs (issue 7). Added without a schema_version change: a profile without the
    // field reads as "no GPU measured".
    std::vector<GpuProfile> gpus;
    // The storage under `machine`'s directory (absent: not measured, see `absent`). Added
    // without a schema_version change, like gpus.
    std::optional<StorageRoof> storage;

    // The highest measured compute roof for this precision and engine at this thread
    // count (nullptr when none was measured).
    const ComputeRoof* best_compute_roof(Precision p, Engine e, int threads) const;
    // The highest measured bandwidth roof of a level at this thread count, any kernel.
    const BandwidthRoof* best_bandwidth_roof(const std::string& level, int threads) const;
    const ClockMeasurement* clock(const std::string& width, int threads) const;
};

// Why a profile measured on `measured` does not describe the host `here` (its CPU's vendor,
// family, model, brand, instruction sets or logical CPU count differ), or empty when it does.
// Roofs are a CPU's: a cloud VM keeps its hostname when its instance type changes, and a
// home directory shared across a cluster's nodes keeps one profile per hostname.
std::string other_machine(const HostInfo& measured, const HostInfo& here);

// Serialisation. from_json throws std::invalid_argument naming the problem when the
// schema_version differs or a field is missing or of the wrong type.
void to_json(nlohmann::json& j, const MachineProfile& p);
void from_json(const nlohmann::json& j, MachineProfile& p);
// The working-set sweep is half of a profile's text and only `machine` reads it (the roofs
// carry their plateaus): judging reads a profile without it (`run`: ~3 ms less per run), and
// a profile without a sweep is written without the key (a run record's copy).
enum class ProfileParts { all, without_sweep };
MachineProfile parse_machine_profile(const std::string& text, ProfileParts parts = ProfileParts::all);

}  // namespace ceiling
