#pragma once
// Diagnosis: what bounds a piece of work (or a whole run), how far it is from that roof,
// the first move, and every number the verdict compared. It never claims more than was
// measured: a missing counter leaves a comparison unknown, a point above its roof is
// reported as a measurement problem, and a wide distribution is flagged unstable.

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "diagnosis/decision.hpp"
#include "diagnosis/premises.hpp"
#include "diagnosis/machine_profile.hpp"
#include "diagnosis/measurement.hpp"
#include "diagnosis/roofline.hpp"
#include "diagnosis/statistics.hpp"
#include "diagnosis/thresholds.hpp"

namespace ceiling {

// One achieved rate against one roof. Serialised with its unit in the field names:
// achieved_ops_per_s / roof_ops_per_s for compute, *_bytes_per_s for bandwidth.
struct RoofComparison {
    RoofKind kind = RoofKind::compute;
    std::string roof;    // compute: the roof's name ("fp32_fma512"); bandwidth: the level
    std::string level;   // bandwidth: "L1" ... "DRAM"; compute: empty
    std::string kernel;  // bandwidth: the sweep kernel behind the roof; compute: the instruction
    std::optional<Precision> precision;  // compute only
    std::optional<Engine> engine;        // compute only
    int threads = 1;
    std::optional<double> achieved_per_s;  // absent: not measured (never zero)
    std::optional<double> roof_per_s;      // absent: the profile has no such roof
    std::optional<double> fraction;        // achieved / roof, when both are known
    std::optional<Source> source;          // where achieved's count came from
    Verdict verdict = Verdict::unknown;
};

// Why a number is missing or not to be trusted.
enum class FindingKind {
    above_roof,       // achieved beyond its roof: a measurement error or an underestimated roof
    unknown_counter,  // a quantity was not measured, so what depends on it is unknown
    unstable,         // less certain: the distribution's relative spread exceeds the
                      // threshold, or the host's share moved the verdict across a line
    no_roof,          // the profile lacks the roof this work needs
    assumption,       // a stated assumption (e.g. working set unknown: outermost level)
    contention,       // other work competed for the CPUs: verdicts taken on a shared machine
};
inline constexpr std::array<std::string_view, 6> finding_kind_names = {
    "above_roof", "unknown_counter", "unstable", "no_roof", "assumption", "contention"};

struct Finding {
    FindingKind kind = FindingKind::assumption;
    std::string detail;  // one line, with the numbers
};

struct RegionShare {
    std::string name;
    double total_s = 0;
    double share = 0;  // of wall time
};

// Share of wall time spent in model regions (DESIGN.md: "the model regions are fast but
// the process is slow").
struct ModelShare {
    double model_s = 0;
    double wall_s = 0;
    double share = 0;              // model_s / wall_s, at most 1
    double outside_regions_s = 0;  // wall time in no region at all
    // Of it, the time before the first region opened (start-up) and after the last closed;
    // absent when not measured. Between regions is the rest.
    std::optional<double> before_regions_s;
    std::optional<double> after_regions_s;
    // Top-level regions add up to more than the wall time (regions on several threads
    // overlap), so the share is an upper estimate.
    bool overlapping = false;
    std::vector<RegionShare> top_non_model;  // largest first
};

struct CapacityEvidence {
    double footprint_bytes = 0;
    double capacity_bytes = 0;
    double fraction = 0;
    std::string against;  // "memory" or "memory budget"
};

// One piece of system-bound evidence from process accounting.
struct SystemSignal {
    std::string name;             // with its unit, e.g. "context_switches_per_s", "cpu_utilisation"
    std::optional<double> value;  // absent: not measured
    double threshold = 0;
    bool fired = false;
    std::string meaning;  // what it suggests, in words
    // The second metric that chose the meaning (e.g. the share of voluntary context switches
    // says whether low CPU use is waiting or queueing), and its value; absent when none.
    std::optional<std::string> qualifier;
    std::optional<double> qualifier_value;
};
// The system signal that is also a row of the decision table (storage traffic at its roof:
// not the model, I/O bound); signals_of reads its value.
inline constexpr std::string_view storage_signal_name = "storage_roof_share";
// And for threads blocked on storage while the cores idled (not the model, I/O bound): its
// value where the rule fired.
inline constexpr std::string_view storage_wait_signal_name = "storage_wait_threads";
// And for threads blocked in sleeps, on sockets or in event loops while the cores idled (not
// the model, waiting).
inline constexpr std::string_view outside_wait_signal_name = "outside_wait_threads";
// And for time in the kernel (not the model, kernel bound): the system_time_share rule's
// value, where the cpu_utilisation rule did not fire (its cores were busy, not waiting).
inline constexpr std::string_view kernel_signal_name = "system_time_share";
inline constexpr std::string_view utilisation_signal_name = "cpu_utilisation";
// The same for a container's CPU limit (not the model, CPU quota bound).
inline constexpr std::string_view quota_signal_name = "cpu_quota_throttled_share";
// And for threads that took turns (latency bound, threads took turns): its value where the
// rule fired, i.e. where most switches were voluntary or switches are unknown.
inline constexpr std::string_view turns_signal_name = "thread_concurrency";


struct Diagnosis {
    std::string subject;              // the work or region name, or "run"
    std::optional<Bound> bound;       // absent: unknown (the signals to decide were not measured)
    std::string observation;          // the decision row's observation, or why it is unknown
    std::string diagnosis;            // "bandwidth bound", ...
    std::string first_move;           // plain words
    std::vector<LeverAdvice> levers;  // in DESIGN.md's lever order
    std::vector<Bound> also_held;     // other rows whose condition held
    Verdict verdict = Verdict::unknown;
    std::optional<double> intensity_ops_per_byte;
    std::optional<double> attainable_ops_per_s;
    std::optional<std::string> level;  // memory level of the working set
    std::vector<RoofComparison> roofs;
    std::optional<ModelShare> model_share;
    std::optional<CapacityEvidence> capacity;
    std::vector<SystemSignal> system;
    std::vector<Finding> findings;
    std::optional<Summary> duration_s;
    // What the moves assume, as measured (premises.hpp); set before conclude, which shows
    // only the moves it licenses. Not stored: a record's moves are already decided.
    Evidence evidence;
};

// Compares achieved with roof: fraction and verdict, or unknown when either is absent.
RoofComparison compare(RoofComparison c, const Thresholds& t);

// The decision signals this diagnosis's evidence supports. A comparison above its roof
// supports nothing (its fraction is not a fraction of a real roof).
Signals signals_of(const Diagnosis& d, const Thresholds& t);

// Decides bound, observation, first move, levers, also_held and verdict from the evidence
// already in `d` (roofs, model_share, capacity), and adds an above_roof finding for each
// comparison beyond its roof.
void conclude(Diagnosis& d, const Thresholds& t);

// Which side of its level's ridge a diagnosis's work lies on: its intensity against the
// compute roof over the bandwidth roof it was compared with (at or above: right). Declared
// operations with no bytes lie right of every ridge, bytes with no operations left of it.
// Absent where a roof, or both amounts, are unknown. The one test the ridge's findings share
// (its side, the bytes in flight, the vector width).
struct RidgePosition {
    bool right = false;
    double ridge_ops_per_byte = 0;
    bool unbounded = false;  // operations with no bytes: its intensity is unbounded
    const RoofComparison* compute = nullptr;
    const RoofComparison* memory = nullptr;
};
std::optional<RidgePosition> ridge_position(const Diagnosis& d);

// A latency-bound work's first move starts with the side of the ridge its intensity lies on
// (the roof it should approach), before the table's move: right of it the core or the
// caches, left of it how fast it asks for bytes.
inline constexpr std::string_view right_of_ridge_move =
    "the core or the caches (right of the ridge, its roof is compute's): dependency chains, "
    "code vectorised to the roof's width, operands tiled for reuse; then ";
inline constexpr std::string_view left_of_ridge_move =
    "more bytes in flight (left of the ridge, its roof is bandwidth's): prefetch, more "
    "independent streams or threads, fewer dependent loads, loads issued faster (vectorised), "
    "whole lines used (pack strided or indexed data); then ";
// Left of the ridge in L1 no miss waits, so nothing is in flight to add: the core's loads and
// stores themselves are the gap (a counter two threads increment on one line read "prefetch,
// more streams").
inline constexpr std::string_view left_of_ridge_l1_move =
    "the loads and stores themselves (left of the ridge in L1, where no miss waits): "
    "dependency chains through memory (a value stored and loaded again), loads issued faster "
    "(vectorised), lines written by two cores at once (false sharing); then ";
// The same where no two cores stored at once (Premise::stores_from_two_threads): no false
// sharing to name (aten.zeros on one core was told of it).
inline constexpr std::string_view left_of_ridge_l1_one_core_move =
    "the loads and stores themselves (left of the ridge in L1, where no miss waits): "
    "dependency chains through memory (a value stored and loaded again), loads issued faster "
    "(vectorised); then ";

// Inserts `prefix` (ending in "; then ") before the roofline's part of d.first_move: the side
// of the ridge, else the table's move; after the system's levers already at its front (cores
// idle, threads taking turns).
void insert_before_roofline_move(Diagnosis& d, std::string_view prefix);

// One measured piece of work against the profile. Achieved rates use the median duration.
// With analytic work, its operations and compulsory bytes are compared with the compute
// roof of its precision and engine and the bandwidth roof of its working set's level;
// without, counter-measured operations and bytes are used, the bytes compared with the
// outermost level (memory counters count memory traffic). Anything unmeasured stays unknown.
// `busy_cores`, when measured (NVTX regions), chooses the host roofs (make_busy_roofline)
// instead of m.threads.
// `e` is what its moves may assume (premises.hpp); by default its own code, nothing else known.
Diagnosis diagnose_kernel(const MachineProfile& profile, const Measurement& m, const Thresholds& t,
                          std::optional<double> busy_cores = std::nullopt, const Evidence& e = {});

void to_json(nlohmann::json& j, FindingKind k);
void from_json(const nlohmann::json& j, FindingKind& k);
void to_json(nlohmann::json& j, const RoofComparison& c);
void from_json(const nlohmann::json& j, RoofComparison& c);
void to_json(nlohmann::json& j, const Finding& f);
void from_json(const nlohmann::json& j, Finding& f);
void to_json(nlohmann::json& j, const RegionShare& r);
void from_json(const nlohmann::json& j, RegionShare& r);
void to_json(nlohmann::json& j, const ModelShare& m);
void from_json(const nlohmann::json& j, ModelShare& m);
void to_json(nlohmann::json& j, const CapacityEvidence& c);
void from_json(const nlohmann::json& j, CapacityEvidence& c);
void to_json(nlohmann::json& j, const SystemSignal& s);
void from_json(const nlohmann::json& j, SystemSignal& s);
void to_json(nlohmann::json& j, const LeverAdvice& l);
void from_json(const nlohmann::json& j, LeverAdvice& l);
void to_json(nlohmann::json& j, const Diagnosis& d);
void from_json(const nlohmann::json& j, Diagnosis& d);

}  // namespace ceiling
