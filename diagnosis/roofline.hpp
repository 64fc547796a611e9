#pragma once
// The roofline over a MachineProfile: compute ceilings per precision, engine and thread
// count; bandwidth ceilings per memory level; the level a working set lives in; attainable
// rate = min(compute roof, intensity x bandwidth roof); the ridge point of every level
// (the cache-aware, hierarchical roofline).

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "diagnosis/machine_profile.hpp"
#include "diagnosis/work.hpp"

namespace ceiling {

// Which roof limits a point.
enum class RoofKind { compute, bandwidth };
inline constexpr std::array<std::string_view, 2> roof_kind_names = {"compute", "bandwidth"};
inline std::string_view to_string(RoofKind k) { return enum_name(k, roof_kind_names); }

// How a ceiling's number was obtained for the thread count asked for: measured at exactly
// that count, or derived from measurements at other counts (see make_roofline).
enum class RoofBasis { measured, scaled };
inline constexpr std::array<std::string_view, 2> roof_basis_names = {"measured", "scaled"};
inline std::string_view to_string(RoofBasis b) { return enum_name(b, roof_basis_names); }

struct ComputeCeiling {
    std::string name;  // the profile's roof name, e.g. "fp32_fma512"
    Precision precision = Precision::fp32;
    Engine engine = Engine::vector;
    std::string instruction;
    int threads = 1;           // the thread count this ceiling applies to
    int measured_threads = 1;  // the measurement it comes from
    RoofBasis basis = RoofBasis::measured;
    double ops_per_s = 0;
    std::optional<double> theoretical_ops_per_s;  // only for a ceiling measured as is
    // The theoretical value's per-cycle count came from the measurement (ComputeRoof::
    // theoretical_from_measurement): no check of the roof.
    bool theoretical_from_measurement = false;
    bool noisy = false;
};

struct BandwidthCeiling {
    std::string level;   // "L1", "L2", "L3", "DRAM"
    std::string kernel;  // the sweep kernel that reached it
    int threads = 1;
    int measured_threads = 1;
    RoofBasis basis = RoofBasis::measured;
    double bytes_per_s = 0;
    // Largest working set this level serves: where its measured plateau ends (a VM may show
    // the host's whole L3 while its share is far smaller, so the measurement wins), else the
    // capacity of the caches the threads use. Absent for the outermost level.
    std::optional<double> capacity_bytes;
    std::string capacity_from;  // "plateau", "cache", or "" for the outermost level
    bool noisy = false;
};

struct LevelRoof {
    BandwidthCeiling bandwidth;
    // compute ceiling / bandwidth: intensity (ops/byte) above which work whose data lives
    // here is compute bound. Absent without a compute ceiling.
    std::optional<double> ridge_ops_per_byte;
};

struct Roofline {
    Precision precision = Precision::fp32;
    Engine engine = Engine::vector;
    int threads = 1;
    std::optional<ComputeCeiling> compute;  // absent: no roof for this precision and engine
    std::vector<LevelRoof> levels;          // inner to outer

    const LevelRoof* level(std::string_view name) const;
    // The innermost level whose capacity holds the working set; the outermost when none does
    // or the working set is unknown (<= 0). nullptr when the profile has no bandwidth roof.
    const LevelRoof* level_for(double working_set_bytes) const;
};

// Roofs at `threads` threads. Where the profile has no roof at exactly that count (it
// measures 1 thread and all threads), the ceiling is derived as an upper bound: at most
// linear scaling from fewer threads, at most the roof measured with more threads. A ceiling
// for N threads is never below one measured with fewer (the extra threads could idle), which
// also keeps one disturbed all-core measurement from lowering a roof. Threads beyond the
// host's logical CPUs add nothing.
Roofline make_roofline(const MachineProfile& profile, Precision precision, Engine engine,
                       int threads);

// Roofs for work that kept `busy_cores` cores busy on average (CPU time / wall time, as
// measured for NVTX regions): each ceiling is max(1, busy_cores) x its 1-thread value, at most
// its value at ceil(busy_cores) threads (make_roofline: measured there or derived). Linear in
// the cores really used, because CPU time a piece of work did not get (its threads were
// preempted, or only some of them worked) cannot have produced anything; never below the
// 1-thread roof, because one core is always there to be used: time a region waits or sleeps
// reads as distance from that roof (latency bound), not as a lower roof. Ceilings lowered by
// the scaling are marked `scaled`, measured_threads 1. For compute the per-core value is the
// larger of the 1-thread roof and the per-core share of the roof measured at ceil(busy_cores)
// threads (then measured_threads is that count): cores share no execution units, so a lower
// 1-thread roof was measured while the host took that core's time.
Roofline make_busy_roofline(const MachineProfile& profile, Precision precision, Engine engine,
                            double busy_cores);

// The roofline of one GPU: its best compute roof of the precision and engine, L2 (holding up
// to the device's L2 size) and HBM (outermost), each from our own kernels. A library's figure
// (cuBLAS) is never the roof: the suite's library cases run that same call, and judged against
// it they would sit at 100% by construction. Threads do not apply: ceilings say 1.
Roofline make_gpu_roofline(const GpuProfile& gpu, Precision precision, Engine engine);

// The profile as one bandwidth kernel (read, write, copy, triad) saw the machine: its host,
// compute roofs and that kernel's bandwidth roofs only, so that a roofline of it gives that
// kernel's roof at every level and thread count (measured or derived like any other).
MachineProfile with_bandwidth_kernel(const MachineProfile& profile, std::string_view kernel);

// Every compute ceiling at a thread count, one per roof name, highest first: the horizontal
// lines of the hierarchical roofline.
std::vector<ComputeCeiling> compute_ceilings(const MachineProfile& profile, int threads);

// The highest compute ceiling for a precision on any engine (an upper bound when the
// engine a piece of work will use is not known yet).
std::optional<ComputeCeiling> best_compute_ceiling(const MachineProfile& profile,
                                                   Precision precision, int threads);

// min(compute, intensity x bandwidth).
double attainable_ops_per_s(double compute_ops_per_s, double intensity_ops_per_byte,
                            double bytes_per_s);
// compute / bandwidth.
double ridge_ops_per_byte(double compute_ops_per_s, double bytes_per_s);

// Where a piece of work sits on the roofline.
struct RooflinePoint {
    double intensity_ops_per_byte = 0;
    std::string level;              // the memory level its working set lives in
    bool working_set_known = true;  // false: outermost level assumed
    double compute_ops_per_s = 0;
    double bytes_per_s = 0;
    double ridge_ops_per_byte = 0;
    double attainable_ops_per_s = 0;
    RoofKind limited_by = RoofKind::compute;  // compute at or above the ridge
};

// nullopt when the roofline lacks a compute ceiling or a bandwidth roof, or the work has no
// bytes (intensity unknown).
std::optional<RooflinePoint> place(const Roofline& roofline, const Work& work);

void to_json(nlohmann::json& j, RoofKind k);
void from_json(const nlohmann::json& j, RoofKind& k);
void to_json(nlohmann::json& j, RoofBasis b);
void from_json(const nlohmann::json& j, RoofBasis& b);
void to_json(nlohmann::json& j, const ComputeCeiling& c);
void from_json(const nlohmann::json& j, ComputeCeiling& c);
void to_json(nlohmann::json& j, const BandwidthCeiling& c);
void from_json(const nlohmann::json& j, BandwidthCeiling& c);
void to_json(nlohmann::json& j, const LevelRoof& l);
void from_json(const nlohmann::json& j, LevelRoof& l);
void to_json(nlohmann::json& j, const Roofline& r);
void from_json(const nlohmann::json& j, Roofline& r);
void to_json(nlohmann::json& j, const RooflinePoint& p);
void from_json(const nlohmann::json& j, RooflinePoint& p);

}  // namespace ceiling
